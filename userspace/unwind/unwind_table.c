/* unwind_table.c -- parsed FDE rows into one sorted, gap-marked, merged table; row lookups */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "unwind_table_int.h"

static int on_fde(void *ctx, __u64 start, __u64 end)
{
	struct builder *b = ctx;

	b->skip = end > UINT32_MAX;
	if (b->skip) {
		b->stats->fdes_above_4g++;
		return 1;
	}
	if (ARRAY_RESERVE(b->fdes, b->capf, b->nf + 1))
		return -ENOMEM;
	b->fdes[b->nf] = (struct fde_rec){
		.start = start, .end = end, .first = b->n, .seq = b->nf, .prio = b->prio,
	};
	b->nf++;
	return 0;
}

static int on_row(void *ctx, __u64 pc, const struct unwind_row *row)
{
	struct builder *b = ctx;

	if (b->n >= UNWIND_TABLE_ROWS_MAX)
		return -E2BIG;
	if (ARRAY_RESERVE(b->rows, b->cap, b->n + 1))
		return -ENOMEM;
	/* below the FDE's end, which on_fde() checked fits 32 bits */
	b->rows[b->n] = *row;
	b->rows[b->n].pc = pc;
	b->n++;
	b->fdes[b->nf - 1].n++;
	return 0;
}

int builder__add(struct builder *b, const struct ehframe_section *sec, __u32 prio)
{
	static const struct ehframe_ops ops = { .fde = on_fde, .row = on_row };

	b->prio = prio;
	return ehframe__parse(sec, &ops, b, &b->stats->cfi);
}

int builder__add_range(struct builder *b, __u64 start, __u64 end, const struct unwind_row *row)
{
	int err;

	b->prio = 0;
	err = on_fde(b, start, end);
	if (err)
		return err < 0 ? err : 0;	/* 1: above 4 GiB, skipped and counted */
	return on_row(b, start, row);
}

void builder__release(struct builder *b)
{
	free(b->rows);
	free(b->fdes);
	b->rows = NULL;
	b->fdes = NULL;
	b->n = b->cap = b->nf = b->capf = 0;
}

static int cmp_fde(const void *a, const void *b)
{
	const struct fde_rec *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->prio != y->prio)
		return x->prio < y->prio ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* linkers emit FDEs mostly in address order: skip the sort when they are */
static void sort_fdes(struct builder *b)
{
	for (size_t i = 1; i < b->nf; i++) {
		if (cmp_fde(&b->fdes[i - 1], &b->fdes[i]) > 0) {
			qsort(b->fdes, b->nf, sizeof(*b->fdes), cmp_fde);
			return;
		}
	}
}

struct out {
	struct unwind_row *r;
	size_t n;
};

static bool same_rule(const struct unwind_row *a, const struct unwind_row *b)
{
	return a->cfa_type == b->cfa_type && a->rbp_off == b->rbp_off && a->cfa_off == b->cfa_off;
}

/* appends ROW at PC: a row already at PC is replaced, one equal to the previous is merged */
static void push(struct out *o, __u32 pc, const struct unwind_row *row)
{
	struct unwind_row x = *row;

	x.pc = pc;
	if (o->n && o->r[o->n - 1].pc == pc)
		o->n--;
	if (o->n && same_rule(&o->r[o->n - 1], &x))
		return;
	o->r[o->n++] = x;
}

static void push_none(struct out *o, __u32 pc)
{
	static const struct unwind_row none = { .cfa_type = UNWIND_CFA_NONE };

	push(o, pc, &none);
}

/* F's rows from LO on: the row holding at LO moves to LO */
static void emit_fde(struct out *o, const struct builder *b, const struct fde_rec *f, __u32 lo)
{
	const struct unwind_row *r = b->rows + f->first;
	__u32 k = 0;

	while (k + 1 < f->n && r[k + 1].pc <= lo)
		k++;
	push(o, lo, &r[k]);
	for (k++; k < f->n; k++)
		push(o, r[k].pc, &r[k]);
}

/*
 * One pass over the FDEs sorted by start: each covers [lo, end) where lo is
 * its start moved past what earlier FDEs cover. An .eh_frame FDE starting
 * inside .debug_frame coverage takes the rest of that range back (rows from
 * lo on are dropped). The output never has more rows than the input plus one
 * gap row per FDE plus the final one, so OUT is sized once.
 */
