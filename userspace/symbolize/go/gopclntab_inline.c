/* gopclntab_inline.c -- Go inline trees: locating FUNCDATA_InlTree per release, expanding frames */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gopclntab_int.h"
#include "lib/array.h"

#define INL_COUNT_MAX (1u << 16)	/* entries of one function's tree; more is corrupt */
#define MD_CANDIDATES_MAX 16
/* functions sampled to tell Go 1.12 from 1.13 - 1.15 */
#define SCORE_FUNCS 64
/* moduledata words up to gofunc: pcHeader, 6 slices, findfunctab, minpc ... rodata, gofunc */
#define MD_WORDS_118 39
#define MD_WORDS_120 41			/* covctrs, ecovctrs were added before end */

static size_t entry_size(enum inl_kind k)
{
	return k == INL_CALL20 ? 20 : 16;
}

static __s32 lds32(const __u8 *p, bool be)
{
	return (__s32)ld32(p, be);
}

static __s16 lds16(const __u8 *p, bool be)
{
	return (__s16)(be ? (p[0] << 8 | p[1]) : (p[1] << 8 | p[0]));
}

/*
 * Whether MD is runtime.firstmoduledata (or a plugin's moduledata) of this
 * table: its slices must point at the table's regions and its text at the
 * table's textStart. Then *GOFUNC is its gofunc, the base of funcdata offsets.
 */
static bool moduledata_at(struct gopcln_elf *ef, const struct gopclntab *t, __u64 md,
			  __u64 *gofunc)
{
	size_t ps = t->ptr_size, n = t->ver == PCLN_120 ? MD_WORDS_120 : MD_WORDS_118;
	__u64 w[MD_WORDS_120], base = t->vaddr, off, avail;

	for (size_t i = 0; i < n; i++)
		if (gopcln_elf_word(ef, md + i * ps, ps, t->be, &w[i]))
			return false;
	if (w[0] != base || w[1] != base + t->names || w[4] != base + t->cutab ||
	    w[7] != base + t->filetab || w[10] != base + t->pctab || w[13] != base + t->functab ||
	    w[16] != base + t->functab || w[22] != t->text_start)
		return false;
	*gofunc = w[n - 1];
	return !gopcln_elf_vaddr_span(ef, *gofunc, &off, &avail);
}

struct md_scan {
	const struct gopclntab *t;
	__u64 gofunc;
};

static int try_moduledata(struct gopcln_elf *ef, const __u8 *p, size_t avail, __u64 vaddr,
			  __u64 rest, void *arg)
{
	struct md_scan *s = arg;
	size_t ps = s->t->ptr_size;

	if (avail < ps || (ps == 8 ? ld64(p, s->t->be) : ld32(p, s->t->be)) != s->t->vaddr)
		return 0;
	return moduledata_at(ef, s->t, vaddr, &s->gofunc) ? 1 : 0;
}

/*
 * Go 1.18+: funcdata are offsets from moduledata.gofunc (the go:func.* symbol).
 * Stripped binaries have no symbol for it, so moduledata is found by its first
 * word, a pointer to the pcHeader: in the file, or (PIE linked by lld) only
 * in a RELATIVE relocation's addend. 0 when not found.
 */
static __u64 find_gofunc(struct gopclntab *t, struct gopcln_elf *ef)
{
	struct md_scan s = { .t = t };
	__u64 cands[MD_CANDIDATES_MAX];
	__u8 pat[1][4];
	int n;

	/* the pointer's first four bytes, as the target stores it */
	for (size_t i = 0; i < 4; i++)
		pat[0][i] = t->be ? t->vaddr >> (8 * (t->ptr_size - 1 - i)) : t->vaddr >> (8 * i);
	/* moduledata lives in .noptrdata: writable segments first */
	if (gopcln_elf_scan(ef, (const __u8(*)[4])pat, 1, t->ptr_size, true, try_moduledata,
			    &s) == 1)
		return s.gofunc;
	n = gopcln_elf_relocs_to(ef, t->vaddr, cands, MD_CANDIDATES_MAX);
	for (int i = 0; i < n; i++)
		if (moduledata_at(ef, t, cands[i], &s.gofunc))
			return s.gofunc;
	return 0;
}

