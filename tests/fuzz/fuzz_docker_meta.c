/* fuzz_docker_meta.c -- libFuzzer target: a container's name from config.v2.json bytes is valid UTF-8, fits, and has no leading slash */
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "agent/docker_meta.h"
#include "lib/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	size_t out_size = 1 + fin_u8(&in);
	char *out = malloc(out_size), *buf = malloc(in.n ? in.n : 1);

	if (!out || !buf)
		abort();
	memcpy(buf, in.p, in.n);
	if (!docker_meta__parse_name(buf, in.n, out, out_size)) {
		FUZZ_CHECK(strlen(out) < out_size && strlen(out) > 0 && out[0] != '/');
		FUZZ_CHECK(utf8__valid(out, strlen(out)));
	}
	free(buf);
	free(out);
	return 0;
}
