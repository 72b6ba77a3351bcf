/* window.h -- one collection period of the agent: samples split into series, one pprof each */
#ifndef EBPFPROF_WINDOW_H
#define EBPFPROF_WINDOW_H

#include <stdbool.h>
#include <linux/types.h>
#include "profile/profile.h"
#include "proc_table.h"
#include "deliver/deliver.h"

struct window;

struct window_opts {
	__s64 start_ns;		/* ns since the epoch */
	int frequency;
	bool per_thread;	/* tid label */
	bool split;		/* one series per service name; else all in one series */
	__u32 pid;		/* only this process (a pull request's ?pid=); 0: all */
	int demangle;		/* enum demangle_mode */
	enum profile_mode mode;	/* which sample types the window's profiles carry */
	const char *label_keys;	/* the processes' own labels kept, comma-separated; NULL: all */
};

/* One aggregated record, on-CPU or off-CPU, with its values laid out for the mode. */
struct window_record {
	__u32 pid;
	__u32 tid;
	struct proc_image img;	/* which process and image took it: its labels' */
	const char *comm;	/* TASK_COMM_LEN bytes, maybe not NUL-terminated */
	const char *state;	/* "running", "sleeping"...: wall and off-cpu modes; else NULL */
	__s64 values[3];
	__u64 samples;		/* for statistics: CPU samples or off-CPU blocks */
	const struct label_set *labels;	/* the process's own labels; NULL: none */
};

/* One series at the end of a window; everything borrowed for the callback's duration. */
struct window_series {
	const char *name;		/* service name */
	const struct push_label *labels;	/* series labels: container and pod ids and names */
	int n_labels;
	struct pprof *prof;		/* time and duration already set */
	__u64 samples;
};

typedef int (*window_series_fn)(const struct window_series *s, void *ctx);

/* NULL with errno set. */
struct window *window__new(const struct window_opts *opts);
void window__free(struct window *w);

/* Adds one record (its stack already resolved). 0 or a negative errno. */
int window__add(struct window *w, const struct proc_info *pi, const struct window_record *rec,
		const struct stack *st);

/*
 * Adds a Go process's heap records (a window of mode MODE_HEAP): SNAP, and
 * PREV the same image's at the last window (NULL: none, the totals so far),
 * its stacks named by SYM, to PI's series, with the labels a CPU sample
 * gets (COMM: its name, TASK_COMM_LEN bytes at most). 0 or a negative errno.
 */
int window__add_heap(struct window *w, const struct proc_info *pi, const char *comm,
		     struct symbolizer *sym, const struct goheap_snapshot *snap,
		     const struct goheap_snapshot *prev);

/*
 * Closes the window at end_ns and calls fn for each series that has samples
 * (zero entries are never emitted). Returns the first error fn or the
 * window returned; every series is offered even after an error.
 */
int window__finish(struct window *w, __s64 end_ns, window_series_fn fn, void *ctx);

__s64 window__start(const struct window *w);
__u64 window__samples(const struct window *w);

#endif /* EBPFPROF_WINDOW_H */
