/* python_ops.c -- CPython behind the runtime interface: its table line's ops and its statistics */
#include <stddef.h>
#include "python.h"
#include "python_runtime.h"

static void *py_new(const struct runtime_opts *o)
{
	struct python_opts po = { .proc_root = o->proc_root, .procs_fd = o->procs_fd,
				  .pids_fd = o->pids_fd };

	return python__new(&po);
}

static void py_free(void *rt)
{
	python__free(rt);
}

static int py_add_image(void *rt, const struct proc_image *img)
{
	return python__add_image(rt, img);
}

static void py_event(void *rt, const struct rt_event *e)
{
	struct proc_image img = rt_event__image(e);

	python__code_seen(rt, &img, e->addr, e->gen);
}

static int py_frame(void *rt, const struct proc_image *img, __u64 a, __u64 b,
		    struct src_line *out, int max, __u64 *loc)
{
	if (max < 1)
		return 0;
	python__frame(rt, img, a, b, &out[0], loc);	/* -ENOENT: out names it unknown */
	return 1;
}

static const char *py_mark(void *rt, __u64 slot)
{
	if (python__fold_trampoline(rt, slot))
		return NULL;	/* the Python frame it calls is already there */
	return python__lost_name(rt, slot);
}

static void py_sweep(void *rt)
{
	python__sweep(rt);
}

static void py_stats_read(const void *rt, void *out)
{
	python__stats(rt, out);
}

#define PS(field) offsetof(struct python_stats, field)

static const struct stat_desc py_stats[] = {
	STAT_COUNT("processes_total", "CPython processes whose frames BPF walks", PS(procs)),
	STAT_COUNT("unknown_versions_total",
		  "CPython processes of a version we do not know (native frames only)",
		  PS(unknown_versions)),
	STAT_COUNT("layout_mismatch_total",
		  "CPython processes whose memory did not match our offsets (native frames only)",
		  PS(layout_mismatch)),
	STAT_COUNT("files_skipped_total",
		  "Executables not read again: an earlier process showed they hold no CPython",
		  PS(files_skipped)),
	STAT_COUNT("code_objects_total", "Code objects read and cached", PS(codes)),
	STAT_COUNT("code_objects_failed_total",
		  "Code objects that could not be read (freed, or the process gone)",
		  PS(codes_failed)),
	STAT_LEVEL("code_cache_bytes",
		  "Memory the cached code objects hold", "bytes", PS(code_bytes)),
	STAT_COUNT("code_cache_full_total",
		  "Code objects not read: their process's cache was full (frames unnamed)",
		  PS(code_cache_full)),
	STAT_NS_AS_SECONDS("code_read_seconds_total",
		  "Time spent reading code objects", STAT_TYPE_COUNTER, PS(read_ns)),
	STAT_COUNT("frames_named_total", "Python frames named", PS(frames_named)),
	STAT_COUNT("frames_unnamed_total", "Python frames left unnamed", PS(frames_unnamed)),
	STAT_COUNT("trampolines_folded_total",
		  "-X perf trampoline frames folded into the Python frame they call",
		  PS(trampolines)),
	STAT_COUNT_BY("frames_lost_total",
		  "Marks of Python frames BPF could not read, by reason",
		  "reason=\"no_thread_state\"",
		  PS(frames_lost[PY_LOST_NO_THREAD])),
	STAT_COUNT_BY("frames_lost_total",
		  NULL, "reason=\"unreadable_frame\"", PS(frames_lost[PY_LOST_READ])),
	STAT_COUNT_BY("frames_lost_total",
		  NULL, "reason=\"too_deep\"", PS(frames_lost[PY_LOST_RUN])),
};

static const char *const py_maps[] = { "py_tstates", NULL };

const struct runtime_ops python_runtime = {
	.name = "python",
	.id = UNWIND_RT_PYTHON,
	.procs_map = "py_procs",
	.maps = py_maps,
	.new = py_new,
	.free = py_free,
	.add_image = py_add_image,
	.event = py_event,
	.frame = py_frame,
	.mark = py_mark,
	.sweep = py_sweep,
	.stats = py_stats,
	.n_stats = sizeof(py_stats) / sizeof(py_stats[0]),
	.stats_size = sizeof(struct python_stats),
	.stats_read = py_stats_read,
};
