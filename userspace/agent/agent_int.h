/* agent_int.h -- state shared by the agent's loop, pull requests, delivery and metrics */
#ifndef EBPFPROF_AGENT_INT_H
#define EBPFPROF_AGENT_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <linux/types.h>
#include "lib/options.h"
#include "deliver/deliver.h"
#include "k8s.h"
#include "collect/collect.h"
#include "collect/goheap/goheap.h"
#include "proc_table.h"
#include "profile/profile.h"
#include "symbolize/symbolize.h"
#include "window.h"

#define AGENT_MAX_PULLS 4	/* concurrent /debug/pprof/profile requests */

/* One series of a window, as gzip pprof, kept for the page (GET /). */
struct page_series {
	char *name;
	void *data;
	size_t len;
};

/* The series of one window (or of one page request's collection). */
struct page_window {
	struct page_series *series;
	int n, cap;
	__s64 start, end;	/* ns since the epoch */
	size_t bytes;
	int windows;		/* how many windows were merged into it (page requests) */
};

#define AGENT_PAGE_WINDOWS 16			/* windows kept for the page, newest first */
#define AGENT_PAGE_MAX_BYTES (16u << 20)	/* and at most this much of them */

/* One /debug/pprof/profile request, owned by the HTTP thread that waits on it. */
struct pull_req {
	int seconds;
	__u32 pid;
	__s64 end_mono;		/* set when the loop starts collecting for it */
	struct window *win;
	bool done;
	int err;
	void *data;		/* gzip pprof, malloc'd; handed to the server */
	size_t len;
	struct page_window *page;	/* a page request: every series goes here, split by service */
	struct pull_req *next;
};

/* Figures the loop publishes after each harvest, for /metrics (under lock). */
struct agent_figures {
	__u64 windows;
	__u64 series_delivered;
	__u64 delivery_errors;
	__u64 records_last;		/* counts map entries in the last harvest */
	struct stack_fill stacks_last;	/* the stack maps' fill in the last harvest */
	__u64 samples_harvested;
	double harvest_seconds_last;
	double harvest_seconds_total;
	struct symbolizer_stats sym;
	__u64 processes;
	__u64 evicted;
	struct sampler_figures sampler;	/* as of the last harvest */
	__u64 cgroup_reads_saved;	/* cgroup files not read: their cgroup's was (proc_table) */
	__u64 cgroup_refused;		/* cgroup files not kept: the path did not lead to the id */
	__u64 push_folded_samples;	/* folded into "[other]" to fit the backend's limits */
	__u64 push_cut_values;		/* label values cut to the backend's length limit */
	__u64 push_dropped_labels;	/* sample labels left out past the backend's name limit */
	struct goheap_stats heap;	/* --go-heap: the reader's, as of the last window */
	double heap_window_seconds;	/* reading and naming the last window's heaps */
};

struct agent {
	const struct config *cfg;
	struct sampler *sampler;
	struct offcpu *offcpu;		/* off-cpu and wall modes */
	struct symbolizer *sym;
	struct proc_table *procs;
	struct k8s *k8s;
	struct pusher *pusher;
	struct pusher *otlp;		/* --push-otlp */
	struct agent_heap *heap;	/* --go-heap; NULL: off */
	struct pusher *heap_push;	/* its windows: Pyroscope's memory types, OTLP */
	struct pusher *heap_otlp;
	struct http_server *http;
	struct profile_dir *dir;
	struct window *window;		/* NULL when windows go nowhere (pull only) */
	__s64 window_start_real;
	__s64 window_end_mono;
	__u64 window_seq;
	struct stack stack;		/* scratch for one record */
	struct label_set labels;	/* its process's own labels */
	int harvest_slot;		/* the slot being read by harvest() */
	__s64 flip_real;		/* CLOCK_REALTIME of the last harvest's slot flip: windows end there */
	__u64 harvest_records;		/* counted by harvest(), published in fig */
	__u64 harvest_samples;
	__s64 harvest_looked;		/* CLOCK_MONOTONIC of its last look for new processes */
	char hostname[256];
	struct cgroup_scope scope;	/* --cgroup, --scope pod */
	char cgroup1_memory[256];	/* the v1 memory hierarchy's mount; cgroup1_ssid 0: none */
	__u32 cgroup1_ssid;		/* 1 + its subsystem, which announcements carry */
	int wake_fd;			/* eventfd: HTTP threads wake the loop */

	pthread_mutex_t lock;		/* guards pending, n_pulls, figures, done flags */
	pthread_cond_t done_cond;
	struct pull_req *pending;	/* handed in by HTTP threads */
	struct pull_req *active;	/* being collected: the loop's own list */
	int n_pulls;
	bool closing;			/* no new pull requests: the agent is stopping */
	struct agent_figures fig;
	struct page_window *delivering;	/* the loop's: the window being delivered, for the page */
	struct page_window *recent[AGENT_PAGE_WINDOWS];	/* under lock: newest first */
	int n_recent;
};

/* agent_page.c */
int agent_page__render(void *ctx, const struct http_page_args *args, FILE *out);
/* Adds a series (encoded) to w; 0 or a negative errno. */
int agent_page__add(struct page_window *w, const struct window_series *s);
/* The loop: around a window's delivery, keeps its series for the page (when listening). */
void agent_page__window_begin(struct agent *a, __s64 start);
void agent_page__window_end(struct agent *a, __s64 end);
void agent_page__window_free(struct page_window *w);
void agent_page__free(struct agent *a);

/* agent_pull.c */
/* A page request: collects seconds (pid 0: all), every series into *out. Blocks. */
int agent_pull__page(struct agent *a, int seconds, __u32 pid, struct page_window *out);
int agent_pull__profile(void *ctx, int seconds, __u32 pid, void **data, size_t *len);
int agent_pull__activate(struct agent *a, __s64 now_mono, __s64 now_real);
void agent_pull__finish_due(struct agent *a, __s64 now_mono, __s64 now_real, bool all);
bool agent_pull__pending(struct agent *a);
__s64 agent_pull__next_end(const struct agent *a);

/* agent_deliver.c */
int agent_deliver__window(struct agent *a, struct window *w, __s64 end_real);
int agent_deliver__encode(const struct pprof *p, void **data, size_t *len);

/* agent_heap.c: --go-heap, each window every Go process's heap records */
int agent_heap__new(struct agent *a);
void agent_heap__free(struct agent_heap *h);
/* Reads, names and delivers the window [start_real, end_real)'s heaps. */
void agent_heap__window(struct agent *a, __s64 start_real, __s64 end_real);

/* agent_deliver.c: a heap window's series, to the heap pushers, the directory, the page */
int agent_deliver__heap_window(struct agent *a, struct window *w, __s64 end_real);

/* agent_metrics.c */
int agent_metrics__write(void *ctx, FILE *out);

#endif /* EBPFPROF_AGENT_INT_H */
