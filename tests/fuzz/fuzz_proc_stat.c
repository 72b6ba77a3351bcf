/* fuzz_proc_stat.c -- libFuzzer target: /proc/PID/stat lines (a comm the process chose) through proc_image__parse_stat */
#include "lib/proc_image.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	__u64 start = 7;

	if (proc_image__parse_stat((const char *)data, size, &start))
		FUZZ_CHECK(start == 7);	/* a failed parse leaves the output alone */
	return 0;
}
