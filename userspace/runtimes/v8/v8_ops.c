/* v8_ops.c -- V8 behind the runtime interface: its table line's ops and its statistics */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "v8_int.h"

static void *v8_new(const struct runtime_opts *o)
{
	struct v8_rt *r = calloc(1, sizeof(*r));

	if (r)
		r->o = *o;
	return r;
}

static void v8_free(void *rt)
{
	struct v8_rt *r = rt;

	if (r)
		rt_images__release(&r->pids, v8__free_pid, r);
	free(r);
}

static void v8_stats_read(const void *rt, void *out)
{
	const struct v8_rt *r = rt;

	memcpy(out, &r->stats, sizeof(r->stats));
}

#define VS(field) offsetof(struct v8_stats, field)

static const struct stat_desc v8_stats[] = {
	STAT_COUNT("processes_total", "Node.js processes whose JavaScript frames BPF walks", VS(procs)),
	STAT_COUNT("unknown_versions_total",
		   "V8 processes whose v8dbg_* symbols lack what the walk needs (native frames only)",
		   VS(unknown_versions)),
	STAT_COUNT("code_range_waits_total", "Looks again at a process for its JIT code range",
		   VS(code_range_waits)),
	STAT_COUNT("code_range_updates_total", "Code ranges of a process found grown and given to BPF",
		   VS(code_range_updates)),
	STAT_COUNT("functions_total", "JavaScript functions read and cached", VS(funcs)),
	STAT_COUNT("functions_failed_total", "JavaScript functions that could not be read",
		   VS(funcs_failed)),
	STAT_LEVEL("function_cache_bytes", "Memory the cached functions and scripts hold", "bytes",
		   VS(func_bytes)),
	STAT_COUNT("function_cache_full_total", "Functions not read: their process's cache was full",
		   VS(func_cache_full)),
	STAT_COUNT("frames_named_total", "JavaScript frames named", VS(frames_named)),
	STAT_COUNT("frames_unnamed_total", "JavaScript frames left unnamed", VS(frames_unnamed)),
	STAT_COUNT("frames_no_line_total", "Named JavaScript frames without a line", VS(frames_no_line)),
	STAT_COUNT("stub_frames_total", "V8 frames of generated code running no JavaScript function",
		   VS(stub_frames)),
	STAT_COUNT("frames_interpreted_total", "JavaScript frames running bytecode (Ignition)",
		   VS(frames_tier[V8_TIER_INTERPRETED])),
	STAT_COUNT("frames_baseline_total", "JavaScript frames running baseline code (Sparkplug)",
		   VS(frames_tier[V8_TIER_BASELINE])),
	STAT_COUNT("frames_optimized_total",
		   "JavaScript frames running optimised code (Maglev or TurboFan)",
		   VS(frames_tier[V8_TIER_OPTIMIZED])),
	STAT_COUNT("frames_builtin_total", "JavaScript frames running a builtin of V8's own",
		   VS(frames_tier[V8_TIER_BUILTIN])),
	STAT_COUNT("frames_lost_read_total", "Marks of V8 frames BPF could not read",
		   VS(frames_lost[V8_LOST_READ])),
	STAT_COUNT("frames_lost_chain_total", "Marks of V8 frame chains BPF found broken",
		   VS(frames_lost[V8_LOST_FRAME])),
	STAT_NS_AS_SECONDS("read_seconds_total", "Time spent reading functions", STAT_TYPE_COUNTER,
			   VS(read_ns)),
};

const struct runtime_ops v8_runtime = {
	.name = "v8",
	.id = UNWIND_RT_V8,
	.procs_map = "v8_procs",
	.new = v8_new,
	.free = v8_free,
	.add_image = v8__add_image,
	.retry = v8__retry,
	.event = v8__event,
	.frame = v8__frame,
	.mark = v8__mark,
	.sweep = v8__sweep,
	.stats = v8_stats,
	.n_stats = sizeof(v8_stats) / sizeof(v8_stats[0]),
	.stats_size = sizeof(struct v8_stats),
	.stats_read = v8_stats_read,
};