static void resolve(const struct builder *b, struct out *o, struct unwind_table_stats *st)
{
	__u32 cover = 0, eh_cover = 0;
	bool have = false;

	for (size_t i = 0; i < b->nf; i++) {
		const struct fde_rec *f = &b->fdes[i];
		__u32 lo = f->start;

		if (!f->n)
			continue;
		if (have && lo < cover) {
			st->fdes_overlapped++;
			if (!f->prio && eh_cover < cover) {
				lo = lo > eh_cover ? lo : eh_cover;
				while (o->n && o->r[o->n - 1].pc >= lo)
					o->n--;
				cover = lo;
			} else {
				lo = cover;
			}
		}
		if (lo >= f->end)
			continue;
		if (have && lo > cover)
			push_none(o, cover);
		emit_fde(o, b, f, lo);
		cover = f->end;
		if (!f->prio)
			eh_cover = f->end;
		have = true;
	}
	if (have)
		push_none(o, cover);
}

int builder__finish(struct builder *b, struct unwind_table *t, size_t extra_bytes)
{
	struct out o = {};
	size_t peak;
	void *shrunk;

	sort_fdes(b);
	o.r = malloc((b->n + b->nf + 1) * sizeof(*o.r));
	if (!o.r)
		return -ENOMEM;
	peak = extra_bytes + b->cap * sizeof(*b->rows) + b->capf * sizeof(*b->fdes) +
	       (b->n + b->nf + 1) * sizeof(*o.r);
	if (peak > t->stats.peak_bytes)
		t->stats.peak_bytes = peak;
	resolve(b, &o, &t->stats);
	builder__release(b);
	shrunk = realloc(o.r, (o.n ? o.n : 1) * sizeof(*o.r));
	t->rows = shrunk ? shrunk : o.r;
	t->n = o.n;
	return 0;
}

struct unwind_table *unwind_table__from_sections(const void *eh, size_t eh_len, __u64 eh_vaddr,
						 const void *dbg, size_t dbg_len)
{
	struct ehframe_section sec = {};
	struct unwind_table *t;
	struct builder b = {};
	int err = 0;

	if ((!eh || !eh_len) && (!dbg || !dbg_len)) {
		errno = ENOENT;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	b.stats = &t->stats;
	if (eh && eh_len) {
		sec = (struct ehframe_section){ .data = eh, .len = eh_len, .vaddr = eh_vaddr };
		t->stats.eh_frame_bytes = eh_len;
		err = builder__add(&b, &sec, 0);
	}
	if (!err && dbg && dbg_len) {
		sec = (struct ehframe_section){
			.data = dbg, .len = dbg_len, .format = EHFRAME_DEBUG_FRAME,
		};
		t->stats.debug_frame_bytes = dbg_len;
		err = builder__add(&b, &sec, 1);
	}
	if (!err)
		err = builder__finish(&b, t, 0);
	if (err)
		goto out_free;
	return t;

out_free:
	builder__release(&b);
	unwind_table__free(t);
	errno = -err;
	return NULL;
}

void unwind_table__free(struct unwind_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t);
}

const struct unwind_row *unwind_table__rows(const struct unwind_table *t, size_t *n)
{
	*n = t->n;
	return t->rows;
}

const struct unwind_row *unwind_table__find(const struct unwind_table *t, __u64 pc)
{
	size_t lo = 0, hi = t->n;

	/*
	 * find the largest row pc <= pc: rows are sorted by pc and the loop keeps
	 * rows[i].pc <= pc for every i < lo and > pc for every i >= hi, so when
	 * lo == hi the answer is lo - 1 (none when lo is 0).
	 */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &t->rows[lo - 1] : NULL;
}

int unwind_table__vaddr_delta(const struct unwind_table *t, __u64 pgoff, __s64 *delta)
{
	return unwind_loads__vaddr_delta(t->loads, t->n_loads, pgoff, delta);
}

const struct unwind_load *unwind_table__loads(const struct unwind_table *t, size_t *n)
{
	*n = t->n_loads;
	return t->loads;
}

int unwind_loads__vaddr_delta(const struct unwind_load *loads, size_t n, __u64 pgoff,
			      __s64 *delta)
{
	const struct unwind_load *found = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct unwind_load *l = &loads[i];

		/* the mapping starts at the page holding the segment's first byte */
		if (pgoff < (l->offset & ~4095ULL) || pgoff >= l->offset + l->filesz)
			continue;
		if (!found || (l->exec && !found->exec))
			found = l;
	}
	if (!found)
		return -ENOENT;
	*delta = (__s64)(found->vaddr - found->offset);
	return 0;
}

const char *unwind_table__build_id(const struct unwind_table *t)
{
	return t->build_id;
}

size_t unwind_table__mem_size(const struct unwind_table *t)
{
	return sizeof(*t) + t->n * sizeof(*t->rows);
}

const struct unwind_table_stats *unwind_table__stats(const struct unwind_table *t)
{
	return &t->stats;
}
