/* kallsyms.c -- kernel text symbols from /proc/kallsyms, looked up by address */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hexdigit.h"
#include "kallsyms.h"
#include "procfs.h"

#define MODULE_NAME_MAX 255
#define MODULES_MAX 0xffff	/* module index is a __u16; 0 is the core kernel */

/* While parsing, the same 16 bytes hold what sorting needs instead of the name pointer. */
union kentry {
	struct ksym sym;
	struct {
		__u64 addr;
		__u32 name_off;
		__u16 mod;
		__u8 rank;
	} raw;
};

struct mod_run {	/* symbols from index first on (until the next run) belong to module */
	size_t first;
	const char *module;
};

struct ksyms {
	struct ksym *syms;
	size_t n;
	char *names;
	char *mod_names;
	struct mod_run *runs;
	size_t n_runs;
};

/* one parsed line; name and module point into the input */
struct kline {
	__u64 addr;
	char type;
	const char *name;
	size_t name_len;
	const char *mod;
	size_t mod_len;
};

/* "addr type name[\t[module]]" in [p, end); 0, or -EINVAL for a malformed line */
static int parse_line(const char *p, const char *end, struct kline *l)
{
	const char *start = p;
	int d;

	if (end - p > KSYMS_LINE_MAX)
		return -EINVAL;
	l->addr = 0;
	for (; p < end && (d = hexval(*p)) >= 0; p++) {
		if (p - start == 16)
			return -EINVAL;
		l->addr = l->addr << 4 | d;
	}
	if (p == start || end - p < 4 || p[0] != ' ' || p[2] != ' ')
		return -EINVAL;
	l->type = p[1];
	p += 3;
	l->name = p;
	while (p < end && *p != ' ' && *p != '\t' && *p != '\0')
		p++;
	l->name_len = p - l->name;
	if (!l->name_len)
		return -EINVAL;
	l->mod = NULL;
	l->mod_len = 0;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == end)
		return 0;
	if (*p != '[' || end[-1] != ']' || end - p < 3 || end - p - 2 > MODULE_NAME_MAX)
		return -EINVAL;
	l->mod = p + 1;
	l->mod_len = end - p - 2;
	if (memchr(l->mod, ']', l->mod_len) || memchr(l->mod, '\0', l->mod_len))
		return -EINVAL;
	return 0;
}

static bool is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/* smaller is preferred among aliases: fewer leading underscores, then T, W, t, w */
static __u8 rank_of(const struct kline *l)
{
	unsigned us = 0;

	while (us < l->name_len && us < 15 && l->name[us] == '_')
		us++;
	return us * 4 + (l->type == 'T' ? 0 : l->type == 'W' ? 1 : l->type == 't' ? 2 : 3);
}

static int cmp_kentry(const void *a, const void *b)
{
	const union kentry *x = a, *y = b;

	if (x->raw.addr != y->raw.addr)
		return x->raw.addr < y->raw.addr ? -1 : 1;
	return (int)x->raw.rank - (int)y->raw.rank;
}

/* interns module name; returns its index (1-based) or 0 when out of room */
static __u16 intern_module(struct ksyms *ks, __u32 **offs, size_t *n_mods, size_t *pool_len,
			   const char *name, size_t len, __u16 *last)
{
	__u32 *o;
	char *pool;

	if (*last && !strncmp(ks->mod_names + (*offs)[*last - 1], name, len) &&
	    ks->mod_names[(*offs)[*last - 1] + len] == '\0')
		return *last;
	for (size_t i = 0; i < *n_mods; i++) {
		if (!strncmp(ks->mod_names + (*offs)[i], name, len) &&
		    ks->mod_names[(*offs)[i] + len] == '\0')
			return *last = i + 1;
	}
	if (*n_mods == MODULES_MAX)
		return 0;
	o = realloc(*offs, (*n_mods + 1) * sizeof(**offs));
	if (!o)
		return 0;
	*offs = o;
	pool = realloc(ks->mod_names, *pool_len + len + 1);
	if (!pool)
		return 0;
	ks->mod_names = pool;
	memcpy(pool + *pool_len, name, len);
	pool[*pool_len + len] = '\0';
	o[*n_mods] = *pool_len;
	*pool_len += len + 1;
	return *last = ++*n_mods;
}

/* the module of every entry becomes a run list, so entries need no module field */
static int build_runs(struct ksyms *ks, union kentry *e, const __u32 *mod_offs)
{
	__u16 prev = 0;
	size_t cap = 0;

	for (size_t i = 0; i < ks->n; i++) {
		__u16 mod = e[i].raw.mod;

		if (mod == prev)
			continue;
		if (ks->n_runs == cap) {
			struct mod_run *r;

			cap = cap ? cap * 2 : 64;
			r = realloc(ks->runs, cap * sizeof(*r));
			if (!r)
				return -ENOMEM;
			ks->runs = r;
		}
		ks->runs[ks->n_runs].first = i;
		ks->runs[ks->n_runs].module = mod ? ks->mod_names + mod_offs[mod - 1] : NULL;
		ks->n_runs++;
		prev = mod;
	}
	return 0;
}

