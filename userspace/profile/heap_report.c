/* heap_report.c -- Go heap profile records -> pprof samples: named stacks, scaled counts, deltas */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "heap_report.h"
#include "lib/hashmap.h"

#define HEAP_LABELS_MAX 8

void heap_report__opts(struct pprof_opts *o, __s64 rate, __s64 time_nanos, __s64 duration_nanos)
{
	*o = (struct pprof_opts){
		.sample_types = { { "alloc_objects", "count" }, { "alloc_space", "bytes" },
				  { "inuse_objects", "count" }, { "inuse_space", "bytes" } },
		.n_sample_types = 4,
		.period_type = { "space", "bytes" },
		.period = rate,
		.time_nanos = time_nanos,
		.duration_nanos = duration_nanos,
	};
}

void heap_report__scale(__u64 count, __u64 bytes, __s64 rate, __s64 *out_count, __s64 *out_bytes)
{
	double scale;

	if (!count || !bytes) {
		*out_count = *out_bytes = 0;
		return;
	}
	if (rate <= 1) {
		/* every allocation was recorded (1), or the rate is unknown: as recorded */
		*out_count = (__s64)count;
		*out_bytes = (__s64)bytes;
		return;
	}
	/* a sample of average size s was taken with probability 1 - e^(-s/rate) */
	scale = 1 / (1 - exp(-((double)bytes / count) / rate));
	*out_count = (__s64)(count * scale);
	*out_bytes = (__s64)(bytes * scale);
}

/*
 * Whether runtime/pprof hides the frame of return address PC: it asks
 * runtime.FuncForPC(PC) (the address itself, not the call before it) for
 * the innermost function there, and hides a runtime one. At a return
 * address the inlined calls may already be left: the call's own innermost
 * function can differ, so this lookup is not the one that names the frame.
 */
static bool hidden_by_pprof(struct symbolizer *sym, const struct proc_image *img, __u64 pc)
{
	struct sym_frame f;
	const char *name;

	symbolizer__user(sym, img, pc, &f);
	name = f.n_lines ? f.lines[0].function : f.name;
	return name && (!strncmp(name, "runtime.", 8) || !strncmp(name, "internal/runtime/", 17));
}

/* runtime/pprof shows a stack from its first frame it does not hide on, or whole if it hides all */
static int first_shown(struct symbolizer *sym, const struct proc_image *img, const __u64 *pcs,
		       int n)
{
	int i = 0;

	while (i < n && hidden_by_pprof(sym, img, pcs[i]))
		i++;
	return i == n ? 0 : i;
}

static int rec_eq(__u32 id, const void *key, const void *ctx)
{
	const struct goheap_snapshot *s = ctx;

	return s->recs[id - 1].addr == *(const __u64 *)key;
}

/* an index of PREV's records by bucket address; NULL with errno set */
static struct hmap *index_prev(const struct goheap_snapshot *prev)
{
	struct hmap *h = hmap__new();

	for (size_t i = 0; h && i < prev->n; i++) {
		if (hmap__insert(h, hash_u64(prev->recs[i].addr, 0), i + 1)) {
			hmap__free(h);
			return NULL;
		}
	}
	return h;
}

/* the four values of record R, its alloc counts less those of P (NULL: none) */
static void values_of(const struct goheap_record *r, const struct goheap_record *p, __s64 rate,
		      __s64 *v)
{
	__u64 allocs = r->allocs, bytes = r->alloc_bytes;
	__u64 live = r->allocs > r->frees ? r->allocs - r->frees : 0;
	__u64 live_bytes = r->alloc_bytes > r->free_bytes ? r->alloc_bytes - r->free_bytes : 0;

	if (p) {
		/* counts only grow; a smaller one was read mid-update: nothing new */
		allocs = allocs > p->allocs ? allocs - p->allocs : 0;
		bytes = bytes > p->alloc_bytes ? bytes - p->alloc_bytes : 0;
	}
	heap_report__scale(allocs, bytes, rate, &v[HEAP_ALLOC_OBJECTS], &v[HEAP_ALLOC_SPACE]);
	heap_report__scale(live, live_bytes, rate, &v[HEAP_INUSE_OBJECTS], &v[HEAP_INUSE_SPACE]);
}

static int add_record(struct pprof_builder *b, struct stack *st, struct symbolizer *sym,
		      const struct proc_image *img, const struct goheap_snapshot *snap,
		      const struct goheap_record *r, const __s64 *v, const struct pprof_label *labels,
		      int n_labels)
{
	const __u64 *pcs = snap->pcs + r->pc_off;
	int skip = first_shown(sym, img, pcs, r->n_pcs);
	struct pprof_label l[HEAP_LABELS_MAX + 1];
	int n = n_labels < HEAP_LABELS_MAX ? n_labels : HEAP_LABELS_MAX;

	if (n > 0)	/* a one-shot's records carry no labels: LABELS may be NULL */
		memcpy(l, labels, n * sizeof(*l));
	if (r->allocs && r->alloc_bytes / r->allocs)
		l[n++] = (struct pprof_label){ .key = "bytes",
					       .num = (__s64)(r->alloc_bytes / r->allocs) };
	stack__resolve_return_pcs(st, sym, img, pcs + skip, r->n_pcs - skip, snap->expanded);
	return pprof_builder__add(b, st, v, l, n);
}

int heap_report__add(struct pprof_builder *b, struct symbolizer *sym, const struct proc_image *img,
		     const struct goheap_snapshot *snap, const struct goheap_snapshot *prev,
		     const struct pprof_label *labels, int n_labels)
{
	struct stack *st = malloc(sizeof(*st));
	struct hmap *idx = prev ? index_prev(prev) : NULL;
	int err = 0;

	if (!st || (prev && !idx)) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < snap->n && !err; i++) {
		const struct goheap_record *r = &snap->recs[i], *p = NULL;
		__s64 v[4];
		__u32 id;

		if (idx && (id = hmap__find(idx, hash_u64(r->addr, 0), rec_eq, &r->addr, prev)))
			p = &prev->recs[id - 1];
		values_of(r, p, snap->rate, v);
		/* runtime/pprof writes every record; a delta leaves out those with nothing new */
		if (!prev || v[0] || v[1] || v[2] || v[3])
			err = add_record(b, st, sym, img, snap, r, v, labels, n_labels);
	}
out:
	hmap__free(idx);
	free(st);
	return err;
}
