/* window.c -- one collection period of the agent: samples split into series, one pprof each */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "lib/hashmap.h"
#include "profile/profile.h"
#include "window.h"

#define SERIES_LABELS 5

struct series {
	char name[128];
	struct cgroup_info cg;
	struct k8s_meta k8s;
	struct pprof_builder *builder;
	__u64 samples;
};

struct window {
	struct window_opts opts;
	struct pprof_opts popts;
	struct series **series;		/* hmap ids are index + 1 */
	size_t n_series, cap_series;
	struct hmap *index;
	__u64 samples;
};

struct window *window__new(const struct window_opts *opts)
{
	struct window *w = calloc(1, sizeof(*w));
	struct report_opts ro = { .frequency = opts->frequency, .time_nanos = opts->start_ns,
				  .mode = opts->mode };

	if (!w)
		return NULL;
	w->opts = *opts;
	report__pprof_opts(&w->popts, &ro);
	w->index = hmap__new();
	if (!w->index) {
		free(w);
		return NULL;
	}
	return w;
}

void window__free(struct window *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n_series; i++) {
		pprof_builder__free(w->series[i]->builder);
		free(w->series[i]);
	}
	free(w->series);
	hmap__free(w->index);
	free(w);
}

static int name_eq(__u32 id, const void *key, const void *ctx)
{
	const struct window *w = ctx;

	return !strcmp(w->series[id - 1]->name, key);
}

static struct series *series_of(struct window *w, const struct proc_info *pi)
{
	const char *name = w->opts.split ? pi->service : "ebpfprof";
	__u64 h = hash_bytes(name, strlen(name), 0);
	__u32 id = hmap__find(w->index, h, name_eq, name, w);
	struct series *s;

	if (id)
		return w->series[id - 1];
	if (ARRAY_RESERVE(w->series, w->cap_series, w->n_series + 1))
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	snprintf(s->name, sizeof(s->name), "%s", name);
	if (w->opts.split) {	/* one service: its container's identity labels the series */
		s->cg = pi->cg;
		s->k8s = pi->k8s;
	}
	s->builder = pprof_builder__new(&w->popts, w->opts.demangle);
	if (!s->builder || hmap__insert(w->index, h, w->n_series + 1)) {
		pprof_builder__free(s->builder);
		free(s);
		return NULL;
	}
	w->series[w->n_series++] = s;
	return s;
}

/* Whether KEY is one of LIST's comma-separated names (NULL: every key is). */
static bool key_listed(const char *list, const char *key)
{
	size_t n = strlen(key);

	for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, key, n) && (p[n] == ',' || p[n] == '\0'))
			return n > 0;
	return !list;
}

/* The process's own labels that LIST keeps, after ours in L. */
static int own_labels(const struct label_set *set, const char *list, struct pprof_label *l)
{
	int n = 0;

	for (__u32 i = 0; set && i < set->n && i < LABELS_MAX; i++)
		if (set->kv[i].key[0] && key_listed(list, set->kv[i].key))
			l[n++] = (struct pprof_label){ .key = set->kv[i].key, .str = set->kv[i].value };
	return n;
}

/* Labels of one sample; empty values are left out. */
static int sample_labels(const struct proc_info *pi, const struct window_record *rec,
			 bool per_thread, char bufs[3][24], struct pprof_label *l)
{
	const struct { const char *key, *value; } all[] = {
		{ "pid", bufs[0] },
		{ "comm", bufs[1] },
		{ "tid", per_thread ? bufs[2] : "" },
		{ "state", rec->state ? rec->state : "" },
		{ "exe", pi->exe },
		{ "container_id", pi->cg.container_id },
		{ "pod_uid", pi->cg.pod_uid },
		{ "namespace", pi->k8s.namespace },
		{ "pod", pi->k8s.pod },
		{ "container", pi->k8s.container },
	};
	int n = 0;

	snprintf(bufs[0], 24, "%u", rec->pid);
	snprintf(bufs[1], 24, "%.*s", TASK_COMM_LEN, rec->comm);
	snprintf(bufs[2], 24, "%u", rec->tid);
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i].value[0])
			l[n++] = (struct pprof_label){ .key = all[i].key, .str = all[i].value };
	return n;
}

int window__add(struct window *w, const struct proc_info *pi, const struct window_record *rec,
		const struct stack *st)
{
	struct pprof_label labels[10 + LABELS_MAX];
	char bufs[3][24];
	struct series *s;
	int n, err;

	if (w->opts.pid && rec->pid != w->opts.pid)
		return 0;
	s = series_of(w, pi);
	if (!s)
		return -ENOMEM;
	n = sample_labels(pi, rec, w->opts.per_thread, bufs, labels);
	n += own_labels(rec->labels, w->opts.label_keys, labels + n);
	err = pprof_builder__add(s->builder, st, rec->values, labels, n);
	if (!err) {
		s->samples += rec->samples;
		w->samples += rec->samples;
	}
	return err;
}

int window__add_heap(struct window *w, const struct proc_info *pi, const char *comm,
		     struct symbolizer *sym, const struct goheap_snapshot *snap,
		     const struct goheap_snapshot *prev)
{
	struct window_record rec = { .pid = pi->pid, .img = pi->img, .comm = comm };
	struct pprof_label labels[10];
	char bufs[3][24];
	struct series *s;
	int n, err;

	if (w->opts.pid && rec.pid != w->opts.pid)
		return 0;
	s = series_of(w, pi);
	if (!s)
		return -ENOMEM;
	n = sample_labels(pi, &rec, false, bufs, labels);
	err = heap_report__add(s->builder, sym, &pi->img, snap, prev, labels, n);
	if (!err) {
		s->samples += snap->n;	/* records: a process with none sends no series */
		w->samples += snap->n;
	}
	return err;
}

static int series_labels(const struct series *s, struct push_label *l)
{
	const struct push_label all[SERIES_LABELS] = {
		{ "container_id", s->cg.container_id },
		{ "pod_uid", s->cg.pod_uid },
		{ "namespace", s->k8s.namespace },
		{ "pod", s->k8s.pod },
		{ "container", s->k8s.container },
	};
	int n = 0;

	for (int i = 0; i < SERIES_LABELS; i++)
		if (all[i].value[0])
			l[n++] = all[i];
	return n;
}

int window__finish(struct window *w, __s64 end_ns, window_series_fn fn, void *ctx)
{
	struct push_label labels[SERIES_LABELS];
	int ret = 0;

	for (size_t i = 0; i < w->n_series; i++) {
		struct series *s = w->series[i];
		struct pprof *prof = pprof_builder__pprof(s->builder);
		struct window_series ws = {
			.name = s->name,
			.labels = labels,
			.n_labels = series_labels(s, labels),
			.prof = prof,
			.samples = s->samples,
		};
		int err;

		if (!s->samples)
			continue;
		pprof__set_time(prof, w->opts.start_ns, end_ns - w->opts.start_ns);
		err = fn(&ws, ctx);
		if (err && !ret)
			ret = err;
	}
	return ret;
}

__s64 window__start(const struct window *w)
{
	return w->opts.start_ns;
}

__u64 window__samples(const struct window *w)
{
	return w->samples;
}
