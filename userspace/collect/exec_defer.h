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
 * is unlikely to be sampled, so it waits again (exec_defer__again), to the
 * next of exec_defer_ages, and is handed on at the last whatever it did.
 * A 100 ms process that computes is read 20 ms into its life, with its
 * libraries mapped.
 */
#define EXEC_DEFER_NS (20 * 1000000LL)
#define EXEC_DEFER_LEVELS 4

/* how long after its exec a process waiting at each level falls due */
extern const __s64 exec_defer_ages[EXEC_DEFER_LEVELS];

struct exec_defer;

/* an exec waiting: the process, the cgroup its announcement came from, when, and how often it waited */
struct deferred_exec {
	__u32 pid;
	__u64 cgroup_id;
	__s64 exec_ns;		/* set by exec_defer__add */
	int level;		/* 0 at the first wait, EXEC_DEFER_LEVELS - 1 at the last */
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
 * Queues X, just popped, at its next level; false when it was at the last or
 * that level is full (then it is the caller's to hand on).
 */
bool exec_defer__again(struct exec_defer *d, const struct deferred_exec *x);

/* Removes PID if queued at any level (its first sample came): true when it was. */
bool exec_defer__take(struct exec_defer *d, __u32 pid);

/* Pops the entry due first, if due at NOW, into *out; false when none is due. */
bool exec_defer__pop_due(struct exec_defer *d, __s64 now, struct deferred_exec *out);

/* When the next entry falls due (CLOCK_MONOTONIC ns), or INT64_MAX when none waits. */
__s64 exec_defer__next_due(const struct exec_defer *d);

#endif /* EBPFPROF_EXEC_DEFER_H */
