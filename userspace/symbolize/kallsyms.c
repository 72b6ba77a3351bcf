/* kallsyms.c -- kernel text symbols from /proc/kallsyms, looked up by address */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/array.h"
#include "lib/fdio.h"
#include "lib/hashmap.h"
#include "lib/hexdigit.h"
#include "kallsyms.h"

#define MODULE_NAME_MAX 255
#define MODULES_MAX 0xffff	/* module index is a __u16; 0 is the core kernel */
#define NAME_BLOCK 16		/* names a front-coded block holds: decoding walks at most 15 */
#define SHARED_MAX 255		/* the shared prefix length is one byte */

/* While parsing: one text symbol, its name still in the input; 16 bytes, sorted by address. */
struct kentry {
	__u64 addr;
	__u32 name_off;
	__u16 mod;
	__u16 name_len : 10;	/* a name is shorter than its line */
	__u16 rank : 6;		/* rank_of() */
};
_Static_assert(KSYMS_LINE_MAX <= 1 << 10, "name_len holds a name of a line");

/* A kept symbol's name in the input, sorted by name to number the names. */
struct nref {
	__u64 head;	/* its first 8 bytes, big-endian, zero past its end */
	__u32 off;
	__u16 len;
	__u32 idx;
};

struct mod_run {	/* symbols from index first on (until the next run) belong to module */
	size_t first;
	const char *module;
};

struct hi_run {		/* symbols from index first on (until the next run) are hi << 32 | lo[i] */
	__u32 first;
	__u32 hi;
};

struct kname {		/* a name decoded once and kept until ksyms__free() */
	__u32 id;
	char *name;
};

struct ksyms {
	__u32 *lo;		/* low halves of the addresses, ascending within a hi_run */
	__u32 *name_id;		/* rank of the symbol's name in byte order, equal names one id */
	size_t n;
	struct hi_run *hi_runs;
	size_t n_hi;
	/* names by id, NAME_BLOCK to a block: see front_code() */
	char *pool;
	size_t pool_len;
	__u32 *block_off;
	size_t n_names;
	char *mod_names;
	size_t mod_names_len;
	struct mod_run *runs;
	size_t n_runs;
	/* names handed out: hash of the id -> 1 + index in decoded */
	struct hmap *cache;
	struct kname *decoded;
	size_t n_decoded, cap_decoded, decoded_bytes;
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

/* smaller is preferred among aliases: fewer leading underscores, then T, W, t, w; < 64 */
static __u8 rank_of(const struct kline *l)
{
	unsigned us = 0;

	while (us < l->name_len && us < 15 && l->name[us] == '_')
		us++;
	return us * 4 + (l->type == 'T' ? 0 : l->type == 'W' ? 1 : l->type == 't' ? 2 : 3);
}

static int cmp_kentry(const void *a, const void *b)
{
	const struct kentry *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (int)x->rank - (int)y->rank;
}

/* byte order, as strcmp(): names hold no NUL, so the zero padding of head sorts first */
static int cmp_nref(const void *a, const void *b, void *ctx)
{
	const struct nref *x = a, *y = b;
	const char *buf = ctx;
	size_t min = x->len < y->len ? x->len : y->len;
	int c;

	if (x->head != y->head)
		return x->head < y->head ? -1 : 1;
	if (min > sizeof(x->head)) {
		c = memcmp(buf + x->off + sizeof(x->head), buf + y->off + sizeof(y->head),
			   min - sizeof(x->head));
		if (c)
			return c;
	}
	return x->len < y->len ? -1 : x->len > y->len;
}

/*
 * Sorts R by name. The first 8 bytes as a number decide 6 compares in 10
 * without reading the text, which halves the time of compares that read it.
 */
static void sort_names(struct nref *r, size_t n, const char *buf)
{
	for (size_t i = 0; i < n; i++) {
		r[i].head = 0;
		for (size_t k = 0; k < sizeof(r[i].head); k++)
			r[i].head = r[i].head << 8 |
				    (k < r[i].len ? (unsigned char)buf[r[i].off + k] : 0);
	}
	qsort_r(r, n, sizeof(*r), cmp_nref, (void *)buf);
}

/* interns module name; returns its index (1-based) or 0 when out of room */
static __u16 intern_module(struct ksyms *ks, __u32 **offs, size_t *n_mods, const char *name,
			   size_t len, __u16 *last)
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
	pool = realloc(ks->mod_names, ks->mod_names_len + len + 1);
	if (!pool)
		return 0;
	ks->mod_names = pool;
	memcpy(pool + ks->mod_names_len, name, len);
	pool[ks->mod_names_len + len] = '\0';
	o[*n_mods] = ks->mod_names_len;
	ks->mod_names_len += len + 1;
	return *last = ++*n_mods;
}

