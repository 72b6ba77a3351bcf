/* report.c -- turns the sampler's aggregated stacks into a symbolized CPU profile (pprof) */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "pprof_builder.h"
#include "report.h"
#include "stack.h"

struct report {
	struct pprof_builder *builder;
	struct sampler *sampler;
	struct symbolizer *sym;
	int slot;
	bool per_thread;
	__s64 period;
	struct stack stack;
};

void report__cpu_opts(struct pprof_opts *po, const struct report_opts *opts)
{
	*po = (struct pprof_opts){
		.sample_types = { { "samples", "count" }, { "cpu", "nanoseconds" } },
		.n_sample_types = 2,
		.period_type = { "cpu", "nanoseconds" },
		.period = 1000000000LL / opts->frequency,
		.time_nanos = opts->time_nanos,
		.duration_nanos = opts->duration_nanos,
	};
}

static int add_record(const struct sample_key *key, __u64 count, void *ctx)
{
	struct report *r = ctx;
	char comm[TASK_COMM_LEN + 1], pid[16], tid[16];
	struct pprof_label labels[] = {
		{ .key = "pid", .str = pid },
		{ .key = "comm", .str = comm },
		{ .key = "tid", .str = tid },
	};
	__s64 values[2] = { count, count * r->period };
	int err;

	memcpy(comm, key->comm, TASK_COMM_LEN);
	comm[TASK_COMM_LEN] = '\0';
	snprintf(pid, sizeof(pid), "%u", key->pid);
	snprintf(tid, sizeof(tid), "%u", key->tid);
	err = stack__resolve(&r->stack, r->sampler, r->slot, r->sym, key);
	if (!err)
		err = pprof_builder__add(r->builder, &r->stack, values, labels, r->per_thread ? 3 : 2);
	return err;
}

struct pprof *report__build(struct sampler *s, int slot, struct symbolizer *sym,
			    const struct report_opts *opts)
{
	struct pprof_opts po;
	struct report r;
	int err;

	report__cpu_opts(&po, opts);
	r = (struct report){ .sampler = s, .sym = sym, .slot = slot, .period = po.period,
			     .per_thread = opts->per_thread };
	r.builder = pprof_builder__new(&po, opts->demangle);
	if (!r.builder)
		return NULL;
	err = sampler__for_each(s, slot, add_record, &r);
	if (err) {
		pprof_builder__free(r.builder);
		errno = -err;
		return NULL;
	}
	return pprof_builder__finish(r.builder);
}
