/* runtime.h -- public header of runtimes/: every language runtime behind one interface and one table */
#ifndef EBPFPROF_RUNTIME_H
#define EBPFPROF_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "frametypes.h"
#include "lib/stats.h"
#include "symbolize/srcline.h"

/* What every runtime is given when made. */
struct runtime_opts {
	const char *proc_root;	/* never NULL: "/proc" by default */
	int procs_fd;		/* its BPF map of per-pid tables (runtime_ops.procs_map) */
	int pids_fd;		/* runtime_pids: its column (runtime_ops.id) of the pids in procs_fd */
};

/*
 * A runtime: an interpreter or VM whose frames native unwinding cannot name.
 * Its BPF frame reader (bpf/<name>.bpf.h) records each frame as tagged slots
 * (frametypes.h); these name them. RT is the runtime's own object.
 */
struct runtime_ops {
	const char *name;		/* "python": -v's "python:", /metrics' ebpfprof_python_ */
	enum unwind_runtime id;		/* its column of runtime_pids, its tags' owner */
	const char *procs_map;		/* its BPF map of per-pid tables */
	const char *const *maps;	/* its other BPF maps the off-CPU walk shares; NULL-ended or NULL */

	void *(*new)(const struct runtime_opts *o);	/* NULL with errno set */
	void (*free)(void *rt);

	/*
	 * Looks for the runtime in PID and hands BPF its table; again for a
	 * known pid (after an exec). 0: BPF walks it; -ENOENT: not there;
	 * -ENOTSUP: a version it does not know (counted, never guessed);
	 * -EAGAIN: too early to tell (looked at again by retry).
	 */
	int (*add_pid)(void *rt, __u32 pid);
	void (*retry)(void *rt);	/* NULL: nothing waits */
	/* BPF saw what E names run for the first time: read it while it lives */
	void (*event)(void *rt, const struct rt_event *e);

	/*
	 * Names the frame in slots (a, b) of PID's stack: out[0, n), callee
	 * first (inlined functions give several), at most MAX; strings owned
	 * by the runtime until the second sweep after the process exits. *loc
	 * is unique to the (process, what ran, where in it). Returns n >= 1:
	 * an unnamed frame is one "[unknown ...]" line, counted.
	 */
	int (*frame)(void *rt, __u32 pid, __u64 a, __u64 b, struct src_line *out, int max,
		     __u64 *loc);
	/* A one-slot mark's pseudo frame name, counted; NULL: folded away, no frame */
	const char *(*mark)(void *rt, __u64 slot);
	void (*sweep)(void *rt);	/* once a window: what dead processes held goes */

	const struct stat_desc *stats;	/* its statistics, read from a struct of stats_size */
	int n_stats;
	size_t stats_size;
	void (*stats_read)(const void *rt, void *out);
};

/*
 * For a runtime's sweep: whether PID has been gone at two sweeps in a row,
 * so what it held may go (samples of a whole window were named by then).
 * *GONE_BEFORE is the process's mark between sweeps.
 */
bool runtime__gone_twice(__u32 pid, bool *gone_before);

/* Every runtime, by id; NULL where none is built in (the native column, test-only ones). */
extern const struct runtime_ops *const runtimes[UNWIND_RT_MAX];

struct runtime_set;

struct runtime_set_opts {
	const char *proc_root;	/* NULL: /proc */
	int pids_fd;		/* runtime_pids */
	/* the fd of BPF map NAME of the program the runtimes serve, or a negative errno */
	int (*map_fd)(void *ctx, const char *name);
	void *ctx;
};

/* Every runtime of runtimes[], made; NULL with errno set. */
struct runtime_set *runtime_set__new(const struct runtime_set_opts *o);
void runtime_set__free(struct runtime_set *s);

/* Each runtime looks for itself in PID (failure: that runtime's frames stay native). */
void runtime_set__add_pid(struct runtime_set *s, __u32 pid);
/* Runtimes that found something too early look again; cheap when none wait. */
void runtime_set__retry(struct runtime_set *s);
/* A ring_buffer callback for rt_events: hands each event to its runtime. */
int runtime_set__on_event(void *ctx, void *data, size_t size);
void runtime_set__sweep(struct runtime_set *s);

/*
 * Whether slot ips[0] (of n left) is a runtime's: then returns how many
 * slots it took, and *name is the frame's name (NULL: a mark folded away, no
 * frame), out[0, *n_out) its lines (at most max; none for a mark), *loc an
 * address unique to it. 0 for an address, for the native walk to name.
 */
int runtime_set__name(struct runtime_set *s, __u32 pid, const __u64 *ips, int n,
		      struct src_line *out, int max, int *n_out, const char **name, __u64 *loc);

/* Each runtime in turn, for reports: its ops, its stats read into buf (at least stats_size). */
typedef void (*runtime_stats_fn)(const struct runtime_ops *ops, const void *stats, void *ctx);
void runtime_set__each_stats(const struct runtime_set *s, runtime_stats_fn fn, void *ctx);

#endif /* EBPFPROF_RUNTIME_H */
