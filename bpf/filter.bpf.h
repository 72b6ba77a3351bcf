/* filter.bpf.h -- what every ebpfprof BPF program shares: the pid and cgroup filters, the grace-period maps */
#ifndef EBPFPROF_FILTER_BPF_H
#define EBPFPROF_FILTER_BPF_H

/* Set by userspace between open and load. */
const volatile bool filter_pid = false;
const volatile bool filter_cgroup = false;
/*
 * --cgroup on a cgroup v1 hierarchy (v1 and hybrid hosts, where the v2
 * hierarchy does not hold the directory): the subsystem whose hierarchy holds
 * it (its line in /proc/cgroups) and the directory's kernfs id (its inode
 * number). 0: no v1 filter.
 */
const volatile __u32 filter_cgroup1_ssid = 0;
const volatile __u64 filter_cgroup1_id = 0;
/*
 * Not 0 when ebpfprof runs in a child PID namespace (a sidecar sharing a
 * workload's): only that namespace's tasks are kept, under the pids they
 * have there, the ones its /proc shows.
 */
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;

/* --pid: the processes to keep */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1024);
} pids SEC(".maps");

/* --cgroup / --scope pod: only tasks in this cgroup v2 subtree */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps");

/*
 * Never read by the programs: updating an element of a map-in-map makes the
 * bpf() syscall wait for an RCU grace period (maybe_wait_bpf_programs), and
 * perf_event and tracing programs run inside RCU read-side sections. So after
 * userspace flips a slot, one update here guarantees no program still writes
 * the old one (userspace/bpf_util.c, bpf_util__grace_period).
 */
struct sync_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} sync_inner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct sync_inner);
} sync_outer SEC(".maps") = {
	.values = { &sync_inner },
};

/*
 * The current task's process and thread ids as ebpfprof sees them: the
 * host's, or its own PID namespace's. False: a task of another namespace.
 */
static __always_inline bool current_ids(__u32 *pid, __u32 *tid)
{
	struct bpf_pidns_info ns;
	__u64 id;

	if (pidns_ino) {
		if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns)))
			return false;
		*pid = ns.tgid;
		*tid = ns.pid;
		return true;
	}
	id = bpf_get_current_pid_tgid();
	*pid = id >> 32;
	*tid = (__u32)id;
	return true;
}

/* v1 hierarchies nest a few levels (docker/ID, kubepods/QOS/pod/ID); deeper is not under the filter */
#define CGROUP1_MAX_DEPTH 32

/*
 * bpf_current_task_under_cgroup knows cgroup v2 only: on a v1 hierarchy the
 * current task's cgroup and its ancestors are compared by kernfs id.
 */
static __always_inline bool current_under_cgroup1(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct cgroup_subsys_state *css = NULL;
	struct css_set *cgs = BPF_CORE_READ(task, cgroups);

	if (!cgs || bpf_probe_read_kernel(&css, sizeof(css),
					  (void *)cgs + bpf_core_field_offset(struct css_set, subsys) +
						  (filter_cgroup1_ssid & 63) * sizeof(css)))
		return false;
	for (int i = 0; i < CGROUP1_MAX_DEPTH; i++) {
		if (!css)
			return false;
		if (BPF_CORE_READ(css, cgroup, kn, id) == filter_cgroup1_id)
			return true;
		css = BPF_CORE_READ(css, parent);
	}
	return false;
}

/* The current task passes --pid (its process pid) and --cgroup filters. */
static __always_inline bool task_wanted(__u32 pid)
{
	if (filter_pid && !bpf_map_lookup_elem(&pids, &pid))
		return false;
	if (filter_cgroup && bpf_current_task_under_cgroup(&cgroup_filter, 0) != 1)
		return false;
	if (filter_cgroup1_id && !current_under_cgroup1())
		return false;
	return true;
}

#endif /* EBPFPROF_FILTER_BPF_H */
