/* goheap.h -- a Go process's own heap profile records (runtime.mbuckets), read from outside */
#ifndef EBPFPROF_GOHEAP_H
#define EBPFPROF_GOHEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "lib/proc_image.h"
#include "lib/stats.h"

/* Buckets read of one process at most, and PCs kept of one stack; both counted when hit. */
#define GOHEAP_MAX_BUCKETS 65536
#define GOHEAP_MAX_DEPTH 128
/* runtime.MemProfileRate's default, used (and counted) when the variable cannot be found */
#define GOHEAP_DEFAULT_RATE (512 * 1024)

/* One bucket: its stack and its counts as of the last GC (what runtime.MemProfile reports). */
struct goheap_record {
	__u64 addr;		/* the bucket's address: the same stack for the process's life */
	__u64 allocs, frees, alloc_bytes, free_bytes;
	__u32 pc_off, n_pcs;	/* return PCs, leaf first: pcs[pc_off, pc_off + n_pcs) */
};

struct goheap_snapshot {
	struct goheap_record *recs;
	size_t n, cap;
	__u64 *pcs;
	size_t n_pcs, cap_pcs;
	__s64 rate;		/* runtime.MemProfileRate when read */
	char version[32];	/* "go1.19.8" */
	bool expanded;		/* stacks as Go's tracebacks: a PC for each inlined call too */
};

void goheap_snapshot__reset(struct goheap_snapshot *s);
void goheap_snapshot__fini(struct goheap_snapshot *s);

struct goheap_stats {
	__u64 reads;		/* processes read */
	__u64 buckets;
	__u64 read_ns;		/* time reading bucket lists */
	__u64 not_go;
	__u64 unknown_version;	/* said once per process */
	__u64 not_found;	/* Go, but runtime.mbuckets could not be located and checked */
	__u64 disabled;		/* MemProfileRate 0: the linker turned profiling off (no runtime/pprof) */
	__u64 rate_assumed;	/* MemProfileRate not found: the default assumed */
	__u64 bucket_cap, depth_cap, cycles, bad_buckets;
	__u64 stale;		/* the process exec'd or exited during the read: dropped */
	__u64 errors;
};

extern const struct stat_desc goheap_stat_descs[];
extern const int n_goheap_stat_descs;

struct goheap;

/* PROC_ROOT NULL: /proc. NULL with errno set. */
struct goheap *goheap__new(const char *proc_root);
void goheap__free(struct goheap *h);

/*
 * Reads IMG's heap profile records into OUT (reset first): finds
 * runtime.mbuckets and runtime.MemProfileRate once per image (symbols, or in
 * a stripped binary the RIP-relative loads of runtime functions the
 * .gopclntab locates, each checked against the process), then walks the
 * list with bounded reads. The target is never stopped or written.
 * 0; -ENOENT not Go; -ENOTSUP a Go release whose layout we do not know;
 * -ENODATA memory profiling is off in it; -ESTALE it exec'd or exited
 * during the read; -ESRCH it is gone; other negative errnos. Each counted.
 */
int goheap__read(struct goheap *h, const struct proc_image *img, struct goheap_snapshot *out);

/* Forgets what was found of images no longer running. */
void goheap__sweep(struct goheap *h);

void goheap__stats(const struct goheap *h, struct goheap_stats *out);

#endif /* EBPFPROF_GOHEAP_H */
