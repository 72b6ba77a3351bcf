/* runtime.h -- public header of runtimes/: every language runtime behind one interface and one table */
#ifndef EBPFPROF_RUNTIME_H
#define EBPFPROF_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "frametypes.h"
#include "lib/stats.h"
#include "lib/proc_image.h"
#include "symbolize/srcline.h"

/* What every runtime is given when made. */
#define RUNTIME_MAPS_MAX 2	/* other BPF maps a runtime may have */

struct runtime_opts {
	const char *proc_root;	/* never NULL: "/proc" by default */
	int procs_fd;		/* its BPF map of per-pid tables (runtime_ops.procs_map) */
	int pids_fd;		/* runtime_pids: its column (runtime_ops.id) of the pids in procs_fd */
	int maps_fd[RUNTIME_MAPS_MAX];	/* its other maps (runtime_ops.maps), in their order */
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
	const char *const *maps;	/* its other BPF maps the off-CPU walk shares; NULL-ended or NULL,
					 * at most RUNTIME_MAPS_MAX */

	void *(*new)(const struct runtime_opts *o);	/* NULL with errno set */
	void (*free)(void *rt);

	/*
	 * Looks for the runtime in process image IMG and hands BPF its table;
	 * again for a known image (a re-read). What it held for an earlier
	 * image of the pid (an exec, a recycled pid) stays, to name that
	 * image's samples, until the second sweep; its BPF table goes at once,
	 * replaced or deleted. IMG's exec may be PROC_EXEC_ANY (a process
	 * found running, not announced yet): its frames name no sample, its
	 * announcement adds it again. 0: BPF walks it; -ENOENT: not there;
	 * -ENOTSUP: a version it does not know (counted, never guessed);
	 * -EAGAIN: too early to tell (looked at again by retry); -ESTALE: a
	 * later image holds the pid (runtime__outdated), nothing read.
	 */
	int (*add_image)(void *rt, const struct proc_image *img);
	void (*retry)(void *rt);	/* NULL: nothing waits */
	/* BPF saw what E names run for the first time: read it while it lives */
	void (*event)(void *rt, const struct rt_event *e);

	/*
	 * Names the frame in slots (a, b) of a stack of image IMG, by what
	 * was read of that image only (never of a later one at its pid):
	 * out[0, n), callee first (inlined functions give several), at most
	 * MAX; strings owned by the runtime until the second sweep after the
	 * image ends. *loc is unique to the (image, what ran, where in it).
	 * Returns n >= 1: an unnamed frame is one "[unknown ...]" line, counted.
	 */
	int (*frame)(void *rt, const struct proc_image *img, __u64 a, __u64 b,
		     struct src_line *out, int max, __u64 *loc);
	/* A one-slot mark's pseudo frame name, counted; NULL: folded away, no frame */
	const char *(*mark)(void *rt, __u64 slot);
	void (*sweep)(void *rt);	/* once a window: what dead processes held goes */

	const struct stat_desc *stats;	/* its statistics, read from a struct of stats_size */
	int n_stats;
	size_t stats_size;
	void (*stats_read)(const void *rt, void *out);
};

/*
 * For a runtime's sweep: whether image IMG has ended (its process is gone
 * from PROC_ROOT, or SUPERSEDED: a later image holds its pid) at two
 * sweeps in a row, so what it held may go (samples of a whole window were
 * named by then). *GONE_BEFORE is the image's mark between sweeps.
 */
bool runtime__gone_twice(const char *proc_root, const struct proc_image *img, bool superseded,
			 bool *gone_before);

struct proc_map;

/*
 * PID's maps, for a probe: as proc_maps__read, and -ESRCH for none (an
 * exiting process, its memory released). A probe's -ESRCH leaves the pid's
 * state as it is, not superseded: an announcement handled after the process
 * ended finds nothing newer to read, and what was read of it while it ran
 * (found running: its exec count unknown) is what names its samples.
 */
int runtime__read_maps(const char *proc_root, __u32 pid, struct proc_map **maps, size_t *n);

/*
 * Hands BPF the table of PID (TABLE, a runtime's struct <rt>_proc) in the
 * runtime's map PROCS_FD: its bit in runtime_pids (PIDS_FD, column ID)
 * first, since BPF looks up only the pids it has. 0 or a negative errno.
 */
int runtime__set_table(int pids_fd, int procs_fd, enum unwind_runtime id, __u32 pid,
		       const void *table);

/*
 * Whether a runtime's state of image HAVE is WANT's: the same, or a state of
 * a process found running (exec PROC_EXEC_ANY), which then becomes WANT's.
 * BPF walks a runtime only under native tables of the image sampled, and an
 * exec drops those, so a walk with tables of unknown exec was of the image
 * the state was read from; its first event or frame names that image.
 */
static inline bool runtime__is_image(struct proc_image *have, const struct proc_image *want)
{
	if (proc_image__eq(have, want))
		return true;
	if (have->pid != want->pid || have->start != want->start || have->exec != PROC_EXEC_ANY)
		return false;
	have->exec = want->exec;
	return true;
}

/*
 * Whether OLD, an image a runtime just superseded by NEW, was of the same
 * process (an exec, or found running before its announcement): a verdict
 * counted per process (an unknown version) is not counted again.
 */
static inline bool runtime__same_process(const struct proc_image *old,
					 const struct proc_image *new)
{
	return old->pid == new->pid && old->start == new->start;
}

/*
 * Whether IMG came before CUR, the image a runtime's state at its pid is of:
 * an image that waited (a JVM still starting) looked at again after its
 * process exec'd. Its process's maps are the later image's now, and a state
 * read from them would supersede CUR's: not read. Unknown exec counts
 * (PROC_EXEC_ANY) order nothing.
 */
static inline bool runtime__outdated(const struct proc_image *cur, const struct proc_image *img)
{
	return cur && cur->exec != PROC_EXEC_ANY && img->exec != PROC_EXEC_ANY &&
	       proc_image__after(img, cur);
}

/*
 * Whether a runtime's new state of image IMG is of a process it counted
 * already: OLD, the state its pid held (NULL if none), was of a known
 * version (OLD_KNOWN) in the same process. A process found running and
 * then announced, read again, or exec'd is one process in processes_total.
 */
static inline bool runtime__counted(const struct proc_image *old, bool old_known,
				    const struct proc_image *img)
{
	return old && old_known && runtime__same_process(old, img);
}

/* An rt_event's image. */
static inline struct proc_image rt_event__image(const struct rt_event *e)
{
	return proc_image__of(e->pid, e->start, e->exec);
}

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

/* Each runtime looks for itself in IMG (failure: that runtime's frames stay native). */
void runtime_set__add_image(struct runtime_set *s, const struct proc_image *img);
/* The same for a process found running (its exec count unknown: PROC_EXEC_ANY). */
void runtime_set__add_pid(struct runtime_set *s, const char *proc_root, __u32 pid);
/* False when no runtime holds a table for PID (so none walks its frames); true when one may. */
bool runtime_set__may_hold(const struct runtime_set *s, __u32 pid);
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
int runtime_set__name(struct runtime_set *s, const struct proc_image *img, const __u64 *ips, int n,
		      struct src_line *out, int max, int *n_out, const char **name, __u64 *loc);

/* Each runtime in turn, for reports: its ops, its stats read into buf (at least stats_size). */
typedef void (*runtime_stats_fn)(const struct runtime_ops *ops, const void *stats, void *ctx);
void runtime_set__each_stats(const struct runtime_set *s, runtime_stats_fn fn, void *ctx);

#endif /* EBPFPROF_RUNTIME_H */
