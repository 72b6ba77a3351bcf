/* alloc.h -- one process's native allocations, sampled by bytes through uprobes on its allocator */
#ifndef EBPFPROF_COLLECT_ALLOC_H
#define EBPFPROF_COLLECT_ALLOC_H

#include <linux/types.h>
#include "../../include/alloc.h"	/* the BPF-shared one */
#include "collect/goheap/goheap.h"

#define ALLOC_DEFAULT_RATE (512 * 1024)	/* mean bytes between samples, as Go's and ddprof's */

struct alloc_tracer;

struct alloc_tracer_opts {
	__u32 pid;
	__s64 rate;		/* mean bytes between samples; 0: ALLOC_DEFAULT_RATE */
	__u32 live_max;		/* sampled blocks tracked until freed; 0: ALLOC_LIVE_MAX */
};

/*
 * Loads the probes and attaches them to the allocators PID has mapped: glibc's
 * malloc, calloc, realloc and free, and jemalloc's or tcmalloc's where linked
 * (read from /proc/PID/maps; an allocator linked into the executable itself is
 * not found). NULL with errno set (ENOENT: no allocator found).
 */
struct alloc_tracer *alloc_tracer__new(const struct alloc_tracer_opts *o);
void alloc_tracer__free(struct alloc_tracer *t);

/* The libraries probed, for logs: "/usr/lib/x86_64-linux-gnu/libc.so.6" (borrowed). */
const char *alloc_tracer__libs(const struct alloc_tracer *t);

/*
 * The samples so far as records of the shape Go's heap profile has (stacks
 * of return addresses, counts and bytes of the sampled allocations and of
 * their frees), OUT reset first, OUT->rate the sampling rate. 0 or -errno.
 */
int alloc_tracer__read(struct alloc_tracer *t, struct goheap_snapshot *out);

/* The BPF statistics (enum alloc_stat), summed over CPUs. */
void alloc_tracer__stats(struct alloc_tracer *t, __u64 out[ALLOC_STAT_MAX]);

/* Run time of the entry probes and of the return probe (needs kernel.bpf_stats_enabled). */
void alloc_tracer__cost(struct alloc_tracer *t, __u64 *enter_ns, __u64 *enter_cnt, __u64 *exit_ns,
			__u64 *exit_cnt);

#endif /* EBPFPROF_COLLECT_ALLOC_H */