/* where FUNCDATA index FD of the function points, in the file's addresses; 0 when absent */
static __u64 funcdata_addr(const struct gopclntab *t, struct gopcln_elf *ef,
			   const struct func_info *fi, __u8 fd, __u64 gofunc)
{
	size_t ps = t->ptr_size, at;
	__u64 v;
	__u32 off;

	if (fd >= fi->nfuncdata)
		return 0;
	if (t->ver >= PCLN_118) {
		if (!pcln_u32(t, fi->funcdata_arr + 4 * (size_t)fd, &off) || off == ~0u)
			return 0;
		return gofunc + off;
	}
	/* up to Go 1.17 the funcdata are pointers; a PIE may keep them in relocations only */
	at = fi->funcdata_arr + ps * fd;
	if (!pcln_word(t, at, ps, &v))
		return 0;
	return v ? v : gopcln_elf_reloc_addend(ef, t->vaddr + at);
}

/* the tree's address and entry count (largest PCDATA_InlTreeIndex + 1) of one function */
static bool tree_of(const struct gopclntab *t, struct gopcln_elf *ef, const struct func_info *fi,
		    __u8 pc_idx, __u8 fd_idx, __u64 gofunc, __u64 *addr, __u32 *count)
{
	__u32 pcoff;
	__s32 max;

	if (pc_idx >= fi->npcdata || !pcln_u32(t, fi->pcdata_arr + 4 * (size_t)pc_idx, &pcoff) ||
	    !pcoff)
		return false;
	*addr = funcdata_addr(t, ef, fi, fd_idx, gofunc);
	if (!*addr || !pcln_pcvalue_max(t, pcoff, fi->entry, &max) || max < 0 ||
	    (__u32)max >= INL_COUNT_MAX)
		return false;
	*count = max + 1;
	return true;
}

/* a Go 1.12 - 1.19 entry: sane parent, line, call site and a name that starts a string */
static bool call20_plausible(const struct gopclntab *t, const struct func_info *fi, const __u8 *e,
			     __u32 count)
{
	__s32 parent = lds16(e, t->be), line = lds32(e + 8, t->be), name = lds32(e + 12, t->be);
	__s32 ppc = lds32(e + 16, t->be);

	if (parent < -1 || parent >= (__s32)count || line <= 0 || line > (1 << 24) || ppc < 0 ||
	    (__u64)ppc >= fi->end - fi->entry || !pcln_name(t, name))
		return false;
	/* Go 1.12 - 1.15 name offsets are from the table's start: a name follows a NUL */
	return name > 0 && !t->data[name - 1];
}

/* how well (PCDATA, FUNCDATA) indexes PC, FD read as 20-byte trees: valid minus invalid entries */
static long score_layout(struct gopclntab *t, struct gopcln_elf *ef, __u8 pc, __u8 fd)
{
	__u8 e[20];
	long score = 0;
	int funcs = 0;

	for (__u32 i = 0; i < t->nfunc && funcs < SCORE_FUNCS; i++) {
		struct func_info fi;
		__u32 count;
		__u64 addr;

		if (pcln_func(t, i, &fi) || !tree_of(t, ef, &fi, pc, fd, 0, &addr, &count))
			continue;
		funcs++;
		for (__u32 k = 0; k < count && k < 8; k++) {
			if (gopcln_elf_read_vaddr(ef, addr + 20 * k, e, sizeof(e)) ||
			    !call20_plausible(t, &fi, e, count))
				score--;
			else
				score++;
		}
	}
	return score;
}

/* which release's tree layout and indexes the table uses; false when none can be told */
static bool pick_layout(struct gopclntab *t, struct gopcln_elf *ef)
{
	long s13, s12;

	switch (t->ver) {
	case PCLN_120:
		t->inl_kind = INL_CALL16;
		t->pcdata_inl = 2;
		t->funcdata_inl = 3;
		return true;
	case PCLN_118:
	case PCLN_116:
		t->inl_kind = INL_CALL20;
		t->pcdata_inl = 2;
		t->funcdata_inl = 3;
		return true;
	default:
		break;
	}
	/* Go 1.2 - 1.15 share a magic: the _func layout tells 1.12+ from older releases */
	if (t->nfuncdata32) {
		t->inl_kind = INL_OLD16;	/* Go 1.9 - 1.11; older releases have no trees */
		t->pcdata_inl = 1;
		t->funcdata_inl = 2;
		return true;
	}
	/* Go 1.13 - 1.15 moved the indexes to 2 and 4; 1.12 has 1 and 2: keep what reads sanely */
	s13 = score_layout(t, ef, 2, 4);
	s12 = score_layout(t, ef, 1, 2);
	if (s13 <= 0 && s12 <= 0)
		return false;
	t->inl_kind = INL_CALL20;
	t->pcdata_inl = s13 >= s12 ? 2 : 1;
	t->funcdata_inl = s13 >= s12 ? 4 : 2;
	return true;
}

