/* agent_heap.c -- the agent's Go heap profiles: every window, each Go process's own records, alloc_* as deltas */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "agent_int.h"
#include "collect/goheap/goheap.h"
#include "lib/array.h"
#include "lib/clock.h"
#include "lib/log.h"

#define HEAP_SYMBOL_CACHE_BYTES (8 << 20)	/* unreferenced symbol tables kept past this go */

/* One process image's records at the last window: the base of the next window's deltas. */
struct heap_prev {
	struct proc_image img;
	struct goheap_snapshot snap;
	__u64 seen;		/* the window it was last read in */
};

struct agent_heap {
	struct goheap *reader;
	/*
	 * Its own symbolizer: an image found running has no exec count
	 * (PROC_EXEC_ANY), and in the sampler's it would supersede the image
	 * BPF announced and names CPU samples by.
	 */
	struct symbolizer *sym;
	struct proc_table *procs;	/* its own, for the same reason: labels per image */
	struct heap_prev *prev;
	size_t n_prev, cap_prev;
	struct goheap_snapshot cur;
	__u64 seq;
	__s64 last_ns;		/* how long the last window's reading took */
};

int agent_heap__new(struct agent *a)
{
	struct symbolizer_opts so = { .no_kernel = true, .lazy_files = true,
				      .dwarf_budget = (size_t)a->cfg->dwarf_mb << 20,
				      .debuginfod = a->cfg->debuginfod };
	struct agent_heap *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->reader = goheap__new(NULL);
	h->sym = symbolizer__new(&so);
	h->procs = proc_table__new(NULL, a->cfg->ag.group_by, a->k8s, a->cfg->ag.docker_dir,
				   a->cgroup1_ssid ? a->cgroup1_memory : NULL);
	if (!h->reader || !h->sym || !h->procs) {
		agent_heap__free(h);
		return -ENOMEM;
	}
	a->heap = h;
	return 0;
}

void agent_heap__free(struct agent_heap *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n_prev; i++)
		goheap_snapshot__fini(&h->prev[i].snap);
	free(h->prev);
	goheap_snapshot__fini(&h->cur);
	proc_table__free(h->procs);
	symbolizer__free(h->sym);
	goheap__free(h->reader);
	free(h);
}

static struct heap_prev *prev_of(struct agent_heap *h, const struct proc_image *img)
{
	for (size_t i = 0; i < h->n_prev; i++)
		if (proc_image__eq(&h->prev[i].img, img))
			return &h->prev[i];
	return NULL;
}

/* CUR becomes the image's base for the next window (buffers swapped, not copied) */
static void keep(struct agent_heap *h, struct heap_prev *p, const struct proc_image *img)
{
	struct goheap_snapshot t;

	if (!p) {
		if (ARRAY_RESERVE(h->prev, h->cap_prev, h->n_prev + 1))
			return;	/* the next window sends totals again: alloc_* would count twice */
		p = &h->prev[h->n_prev++];
		*p = (struct heap_prev){ .img = *img };
	}
	t = p->snap;
	p->snap = h->cur;
	h->cur = t;
	p->seen = h->seq;
}

static void comm_of(__u32 pid, char *buf, size_t size)
{
	char path[64];
	FILE *f;

	snprintf(buf, size, "?");
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, size, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* one process into window W: read, named, its delta since the last window */
static void add_pid(struct agent *a, struct window *w, __u32 pid)
{
	struct agent_heap *h = a->heap;
	const struct proc_info *pi;
	struct heap_prev *p;
	struct proc_image img;
	char comm[TASK_COMM_LEN + 1];
	__u64 start;

	if (proc_image__start_of("/proc", pid, &start))
		return;
	img = proc_image__of(pid, start, PROC_EXEC_ANY);
	if (goheap__read(h->reader, &img, &h->cur))
		return;	/* not Go, unknown, gone: counted by the reader */
	comm_of(pid, comm, sizeof(comm));
	symbolizer__add_image(h->sym, &img);
	pi = proc_table__get(h->procs, &img, comm, h->seq, NULL);
	p = prev_of(h, &img);
	if (pi && window__add_heap(w, pi, comm, h->sym, &h->cur, p ? &p->snap : NULL))
		p_debug("go heap: pid %u left out of the window: out of memory", pid);
	keep(h, p, &img);
}

static void add_all(struct agent *a, struct window *w)
{
	struct dirent *d;
	DIR *dir;

	for (int i = 0; i < a->cfg->n_pids; i++)
		add_pid(a, w, a->cfg->pids[i]);
	if (a->cfg->n_pids || !(dir = opendir("/proc")))
		return;
	while ((d = readdir(dir))) {
		char *end;
		unsigned long pid = strtoul(d->d_name, &end, 10);

		if (!*end && pid && pid != (unsigned long)getpid())
			add_pid(a, w, pid);
	}
	closedir(dir);
}

static void forget_pid(__u32 pid, void *ctx)
{
	symbolizer__forget_pid(ctx, pid);
}

/* what processes gone held: their bases, their finds, their maps, their labels */
static void sweep(struct agent_heap *h)
{
	size_t k = 0;

	for (size_t i = 0; i < h->n_prev; i++) {
		if (h->prev[i].seen == h->seq) {
			h->prev[k++] = h->prev[i];
			continue;
		}
		goheap_snapshot__fini(&h->prev[i].snap);
	}
	h->n_prev = k;
	proc_table__evict(h->procs, h->seq, forget_pid, h->sym);
	goheap__sweep(h->reader);
	symbolizer__trim(h->sym, HEAP_SYMBOL_CACHE_BYTES);
}

void agent_heap__window(struct agent *a, __s64 start_real, __s64 end_real)
{
	struct agent_heap *h = a->heap;
	struct window_opts wo = {
		.start_ns = start_real,
		.frequency = a->cfg->frequency,
		.split = a->cfg->ag.group_by != GROUP_NONE,
		.demangle = a->cfg->demangle,
		.mode = MODE_HEAP,
	};
	__s64 t0 = clock_ns(CLOCK_MONOTONIC);
	struct window *w;

	if (!h)
		return;
	h->seq++;
	w = window__new(&wo);
	if (!w) {
		p_warn("go heap: no window: out of memory");
		return;
	}
	add_all(a, w);
	h->last_ns = clock_ns(CLOCK_MONOTONIC) - t0;
	agent_deliver__heap_window(a, w, end_real);
	window__free(w);
	sweep(h);
	pthread_mutex_lock(&a->lock);
	goheap__stats(h->reader, &a->fig.heap);
	a->fig.heap_window_seconds = h->last_ns / 1e9;
	pthread_mutex_unlock(&a->lock);
}
