/* fuzz_kallsyms.c -- libFuzzer target: /proc/kallsyms text through ksyms__parse and every lookup */
#include <errno.h>
#include <string.h>
#include "fuzz.h"
#include "symbolize/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct ksym *prev = NULL, *s, *got;
	struct ksyms *ks;
	__u64 off;
	size_t n;

	ks = ksyms__parse((const char *)data, size);
	if (!ks) {
		FUZZ_CHECK(errno == ENODATA || errno == EPERM || errno == ENOMEM || errno == E2BIG);
		return 0;
	}
	n = ksyms__count(ks);
	FUZZ_CHECK(n > 0);
	for (size_t i = 0; i < n; i++, prev = s) {
		const char *mod;

		s = ksyms__at(ks, i);
		FUZZ_CHECK(s && s->name && *s->name);
		FUZZ_CHECK(strlen(s->name) < KSYMS_LINE_MAX);
		/* strictly ascending: one symbol per address */
		FUZZ_CHECK(!prev || prev->addr < s->addr);
		got = ksyms__map_addr(ks, s->addr, &off);
		FUZZ_CHECK(got == s && off == 0);
		if (s->addr) {
			got = ksyms__map_addr(ks, s->addr - 1, &off);
			FUZZ_CHECK(got == prev && (!prev || off == s->addr - 1 - prev->addr));
		}
		mod = ksyms__module(ks, s);
		FUZZ_CHECK(!mod || (*mod && strlen(mod) <= 255 && !strchr(mod, ']')));
	}
	FUZZ_CHECK(!ksyms__at(ks, n));
	FUZZ_CHECK(ksyms__map_addr(ks, ~0ULL, NULL) == ksyms__at(ks, n - 1));
	ksyms__free(ks);
	return 0;
}
