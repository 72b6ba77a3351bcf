/* ruby_ops.c -- CRuby behind the runtime interface: its table line's ops and its statistics */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "ruby_int.h"

static void *ruby_new(const struct runtime_opts *o)
{
	struct ruby_rt *r = calloc(1, sizeof(*r));

	if (r)
		r->o = *o;
	return r;
}

static void ruby_free(void *rt)
{
	struct ruby_rt *r = rt;

	for (size_t i = 0; r && i < r->n_pids; i++)
		ruby__free_pid(r->pids[i]);
	if (r)
		free(r->pids);
	free(r);
}

static int ruby_add_image(void *rt, const struct proc_image *img)
{
	return ruby__add_image(rt, img);
}

static void ruby_retry(void *rt)
{
	ruby__retry(rt);
}

static void ruby_event(void *rt, const struct rt_event *e)
{
	ruby__event(rt, e);
}

static int ruby_frame(void *rt, const struct proc_image *img, __u64 a, __u64 b,
		      struct src_line *out, int max, __u64 *loc)
{
	return ruby__frame(rt, img, a, b, out, max, loc);
}

static const char *ruby_mark(void *rt, __u64 slot)
{
	return ruby__mark(rt, slot);
}

static void ruby_sweep(void *rt)
{
	ruby__sweep(rt);
}

static void ruby_stats_read(const void *rt, void *out)
{
	const struct ruby_rt *r = rt;

	memcpy(out, &r->stats, sizeof(r->stats));
}

#define RS(field) offsetof(struct ruby_stats, field)

static const struct stat_desc ruby_stats[] = {
	STAT_COUNT("processes_total", "CRuby processes whose Ruby frames BPF walks", RS(procs)),
	STAT_COUNT("jit_processes_total", "Of those, processes whose YJIT code was found", RS(jit_procs)),
	STAT_COUNT("unknown_versions_total",
		   "CRuby processes of a version or build we cannot walk (native frames only)",
		   RS(unknown_versions)),
	STAT_COUNT("iseqs_total", "Ruby iseqs (methods, blocks, files) read and cached", RS(iseqs)),
	STAT_COUNT("iseqs_failed_total", "Ruby iseqs that could not be read (freed, or the process gone)",
		   RS(iseqs_failed)),
	STAT_COUNT("method_entries_total", "Method entries (a method's name and class) read and cached",
		   RS(mes)),
	STAT_COUNT("method_entries_failed_total",
		   "Method entries that could not be read (freed first, or the process gone): no class",
		   RS(mes_failed)),
	STAT_LEVEL("cache_bytes", "Memory the cached names and line tables hold", "bytes",
		   RS(cache_bytes)),
	STAT_COUNT("cache_full_total", "Iseqs not read: their process's cache was full", RS(cache_full)),
	STAT_COUNT("frames_named_total", "Ruby frames named", RS(frames_named)),
	STAT_COUNT("frames_unnamed_total", "Ruby frames left unnamed", RS(frames_unnamed)),
	STAT_COUNT("frames_no_line_total", "Named Ruby frames given their first line only",
		   RS(frames_no_line)),
	STAT_COUNT("frames_lost_no_ec_total", "Marks of Ruby stacks whose execution context was unreadable",
		   RS(frames_lost[RB_LOST_NO_EC])),
	STAT_COUNT("frames_lost_read_total", "Marks of Ruby control frames BPF could not read",
		   RS(frames_lost[RB_LOST_READ])),
	STAT_COUNT("frames_lost_deep_total", "Marks of Ruby frames past the walk's bound per vm_exec call",
		   RS(frames_lost[RB_LOST_RUN])),
	STAT_COUNT("frames_lost_jit_total", "Marks of YJIT code whose return into vm_exec was not found",
		   RS(frames_lost[RB_LOST_JIT])),
	STAT_COUNT("frames_jit_total", "Marks of YJIT code, above the Ruby frames it runs", RS(frames_jit)),
	STAT_NS_AS_SECONDS("read_seconds_total", "Time spent reading iseqs and method entries",
			   STAT_TYPE_COUNTER, RS(read_ns)),
};

const struct runtime_ops ruby_runtime = {
	.name = "ruby",
	.id = UNWIND_RT_RUBY,
	.procs_map = "rb_procs",
	.new = ruby_new,
	.free = ruby_free,
	.add_image = ruby_add_image,
	.retry = ruby_retry,
	.event = ruby_event,
	.frame = ruby_frame,
	.mark = ruby_mark,
	.sweep = ruby_sweep,
	.stats = ruby_stats,
	.n_stats = sizeof(ruby_stats) / sizeof(ruby_stats[0]),
	.stats_size = sizeof(struct ruby_stats),
	.stats_read = ruby_stats_read,
};
