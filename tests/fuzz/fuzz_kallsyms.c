/* fuzz_kallsyms.c -- libFuzzer target: /proc/kallsyms text through ksyms__parse and every lookup */
#include <errno.h>
#include <string.h>
#include "fuzz.h"
#include "lib/hexdigit.h"
#include "symbolize/kallsyms.h"

#define SEARCH_MAX 8192

/*
 * The input holds a line "ADDR TYPE NAME": the name decoded is one given at
 * its address, not a neighbour's in the front-coded block.
 */
static int has_line(const uint8_t *data, size_t size, __u64 addr, const char *name)
{
	size_t len = strlen(name);

	for (const uint8_t *p = data; (p = memmem(p, data + size - p, name, len)); p++) {
		const uint8_t *end = p + len, *q;
		unsigned shift = 0;
		__u64 a = 0;

		if (p - data < 4 || p[-1] != ' ' || p[-3] != ' ')
			continue;
		if (end < data + size && *end != ' ' && *end != '\t' && *end != '\n' && *end)
			continue;
		for (q = p - 4; q >= data && hexval(*q) >= 0 && shift < 64; q--, shift += 4)
			a |= (__u64)hexval(*q) << shift;
		if ((q < data || *q == '\n') && a == addr)
			return 1;
	}
	return 0;
}

/* one symbol: its name decodes and is kept, its address finds it, its module is sane */
static void check_symbol(struct ksyms *ks, size_t i)
{
	__u64 addr = ksyms__addr(ks, i), off;
	const char *name = ksyms__name(ks, i), *mod;
	ssize_t got;

	FUZZ_CHECK(name && *name);
	FUZZ_CHECK(strlen(name) < KSYMS_LINE_MAX && !strpbrk(name, " \t\n"));
	FUZZ_CHECK(ksyms__name(ks, i) == name);
	/* strictly ascending: one symbol per address */
	FUZZ_CHECK(!i || ksyms__addr(ks, i - 1) < addr);
	got = ksyms__find(ks, addr, &off);
	FUZZ_CHECK(got == (ssize_t)i && off == 0);
	if (addr) {
		got = ksyms__find(ks, addr - 1, &off);
		FUZZ_CHECK(got == (ssize_t)i - 1);
		FUZZ_CHECK(!i || off == addr - 1 - ksyms__addr(ks, i - 1));
	}
	mod = ksyms__module(ks, i);
	FUZZ_CHECK(!mod || (*mod && strlen(mod) <= 255 && !strchr(mod, ']')));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ksyms *ks;
	size_t n;

	ks = ksyms__parse((const char *)data, size);
	if (!ks) {
		FUZZ_CHECK(errno == ENODATA || errno == EPERM || errno == ENOMEM || errno == E2BIG);
		return 0;
	}
	n = ksyms__count(ks);
	FUZZ_CHECK(n > 0);
	for (size_t i = 0; i < n; i++) {
		const char *name;

		check_symbol(ks, i);
		/* quadratic: small inputs only */
		name = ksyms__name(ks, i);
		FUZZ_CHECK(size > SEARCH_MAX || has_line(data, size, ksyms__addr(ks, i), name));
	}
	FUZZ_CHECK(!ksyms__name(ks, n) && !ksyms__module(ks, n) && !ksyms__addr(ks, n));
	FUZZ_CHECK(ksyms__find(ks, ~0ULL, NULL) == (ssize_t)n - 1);
	FUZZ_CHECK(ksyms__bytes(ks) >= n * 8);
	ksyms__free(ks);
	return 0;
}
