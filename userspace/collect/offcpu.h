/* offcpu.h -- loads the off-CPU tracer (sched_switch), cuts its counts into windows, reads them */
#ifndef EBPFPROF_OFFCPU_H
#define EBPFPROF_OFFCPU_H

/*
 * Minimum kernel 5.9: bpf_map_elem iterators (5.9; where an LSM refuses them,
 * 5.13+ harvests by a test run instead), mmap'able .bss (5.5), tp_btf (5.5;
 * without vmlinux BTF for it the raw_tp program is loaded instead). Used when
 * there: BPF atomic exchange (5.12) and the CFI walk (bpf_loop, 5.17), in
 * one program; before, another without the walk, whose wakes and harvest
 * claim a block by a token in a hash map (offcpu.bpf.c's take_claim). Also
 * used when there: sched_switch's prev_state argument (5.18; before, the task's state field,
 * named "state" before 5.14, read through CO-RE) and bpf_task_from_pid (6.2;
 * lets the harvest skip a thread whose switch-in the tracepoint never
 * reported, see OFFCPU_STAT_MISSED_SWITCH_IN).
 *
 * Not thread-safe: one thread drives an offcpu.
 */

#include <stdbool.h>
#include <linux/types.h>
/* the shared header has this file's name: reach it by path, not through -I */
#include "../../include/offcpu.h"
#include "sampler.h"

struct offcpu;

struct offcpu_opts {
	const __u32 *pids;	/* filter: only these processes; NULL: all */
	int n_pids;
	struct cgroup_scope cgroup;	/* only tasks in that subtree */
	bool per_thread;	/* keys carry the tid; else 0 */
	bool include_kernel_threads;
	bool no_kernel;		/* no kernel stacks (STACK_ID_SKIPPED) */
	bool no_user;		/* no user stacks */
	__u64 min_us;		/* blocks shorter than this are not counted */
	__u32 start_entries;	/* threads off CPU at once (LRU); 0: 65536 */
	__u32 count_entries;	/* one slot's counts map size; 0: 10240 */
	__u32 stack_entries;	/* stacks the map holds, shared by both slots; 0: 16384 */
	bool double_buffer;	/* two slots, harvested while tracing (agent mode) */
	bool force_raw_tp;	/* load the raw_tp program even where tp_btf works (tests) */
	/* load the programs kernels before 5.17 take (no CFI walk, claims by token) anywhere (tests) */
	bool force_fp_programs;
	/* the sampler's tables and announcements: user stacks by CFI as it walks them; NULL: fp */
	const struct sampler_maps *sampler;
	__u32 announce_cgroup1_ssid;	/* as struct sampler_opts' */
};

/* Opens, configures and loads the BPF object. NULL with errno set on failure. */
struct offcpu *offcpu__new(const struct offcpu_opts *opts);
void offcpu__free(struct offcpu *o);

/* Attaches to sched_switch, after forgetting any block seen before: tracing starts. */
int offcpu__start(struct offcpu *o);

/* Detaches: tracing stops. Threads still off CPU stay in the start map for offcpu__harvest. */
void offcpu__stop(struct offcpu *o);

/*
 * Closes the window at BOUNDARY_NS (CLOCK_MONOTONIC; 0: now, or the time of
 * offcpu__stop when stopped): every block's time before it lands in the slot
 * returned, every nanosecond after it in the other, none twice. Threads still
 * off CPU are credited up to the boundary. The boundary must not lie in the
 * future nor before the previous one (-EINVAL). Returns the slot to read and
 * clear, or a negative errno. Without double_buffer the tracer must be
 * stopped (-EBUSY) and the slot is 0. Blocks for two RCU grace periods.
 */
int offcpu__harvest(struct offcpu *o, __u64 boundary_ns);

typedef int (*offcpu_fn)(const struct offcpu_key *key, const struct offcpu_val *val, void *ctx);

/*
 * Calls fn for every entry of slot; stops early and returns fn's non-zero
 * value. Stacks captured before the stack maps were last emptied arrive as
 * OFFCPU_STACK_LOST. key and val are borrowed for the call.
 */
int offcpu__for_each(struct offcpu *o, int slot, offcpu_fn fn, void *ctx);

/*
 * Copies the frames of the stack stored under hash (STACK_ID_HASHED: a
 * kernel stack, or a user stack by frame pointers; leaf first) into ips;
 * returns how many, or a negative errno (-ENOENT: not there).
 */
int offcpu__stack(struct offcpu *o, __u64 hash, __u64 *ips, int max);

/* A user stack the CFI walker took (STACK_ID_UNWOUND, key.user_hash), as offcpu__stack. */
int offcpu__user_stack(struct offcpu *o, __u64 hash, __u64 *ips, int max, __u32 *flags);

/*
 * The label set a block began under (offcpu_key.labels_hash) into out, its
 * strings NUL-ended. -ENOENT when it made room for newer ones (LRU). 0 or -errno.
 */
int offcpu__label_set(struct offcpu *o, __u64 hash, struct label_set *out);

/*
 * Empties slot's counts (only a slot offcpu__harvest returned). When a
 * shared stack map is more than 3/4 full both are emptied: stacks captured
 * before then read back as OFFCPU_STACK_LOST.
 */
int offcpu__clear(struct offcpu *o, int slot);

/* Sums the per-CPU counters. */
int offcpu__stats(struct offcpu *o, __u64 out[OFFCPU_STAT_MAX]);

/* How full the stack maps are (entries now, and what they hold). */
int offcpu__stack_fill(struct offcpu *o, struct stack_fill *out);

/* Times the stack maps were emptied by offcpu__clear. */
__u32 offcpu__stack_resets(const struct offcpu *o);

/* Kernel-side cost of the sched_switch program, when kernel.bpf_stats_enabled is 1 (else 0). */
int offcpu__bpf_runtime(struct offcpu *o, __u64 *run_ns, __u64 *run_cnt);

/* Whether windows are cut by a BPF iterator (false: by a test run, iterators refused here). */
bool offcpu__by_iterator(const struct offcpu *o);

const char *offcpu__state_name(__u32 state);

#endif /* EBPFPROF_OFFCPU_H */
