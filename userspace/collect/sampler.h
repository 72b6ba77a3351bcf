/* sampler.h -- loads the BPF sampler, attaches it to a perf event on every online CPU, reads its maps */
#ifndef EBPFPROF_SAMPLER_H
#define EBPFPROF_SAMPLER_H

#include <stdbool.h>
#include <linux/types.h>
#include "profile.h"
#include "labels.h"
#include "unwind/unwinder.h"
#include "collect_stats.h"

struct sampler;
struct runtime_set;
struct bpf_object;

/* --unwind: how user stacks are walked */
enum sampler_unwind {
	SAMPLER_UNWIND_AUTO = 0,	/* CFI where the kernel can (5.5+), else frame pointers */
	SAMPLER_UNWIND_FP,		/* frame pointers only (bpf_get_stackid) */
	SAMPLER_UNWIND_CFI,		/* CFI tables, frame pointers where a file has none */
};

/* --cgroup / --scope pod: a cgroup v2 directory, or a directory of a cgroup v1 hierarchy */
struct cgroup_scope {
	int fd;			/* > 0: the cgroup v2 directory */
	__u32 v1_ssid;		/* the v1 hierarchy's subsystem: its line in /proc/cgroups */
	__u64 v1_id;		/* not 0: the v1 directory's kernfs id (inode number) */
};

struct sampler_opts {
	int frequency;		/* samples per second per CPU */
	const __u32 *pids;	/* filter: only these processes; NULL: all */
	int n_pids;
	bool include_idle;
	bool no_kernel;
	bool no_user;
	bool per_thread;
	__u32 stack_entries;	/* stacks a slot's maps hold; 0: default (65536, 16384 preallocated) */
	__u32 count_entries;	/* counts map size; 0: default */
	bool double_buffer;	/* two slots of maps, for sampler__swap (agent mode) */
	struct cgroup_scope cgroup;	/* only tasks in that subtree */
	enum sampler_unwind unwind;
	__u32 unwind_rows;	/* CFI rows BPF can hold (8 bytes each); 0: default */
	__u32 announce_cgroup1_ssid;	/* 1 + the v1 subsystem whose cgroup announcements carry; 0: none */
};

/* Opens, configures and loads the BPF object. NULL with errno set on failure. */
struct sampler *sampler__new(const struct sampler_opts *opts);

/* How BPF walks user stacks with CFI on this kernel (bpf/walk.bpf.h's two builds). */
enum sampler_walk {
	SAMPLER_WALK_NONE = 0,		/* it cannot: no bpf_probe_read_user (5.5) */
	SAMPLER_WALK_STEPS,		/* a global function per few frames (5.10+) */
	SAMPLER_WALK_LOOP,		/* one bpf_loop (5.17+: bpf_loop, bpf_task_pt_regs) */
};

enum sampler_walk sampler__cfi_walk(void);
/* Whether the kernel has bpf_loop and bpf_task_pt_regs (5.17+): the walk in one loop, off CPU too */
bool sampler__kernel_can_walk_cfi(void);
void sampler__free(struct sampler *s);

/* Opens a perf event per online CPU and attaches the program: sampling starts. */
int sampler__start(struct sampler *s);

/* Closes the perf events: sampling stops, the maps stay readable. */
void sampler__stop(struct sampler *s);

/*
 * Samples go to one of two slots of maps. sampler__swap() makes the other
 * slot active, waits until no BPF program still writes the old one, and
 * returns the old slot's index: it can then be read and cleared while
 * sampling goes on. Without double_buffer there is one slot, 0.
 */
int sampler__swap(struct sampler *s);
int sampler__active_slot(const struct sampler *s);

typedef int (*sampler_fn)(const struct sample_key *key, __u64 count, void *ctx);

/* Calls fn for every aggregated entry of slot; stops early and returns fn's non-zero value. */
int sampler__for_each(struct sampler *s, int slot, sampler_fn fn, void *ctx);

/*
 * Copies the frames of the stack stored under hash in slot (STACK_ID_HASHED:
 * a kernel stack, or a user stack by frame pointers; leaf first) into ips;
 * returns how many, or a negative errno.
 */
int sampler__stack(struct sampler *s, int slot, __u64 hash, __u64 *ips, int max);

/* How full a slot's stack maps are (entries now, and what they hold). */
int sampler__stack_fill(struct sampler *s, int slot, struct stack_fill *out);

/*
 * Copies the CFI-walked user stack hash of slot (leaf first) into ips;
 * returns how many, or a negative errno. *flags: the walk's USTACK_* flags
 * (whether it stopped before the outermost frame, or at one CFI marks).
 */
