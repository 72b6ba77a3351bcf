/* fuzz_go_layout.c -- libFuzzer target: a .go.buildinfo section's version, read within its bytes, and its layout lookup */
#include <string.h>
#include "fuzz.h"
#include "runtimes/labels/go_layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char version[64];
	size_t room = size ? data[0] % sizeof(version) + 1 : sizeof(version);
	struct label_proc lp = {};

	/* a version fits its buffer, NUL-ended, starts "go1" and is the input's own bytes */
	if (!go_layout__version(data, size, version, room)) {
		FUZZ_CHECK(strlen(version) < room && !strncmp(version, "go1", 3));
		FUZZ_CHECK(memmem(data, size, version, strlen(version)) != NULL);
		if (!go_layout__offsets(version, &lp))
			FUZZ_CHECK(lp.source == LABELS_GO_MAP || lp.source == LABELS_GO_SLICE);
	}
	return 0;
}
