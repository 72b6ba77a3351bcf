/* fuzz_otel_ctx.c -- libFuzzer target: ProcessContext payloads decoded for their thread-context schema and key map */
#include <string.h>
#include "fuzz.h"
#include "runtimes/labels/otel_ctx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a heap copy of the exact size: ASan sees any read past the payload */
	uint8_t *buf = malloc(size ? size : 1);
	static struct otel_keys k;

	FUZZ_CHECK(buf);
	memcpy(buf, data, size);
	if (!otel_ctx__decode(buf, size, &k)) {
		/* what BPF is handed: at most a u8's worth of keys, each a C string of a label key's size */
		FUZZ_CHECK(k.n >= 0 && k.n <= OTEL_KEYS_MAX);
		FUZZ_CHECK(k.schema >= OTEL_SCHEMA_NONE && k.schema <= OTEL_SCHEMA_OTHER);
		for (int i = 0; i < k.n; i++) {
			FUZZ_CHECK(strnlen(k.key[i].name, LABEL_KEY_MAX) < LABEL_KEY_MAX);
			FUZZ_CHECK(!(k.key[i].flags & ~LABEL_SET_TRUNCATED));
		}
	}
	free(buf);
	return 0;
}
