/* report.c -- turns aggregated on-CPU samples and off-CPU time into one symbolized pprof profile */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pprof_builder.h"
#include "heap_report.h"
#include "report.h"
#include "stack.h"

#define MAX_VALUES 3

struct report {
	struct pprof_builder *builder;
	struct sampler *sampler;
	struct offcpu *offcpu;
	struct symbolizer *sym;
	int slot;
	const struct report_opts *opts;
	__s64 period;
	struct stack stack;
	struct label_set set;	/* the sample's own labels, read from the sampler */
};

void report__pprof_opts(struct pprof_opts *po, const struct report_opts *opts)
{
	static const struct pprof_value_type cpu = { "cpu", "nanoseconds" },
		off = { "off_cpu", "nanoseconds" }, wall = { "wall", "nanoseconds" };

	*po = (struct pprof_opts){
		.period_type = cpu,
		.period = 1000000000LL / opts->frequency,
		.time_nanos = opts->time_nanos,
		.duration_nanos = opts->duration_nanos,
	};
	switch (opts->mode) {
	case MODE_HEAP:
	case MODE_ALLOC:
		heap_report__opts(po, GOHEAP_DEFAULT_RATE, opts->time_nanos, opts->duration_nanos);
		break;
	case MODE_OFFCPU:
		po->sample_types[0] = off;
		po->sample_types[1] = (struct pprof_value_type){ "blocks", "count" };
		po->n_sample_types = 2;
		po->period_type = off;
		po->period = 1;
		po->default_sample_type = "off_cpu";
		break;
	case MODE_WALL:
		po->sample_types[0] = cpu;
		po->sample_types[1] = off;
		po->sample_types[2] = wall;
		po->n_sample_types = 3;
		po->default_sample_type = "wall";
		break;
	default:
		po->sample_types[0] = (struct pprof_value_type){ "samples", "count" };
		po->sample_types[1] = cpu;
		po->n_sample_types = 2;
	}
}

int report__default_value(enum profile_mode mode)
{
	return mode == MODE_WALL ? 2 : mode == MODE_HEAP || mode == MODE_ALLOC ? HEAP_INUSE_SPACE : 0;
}

int report__cpu_values(enum profile_mode mode, __s64 period, __u64 count, __s64 *v)
{
	if (mode == MODE_WALL) {
		v[0] = v[2] = count * period;
		v[1] = 0;
		return 3;
	}
	v[0] = count;
	v[1] = count * period;
	return 2;
}

int report__offcpu_values(enum profile_mode mode, __u64 ns, __u64 blocks, __s64 *v)
{
	if (mode == MODE_WALL) {
		v[0] = 0;
		v[1] = v[2] = ns;
		return 3;
	}
	v[0] = ns;
	v[1] = blocks;
	return 2;
}

/* pid, comm, then tid (--per-thread) and state (wall and off-cpu modes) when given */
static int labels(struct pprof_label *l, char bufs[3][24], __u32 pid, __u32 tid,
		  const char *comm, bool per_thread, const char *state)
{
	int n = 0;

	snprintf(bufs[0], 24, "%u", pid);
	snprintf(bufs[1], 24, "%.*s", TASK_COMM_LEN, comm);
	snprintf(bufs[2], 24, "%u", tid);
	l[n++] = (struct pprof_label){ .key = "pid", .str = bufs[0] };
	l[n++] = (struct pprof_label){ .key = "comm", .str = bufs[1] };
	if (per_thread)
		l[n++] = (struct pprof_label){ .key = "tid", .str = bufs[2] };
	if (state)
		l[n++] = (struct pprof_label){ .key = "state", .str = state };
	return n;
}

/* The process's own labels (include/labels.h), read into r->set, after ours. */
static int own_labels(struct report *r, struct pprof_label *l)
{
	int n = 0;

	for (__u32 i = 0; i < r->set.n; i++) {
		const struct label_kv *kv = &r->set.kv[i];

		if (kv->key[0])
			l[n++] = (struct pprof_label){ .key = kv->key, .str = kv->value };
	}
	return n;
}

static int add_cpu(const struct sample_key *key, __u64 count, void *ctx)
{
	struct report *r = ctx;
	struct pprof_label l[4 + LABELS_MAX];
	__s64 values[MAX_VALUES];
	char bufs[3][24];
	int n;

	/* in wall mode on-CPU time is a state of its own, next to the blocking ones */
	n = labels(l, bufs, key->pid, key->tid, key->comm, r->opts->per_thread,
		   r->opts->mode == MODE_WALL ? "running" : NULL);
	/* a set lost since (a full map) is left out */
	if (key->labels_hash && !sampler__label_set(r->sampler, r->slot, key->labels_hash, &r->set))
		n += own_labels(r, l + n);
	report__cpu_values(r->opts->mode, r->period, count, values);
	stack__resolve(&r->stack, r->sampler, r->slot, r->sym, key);
	return pprof_builder__add(r->builder, &r->stack, values, l, n);
}

static int add_offcpu(const struct offcpu_key *key, const struct offcpu_val *val, void *ctx)
{
	struct report *r = ctx;
	struct pprof_label l[4 + LABELS_MAX];
	__s64 values[MAX_VALUES];
	char bufs[3][24];
	int n;

	if (!val->ns)
		return 0;	/* a window's zero entries are not samples */
	n = labels(l, bufs, key->pid, key->tid, key->comm, r->opts->per_thread,
		   offcpu__state_name(key->state));
	if (key->labels_hash && !offcpu__label_set(r->offcpu, key->labels_hash, &r->set))
		n += own_labels(r, l + n);
	report__offcpu_values(r->opts->mode, val->ns, val->count, values);
	stack__resolve_offcpu(&r->stack, r->offcpu, sampler__runtimes(r->sampler), r->sym, key);
	return pprof_builder__add(r->builder, &r->stack, values, l, n);
}

struct pprof *report__build(struct sampler *s, int slot, struct offcpu *oc, int oc_slot,
			    struct symbolizer *sym, const struct report_opts *opts)
{
	struct pprof_opts po;
	struct report *r = calloc(1, sizeof(*r));	/* its stack scratch is large */
	struct pprof *prof = NULL;
	int err = 0;

	if (!r)
		return NULL;
	report__pprof_opts(&po, opts);
	*r = (struct report){ .sampler = s, .offcpu = oc, .sym = sym, .opts = opts,
			      .period = 1000000000LL / opts->frequency };
	r->builder = pprof_builder__new(&po, opts->demangle);
	if (!r->builder) {
		err = -errno;
		goto out;
	}
	r->slot = slot;
	/* off-cpu mode has a sampler for its tables and Python namer, not for its samples */
	if (s && opts->mode != MODE_OFFCPU)
		err = sampler__for_each(s, slot, add_cpu, r);
	r->slot = oc_slot;
	if (!err && oc)
		err = offcpu__for_each(oc, oc_slot, add_offcpu, r);
	if (!err)
		prof = pprof_builder__finish(r->builder);
	else
		pprof_builder__free(r->builder);
out:
	free(r);
	errno = -err;
	return prof;
}
