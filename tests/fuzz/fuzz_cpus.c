/* fuzz_cpus.c -- libFuzzer target: kernel CPU lists ("0-3,5") through cpus__parse */
#include "collect/cpus.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int *cpus = (int *)1, n = -1;

	/* a sysfs read is at most a page; longer lists only make the fuzzer slow */
	if (size > 4096)
		return 0;
	if (cpus__parse((const char *)data, size, &cpus, &n)) {
		FUZZ_CHECK(!cpus && n == 0);
		return 0;
	}
	FUZZ_CHECK(cpus && n > 0);
	for (int i = 0; i < n; i++)
		FUZZ_CHECK(cpus[i] >= 0 && cpus[i] <= 65535);
	free(cpus);
	return 0;
}
