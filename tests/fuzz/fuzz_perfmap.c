/* fuzz_perfmap.c -- libFuzzer target: /tmp/perf-PID.map text (written by the JIT process: untrusted) through perfmap__parse */
#include <string.h>
#include "fuzz.h"
#include "symbolize/perfmap.h"

static void lookups(const struct perfmap *m, const uint8_t *data, size_t size)
{
	const char *name;
	__u64 addr, off;

	/* the input's own words, and their low bits, are likely addresses of its lines */
	for (size_t i = 0; i + 8 <= size && i < 256; i += 8) {
		memcpy(&addr, data + i, 8);
		name = perfmap__lookup(m, addr, &off);
		FUZZ_CHECK(!name || (off < PERFMAP_SYM_SIZE_MAX && off <= addr));
		name = perfmap__lookup(m, addr & 0xffff, &off);
		FUZZ_CHECK(!name || off < PERFMAP_SYM_SIZE_MAX);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap *m = perfmap__new();

	FUZZ_CHECK(m);
	FUZZ_CHECK(perfmap__parse(m, (const char *)data, size) == 0);
	FUZZ_CHECK(perfmap__count(m) <= PERFMAP_ENTRIES_MAX);
	lookups(m, data, size);
	/* a second read over the same table, as after the file was rewritten */
	FUZZ_CHECK(perfmap__parse(m, (const char *)data, size / 2) == 0);
	lookups(m, data, size);
	FUZZ_CHECK(perfmap__mem_size(m) > 0);
	perfmap__free(m);
	return 0;
}
