/* profile.h -- types shared by the BPF sampler (bpf/profile.bpf.c) and userspace */
#ifndef EBPFPROF_PROFILE_H
#define EBPFPROF_PROFILE_H

#ifndef TASK_COMM_LEN
#define TASK_COMM_LEN 16
#endif

/* Frames kept per stack; the stack map's value size follows from it. */
#ifndef MAX_STACK_DEPTH
#define MAX_STACK_DEPTH 127
#endif

/*
 * A kernel stack, or a user stack walked by frame pointers, in the stack
 * maps: leaf first, zero past the last frame. Stored under a 64-bit hash of
 * its frames (sample_key.kern_hash, .user_hash).
 */
struct stack_frames {
	__u64 ips[MAX_STACK_DEPTH];
};

/*
 * Process announcements wake userspace at most once per this many ns; after
 * a wakeup that found events userspace looks again this long later, so an
 * announcement that did not wake it waits no longer than that.
 */
#define EVENTS_BATCH_NS 25000000ULL

/*
 * Execs alone are looked for on a grid this coarse: an exec's image is read
 * 20 ms after it at the earliest (exec_defer.h), so one found up to this late
 * loses nothing a sample would show, and under process churn userspace
 * wakes ten times a second for them, not forty.
 */
#define EXEC_LOOK_NS 100000000ULL

/*
 * Userspace's promise to BPF, in the events_ctl map (mmap'ed): it looks at
 * the ring buffer by look_by (CLOCK_MONOTONIC ns, 0: no promise) without
 * being woken. A wakeup is an IPI from the submitting program, 24-30 us
 * here (a VM), and the agent's wakeup itself costs more; under process
 * churn userspace looks every EXEC_LOOK_NS anyway, and execs announced
 * meanwhile need not wake it. A first sample or a remap still does, at
 * most once per EVENTS_BATCH_NS: its tables wait on it, and the process
 * may be about to exit.
 */
struct events_ctl {
	__u64 look_by;
};

/*
 * Which process, and which of its programs, a sample or announcement was
 * taken in. start tells two holders of one pid apart: the process's start,
 * in clock ticks since boot (the group leader's start_boottime / 10 ms, as
 * /proc/PID/stat's field 22, so userspace checks it there; a pid comes back
 * to another process in less than a tick only past pid_max forks in 10 ms).
 * exec tells its images apart: task_struct.self_exec_id, which every exec
 * increments (a fork copies it, so two children of one shell share it).
 */
struct proc_image {
	__u32 pid;
	__u32 exec;
	__u64 start;
};

/* proc_image.exec of a process found running, not announced: its exec count is not known */
#define PROC_EXEC_ANY 0xffffffffu

/* nanoseconds per clock tick (USER_HZ 100 on x86-64 and arm64), the unit of proc_image.start */
#define PROC_TICK_NS 10000000ULL

/* A stack id the sampler chose not to collect (kernel thread, --no-user, --no-kernel). */
#define STACK_ID_SKIPPED (-1)

/*
 * The user stack was walked by the CFI unwinder and lives in the user stack
 * map under sample_key.user_hash (far from any -errno bpf_get_stackid returns).
 */
#define STACK_ID_UNWOUND (-65536)

/*
 * The stack was taken with bpf_get_stack and lives in the stack map under
 * its hash (sample_key.kern_hash or .user_hash): stored by content, so two
 * stacks never share an entry. A full map is a loss: -E2BIG in its place.
 */
#define STACK_ID_HASHED (-65537)

/*
 * Key of the in-kernel aggregation: one count per process, thread (only with
 * --per-thread, else 0) and pair of stacks. A stack id is STACK_ID_HASHED
 * or STACK_ID_UNWOUND (the stack is in a map under its hash), STACK_ID_SKIPPED,
 * or the -errno that lost it (-EFAULT: there was none, -E2BIG: a full map).
 */
struct sample_key {
	__u32 pid;
	__u32 tid;
	__s32 kern_stack_id;
	__s32 user_stack_id;
	char comm[TASK_COMM_LEN];
	__u64 user_hash;	/* with STACK_ID_UNWOUND or _HASHED: the user stack's key */
	__u64 kern_hash;	/* with STACK_ID_HASHED: the kernel stack's key */
	__u64 start;		/* struct proc_image's: which process, which image, pid is */
	__u32 exec;
	__u32 pad;
	__u64 labels_hash;	/* the process's own labels (include/labels.h); 0: none */
};

/* Indexes of the per-CPU stats map: every sample is counted once in SAMPLES. */
enum sampler_stat {
	STAT_SAMPLES = 0,	/* samples that passed the filters */
	STAT_KSTACK_MAP_FULL,	/* kernel stack lost: the stack map was full */
	STAT_USTACK_MAP_FULL,	/* user stack lost: its stack map (or the CFI walks' map) was full */
	STAT_KSTACK_ERROR,	/* kernel stack capture or store failed otherwise */
	STAT_USTACK_ERROR,	/* user stack capture or store failed otherwise */
	STAT_COUNTS_FULL,	/* sample dropped: the counts map was full */
	STAT_EVENTS_DROPPED,	/* process announcements lost: the ring buffer was full */
	STAT_UNWIND_CFI,	/* user stacks walked by the CFI unwinder */
	STAT_UNWIND_FP_FALLBACK, /* user stacks taken with frame pointers: tables not loaded yet */
	STAT_UNWIND_TRUNCATED,	/* CFI walks that stopped before the outermost frame */
	STAT_EXEC_TABLES_DROPPED, /* execs whose process's old CFI tables were dropped */
	STAT_LABELS_READ,	/* samples whose process's own labels were read */
	STAT_LABELS_TRUNCATED,	/* of those, sets cut to the bounds of include/labels.h */
	STAT_LABELS_LOST,	/* label sets lost: the label map was full, or the read failed */
	STAT_LABELS_UNKNOWN_KEY, /* samples whose thread context had an attribute of an unnamed key */
	STAT_MAX,
};

/* The stats that are losses of sample data (a stack or a whole sample). */
#define STAT_LOST_FIRST STAT_KSTACK_MAP_FULL
#define STAT_LOST_LAST STAT_COUNTS_FULL

/*
 * Announced through the ring buffer so userspace reads a process's maps
 * while it lives: its first sample, and every exec (a new image).
 */
enum task_event_kind {
	TASK_EVENT_NEW = 1,	/* first sample of a process (or first since its exec) */
	TASK_EVENT_EXEC = 2,
	TASK_EVENT_REMAP = 3,	/* the unwinder met code outside the mappings it knows (dlopen, JIT) */
};

struct task_event {
	__u32 pid;
	__u32 kind;
	__u64 start;	/* struct proc_image's, of the image announced */
	__u32 exec;
	__u32 pad;
	__u64 ns;	/* CLOCK_MONOTONIC (bpf_ktime_get_ns) of the announcement: waits count from it */
	__u64 cgroup_id;	/* the announcing task's cgroup v2 id (its directory's inode); 0: none */
	__u64 cgroup1_id;	/* its cgroup's kernfs id in the v1 hierarchy userspace picked; 0: none */
	/*
	 * TASK_EVENT_NEW of a process forked and not exec'd since, whose
	 * parent still has the layout it was forked with (the same mmap base
	 * and executable): the parent's image, whose maps are the child's.
	 * parent_pid 0: none, or not known (a PID namespace of our own).
	 */
	__u32 parent_pid;
	__u32 parent_exec;
	__u64 parent_start;
};

#endif /* EBPFPROF_PROFILE_H */
