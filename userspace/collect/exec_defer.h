/* exec_defer.h -- execs held back a moment, so processes that exit unsampled cost no /proc reads */
#ifndef EBPFPROF_EXEC_DEFER_H
#define EBPFPROF_EXEC_DEFER_H

#include <stdbool.h>
#include <linux/types.h>

/*
 * Most processes of a busy host live a millisecond or two (shell pipelines,
 * probes) and are never sampled, yet reading their maps, executable and
 * cgroup at exec was most of the agent's CPU. An exec waits here for
 * EXEC_DEFER_NS: if the process is sampled meanwhile it is taken out at once
 * (exec_defer__take), else it is handed on only if it still lives then.
 * A 100 ms process is read 20 ms into its life, with its libraries mapped.
 */
#define EXEC_DEFER_NS (20 * 1000000LL)

struct exec_defer;

/* an exec waiting: the process, and the cgroup its announcement came from */
struct deferred_exec {
	__u32 pid;
	__u64 cgroup_id;
};

/* A FIFO of at most CAP execs; NULL with errno set on failure. */
struct exec_defer *exec_defer__new(int cap);
void exec_defer__free(struct exec_defer *d);

/*
 * Queues X, due at NOW + EXEC_DEFER_NS. When the queue is full the oldest
 * entry is returned in *evicted (to be handed on at once) and true is returned.
 */
bool exec_defer__add(struct exec_defer *d, const struct deferred_exec *x, __s64 now,
		     struct deferred_exec *evicted);

/* Removes PID if queued (its first sample came): true when it was. */
bool exec_defer__take(struct exec_defer *d, __u32 pid);

/* Pops the oldest entry due at NOW into *out; false when none is due. */
bool exec_defer__pop_due(struct exec_defer *d, __s64 now, struct deferred_exec *out);

/* When the oldest entry falls due (CLOCK_MONOTONIC ns), or INT64_MAX when empty. */
__s64 exec_defer__next_due(const struct exec_defer *d);

#endif /* EBPFPROF_EXEC_DEFER_H */
