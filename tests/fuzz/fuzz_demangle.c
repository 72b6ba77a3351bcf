/* fuzz_demangle.c -- libFuzzer target: symbol names from untrusted ELF files through demangle (libiberty) */
#include "symbolize/demangle.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = malloc(size + 1), *out;

	if (!name)
		return 0;
	memcpy(name, data, size);
	name[size] = '\0';
	for (int mode = DEMANGLE_NONE; mode <= DEMANGLE_FULL; mode++) {
		out = demangle(name, mode);
		FUZZ_CHECK(mode != DEMANGLE_NONE || !out);
		free(out);
	}
	free(name);
	return 0;
}
