/* fuzz_proc_maps.c -- libFuzzer target: /proc/PID/maps text through proc_maps__parse */
#include <string.h>
#include "fuzz.h"
#include "symbolize/proc_maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_map *maps = NULL;
	size_t n = 0, lines = 1;

	if (proc_maps__parse((const char *)data, size, &maps, &n))
		return 0;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	FUZZ_CHECK(n <= lines);
	for (size_t i = 0; i < n; i++) {
		const struct proc_map *m = &maps[i];

		FUZZ_CHECK(m->start < m->end);
		FUZZ_CHECK(strlen(m->perms) == 4 && strchr("r-", m->perms[0]) &&
			   strchr("w-", m->perms[1]) && strchr("x-", m->perms[2]) &&
			   strchr("ps", m->perms[3]));
		FUZZ_CHECK(m->path && strlen(m->path) < PROC_MAPS_LINE_MAX);
		FUZZ_CHECK(!strchr(m->path, '\n'));
	}
	proc_maps__free(maps);
	return 0;
}
