/* goheap_walk.c -- walks a Go process's memory-profile bucket list, every read bounded and checked */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "goheap_int.h"
#include "lib/array.h"
#include "lib/hashmap.h"

bool goheap_bucket_ok(const __u64 *w)
{
	return w[BK_TYP] == GO_BUCKET_MEM && w[BK_NSTK] >= 1 && w[BK_NSTK] <= GO_STACK_MAX;
}

static int rec_eq(__u32 id, const void *key, const void *ctx)
{
	const struct goheap_snapshot *s = ctx;

	return s->recs[id - 1].addr == *(const __u64 *)key;
}

/* a bucket of a stack this deep or less is read whole with its header, in one system call */
#define SHALLOW 32

/*
 * One bucket at ADDR, appended to OUT: W holds its header, then what was
 * read past it (HAVE words of stack and record, maybe none). 0, -EFAULT or
 * -ENOMEM.
 */
static int add_bucket(__u64 addr, const __u64 *w, size_t have, goheap_read_fn read, void *ctx,
		      struct goheap_snapshot *out, struct goheap_walk_stats *ws)
{
	size_t nstk = w[BK_NSTK], keep = nstk < GOHEAP_MAX_DEPTH ? nstk : GOHEAP_MAX_DEPTH;
	size_t need = nstk + GO_MEMREC_CYCLES * 4;
	__u64 body[GO_STACK_MAX + GO_MEMREC_CYCLES * 4];
	const __u64 *b = w + GO_BUCKET_WORDS, *mr;
	struct goheap_record *r;

	/* the stack and the memRecord after it: at most 8 KiB + 128 bytes, one more read */
	if (need > have) {
		if (read(ctx, addr + GO_BUCKET_HDR, body, need * 8))
			return -EFAULT;
		b = body;
	}
	if (ARRAY_RESERVE(out->recs, out->cap, out->n + 1) ||
	    ARRAY_RESERVE(out->pcs, out->cap_pcs, out->n_pcs + keep))
		return -ENOMEM;
	if (keep < nstk)
		ws->depth_cap++;
	mr = b + nstk;
	r = &out->recs[out->n++];
	*r = (struct goheap_record){ .addr = addr, .allocs = mr[0], .frees = mr[1],
				     .alloc_bytes = mr[2], .free_bytes = mr[3],
				     .pc_off = out->n_pcs, .n_pcs = keep };
	memcpy(out->pcs + out->n_pcs, b, keep * 8);
	out->n_pcs += keep;
	return 0;
}

/*
 * The future cycles of the buckets (read again: they are only needed before
 * the first GC), added to the active counts, as runtime.MemProfile does when
 * every active count is zero.
 */
static void add_futures(goheap_read_fn read, void *ctx, struct goheap_snapshot *out)
{
	for (size_t i = 0; i < out->n; i++) {
		struct goheap_record *r = &out->recs[i];
		__u64 nstk = 0, mr[GO_MEMREC_CYCLES * 4];

		if (read(ctx, r->addr + BK_NSTK * 8, &nstk, 8) || nstk < 1 || nstk > GO_STACK_MAX ||
		    read(ctx, r->addr + GO_BUCKET_HDR + nstk * 8, mr, sizeof(mr)))
			continue;
		for (int c = 1; c < GO_MEMREC_CYCLES; c++) {
			r->allocs += mr[c * 4];
			r->frees += mr[c * 4 + 1];
			r->alloc_bytes += mr[c * 4 + 2];
			r->free_bytes += mr[c * 4 + 3];
		}
	}
}

int goheap_walk(__u64 head, goheap_read_fn read, void *ctx, size_t max_buckets,
		struct goheap_snapshot *out, struct goheap_walk_stats *ws)
{
	struct hmap *seen = hmap__new();
	bool any_active = false;
	__u64 addr = head, w[GO_BUCKET_WORDS + SHALLOW + GO_MEMREC_CYCLES * 4];
	size_t have;
	int err = 0;

	if (!seen)
		return -ENOMEM;
	while (addr) {
		if (out->n >= max_buckets) {
			ws->bucket_cap++;
			break;
		}
		/* another process writes this list: it may loop back on itself */
		if (hmap__find(seen, hash_u64(addr, 0), rec_eq, &addr, out)) {
			ws->cycles++;
			break;
		}
		/* a shallow bucket whole, or (the read ran off the mapping) its header alone */
		have = SHALLOW + GO_MEMREC_CYCLES * 4;
		if (!(addr & 7) && read(ctx, addr, w, sizeof(w)))
			have = 0;
		if (addr & 7 || (!have && read(ctx, addr, w, GO_BUCKET_HDR)) || !goheap_bucket_ok(w)) {
			ws->bad++;
			break;
		}
		err = add_bucket(addr, w, have, read, ctx, out, ws);
		if (err == -EFAULT) {
			ws->bad++;	/* it went while we read: what came before stands */
			err = 0;
			break;
		}
		if (!err)
			err = hmap__insert(seen, hash_u64(addr, 0), out->n);
		if (err)
			break;
		ws->buckets++;
		any_active |= out->recs[out->n - 1].allocs || out->recs[out->n - 1].frees;
		addr = w[BK_ALLNEXT];
	}
	if (!err && !any_active)
		add_futures(read, ctx, out);
	hmap__free(seen);
	return err;
}
