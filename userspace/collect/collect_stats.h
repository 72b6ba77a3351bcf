/* collect_stats.h -- the collect stage's statistics, declared once: -v and /metrics are written from these */
#ifndef EBPFPROF_COLLECT_STATS_H
#define EBPFPROF_COLLECT_STATS_H

#include <stdbool.h>
#include <linux/types.h>
#include "lib/stats.h"
#include "profile.h"
#include "../../include/offcpu.h"	/* the BPF-shared one: its counters' indexes */

/* What the sampler counted: its BPF program's counters and its exec waits. */
struct sampler_figures {
	__u64 bpf[STAT_MAX];	/* enum sampler_stat, summed over the CPUs */
	__u64 execs_unsampled;	/* exited unsampled while their exec waited: never read */
	__u64 execs_idle;	/* waits begun again: the process had hardly run */
	__u64 execs_rechecked;	/* second looks after a busy first one */
	__u64 processes_read;	/* new images handed on: maps, executable, cgroup, runtimes, tables */
	__u64 process_read_ns;	/* this thread's CPU time reading them */
	__u64 processes_copied;	/* fork children named from their parent's read, nothing read */
	__u64 forks_read;	/* fork children BPF gave a parent, read: not copied */
	__u64 table_files;	/* files whose CFI tables were built and loaded */
	__u64 table_build_ns;	/* time parsing and loading them (in process_read_ns) */
	__u64 table_resets;	/* times the row array filled and the tables of processes gone were dropped */
	__u64 table_compactions;	/* of those, resets that kept the live tables without parsing them */
	__u64 table_rows, table_rows_max;	/* rows in use, and the array's capacity */
};

/* How full a stack map pair is: stacks by content, and CFI-walked user stacks. */
struct stack_fill {
	__u32 stacks, stacks_max;	/* kernel and frame-pointer user stacks */
	__u32 walked, walked_max;	/* CFI-walked user stacks; walked_max 0: none walked */
	bool prealloc;			/* stacks is preallocated (kernels before 6.1) */
};

/* The off-CPU tracer's counters (enum offcpu_stat). */
struct offcpu_figures {
	__u64 bpf[OFFCPU_STAT_MAX];
};

/* each named after "ebpfprof_" in /metrics */
extern const struct stat_desc sampler_stats[];
extern const int n_sampler_stats;
extern const struct stat_desc offcpu_stats[];
extern const int n_offcpu_stats;

#endif /* EBPFPROF_COLLECT_STATS_H */
