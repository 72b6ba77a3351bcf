/* goheap_int.h -- internals of goheap/: the runtime's bucket layout, the walk and the symbol finder */
#ifndef EBPFPROF_GOHEAP_INT_H
#define EBPFPROF_GOHEAP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "goheap.h"

/*
 * runtime/mprof.go, the same from Go 1.18 to 1.24 on 64-bit targets: a
 * bucket is six words (next, allnext, typ, hash, size, nstk; 1.20's
 * sys.NotInHeap field takes no space), then nstk return PCs, then, for a
 * memory bucket, a memRecord: the active cycle and three future cycles of
 * {allocs, frees, alloc_bytes, free_bytes}.
 */
#define GO_BUCKET_WORDS 6
#define GO_BUCKET_HDR (GO_BUCKET_WORDS * 8)
#define GO_MEMREC_CYCLES 4		/* active, future[3] */
#define GO_MEMREC_SIZE (GO_MEMREC_CYCLES * 4 * 8)
#define GO_BUCKET_MEM 1			/* bucketType memProfile */
/* the runtime's own bound (maxProfStackDepth, 1.23+; 32 before): more is corruption */
#define GO_STACK_MAX 1024

enum { BK_NEXT, BK_ALLNEXT, BK_TYP, BK_HASH, BK_SIZE, BK_NSTK };

/* Reads LEN bytes at ADDR of the target: 0 or a negative errno (the walk's only access). */
typedef int (*goheap_read_fn)(void *ctx, __u64 addr, void *buf, size_t len);

/* What one walk met besides records; added to the stats by the caller. */
struct goheap_walk_stats {
	__u64 buckets;
	__u64 bucket_cap;	/* the list went on past GOHEAP_MAX_BUCKETS */
	__u64 depth_cap;	/* stacks cut to GOHEAP_MAX_DEPTH */
	__u64 cycles;		/* the list came back to a bucket already read */
	__u64 bad;		/* a bucket that is no memory bucket, or unreadable: the walk stops */
};

/*
 * Walks the bucket list from HEAD (runtime.mbuckets' value) through READ,
 * at most max_buckets buckets, into OUT (records and PCs appended).
 * Every size read is checked; a corrupt or vanished bucket ends the walk
 * (counted), keeping what was read. As runtime.MemProfile does, when no
 * bucket has an active count yet (no GC has finished) the future cycles are
 * summed instead. 0, or -ENOMEM.
 */
int goheap_walk(__u64 head, goheap_read_fn read, void *ctx, size_t max_buckets,
		struct goheap_snapshot *out, struct goheap_walk_stats *ws);

/* Whether WORDS (a bucket header read from a target) is a plausible memory bucket. */
bool goheap_bucket_ok(const __u64 *words);

/*
 * The targets of the RIP-relative 64-bit loads (mov r64, [rip+disp32]) in
 * CODE, which is loaded at VADDR, in order, at most MAX: how many.
 */
int goheap_rip_loads(const __u8 *code, size_t len, __u64 vaddr, __u64 *out, int max);

/*
 * The Go version in a .go.buildinfo blob (Go 1.18+ format: magic, pointer
 * size, flags, inline version string) into VER: 0, or -ENOENT.
 */
int goheap_buildinfo_version(const __u8 *p, size_t len, char *ver, size_t size);

/* Whether VER ("go1.19.8") is a release whose layout we know: 1 yes, 0 no. */
int goheap_version_known(const char *ver);

#endif /* EBPFPROF_GOHEAP_INT_H */