struct pending_tree {
	__u64 addr;
	__u32 func, count;
};

static int cmp_pending(const void *a, const void *b)
{
	const struct pending_tree *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmp_ref(const void *a, const void *b)
{
	const struct inl_ref *x = a, *y = b;

	return x->func < y->func ? -1 : x->func > y->func;
}

/* copies the trees into one pool; a tree that cannot be read leaves its function without */
static int read_trees(struct gopclntab *t, struct gopcln_elf *ef, const struct pending_tree *pt,
		      size_t n)
{
	size_t es = entry_size(t->inl_kind), pool_cap = 0, total = 0;
	int err;

	for (size_t i = 0; i < n; i++)
		total += (size_t)pt[i].count * es;
	total = total < GOPCLNTAB_INL_MAX ? total : GOPCLNTAB_INL_MAX;
	t->inl = malloc(n * sizeof(*t->inl));
	if (!t->inl || ARRAY_RESERVE(t->inl_pool, pool_cap, total))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t len = (size_t)pt[i].count * es;

		if (t->inl_pool_size + len > GOPCLNTAB_INL_MAX)
			break;
		err = gopcln_elf_read_vaddr(ef, pt[i].addr, t->inl_pool + t->inl_pool_size, len);
		if (err == -ENOMEM)
			return err;
		if (err)
			continue;
		t->inl[t->n_inl++] = (struct inl_ref){
			.func = pt[i].func,
			.count = pt[i].count,
			.pool_off = t->inl_pool_size,
		};
		t->inl_pool_size += len;
	}
	/* lookups find a function's tree by binary search */
	if (t->n_inl)
		qsort(t->inl, t->n_inl, sizeof(*t->inl), cmp_ref);
	return 0;
}

/*
 * Every function's tree, read in address order: the trees are scattered
 * through go:func.*, and reading them sorted lets one read-ahead window serve
 * many of them.
 */
static int collect_trees(struct gopclntab *t, struct gopcln_elf *ef, __u64 gofunc)
{
	struct pending_tree *pt = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	for (__u32 i = 0; i < t->nfunc; i++) {
		struct func_info fi;
		__u32 count;
		__u64 addr;

		if (pcln_func(t, i, &fi) ||
		    !tree_of(t, ef, &fi, t->pcdata_inl, t->funcdata_inl, gofunc, &addr, &count))
			continue;
		err = ARRAY_RESERVE(pt, cap, n + 1);
		/* the list is the file's until freed: a jump out of a mapped read leaves it to close */
		ef->trees = pt;
		if (err)
			goto out;
		pt[n++] = (struct pending_tree){ .addr = addr, .func = i, .count = count };
	}
	if (n) {
		qsort(pt, n, sizeof(*pt), cmp_pending);
		err = read_trees(t, ef, pt, n);
	}
out:
	free(pt);
	ef->trees = NULL;
	return err;
}

int gopcln_inline_locate(struct gopclntab *t, struct gopcln_elf *ef)
{
	__u64 gofunc = 0;
	void *p;
	int err;

	if (!pick_layout(t, ef))
		goto none;
	if (t->ver >= PCLN_118 && !(gofunc = find_gofunc(t, ef)))
		goto none;
	err = collect_trees(t, ef, gofunc);
	if (err) {
		free(t->inl);
		free(t->inl_pool);
		t->inl = NULL;
		t->inl_pool = NULL;
		t->n_inl = t->inl_pool_size = 0;
		return err;
	}
	if (!t->n_inl)
		goto none;
	/* give back the growth slack: the trees live as long as the table */
	p = realloc(t->inl_pool, t->inl_pool_size);
	t->inl_pool = p ? p : t->inl_pool;
	p = realloc(t->inl, t->n_inl * sizeof(*t->inl));
	t->inl = p ? p : t->inl;
	return 0;
none:
	free(t->inl);
	free(t->inl_pool);
	t->inl = NULL;
	t->inl_pool = NULL;
	t->n_inl = t->inl_pool_size = 0;
	t->inl_kind = INL_NONE;
	return 0;
}