int sampler__user_stack(struct sampler *s, int slot, __u64 hash, __u64 *ips, int max,
			__u32 *flags);

/*
 * Copies the label set stored under hash in slot (sample_key.labels_hash)
 * into out: its strings NUL-ended (the pprof writer makes them UTF-8). 0 or -errno.
 */
int sampler__label_set(struct sampler *s, int slot, __u64 hash, struct label_set *out);

/* Empties slot's counts and stacks (call only on a slot that is not active). */
int sampler__clear(struct sampler *s, int slot);

/* Capacity of one slot's counts map. */
__u32 sampler__count_capacity(const struct sampler *s);

/*
 * Told each announcement. A first sample with a fork parent (task_event's
 * parent_pid) the function named from what it read of the parent, reading
 * nothing of the child, returns SAMPLER_EVENT_COPIED: when BPF walks the
 * child with its parent's tables, its runtimes then wait as an exec's do
 * (most such children exec or exit first); else its tables are loaded.
 * Else 0, or a negative errno that stops the reading.
 */
#define SAMPLER_EVENT_COPIED 1
typedef int (*sampler_event_fn)(const struct task_event *e, void *ctx);

/* A descriptor that polls readable when task events wait (for poll/ppoll). */
int sampler__events_fd(const struct sampler *s);

/*
 * The maps another BPF object uses to walk stacks as the sampler does and to
 * announce processes to it: its unwind tables (when cfi), its ring buffer,
 * seen map and their loss counter. Descriptors stay the sampler's.
 */
struct sampler_maps {
	bool cfi;		/* the tables are there: walk with CFI */
	bool steps;		/* in the steps build (walk.bpf.h): the off-CPU tracer takes it too */
	int rows_fd, pages_fd, procs_fd;
	int events_fd, seen_fd, events_lost_fd, events_ctl_fd;
	int runtime_pids_fd;	/* with cfi */
	struct bpf_object *obj;	/* the sampler's: the runtimes' maps, by name (runtime_ops) */
};

void sampler__maps(const struct sampler *s, struct sampler_maps *out);

/*
 * Hands waiting task events to fn, waiting up to timeout_ms for the first
 * (0: don't wait): a process image's first sample (TASK_EVENT_NEW: read it
 * now), code outside its maps (TASK_EVENT_REMAP) and an exec
 * (TASK_EVENT_EXEC, at once: a new image supersedes the old, nothing of
 * it is to be read yet). The exec's image is handed on as TASK_EVENT_NEW
 * EXEC_DEFER_NS after it at the earliest, at the next point of the
 * EXEC_LOOK_NS grid (later if the process has hardly run), or at its
 * first sample if sooner, and not at all if the process exited unsampled
 * meanwhile (collect/exec_defer.h).
 * Returns how many events were read, or a negative errno.
 */
int sampler__poll_events(struct sampler *s, int timeout_ms, sampler_event_fn fn, void *ctx);

/*
 * When sampler__poll_events next has work without an event (a deferred exec
 * falling due), CLOCK_MONOTONIC ns; INT64_MAX when none. Callers that wait on
 * sampler__events_fd themselves wake by then.
 */
__s64 sampler__next_event_ns(const struct sampler *s);

/*
 * Whether process announcements were lost to a full ring buffer since the
 * last call: only then need callers scan the counts map for processes
 * they were not told of.
 */
bool sampler__announcements_lost(struct sampler *s);

/* Sums the per-CPU counters. */
int sampler__stats(struct sampler *s, __u64 out[STAT_MAX]);

/* Everything sampler_stats (collect_stats.h) declares: the BPF counters and the exec waits. */
int sampler__figures(struct sampler *s, struct sampler_figures *out);

/* Kernel-side cost, when kernel.bpf_stats_enabled is 1 (else both 0). */
int sampler__bpf_runtime(struct sampler *s, __u64 *run_ns, __u64 *run_cnt);

/* The CFI table loader's figures; -ENOENT when user stacks use frame pointers. */
int sampler__unwind_stats(const struct sampler *s, struct unwinder_stats *out);

/* The runtimes' namers (borrowed), or NULL without the CFI unwinder (or without a sampler: s NULL). */
struct runtime_set *sampler__runtimes(struct sampler *s);

/* Number of CPUs sampled after sampler__start. */
int sampler__cpus(const struct sampler *s);

#endif /* EBPFPROF_SAMPLER_H */
