/* unwinder.h -- feeds the BPF unwinder: each process's executable mappings and their CFI tables */
#ifndef EBPFPROF_UNWINDER_H
#define EBPFPROF_UNWINDER_H

#include <linux/types.h>
#include "unwind_cache.h"
#include "profile.h"

struct unwinder;

struct unwinder_opts {
	const char *proc_root;	/* NULL: /proc */
	int rows_fd;		/* BPF array of struct unwind_row */
	__u32 rows;		/* its capacity */
	int pages_fd;		/* BPF array of __u32: the rows' page index */
	__u32 pages;		/* its capacity */
	int procs_fd;		/* BPF hash: pid -> struct unwind_proc */
	int pids_fd;		/* BPF array: struct unwind_pid_bits, UNWIND_RT_NATIVE of the pids in procs_fd */
	int sync_outer_fd;	/* grace-period maps (bpf_util__grace_period) */
	int sync_inner_fd;
};

struct unwinder_stats {
	struct unwind_cache_stats cache;
	__u64 procs;		/* processes given to BPF */
	__u64 procs_failed;	/* processes whose maps could not be read */
	__u64 mappings_dropped;	/* executable mappings past UNWIND_MAX_MAPPINGS */
	__u64 resets;		/* times the row array filled and was rebuilt */
	__u64 procs_changed;	/* tables dropped: the process exec'd while they were read */
};

/* NULL with errno set. */
struct unwinder *unwinder__new(const struct unwinder_opts *opts);
void unwinder__free(struct unwinder *u);

/*
 * Reads the process's maps and hands BPF its executable mappings, building
 * the tables of files not seen before. Called again after an exec or when
 * BPF met unknown code, it replaces the old entry. When the row array fills,
 * every table is dropped and the processes known are loaded again (the
 * tables of processes gone are what frees room). Returns 0 or a negative
 * errno; on failure the process unwinds with frame pointers.
 */
int unwinder__add_pid(struct unwinder *u, __u32 pid);

/*
 * The same for a process image userspace was told of (an announcement
 * handed on): BPF stops announcing it, and walks no other image with its
 * tables. -ESRCH: another process holds the pid now.
 */
int unwinder__add_announced(struct unwinder *u, const struct proc_image *img);

/*
 * IMG is a fork of image PARENT not exec'd since: BPF walks it with the
 * parent's tables, nothing read (code mapped since the fork is met as
 * unknown code, so announced and read). -ENOENT: BPF has no entry of
 * PARENT; else 0 or a negative errno.
 */
int unwinder__add_fork(struct unwinder *u, const struct proc_image *img,
		       const struct proc_image *parent);

/*
 * From now on the tables of files of at least MIN_BYTES are built on a
 * thread of their own: a process mapping one is written at once with what
 * is built (frame pointers for the rest), and again by unwinder__collect()
 * once its tables are. 0 or a negative errno.
 */
int unwinder__build_aside(struct unwinder *u, off_t min_bytes);

/* Loads the tables built aside meanwhile and writes their processes again: how many tables. */
int unwinder__collect(struct unwinder *u);

/* Tables being built aside: while any is, unwinder__collect() is due soon. */
int unwinder__building(const struct unwinder *u);

/* Forgets the processes that exited; returns how many. */
int unwinder__sweep(struct unwinder *u);

void unwinder__stats(const struct unwinder *u, struct unwinder_stats *out);

#endif /* EBPFPROF_UNWINDER_H */
