/* perl_ops.c -- Perl behind the runtime interface: its table line's ops and its statistics */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "perl_int.h"

static void *perl_new(const struct runtime_opts *o)
{
	struct perl_rt *r = calloc(1, sizeof(*r));

	if (r)
		r->o = *o;
	return r;
}

static void perl_free(void *rt)
{
	struct perl_rt *r = rt;

	if (r)
		rt_images__release(&r->pids, perl__free_pid, r);
	free(r);
}

static void perl_stats_read(const void *rt, void *out)
{
	const struct perl_rt *r = rt;

	memcpy(out, &r->stats, sizeof(r->stats));
}

#define PS(field) offsetof(struct perl_stats, field)

static const struct stat_desc perl_stats[] = {
	STAT_COUNT("processes_total", "perl processes whose Perl frames BPF walks", PS(procs)),
	STAT_COUNT("unknown_versions_total",
		   "perl processes of a version we do not know (native frames only)",
		   PS(unknown_versions)),
	STAT_COUNT("functions_total", "Perl subs and file names read and cached", PS(funcs)),
	STAT_COUNT("functions_failed_total",
		   "Perl subs that could not be read (freed, reused, the process gone)",
		   PS(funcs_failed)),
	STAT_LEVEL("function_cache_bytes", "Memory the cached names hold", "bytes", PS(func_bytes)),
	STAT_COUNT("function_cache_full_total", "Names not read: their process's cache was full",
		   PS(func_cache_full)),
	STAT_COUNT("frames_named_total", "Perl frames named", PS(frames_named)),
	STAT_COUNT("frames_unnamed_total", "Perl frames left unnamed", PS(frames_unnamed)),
	STAT_COUNT("frames_lost_no_interp_total", "Marks of Perl walks that found no interpreter",
		   PS(frames_lost[PERL_LOST_NO_INTERP])),
	STAT_COUNT("frames_lost_read_total", "Marks of Perl contexts BPF could not read",
		   PS(frames_lost[PERL_LOST_READ])),
	STAT_COUNT("frames_lost_depth_total",
		   "Marks of Perl walks cut at PERL_MAX_RUN contexts in one runops call",
		   PS(frames_lost[PERL_LOST_RUN])),
	STAT_COUNT("frames_lost_thread_total",
		   "Marks of Perl frames in a thread whose interpreter was not found (a shared libperl's ithreads)",
		   PS(frames_lost[PERL_LOST_THREAD])),
	STAT_NS_AS_SECONDS("read_seconds_total", "Time spent reading names", STAT_TYPE_COUNTER,
			   PS(read_ns)),
};

const struct runtime_ops perl_runtime = {
	.name = "perl",
	.id = UNWIND_RT_PERL,
	.procs_map = "perl_procs",
	.new = perl_new,
	.free = perl_free,
	.add_image = perl__add_image,
	.event = perl__event,
	.frame = perl__frame,
	.mark = perl__mark,
	.sweep = perl__sweep,
	.stats = perl_stats,
	.n_stats = sizeof(perl_stats) / sizeof(perl_stats[0]),
	.stats_size = sizeof(struct perl_stats),
	.stats_read = perl_stats_read,
};
