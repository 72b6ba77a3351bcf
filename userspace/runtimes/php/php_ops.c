/* php_ops.c -- the PHP runtime's ops and statistics, as runtimes[] lists them */
#include <stdlib.h>
#include <string.h>
#include "php_int.h"

static void *php_new(const struct runtime_opts *o)
{
	struct php_rt *r = calloc(1, sizeof(*r));

	if (r)
		r->o = *o;
	return r;
}

static void php_free(void *rt)
{
	struct php_rt *r = rt;

	if (r)
		rt_images__release(&r->pids, php__free_pid, r);
	free(r);
}

static void php_stats_read(const void *rt, void *out)
{
	const struct php_rt *r = rt;

	memcpy(out, &r->stats, sizeof(r->stats));
}

#define PS(field) offsetof(struct php_stats, field)

static const struct stat_desc php_stats[] = {
	STAT_COUNT("processes_total", "PHP processes whose frames BPF walks", PS(procs)),
	STAT_COUNT("unknown_versions_total",
		   "PHP processes of a version or layout we do not know (native frames only)",
		   PS(unknown_versions)),
	STAT_COUNT("functions_total", "PHP functions read and cached", PS(funcs)),
	STAT_COUNT("functions_failed_total", "PHP functions that could not be read (freed, replaced)",
		   PS(funcs_failed)),
	STAT_LEVEL("function_cache_bytes", "Memory the cached functions hold", "bytes",
		   PS(func_bytes)),
	STAT_COUNT("function_cache_full_total", "Functions not read: their process's cache was full",
		   PS(func_cache_full)),
	STAT_COUNT("frames_named_total", "PHP frames named", PS(frames_named)),
	STAT_COUNT("frames_unnamed_total", "PHP frames left unnamed", PS(frames_unnamed)),
	STAT_COUNT("frames_lost_read_total", "Marks of PHP frames BPF could not read",
		   PS(frames_lost[PHP_LOST_READ])),
	STAT_COUNT("frames_lost_depth_total",
		   "Marks of PHP frames past the bound of one execute_ex call", PS(frames_lost[PHP_LOST_RUN])),
	STAT_COUNT("frames_lost_chain_total", "Marks of execute_ex calls with no PHP frame left",
		   PS(frames_lost[PHP_LOST_NO_FRAME])),
	STAT_COUNT("jit_frames_total",
		   "Samples in opcache's JIT code: marked, the native frames below not walked",
		   PS(frames_lost[PHP_LOST_JIT])),
	STAT_NS_AS_SECONDS("read_seconds_total", "Time spent reading functions", STAT_TYPE_COUNTER,
			   PS(read_ns)),
};

const struct runtime_ops php_runtime = {
	.name = "php",
	.id = UNWIND_RT_PHP,
	.procs_map = "php_procs",
	.new = php_new,
	.free = php_free,
	.add_image = php__add_image,
	.event = php__event,
	.frame = php__frame,
	.mark = php__mark,
	.sweep = php__sweep,
	.stats = php_stats,
	.n_stats = sizeof(php_stats) / sizeof(php_stats[0]),
	.stats_size = sizeof(struct php_stats),
	.stats_read = php_stats_read,
};