/* sorts, keeps the best alias of each address, then swaps offsets for pointers */
static int finish(struct ksyms *ks, union kentry *e, size_t n, const __u32 *mod_offs)
{
	size_t kept = 0;
	int err;

	qsort(e, n, sizeof(*e), cmp_kentry);
	for (size_t i = 0; i < n; i++)
		if (!kept || e[i].raw.addr != e[kept - 1].raw.addr)
			e[kept++] = e[i];
	ks->n = kept;
	err = build_runs(ks, e, mod_offs);
	if (err)
		return err;
	for (size_t i = 0; i < kept; i++) {
		__u64 addr = e[i].raw.addr;
		__u32 off = e[i].raw.name_off;

		e[i].sym.addr = addr;
		e[i].sym.name = ks->names + off;
	}
	/* shrinking never fails in practice; keep the larger block if it does */
	ks->syms = realloc(e, kept * sizeof(*e)) ?: &e->sym;
	return 0;
}

struct ksyms *ksyms__parse(const char *buf, size_t len)
{
	const char *end = buf + len, *p;
	size_t n = 0, names_len = 0, mods_len = 0, n_mods = 0;
	union kentry *e = NULL;
	__u32 *mod_offs = NULL;
	struct ksyms *ks;
	bool any_addr = false;
	__u16 last_mod = 0;
	struct kline l;
	int err;

	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return NULL;
	/* pass 1: count text symbols and their name bytes, so pass 2 allocates once */
	for (p = buf; p < end;) {
		const char *nl = memchr(p, '\n', end - p), *eol = nl ? nl : end;

		if (!parse_line(p, eol, &l) && is_text(l.type)) {
			n++;
			names_len += l.name_len + 1;
			any_addr |= l.addr != 0;
		}
		p = nl ? nl + 1 : end;
	}
	if (!n) {
		err = -ENODATA;
		goto out_err;
	}
	if (!any_addr) {
		err = -EPERM;
		goto out_err;
	}
	if (names_len > 0xffffffffULL) {
		err = -E2BIG;
		goto out_err;
	}
	e = malloc(n * sizeof(*e));
	ks->names = malloc(names_len);
	if (!e || !ks->names) {
		err = -ENOMEM;
		goto out_err;
	}
	n = 0;
	names_len = 0;
	for (p = buf; p < end;) {
		const char *nl = memchr(p, '\n', end - p), *eol = nl ? nl : end;

		if (!parse_line(p, eol, &l) && is_text(l.type)) {
			e[n].raw.addr = l.addr;
			e[n].raw.name_off = names_len;
			e[n].raw.rank = rank_of(&l);
			e[n].raw.mod = l.mod ? intern_module(ks, &mod_offs, &n_mods, &mods_len,
							      l.mod, l.mod_len, &last_mod)
					     : 0;
			memcpy(ks->names + names_len, l.name, l.name_len);
			ks->names[names_len + l.name_len] = '\0';
			names_len += l.name_len + 1;
			n++;
		}
		p = nl ? nl + 1 : end;
	}
	err = finish(ks, e, n, mod_offs);
	if (err)
		goto out_err;
	free(mod_offs);
	return ks;

out_err:
	free(mod_offs);
	if (!ks->syms)
		free(e);
	ksyms__free(ks);
	errno = -err;
	return NULL;
}

struct ksyms *ksyms__load(const char *path)
{
	struct ksyms *ks;
	size_t len;
	char *buf;
	int err;

	err = procfs__read_file(AT_FDCWD, path ? path : "/proc/kallsyms", KSYMS_READ_CAP, &buf,
				&len, NULL);
	if (err) {
		errno = -err;
		return NULL;
	}
	ks = ksyms__parse(buf, len);
	err = errno;
	free(buf);
	errno = err;
	return ks;
}

void ksyms__free(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->names);
	free(ks->mod_names);
	free(ks->runs);
	free(ks);
}

const struct ksym *ksyms__map_addr(const struct ksyms *ks, __u64 addr, __u64 *offset)
{
	size_t lo = 0, hi = ks->n;

	/*
	 * find the largest sym addr <= addr: syms is sorted by address, and the
	 * loop keeps syms[i].addr <= addr for every i < lo and > addr for every
	 * i >= hi, so when lo == hi the answer is lo - 1 (none when lo is 0).
	 */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (offset)
		*offset = addr - ks->syms[lo - 1].addr;
	return &ks->syms[lo - 1];
}

const char *ksyms__module(const struct ksyms *ks, const struct ksym *sym)
{
	size_t idx = sym - ks->syms, lo = 0, hi = ks->n_runs;

	/* the run with the largest first <= idx, by the same argument as map_addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->runs[mid].first <= idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? ks->runs[lo - 1].module : NULL;
}

size_t ksyms__count(const struct ksyms *ks)
{
	return ks->n;
}

const struct ksym *ksyms__at(const struct ksyms *ks, size_t i)
{
	return i < ks->n ? &ks->syms[i] : NULL;
}
