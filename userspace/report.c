/* report.c -- turns the sampler's aggregated stacks into a symbolized pprof profile */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"
#include "array.h"

/*
 * A stack the kernel could not give us still counts: the sample gets one
 * pseudo frame that names why. They live in "no mapping" at addresses that no
 * real frame can have there, one per reason and side.
 */
enum { LOST_KERNEL_COLLISION = 1, LOST_USER_COLLISION, LOST_KERNEL_ERROR, LOST_USER_ERROR };

#define MAX_FRAMES (2 * MAX_STACK_DEPTH + 2)

struct builder {
	struct pprof *prof;
	struct sampler *sampler;
	struct symbolizer *sym;
	const struct report_opts *opts;
	__u32 *map_ids;		/* symbolizer mapping id -> pprof mapping id */
	size_t n_map_ids;
	size_t cap_map_ids;
	__u32 locs[MAX_FRAMES];
	int n_locs;
	__s64 period;
};

static __u32 pprof_mapping(struct builder *b, const struct sym_mapping *m)
{
	struct pprof_mapping_desc d;

	if (m->id >= b->n_map_ids) {
		size_t old = b->cap_map_ids;

		if (ARRAY_RESERVE(b->map_ids, b->cap_map_ids, m->id + 1))
			return 0;
		memset(b->map_ids + old, 0, (b->cap_map_ids - old) * sizeof(*b->map_ids));
		b->n_map_ids = b->cap_map_ids;
	}
	if (b->map_ids[m->id])
		return b->map_ids[m->id];
	d = (struct pprof_mapping_desc){
		.start = m->start,
		.limit = m->limit,
		.file_offset = m->file_offset,
		.filename = m->path,
		.build_id = m->build_id,
		.has_functions = m->has_symbols,
		.is_kernel = m->is_kernel,
	};
	b->map_ids[m->id] = pprof__add_mapping(b->prof, &d);
	return b->map_ids[m->id];
}

static int push_location(struct builder *b, __u32 id)
{
	if (!id)
		return -ENOMEM;
	if (b->n_locs < MAX_FRAMES)
		b->locs[b->n_locs++] = id;
	return 0;
}

static int push_lost(struct builder *b, __u64 reason, const char *why)
{
	struct pprof_line line = { .function = why };

	return push_location(b, pprof__add_location(b->prof, 0, reason, &line, 1));
}

static int push_frame(struct builder *b, const struct sym_frame *f, __u64 addr)
{
	struct pprof_line line = { .function = f->name };
	__u32 map_id = 0;

	if (f->mapping) {
		map_id = pprof_mapping(b, f->mapping);
		if (!map_id)
			return -ENOMEM;
	}
	return push_location(b, pprof__add_location(b->prof, map_id, addr, &line, f->name ? 1 : 0));
}

/* Appends the frames of one stack, leaf first; a lost stack becomes one pseudo frame. */
static int push_stack(struct builder *b, __s32 id, __u32 pid, bool kernel)
{
	__u64 ips[MAX_STACK_DEPTH];
	struct sym_frame f;
	int n, err = 0;

	if (id == -EEXIST)
		return push_lost(b, kernel ? LOST_KERNEL_COLLISION : LOST_USER_COLLISION,
				 kernel ? "[lost kernel stack: collision]" : "[lost user stack: collision]");
	if (id == STACK_ID_SKIPPED || id == -EFAULT)
		return 0;	/* nothing to collect: a kernel thread, or a sample in user mode */
	n = id < 0 ? id : sampler__stack(b->sampler, id, ips, MAX_STACK_DEPTH);
	if (n < 0)
		return push_lost(b, kernel ? LOST_KERNEL_ERROR : LOST_USER_ERROR,
				 kernel ? "[lost kernel stack]" : "[lost user stack]");
	for (int i = 0; i < n && !err; i++) {
		/* every frame but the leaf is a return address: look up the call instruction */
		__u64 lookup = i ? ips[i] - 1 : ips[i];

		if (kernel)
			symbolizer__kernel(b->sym, lookup, &f);
		else
			symbolizer__user(b->sym, pid, lookup, &f);
		err = push_frame(b, &f, ips[i]);
	}
	return err;
}

static int add_record(const struct sample_key *key, __u64 count, void *ctx)
{
	struct builder *b = ctx;
	char comm[TASK_COMM_LEN + 1], pid[16], tid[16];
	struct pprof_label labels[] = {
		{ .key = "pid", .str = pid },
		{ .key = "comm", .str = comm },
		{ .key = "tid", .str = tid },
	};
	__s64 values[2] = { count, count * b->period };
	int err;

	memcpy(comm, key->comm, TASK_COMM_LEN);
	comm[TASK_COMM_LEN] = '\0';
	snprintf(pid, sizeof(pid), "%u", key->pid);
	snprintf(tid, sizeof(tid), "%u", key->tid);

	b->n_locs = 0;
	/* leaf first: the kernel part of a stack sits above its user part */
	err = push_stack(b, key->kern_stack_id, key->pid, true);
	if (!err)
		err = push_stack(b, key->user_stack_id, key->pid, false);
	if (!err)
		err = pprof__add_sample(b->prof, b->locs, b->n_locs, values, labels,
					b->opts->per_thread ? 3 : 2);
	return err;
}

struct pprof *report__build(struct sampler *s, struct symbolizer *sym,
			    const struct report_opts *opts)
{
	struct pprof_opts po = {
		.sample_types = { { "samples", "count" }, { "cpu", "nanoseconds" } },
		.n_sample_types = 2,
		.period_type = { "cpu", "nanoseconds" },
		.period = 1000000000LL / opts->frequency,
		.time_nanos = opts->time_nanos,
		.duration_nanos = opts->duration_nanos,
	};
	struct builder b = { .sampler = s, .sym = sym, .opts = opts, .period = po.period };
	int err;

	b.prof = pprof__new(&po);
	if (!b.prof)
		return NULL;
	err = sampler__for_each(s, add_record, &b);
	free(b.map_ids);
	if (err) {
		pprof__free(b.prof);
		errno = -err;
		return NULL;
	}
	return b.prof;
}