static const struct inl_ref *find_tree(const struct gopclntab *t, __u32 func)
{
	size_t lo = 0, hi = t->n_inl;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->inl[mid].func < func)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->n_inl && t->inl[lo].func == func ? &t->inl[lo] : NULL;
}

/* Go 1.9 - 1.11: entries carry the call site's file and line themselves */
static int expand_old(const struct gopclntab *t, const struct func_info *fi, const __u8 *tree,
		      __u32 count, __s32 ix, __u64 pc, struct src_line *out, int max)
{
	const char *file = pcln_file(t, fi, pc);
	__u32 line = pcln_line(t, fi, pc);
	int n = 0;

	for (__u32 steps = 0; ix >= 0 && (__u32)ix < count && steps < count; steps++) {
		const __u8 *e = tree + 16 * (size_t)ix;
		const char *name = pcln_name(t, lds32(e + 12, t->be));
		__s32 l = lds32(e + 8, t->be);

		if (!name)
			break;
		/* past MAX - 1 frames keep walking: the physical frame needs its call site */
		if (n < max - 1)
			out[n++] = (struct src_line){
				.function = name, .file = file, .line = line
			};
		file = pcln_file_index(t, lds32(e + 4, t->be));
		line = l < 0 ? 0 : l;
		ix = lds32(e, t->be);
	}
	out[n++] = (struct src_line){
		.function = pcln_name(t, fi->nameoff), .file = file, .line = line
	};
	return n;
}

/*
 * Go 1.12+: each entry names the inlined function and parentPc, an
 * instruction of the caller's code whose position is the call site. The
 * frame's file:line come from the pc tables at pc, then at entry + parentPc
 * for the caller, whose own inline index says whether it was inlined too.
 */
int gopcln_inline_expand(const struct gopclntab *t, const struct func_info *fi, __u64 pc,
			 struct src_line *out, int max)
{
	const struct inl_ref *ref = find_tree(t, fi->idx);
	bool c20 = t->inl_kind == INL_CALL20;
	const __u8 *tree;
	__u32 pcoff;
	__s32 ix;
	int n = 0;

	if (!ref || !pcln_name(t, fi->nameoff) ||
	    !pcln_u32(t, fi->pcdata_arr + 4 * (size_t)t->pcdata_inl, &pcoff))
		return 0;
	tree = t->inl_pool + ref->pool_off;
	ix = pcln_pcvalue(t, pcoff, fi->entry, pc);
	if (t->inl_kind == INL_OLD16)
		return expand_old(t, fi, tree, ref->count, ix, pc, out, max);
	/* each step moves to a caller; a corrupt tree cannot loop more than it has entries */
	for (__u32 steps = 0; ix >= 0 && (__u32)ix < ref->count && steps < ref->count; steps++) {
		const __u8 *e = tree + entry_size(t->inl_kind) * (size_t)ix;
		const char *name = pcln_name(t, lds32(e + (c20 ? 12 : 4), t->be));
		__s32 ppc = lds32(e + (c20 ? 16 : 8), t->be);

		if (!name)
			break;
		/* past MAX - 1 frames keep walking: the physical frame needs its call site */
		if (n < max - 1)
			out[n++] = (struct src_line){
				.function = name,
				.file = pcln_file(t, fi, pc),
				.line = pcln_line(t, fi, pc),
			};
		if (ppc < 0 || (__u64)ppc >= fi->end - fi->entry)
			break;
		pc = fi->entry + ppc;
		ix = pcln_pcvalue(t, pcoff, fi->entry, pc);
	}
	out[n++] = (struct src_line){
		.function = pcln_name(t, fi->nameoff),
		.file = pcln_file(t, fi, pc),
		.line = pcln_line(t, fi, pc),
	};
	return n;
}
