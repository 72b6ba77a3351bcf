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

static int py_add_pid(void *rt, __u32 pid)
{
	return python__add_pid(rt, pid);
}

static void py_event(void *rt, const struct rt_event *e)
{
	python__code_seen(rt, e->pid, e->addr, e->gen);
}

static int py_frame(void *rt, __u32 pid, __u64 a, __u64 b, struct src_line *out, int max,
		    __u64 *loc)
{
	if (max < 1)
		return 0;
	python__frame(rt, pid, a, b, &out[0], loc);	/* -ENOENT: out names it unknown */
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
	{ "processes_total", "CPython processes whose frames BPF walks", STAT_TYPE_COUNTER, NULL, NULL, PS(procs) },
	{ "unknown_versions_total", "CPython processes of a version we do not know (native frames only)",
	  STAT_TYPE_COUNTER, NULL, NULL, PS(unknown_versions) },
	{ "layout_mismatch_total", "CPython processes whose memory did not match our offsets (native frames only)",
	  STAT_TYPE_COUNTER, NULL, NULL, PS(layout_mismatch) },
	{ "files_skipped_total", "Executables not read again: an earlier process showed they hold no CPython",
	  STAT_TYPE_COUNTER, NULL, NULL, PS(files_skipped) },
	{ "code_objects_total", "Code objects read and cached", STAT_TYPE_COUNTER, NULL, NULL, PS(codes) },
	{ "code_objects_failed_total", "Code objects that could not be read (freed, or the process gone)",
	  STAT_TYPE_COUNTER, NULL, NULL, PS(codes_failed) },
	{ "code_cache_bytes", "Memory the cached code objects hold", STAT_TYPE_GAUGE, "bytes", NULL, PS(code_bytes) },
	{ "code_cache_full_total", "Code objects not read: their process's cache was full (frames unnamed)",
	  STAT_TYPE_COUNTER, NULL, NULL, PS(code_cache_full) },
	{ "code_read_seconds_total", "Time spent reading code objects", STAT_TYPE_COUNTER, "seconds", NULL,
	  PS(read_ns), 1e-9 },
	{ "frames_named_total", "Python frames named", STAT_TYPE_COUNTER, NULL, NULL, PS(frames_named) },
	{ "frames_unnamed_total", "Python frames left unnamed", STAT_TYPE_COUNTER, NULL, NULL, PS(frames_unnamed) },
	{ "trampolines_folded_total", "-X perf trampoline frames folded into the Python frame they call",
	  STAT_TYPE_COUNTER, NULL, NULL, PS(trampolines) },
	{ "frames_lost_total", "Marks of Python frames BPF could not read, by reason", STAT_TYPE_COUNTER, NULL,
	  "reason=\"no_thread_state\"", PS(frames_lost[PY_LOST_NO_THREAD]) },
	{ "frames_lost_total", NULL, STAT_TYPE_COUNTER, NULL, "reason=\"unreadable_frame\"",
	  PS(frames_lost[PY_LOST_READ]) },
	{ "frames_lost_total", NULL, STAT_TYPE_COUNTER, NULL, "reason=\"too_deep\"", PS(frames_lost[PY_LOST_RUN]) },
};

static const char *const py_maps[] = { "py_tstates", NULL };

const struct runtime_ops python_runtime = {
	.name = "python",
	.id = UNWIND_RT_PYTHON,
	.procs_map = "py_procs",
	.maps = py_maps,
	.new = py_new,
	.free = py_free,
	.add_pid = py_add_pid,
	.event = py_event,
	.frame = py_frame,
	.mark = py_mark,
	.sweep = py_sweep,
	.stats = py_stats,
	.n_stats = sizeof(py_stats) / sizeof(py_stats[0]),
	.stats_size = sizeof(struct python_stats),
	.stats_read = py_stats_read,
};
