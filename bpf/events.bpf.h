/* events.bpf.h -- process announcements to userspace, shared by the sampler and the off-CPU tracer */
#ifndef EBPFPROF_EVENTS_BPF_H
#define EBPFPROF_EVENTS_BPF_H

#include "profile.h"

/*
 * One ring buffer and one seen map for both programs (the off-CPU tracer
 * reuses the sampler's by fd): a process that only ever blocks is announced
 * too, so userspace reads its maps and loads its unwind tables.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/*
 * Processes already announced, with the exec they were announced in
 * (task_struct.self_exec_id, which every exec increments). A process not
 * here, or here under an earlier exec, is announced at its next sighting
 * (TASK_EVENT_NEW); so an exec writes nothing here (it was an LRU insert
 * at each exec, most of them never sampled). LRU so it never fills.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 16384);
} seen SEC(".maps");

/* announcements lost to a full ring buffer, by either program: userspace then scans /proc */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} events_lost SEC(".maps");

/* userspace's promise to look by a time (struct events_ctl); shared by both programs */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct events_ctl);
	__uint(max_entries, 1);
} events_ctl SEC(".maps");

/* When this program last woke userspace for announcements (racy across CPUs: at worst one more wakeup) */
__u64 events_last_wake = 0;

/*
 * A wakeup per announcement was a third of the agent's CPU under process
 * churn: wake at most once per EVENTS_BATCH_NS, not at all for an exec
 * while userspace promised to look anyway, and always when the buffer fills.
 */
static __always_inline __u64 wake_flag(__u32 kind, __u64 now)
{
	struct events_ctl *ctl = NULL;
	__u32 zero = 0;

	/* only execs come in bursts; a first sample or a remap wakes as it did (its tables wait) */
	if (kind == TASK_EVENT_EXEC)
		ctl = bpf_map_lookup_elem(&events_ctl, &zero);
	if ((now - events_last_wake < EVENTS_BATCH_NS || (ctl && now < ctl->look_by)) &&
	    bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) < 64 * 1024)
		return BPF_RB_NO_WAKEUP;
	events_last_wake = now;
	return BPF_RB_FORCE_WAKEUP;
}

/* False when the ring buffer was full and the event is lost (counted). */
static __always_inline bool announce(__u32 pid, __u32 kind)
{
	struct task_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	__u32 zero = 0;
	__u64 *lost, now;

	if (!e) {
		lost = bpf_map_lookup_elem(&events_lost, &zero);
		if (lost)
			(*lost)++;	/* per-CPU slot: no atomic needed */
		return false;
	}
	e->pid = pid;
	e->kind = kind;
	e->ns = now = bpf_ktime_get_ns();	/* one clock read for the record and the wake */
	/* the process announced is the current task (an exec, a sample, a walk) */
	e->cgroup_id = bpf_get_current_cgroup_id();
	bpf_ringbuf_submit(e, wake_flag(kind, now));
	return true;
}

/* The current task's exec count: which image of its process it runs. */
static __always_inline __u64 current_exec_id(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	return BPF_CORE_READ(task, self_exec_id);
}

/* Announces the current process, pid, the first time it is seen since its exec. */
static __always_inline void note_sighting(__u32 pid)
{
	__u64 exec_id = current_exec_id(), *seen_in = bpf_map_lookup_elem(&seen, &pid);

	if (seen_in && *seen_in == exec_id)
		return;
	bpf_map_update_elem(&seen, &pid, &exec_id, BPF_ANY);
	announce(pid, TASK_EVENT_NEW);
}

#endif /* EBPFPROF_EVENTS_BPF_H */
