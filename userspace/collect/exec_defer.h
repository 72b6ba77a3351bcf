/* exec_defer.h -- execs held back a while, so processes that exit unsampled cost no /proc reads */
#ifndef EBPFPROF_EXEC_DEFER_H
#define EBPFPROF_EXEC_DEFER_H

#include <stdbool.h>
#include <linux/types.h>

/*
 * Most processes of a busy host live a millisecond or two (shell pipelines,
 * probes) and are never sampled, yet reading their maps, executable and
 * cgroup at exec was most of the agent's CPU. An exec waits here: if the
 * process is sampled meanwhile it is taken out at once (exec_defer__take).
 * EXEC_DEFER_NS after the exec it is handed on if it still lives and has
 * run; one that has hardly run (a `sleep 0.1`, a script waiting on a pipe)
 * is unlikely to be sampled, so it waits again, at the next level, and is
 * handed on at the last whatever it did (exec_defer__judge). Looks fall on
 * the EXEC_LOOK_NS grid (sampler.c), so a process that computes is read 20
 * to 100 ms into its life, with its libraries mapped.
 */
#define EXEC_DEFER_NS (20 * 1000000LL)
#define EXEC_DEFER_LEVELS 5
#define EXEC_DEFER_RECHECK 1	/* the level of a second look after a busy first one */
#define EXEC_IDLE_SHARE 10	/* on a CPU under 1/EXEC_IDLE_SHARE of the time looked at: idle */

/*
 * How long a process waits at each level from the look that put it there
 * (from its exec, at the first): 20 ms; the recheck 5 ms; then to 100 ms,
 * 500 ms and 2.5 s after the exec when the looks come on time.
 */
extern const __s64 exec_defer_waits[EXEC_DEFER_LEVELS];

struct exec_defer;

/* an exec waiting: the process, the cgroup its announcement came from, when, and how often it waited */
struct deferred_exec {
	__u32 pid;
	__u32 exec;		/* the image exec'd (struct proc_image) */
	__u64 start;
	__u64 cgroup_id;
	__u64 cgroup1_id;
	__s64 exec_ns;		/* set by exec_defer__add */
	int level;		/* 0 at the first wait, EXEC_DEFER_LEVELS - 1 at the last */
	__u64 cpu_ns;		/* the process's CPU clock at the last look (0 before the first) */
	__s64 look_ns;		/* when that look was (exec_ns before the first) */
	bool copied;		/* a fork child named from its parent, not an exec: not counted as one */
};

/* what a look at a waiting exec decided */
enum exec_verdict {
	EXEC_HAND_ON,		/* it ran, or waited its last: read it now */
	EXEC_IDLE,		/* hardly ran since the last look: queued at the next level */
	EXEC_RECHECK,		/* busy at the first look, maybe only starting: looked at again soon */
};

/* At most CAP execs at the first wait, fewer at the later ones; NULL with errno set on failure. */
struct exec_defer *exec_defer__new(int cap);
void exec_defer__free(struct exec_defer *d);

/*
 * Queues X, exec'd at NOW, due at NOW + EXEC_DEFER_NS. When the queue is full
 * the oldest entry is returned in *evicted (to be handed on at once) and true
 * is returned.
 */
bool exec_defer__add(struct exec_defer *d, const struct deferred_exec *x, __s64 now,
		     struct deferred_exec *evicted);

/*
 * Judges X, just popped, by its process's CPU clock CPU_NS at NOW, and queues
 * it again unless it is to be handed on. The clock counts from the fork, so
 * the fork, the exec and the dynamic loader (4-13 ms of CPU on some hosts,
 * 0.7 ms on others) are in it: the first look calls a process idle only if
 * its whole life so far was; one that looks busy is looked at again 5 ms
 * later, and from then on each look judges only the CPU used since the last.
 * A level that is full, or the last, hands on.
 */
enum exec_verdict exec_defer__judge(struct exec_defer *d, const struct deferred_exec *x,
				    __u64 cpu_ns, __s64 now);

/* Removes PID if queued at any level (its first sample came): true when it was. */
bool exec_defer__take(struct exec_defer *d, __u32 pid);

/* Pops the entry due first, if due at NOW, into *out; false when none is due. */
bool exec_defer__pop_due(struct exec_defer *d, __s64 now, struct deferred_exec *out);

/* When the next entry falls due (CLOCK_MONOTONIC ns), or INT64_MAX when none waits. */
__s64 exec_defer__next_due(const struct exec_defer *d);

#endif /* EBPFPROF_EXEC_DEFER_H */
