/* alloc.h -- types shared by bpf/alloc.bpf.c and userspace/collect/alloc.c: sampled native allocations */
#ifndef EBPFPROF_ALLOC_H
#define EBPFPROF_ALLOC_H

/* __u64 and friends come from vmlinux.h in BPF, from linux/types.h in userspace */


#define ALLOC_STACK_DEPTH 32		/* frames of an allocation's user stack */
#define ALLOC_EXP_TABLE 4096		/* exponential draws of mean rate, made by userspace */
#ifndef ALLOC_LIVE_MAX
#define ALLOC_LIVE_MAX 65536		/* sampled blocks tracked until freed (--live-storage-size) */
#endif
#ifndef ALLOC_STACKS_MAX
#define ALLOC_STACKS_MAX 16384		/* distinct allocation stacks */
#endif

/* A stack by content: the caller's return address first, then the frame-pointer walk. */
struct alloc_stack {
	__u64 ips[ALLOC_STACK_DEPTH];
	__u32 n;
	__u32 pad;
};

/* Counts of the samples of one stack: allocations and the frees of those sampled blocks. */
struct alloc_counts {
	__u64 allocs, alloc_bytes, frees, free_bytes;
};

/* A sampled block until it is freed: its stack and size. */
struct alloc_live {
	__u64 stack;		/* hash of its stack */
	__u64 size;
};

enum alloc_stat {
	ALLOC_STAT_CALLS,	/* allocation calls seen */
	ALLOC_STAT_SAMPLED,	/* of them, sampled */
	ALLOC_STAT_FREES,	/* free calls seen */
	ALLOC_STAT_LIVE_FULL,	/* a sampled block not tracked: live map full (in alloc_*, not in inuse_*) */
	ALLOC_STAT_STACKS_FULL,	/* a sample lost: stack map full */
	ALLOC_STAT_NO_STACK,	/* a sample without a stack */
	ALLOC_STAT_RET_MISSED,	/* a sampled call whose return was not seen */
	ALLOC_STAT_NS_SAMPLED,	/* ns the entry probe spent on sampled calls (its own clock) */
	ALLOC_STAT_NS_UNSAMPLED,	/* and on the others */
	ALLOC_STAT_MAX,
};

#endif /* EBPFPROF_ALLOC_H */
