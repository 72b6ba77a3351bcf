/* fuzz_utf8.c -- libFuzzer target: repair always yields valid UTF-8, leaves valid input alone, fits any buffer */
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "lib/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	size_t need = utf8__sanitize(s, size, NULL, 0), small;
	char *out = malloc(need + 1);
	bool valid = utf8__valid(s, size);

	if (!out)
		return 0;
	FUZZ_CHECK(need >= size && need <= 3 * size);
	FUZZ_CHECK(utf8__sanitize(s, size, out, need + 1) == need);
	FUZZ_CHECK(utf8__valid(out, need));
	FUZZ_CHECK(!valid || (need == size && !memcmp(out, s, size)));
	/* a smaller buffer: a valid prefix, NUL-terminated */
	small = size ? data[0] % (need + 1) + 1 : 1;
	utf8__sanitize(s, size, out, small);
	FUZZ_CHECK(strlen(out) < small && utf8__valid(out, strlen(out)));
	free(out);
	return 0;
}
