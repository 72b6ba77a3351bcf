// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* profile.bpf.c -- perf_event sampler: counts (process, kernel stack, user stack) in the kernel */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "profile.h"
#include "filter.bpf.h"

#define PF_KTHREAD 0x00200000	/* include/linux/sched.h; macros are not in BTF */
#define EFAULT 14
#define EEXIST 17

/* Set by userspace between open and load. */
const volatile bool include_idle = false;
const volatile bool collect_kernel = true;
const volatile bool collect_user = true;
const volatile bool per_thread = false;

/*
 * Two slots of (stack map, counts map). Samples go to the slot active_slot
 * names; userspace flips it, waits for programs already running to finish
 * (see sync_outer), then reads and clears the other slot at leisure. So a
 * window boundary neither loses nor double counts a sample. max_entries are
 * set by userspace before load (slot 1 shrinks to 1 entry in one-shot mode).
 */
#define STACK_MAP(name)                                                         \
	struct {                                                                \
		__uint(type, BPF_MAP_TYPE_STACK_TRACE);                         \
		__uint(key_size, sizeof(__u32));                                \
		__uint(value_size, MAX_STACK_DEPTH * sizeof(__u64));            \
		__uint(max_entries, 16384);                                     \
	} name SEC(".maps")

#define COUNTS_MAP(name)                                                        \
	struct {                                                                \
		__uint(type, BPF_MAP_TYPE_HASH);                                \
		__type(key, struct sample_key);                                 \
		__type(value, __u64);                                           \
		__uint(max_entries, 10240);                                     \
	} name SEC(".maps")

STACK_MAP(stacks0);
STACK_MAP(stacks1);
COUNTS_MAP(counts0);
COUNTS_MAP(counts1);

__u32 active_slot = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, STAT_MAX);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* processes already announced; LRU so it never fills */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 16384);
} seen SEC(".maps");

static __always_inline void stat_inc(__u32 id)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &id);

	if (v)
		(*v)++;	/* per-CPU slot: no atomic needed */
}

/*
 * An empty stack (-EFAULT: a sample taken in user mode has no kernel stack)
 * is not a loss; a collision or any other error is, and gets counted.
 */
static __always_inline __s32 get_stack(void *ctx, __u32 slot, __u64 flags,
				       __u32 stat_collision, __u32 stat_error)
{
	long id = slot ? bpf_get_stackid(ctx, &stacks1, flags)
		       : bpf_get_stackid(ctx, &stacks0, flags);

	if (id == -EEXIST)
		stat_inc(stat_collision);
	else if (id < 0 && id != -EFAULT)
		stat_inc(stat_error);
	return id;
}

static __always_inline void count_sample(__u32 slot, struct sample_key *key)
{
	void *counts = slot ? (void *)&counts1 : (void *)&counts0;
	__u64 one = 1, *val;
	long err;

	val = bpf_map_lookup_elem(counts, key);
	if (val) {
		__sync_fetch_and_add(val, 1);
		return;
	}
	err = bpf_map_update_elem(counts, key, &one, BPF_NOEXIST);
	if (err == -EEXIST) {
		/* another CPU inserted the same key between our lookup and update */
		val = bpf_map_lookup_elem(counts, key);
		if (val)
			__sync_fetch_and_add(val, 1);
	} else if (err) {
		stat_inc(STAT_COUNTS_FULL);
	}
}

static __always_inline void announce(__u32 pid, __u32 kind)
{
	struct task_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		stat_inc(STAT_EVENTS_DROPPED);
		return;
	}
	e->pid = pid;
	e->kind = kind;
	bpf_ringbuf_submit(e, 0);
}

/* a raw tracepoint needs no tracefs mount, unlike tp/sched/... */
SEC("raw_tp/sched_process_exec")
int on_exec(void *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	__u8 one = 1;

	if (!task_wanted(pid))
		return 0;
	bpf_map_update_elem(&seen, &pid, &one, BPF_ANY);
	announce(pid, TASK_EVENT_EXEC);
	return 0;
}

SEC("perf_event")
int do_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;
	struct sample_key key = {};
	struct task_struct *task, *leader;
	__u32 slot = active_slot & 1;
	bool kthread;

	/* tid 0 is a CPU's idle task (swapper/N) */
	if (tid == 0 && !include_idle)
		return 0;
	if (!task_wanted(pid))
		return 0;
	stat_inc(STAT_SAMPLES);
	if (!bpf_map_lookup_elem(&seen, &pid)) {
		__u8 one = 1;

		bpf_map_update_elem(&seen, &pid, &one, BPF_ANY);
		announce(pid, TASK_EVENT_NEW);
	}

	task = (struct task_struct *)bpf_get_current_task();
	leader = BPF_CORE_READ(task, group_leader);
	kthread = BPF_CORE_READ(task, flags) & PF_KTHREAD;

	key.pid = pid;
	key.tid = per_thread ? tid : 0;
	/* the process's name, not the thread's: labels and folded lines group by process */
	bpf_core_read_str(key.comm, sizeof(key.comm), &leader->comm);

	key.kern_stack_id = STACK_ID_SKIPPED;
	if (collect_kernel)
		key.kern_stack_id = get_stack(ctx, slot, 0, STAT_KSTACK_COLLISION,
					      STAT_KSTACK_ERROR);
	key.user_stack_id = STACK_ID_SKIPPED;
	if (collect_user && !kthread)
		key.user_stack_id = get_stack(ctx, slot, BPF_F_USER_STACK,
					      STAT_USTACK_COLLISION, STAT_USTACK_ERROR);
	count_sample(slot, &key);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
