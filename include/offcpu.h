/* offcpu.h -- types shared by the off-CPU tracer (bpf/offcpu.bpf.c) and userspace (userspace/offcpu.c) */
#ifndef EBPFPROF_OFFCPU_TYPES_H
#define EBPFPROF_OFFCPU_TYPES_H

#include "profile.h"	/* TASK_COMM_LEN, MAX_STACK_DEPTH, STACK_ID_SKIPPED */

/*
 * A stack captured before userspace last emptied the stack maps: it may
 * be gone. Userspace writes it into keys whose
 * stack_epoch is stale; print it as "[lost stack]". (-ENOENT, so it can never
 * be confused with a real id or with STACK_ID_SKIPPED.)
 */
#define OFFCPU_STACK_LOST (-2)

/* What a thread was doing when it left the CPU, from its task state. */
enum offcpu_state {
	OFFCPU_STATE_OTHER = 0,		/* preempted, yielded, stopped, traced: still runnable */
	OFFCPU_STATE_SLEEPING = 1,	/* TASK_INTERRUPTIBLE, and TASK_IDLE (uninterruptible, noload) */
	OFFCPU_STATE_DISK = 2,		/* TASK_UNINTERRUPTIBLE: I/O, page faults, kernel locks */
	OFFCPU_STATE_MAX,
};

/*
 * One thread that is off CPU now, keyed by tid in the LRU "start" map. claimed
 * is the time up to which this block's off-CPU time has been credited to a
 * counts slot: the wake and the harvest iterator each take it with one
 * atomic exchange (5.12+), or, before, the one that wins a claim token, so
 * no nanosecond is credited twice.
 */
struct offcpu_start {
	__u64 ts;		/* bpf_ktime_get_ns() at switch-out */
	__u64 claimed;		/* credited up to here; starts at ts */
	__u64 runtime;		/* the thread's CPU time then (se.sum_exec_runtime) */
	__u32 pid;
	__u32 state;		/* enum offcpu_state */
	__s32 kern_stack_id;
	__s32 user_stack_id;
	__u32 stack_epoch;	/* stack map generation the ids belong to */
	__u32 tid;		/* the thread's id as ebpfprof sees it (its PID namespace's) */
	char comm[TASK_COMM_LEN];	/* the process's (group leader's) name */
	__u64 user_hash;	/* with STACK_ID_UNWOUND: its key in ustacks; STACK_ID_HASHED: in stacks */
	__u64 kern_hash;	/* with kern_stack_id STACK_ID_HASHED: its key in stacks */
	__u64 start;		/* struct proc_image's: which process, which image, pid is */
	__u32 exec;
	__u32 pad;
	__u64 labels_hash;	/* the labels it blocked under, in offcpu_labels (include/labels.h); 0: none */
};

/*
 * Key of the in-kernel aggregation: per process, thread (only with
 * per_thread, else 0), state and pair of stacks. A stack id is
 * STACK_ID_HASHED (in stacks under kern_hash or user_hash), STACK_ID_UNWOUND
 * (the CFI walker's stack, in ustacks under user_hash), STACK_ID_SKIPPED,
 * OFFCPU_STACK_LOST, or the -errno that lost it (-E2BIG: a full map).
 */
struct offcpu_key {
	__u32 pid;
	__u32 tid;
	__u32 state;
	__s32 kern_stack_id;
	__s32 user_stack_id;
	__u32 stack_epoch;
	char comm[TASK_COMM_LEN];
	__u64 user_hash;
	__u64 kern_hash;
	__u64 start;		/* struct proc_image's */
	__u32 exec;
	__u32 pad;
	__u64 labels_hash;	/* the labels it blocked under; 0: none */
};

struct offcpu_val {
	__u64 ns;		/* off-CPU time credited to this window */
	__u64 count;		/* blocks that ended (were switched back in) in this window */
};

/* Indexes of the per-CPU stats map. */
enum offcpu_stat {
	OFFCPU_STAT_SWITCHES = 0,	/* sched_switch events seen */
	OFFCPU_STAT_BLOCKS,		/* switch-outs that passed the filters: start entries written */
	OFFCPU_STAT_WAKES,		/* switch-ins that found their start entry */
	OFFCPU_STAT_SHORT,		/* blocks under min_us: not credited */
	/*
	 * Switch-in of a thread that passes the pid and kernel-thread filters but
	 * has no start entry: its first run after fork or after attach, or its
	 * entry was evicted by the LRU (evictions are not observable directly).
	 * With a cgroup filter, threads of other cgroups are counted too.
	 */
	OFFCPU_STAT_NO_START,
	OFFCPU_STAT_START_FAILED,	/* the start entry could not be written */
	OFFCPU_STAT_LATE,		/* pre-boundary time credited to the new window */
	OFFCPU_STAT_ITER_SPLITS,	/* blocks the harvest iterator split at a boundary */
	/*
	 * A thread switched out again while its entry was still there: its
	 * switch-in never reached the sched_switch tracepoint (seen on 6.18,
	 * a few times a second under ~100k switches/s). The block's end is
	 * estimated from the CPU time the thread used since.
	 */
	OFFCPU_STAT_MISSED_SWITCH_IN,
	OFFCPU_STAT_ITER_STALE,		/* harvest skipped an entry: its thread runs or exited */
	OFFCPU_STAT_KSTACK_MAP_FULL,	/* kernel stack lost: the stack map was full */
	OFFCPU_STAT_USTACK_MAP_FULL,	/* user stack lost: its stack map was full */
	OFFCPU_STAT_KSTACK_ERROR,	/* kernel stack capture or store failed otherwise */
	OFFCPU_STAT_USTACK_ERROR,	/* user stack capture or store failed otherwise */
	OFFCPU_STAT_COUNTS_FULL,	/* a credit dropped: the counts map was full */
	OFFCPU_STAT_UNWIND_CFI,		/* user stacks walked with CFI at switch-out */
	OFFCPU_STAT_UNWIND_TRUNCATED,	/* of those, walks that stopped before the outermost frame */
	OFFCPU_STAT_UNWIND_FP_FALLBACK,	/* frame pointers: the process's tables were not loaded yet */
	/*
	 * Kernels without BPF atomic exchange (before 5.12): a race between a
	 * wake and the harvest found the claims map full. Nothing is credited
	 * twice; the time goes to the wake, to the new window if it came late.
	 */
	OFFCPU_STAT_CLAIMS_FULL,
	OFFCPU_STAT_MAX,
};

#endif /* EBPFPROF_OFFCPU_TYPES_H */