/* the module of every entry becomes a run list, so entries need no module field */
static int build_runs(struct ksyms *ks, const struct kentry *e, const __u32 *mod_offs)
{
	__u16 prev = 0;
	size_t cap = 0;

	for (size_t i = 0; i < ks->n; i++) {
		__u16 mod = e[i].mod;

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

/* addresses keep their low halves, the high half being the same over long runs */
static int build_addrs(struct ksyms *ks, const struct kentry *e)
{
	size_t r = 0;

	for (size_t i = 0; i < ks->n; i++)
		if (!i || e[i].addr >> 32 != e[i - 1].addr >> 32)
			ks->n_hi++;
	ks->lo = malloc(ks->n * sizeof(*ks->lo));
	ks->hi_runs = malloc(ks->n_hi * sizeof(*ks->hi_runs));
	if (!ks->lo || !ks->hi_runs)
		return -ENOMEM;
	for (size_t i = 0; i < ks->n; i++) {
		ks->lo[i] = e[i].addr;
		if (!i || e[i].addr >> 32 != e[i - 1].addr >> 32) {
			ks->hi_runs[r].first = i;
			ks->hi_runs[r++].hi = e[i].addr >> 32;
		}
	}
	return 0;
}

/* sorts by address and keeps the best alias of each one; the names stay in E */
static int index_addrs(struct ksyms *ks, struct kentry *e, size_t n, const __u32 *mod_offs)
{
	size_t kept = 0;
	int err;

	qsort(e, n, sizeof(*e), cmp_kentry);
	for (size_t i = 0; i < n; i++)
		if (!kept || e[i].addr != e[kept - 1].addr)
			e[kept++] = e[i];
	ks->n = kept;
	err = build_addrs(ks, e);
	if (err)
		return err;
	return build_runs(ks, e, mod_offs);
}

/*
 * Numbers the names in byte order, equal names one number, and front-codes
 * them into ks->pool: in each block of NAME_BLOCK names the first is whole,
 * each next one is the length it shares with the one before (one byte, at most
 * SHARED_MAX) then the rest, every name NUL-terminated. Sorted neighbours
 * share long prefixes ("__pfx_", "trace_event_raw_"), which halves the bytes.
 * Returns the pool's length: at most the names' lengths plus 2 each.
 */
static size_t front_code(struct ksyms *ks, const char *buf, const struct nref *r)
{
	const char *prev = NULL;
	size_t prev_len = 0, len = 0, id = 0;
	char *pool = ks->pool;

	for (size_t k = 0; k < ks->n; k++) {
		const char *name = buf + r[k].off;
		size_t shared = 0;

		/* sorted names lie anywhere in BUF: ask for one early (halves the time here) */
		if (k + 16 < ks->n)
			__builtin_prefetch(buf + r[k + 16].off);
		if (prev && r[k].len == prev_len && !memcmp(name, prev, prev_len)) {
			ks->name_id[r[k].idx] = id - 1;
			continue;
		}
		if (id % NAME_BLOCK) {
			while (shared < SHARED_MAX && shared < prev_len && shared < r[k].len &&
			       name[shared] == prev[shared])
				shared++;
			pool[len++] = shared;
		} else {
			ks->block_off[id / NAME_BLOCK] = len;
		}
		memcpy(pool + len, name + shared, r[k].len - shared);
		len += r[k].len - shared;
		pool[len++] = '\0';
		ks->name_id[r[k].idx] = id++;
		prev = name;
		prev_len = r[k].len;
	}
	ks->n_names = id;
	return len;
}

static size_t n_blocks(const struct ksyms *ks)
{
	return (ks->n_names + NAME_BLOCK - 1) / NAME_BLOCK;
}

/* R: the kept symbols' names in BUF, sorted here */
static int index_names(struct ksyms *ks, const char *buf, struct nref *r)
{
	size_t bound = 0;
	__u32 *block_off;
	char *pool;

	sort_names(r, ks->n, buf);
	for (size_t k = 0; k < ks->n; k++)
		bound += r[k].len + 2;
	ks->name_id = malloc(ks->n * sizeof(*ks->name_id));
	ks->block_off = malloc((ks->n + NAME_BLOCK - 1) / NAME_BLOCK * sizeof(*ks->block_off));
	ks->pool = malloc(bound);
	if (!ks->name_id || !ks->block_off || !ks->pool)
		return -ENOMEM;
	ks->pool_len = front_code(ks, buf, r);
	/* shrinking never fails in practice; keep the larger blocks if it does */
	pool = realloc(ks->pool, ks->pool_len);
	if (pool)
		ks->pool = pool;
	block_off = realloc(ks->block_off, n_blocks(ks) * sizeof(*block_off));
	if (block_off)
		ks->block_off = block_off;
	return 0;
}

static struct nref *name_refs(const struct kentry *e, size_t n)
{
	struct nref *r = malloc(n * sizeof(*r));

	if (!r)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		r[i].off = e[i].name_off;
		r[i].len = e[i].name_len;
		r[i].idx = i;
	}
	return r;
}

/*
 * While parsing: the text symbols so far, their names copied out of the
 * input into one buffer, so the input (8 MB of /proc/kallsyms, most of it
 * data symbols, addresses and types) is read in chunks and never held whole.
 */
struct kparse {
	struct ksyms *ks;
	struct kentry *e;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	__u32 *mod_offs;
	size_t n_mods;
	__u16 last_mod;
	bool any_addr;
	int err;
};

/* one line, [p, eol) without its newline: a text symbol is kept, anything else skipped */
static void kparse_line(struct kparse *kp, const char *p, const char *eol)
{
	struct kentry *e;
	struct kline l;

	if (kp->err || parse_line(p, eol, &l) || !is_text(l.type))
		return;
	/* offsets into the names, and into the name pool that is shorter, are __u32 */
	if (kp->names_len + l.name_len >= 0xffffffffULL) {
		kp->err = -E2BIG;
		return;
	}
	if (ARRAY_RESERVE(kp->e, kp->cap, kp->n + 1) ||
	    ARRAY_RESERVE(kp->names, kp->names_cap, kp->names_len + l.name_len)) {
		kp->err = -ENOMEM;
		return;
	}
	kp->any_addr |= l.addr != 0;
	e = &kp->e[kp->n++];
	e->addr = l.addr;
	e->name_off = kp->names_len;
	e->name_len = l.name_len;	/* < KSYMS_LINE_MAX */
	e->rank = rank_of(&l);
	e->mod = l.mod ? intern_module(kp->ks, &kp->mod_offs, &kp->n_mods, l.mod, l.mod_len,
				       &kp->last_mod)
		       : 0;
	memcpy(kp->names + kp->names_len, l.name, l.name_len);
	kp->names_len += l.name_len;
}

/* every line of [buf, buf + len); the last may lack its newline */
static void kparse_lines(struct kparse *kp, const char *buf, size_t len)
{
	const char *end = buf + len;

	for (const char *p = buf; p < end;) {
		const char *nl = memchr(p, '\n', end - p), *eol = nl ? nl : end;

		kparse_line(kp, p, eol);
		p = nl ? nl + 1 : end;
	}
}

/* the table from what KP kept; frees KP's scratch either way */
static struct ksyms *kparse_finish(struct kparse *kp)
{
	struct ksyms *ks = kp->ks;
	struct nref *r = NULL;
	int err = kp->err;

	if (!err && !kp->n)
		err = -ENODATA;
	if (!err && !kp->any_addr)
		err = -EPERM;
	if (!err && !(ks->cache = hmap__new()))
		err = -ENOMEM;
	if (!err)
		err = index_addrs(ks, kp->e, kp->n, kp->mod_offs);
	if (!err && !(r = name_refs(kp->e, ks->n)))
		err = -ENOMEM;
	free(kp->e);	/* before the pool is allocated: peak memory */
	if (!err)
		err = index_names(ks, kp->names, r);
	free(r);
	free(kp->names);
	free(kp->mod_offs);
	if (err) {
		ksyms__free(ks);
		errno = -err;
		return NULL;
	}
	return ks;
}

static int kparse_start(struct kparse *kp)
{
	*kp = (struct kparse){ .ks = calloc(1, sizeof(struct ksyms)) };
	return kp->ks ? 0 : -ENOMEM;
}

struct ksyms *ksyms__parse(const char *buf, size_t len)
{
	struct kparse kp;

	if (kparse_start(&kp))
		return NULL;
	kparse_lines(&kp, buf, len);
	return kparse_finish(&kp);
}

#define LOAD_CHUNK (64u << 10)	/* /proc/kallsyms is read this much at a time */

/*
 * Reads FD to its end (at most KSYMS_READ_CAP bytes) LOAD_CHUNK at a time,
 * parsing each chunk's whole lines; a partial line waits for the next chunk,
 * and a line longer than a chunk is malformed anyway (KSYMS_LINE_MAX).
 */
static int kparse_fd(struct kparse *kp, int fd)
{
	size_t have = 0, total = 0;
	char *buf = malloc(LOAD_CHUNK);
	bool skipping = false;	/* in a line longer than a chunk */
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (total < KSYMS_READ_CAP) {
		size_t want = LOAD_CHUNK - have < KSYMS_READ_CAP - total ? LOAD_CHUNK - have :
									  KSYMS_READ_CAP - total;
		ssize_t got = fdio__read_full(fd, buf + have, want);
		char *nl;

		if (got <= 0) {
			err = got;
			break;
		}
		total += got;
		have += got;
		nl = memrchr(buf, '\n', have);
		if (!nl) {
			if (have == LOAD_CHUNK) {	/* too long for a line: dropped to its end */
				skipping = true;
				have = 0;
			}
			continue;
		}
		if (skipping) {	/* the rest of the long line ends at the first newline */
			char *first = memchr(buf, '\n', have);

			have -= first + 1 - buf;
			memmove(buf, first + 1, have);
			skipping = false;
			nl = memrchr(buf, '\n', have);
			if (!nl)
				continue;
		}
		kparse_lines(kp, buf, nl - buf);
		have -= nl + 1 - buf;
		memmove(buf, nl + 1, have);
	}
	/* the last line without its newline, unless the cap cut it */
	if (!err && !skipping && total < KSYMS_READ_CAP)
		kparse_lines(kp, buf, have);
	free(buf);
	return err;
}

struct ksyms *ksyms__load(const char *path)
{
	struct kparse kp;
	int fd, err;

	fd = open(path ? path : "/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	err = kparse_start(&kp);
	if (err) {
		close(fd);
		errno = -err;
		return NULL;
	}
	err = kparse_fd(&kp, fd);
	close(fd);
	if (err && !kp.err)
		kp.err = err;
	return kparse_finish(&kp);
}

void ksyms__free(struct ksyms *ks)
{
	if (!ks)
		return;
	for (size_t i = 0; i < ks->n_decoded; i++)
		free(ks->decoded[i].name);
	free(ks->decoded);
	hmap__free(ks->cache);
	free(ks->lo);
	free(ks->name_id);
	free(ks->hi_runs);
	free(ks->pool);
	free(ks->block_off);
	free(ks->mod_names);
	free(ks->runs);
	free(ks);
}

/* the high-half run holding index I: the one with the largest first <= I */
static size_t hi_run_of(const struct ksyms *ks, size_t i)
{
	size_t lo = 0, hi = ks->n_hi;

	/* hi_runs[j].first <= i for every j < lo, > i for every j >= hi; runs[0].first is 0 */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->hi_runs[mid].first <= i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

__u64 ksyms__addr(const struct ksyms *ks, size_t i)
{
	if (i >= ks->n)
		return 0;
	return (__u64)ks->hi_runs[hi_run_of(ks, i)].hi << 32 | ks->lo[i];
}

ssize_t ksyms__find(const struct ksyms *ks, __u64 addr, __u64 *offset)
{
	__u32 addr_hi = addr >> 32, addr_lo = addr;
	size_t lo = 0, hi = ks->n_hi, run, end;
	ssize_t found;

	/* the last run whose high half is <= ADDR's, by the argument of hi_run_of() */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->hi_runs[mid].hi <= addr_hi)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;	/* below every run */
	run = lo - 1;
	end = run + 1 < ks->n_hi ? ks->hi_runs[run + 1].first : ks->n;
	if (ks->hi_runs[run].hi < addr_hi) {
		found = end - 1;	/* above the whole run: its last symbol */
	} else {
		/*
		 * find the largest lo[i] <= addr_lo in the run: the loop keeps
		 * lo[i] <= addr_lo for i < lo and > addr_lo for i >= hi, so the
		 * answer is lo - 1; when that is before the run, the previous
		 * run's last symbol is the largest address below (none for run 0).
		 */
		lo = ks->hi_runs[run].first;
		hi = end;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (ks->lo[mid] <= addr_lo)
				lo = mid + 1;
			else
				hi = mid;
		}
		found = (ssize_t)lo - 1;
	}
	if (found < 0)
		return -1;
	if (offset)
		*offset = addr - ksyms__addr(ks, found);
	return found;
}

/* name ID into OUT, which holds KSYMS_LINE_MAX bytes (no name is longer than a line); its length */
static size_t decode_name(const struct ksyms *ks, __u32 id, char *out)
{
	const char *p = ks->pool + ks->block_off[id / NAME_BLOCK];
	size_t len = strlen(p);

	memcpy(out, p, len + 1);
	p += len + 1;
	for (__u32 k = id % NAME_BLOCK; k; k--) {
		size_t shared = (unsigned char)*p++, rest = strlen(p);

		memcpy(out + shared, p, rest + 1);
		len = shared + rest;
		p += rest + 1;
	}
	return len;
}

static int kname_has_id(__u32 slot, const void *key, const void *ctx)
{
	const struct ksyms *ks = ctx;

	return ks->decoded[slot - 1].id == *(const __u32 *)key;
}

/* decodes name ID and keeps it; NULL on ENOMEM */
static const char *keep_name(struct ksyms *ks, __u32 id, __u64 hash)
{
	char buf[KSYMS_LINE_MAX];
	char *name = NULL;
	size_t len;

	if (ks->n_decoded == ks->cap_decoded) {
		size_t cap = ks->cap_decoded ? ks->cap_decoded * 2 : 64;
		struct kname *d = realloc(ks->decoded, cap * sizeof(*d));

		if (!d)
			goto out_nomem;
		ks->decoded = d;
		ks->cap_decoded = cap;
	}
	len = decode_name(ks, id, buf);
	name = malloc(len + 1);
	if (!name || hmap__insert(ks->cache, hash, ks->n_decoded + 1))
		goto out_nomem;
	memcpy(name, buf, len + 1);
	ks->decoded[ks->n_decoded].id = id;
	ks->decoded[ks->n_decoded++].name = name;
	ks->decoded_bytes += len + 1;
	return name;

out_nomem:
	free(name);
	errno = ENOMEM;
	return NULL;
}

const char *ksyms__name(struct ksyms *ks, size_t i)
{
	__u32 id, slot;
	__u64 hash;

	if (i >= ks->n)
		return NULL;
	id = ks->name_id[i];
	hash = hash_u64(id, 0);
	slot = hmap__find(ks->cache, hash, kname_has_id, &id, ks);
	return slot ? ks->decoded[slot - 1].name : keep_name(ks, id, hash);
}

const char *ksyms__module(const struct ksyms *ks, size_t i)
{
	size_t lo = 0, hi = ks->n_runs;

	if (i >= ks->n)
		return NULL;
	/* the run with the largest first <= i, by the argument of hi_run_of() */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->runs[mid].first <= i)
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

size_t ksyms__bytes(const struct ksyms *ks)
{
	size_t bytes = sizeof(*ks);

	bytes += ks->n * (sizeof(*ks->lo) + sizeof(*ks->name_id));
	bytes += ks->n_hi * sizeof(*ks->hi_runs);
	bytes += ks->pool_len + n_blocks(ks) * sizeof(*ks->block_off);
	bytes += ks->mod_names_len + ks->n_runs * sizeof(*ks->runs);
	bytes += hmap__bytes(ks->cache) + ks->cap_decoded * sizeof(*ks->decoded);
	return bytes + ks->decoded_bytes;
}
