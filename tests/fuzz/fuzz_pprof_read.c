/* fuzz_pprof_read.c -- libFuzzer target: pprof__read on any bytes, then every writer, and a re-read of our own encoding */
#include <errno.h>
#include <string.h>
#include "fuzz.h"
#include "profile/pprof.h"
#include "profile/pprof_int.h"

#define MAX_BYTES (4u << 20)	/* the uncompressed cap given to the reader */

/* folded text of type 0, or NULL */
static char *folded(const struct pprof *p, size_t *len)
{
	char *text = NULL;
	FILE *m = open_memstream(&text, len);

	if (!m)
		return NULL;
	FUZZ_CHECK(pprof__write_folded(p, m, 0) == 0);
	fclose(m);
	return text;
}

/* every writer must take whatever the reader accepted */
static void write_all(const struct pprof *p)
{
	struct pprof_top_opts wide = { .width = 80, .unicode = true, .fit_names = true };
	struct pprof_html_opts ho = { .value_index = -1, .base = p };
	FILE *null = fopen("/dev/null", "w");

	FUZZ_CHECK(null);
	FUZZ_CHECK(pprof__write_top(p, null, 0, 10) == 0);
	FUZZ_CHECK(pprof__write_top_opts(p, null, p->n_types - 1, 0, &wide) == 0);
	FUZZ_CHECK(pprof__write_top_diff(p, 0, p, p->n_types - 1, null, 5) == 0);
	FUZZ_CHECK(pprof__write_html(p, null, NULL) == 0);
	FUZZ_CHECK(pprof__write_html(p, null, &ho) == 0);
	fclose(null);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[160], *text, *again_text, *enc = NULL;
	struct pprof *p = pprof__read(data, size, MAX_BYTES, why, sizeof(why)), *again;
	size_t len, again_len, enc_len = 0;
	FILE *m;

	if (!p) {
		/* a refusal always says why, in one line */
		FUZZ_CHECK(errno && why[0] && !strchr(why, '\n'));
		return 0;
	}
	FUZZ_CHECK(p->n_types >= 1 && p->n_types <= PPROF_MAX_SAMPLE_TYPES);
	write_all(p);

	/* what we write of it reads back to the same stacks and counts */
	m = open_memstream(&enc, &enc_len);
	FUZZ_CHECK(m && pprof__write(p, m) == 0);
	fclose(m);
	again = pprof__read(enc, enc_len, 1u << 30, why, sizeof(why));
	if (!again)
		fprintf(stderr, "re-read failed: %s\n", why);
	FUZZ_CHECK(again);
	FUZZ_CHECK(again->n_samples == p->n_samples && again->n_types == p->n_types);
	text = folded(p, &len);
	again_text = folded(again, &again_len);
	FUZZ_CHECK(text && again_text && len == again_len && !memcmp(text, again_text, len));
	free(text);
	free(again_text);
	free(enc);
	pprof__free(again);
	pprof__free(p);
	return 0;
}
