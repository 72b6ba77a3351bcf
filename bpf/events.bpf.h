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
 * Processes already announced, by pid, with the image they were announced
 * in (struct proc_image's start and exec). A process not here, or here
 * under another image (an exec since, or another process at a recycled
 * pid), is announced at its next sighting (TASK_EVENT_NEW); so an exec
 * writes nothing here (it was an LRU insert at each exec, most of them
 * never sampled). LRU so it never fills.
 */
struct seen_image {
	__u64 start;
	__u32 exec;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, struct seen_image);
	__uint(max_entries, 16384);
} seen SEC(".maps");

/*
 * 1 + the subsystem (its line in /proc/cgroups) of the v1 hierarchy whose
 * cgroup announcements carry, for userspace's cgroup cache on v1 and hybrid
 * hosts; 0: none (a v2-only host, or the one-shot).
 */
const volatile __u32 announce_cgroup1_ssid = 0;

/* The current task's cgroup's kernfs id in that hierarchy, 0 if none. */
static __always_inline __u64 current_cgroup1_id(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct cgroup_subsys_state *css = NULL;
	struct css_set *cgs;

	if (!announce_cgroup1_ssid)
		return 0;
	cgs = BPF_CORE_READ(task, cgroups);
	if (!cgs || bpf_probe_read_kernel(&css, sizeof(css),
					  (void *)cgs + bpf_core_field_offset(struct css_set, subsys) +
						  ((announce_cgroup1_ssid - 1) & 63) * sizeof(css)) ||
	    !css)
		return 0;
	return BPF_CORE_READ(css, cgroup, kn, id);
}

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

/*
 * When this program last woke userspace for announcements, and for a first
 * sample or a remap (racy across CPUs: at worst one more wakeup)
 */
__u64 events_last_wake = 0;
__u64 events_last_new_wake = 0;

/*
 * A wakeup per announcement was a third of the agent's CPU under process
 * churn: wake at most once per EVENTS_BATCH_NS, not at all for an exec
 * while userspace promised to look anyway, and always when the buffer fills.
 * A first sample or a remap is held back only by the last of its own kind's
 * wakeups, whose look is followed by another within EVENTS_BATCH_NS; an
 * exec's look is followed by one on the EXEC_LOOK_NS grid only.
 */
static __always_inline __u64 wake_flag(__u32 kind, __u64 now)
{
	struct events_ctl *ctl = NULL;
	__u32 zero = 0;
	bool held;

	if (kind == TASK_EVENT_EXEC) {
		ctl = bpf_map_lookup_elem(&events_ctl, &zero);
		held = now - events_last_wake < EVENTS_BATCH_NS || (ctl && now < ctl->look_by);
	} else {
		held = now - events_last_new_wake < EVENTS_BATCH_NS;
	}
	if (held && bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) < 64 * 1024)
		return BPF_RB_NO_WAKEUP;
	events_last_wake = now;
	if (kind != TASK_EVENT_EXEC)
		events_last_new_wake = now;
	return BPF_RB_FORCE_WAKEUP;
}

/*
 * The current process's fork parent, into E, when the process has not
 * exec'd since its fork (its exec count is still the one it was forked
 * at) and its parent runs the image it was forked from, laid out alike:
 * the same executable file and mmap base (one draw of the address space
 * layout) and as many mappings (neither mapped a library since, as a
 * child's dlopen before this sample would), so its maps are the parent's.
 * Userspace then names the child from what it read of the parent. Pids are
 * the host's: under a PID namespace of our own, none is given.
 */
static __always_inline void fork_parent(struct task_event *e)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct task_struct *leader = BPF_CORE_READ(task, group_leader);
	struct task_struct *parent = BPF_CORE_READ(leader, real_parent);
	struct mm_struct *mm = BPF_CORE_READ(task, mm), *parent_mm;
	__u32 exec = BPF_CORE_READ(leader, self_exec_id);

	if (pidns_ino || !mm || !parent || exec != BPF_CORE_READ(leader, parent_exec_id))
		return;
	parent = BPF_CORE_READ(parent, group_leader);
	parent_mm = BPF_CORE_READ(parent, mm);
	/*
	 * the parent exec'd since (its exec count moved on), or lays out
	 * otherwise; a vfork child shares its parent's memory until its exec,
	 * microseconds away, and is read as before
	 */
	if (!parent_mm || parent_mm == mm || BPF_CORE_READ(parent, self_exec_id) != exec ||
	    BPF_CORE_READ(parent_mm, mmap_base) != BPF_CORE_READ(mm, mmap_base) ||
	    BPF_CORE_READ(parent_mm, exe_file) != BPF_CORE_READ(mm, exe_file) ||
	    BPF_CORE_READ(parent_mm, map_count) != BPF_CORE_READ(mm, map_count))
		return;
	e->parent_pid = BPF_CORE_READ(parent, tgid);
	e->parent_exec = exec;
	e->parent_start = BPF_CORE_READ(parent, start_boottime) / PROC_TICK_NS;
}

/* False when the ring buffer was full and the event is lost (counted). */
static __always_inline bool announce(const struct proc_image *img, __u32 kind)
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
	e->pid = img->pid;
	e->kind = kind;
	e->start = img->start;
	e->exec = img->exec;
	e->pad = 0;
	e->ns = now = bpf_ktime_get_ns();	/* one clock read for the record and the wake */
	/* the process announced is the current task (an exec, a sample, a walk) */
	e->cgroup_id = bpf_get_current_cgroup_id();
	e->cgroup1_id = current_cgroup1_id();
	e->parent_pid = e->parent_exec = 0;
	e->parent_start = 0;
	if (kind == TASK_EVENT_NEW)
		fork_parent(e);
	bpf_ringbuf_submit(e, wake_flag(kind, now));
	return true;
}

/*
 * The current task's process image: PID as we see it (current_ids), its
 * start and its exec count. By probe reads, which every kernel allows here;
 * the sampler's walk reads the same fields through its BTF pointer.
 */
static __always_inline void current_image(struct proc_image *img, __u32 pid)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	img->pid = pid;
	img->exec = BPF_CORE_READ(task, self_exec_id);
	img->start = BPF_CORE_READ(task, group_leader, start_boottime) / PROC_TICK_NS;
}

/* Announces the current process image IMG the first time it is seen. */
static __always_inline void note_sighting(const struct proc_image *img)
{
	struct seen_image now = { .start = img->start, .exec = img->exec };
	struct seen_image *seen_in = bpf_map_lookup_elem(&seen, &img->pid);

	if (seen_in && seen_in->exec == now.exec && seen_in->start == now.start)
		return;
	bpf_map_update_elem(&seen, &img->pid, &now, BPF_ANY);
	announce(img, TASK_EVENT_NEW);
}

#endif /* EBPFPROF_EVENTS_BPF_H */
