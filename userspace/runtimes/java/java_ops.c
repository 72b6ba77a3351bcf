/* java_ops.c -- HotSpot behind the runtime interface: its table line's ops and its statistics */
#include <stddef.h>
#include "java.h"
#include "java_runtime.h"

static void *jv_new(const struct runtime_opts *o)
{
	struct java_opts jo = { .proc_root = o->proc_root, .procs_fd = o->procs_fd,
				.pids_fd = o->pids_fd };

	return java__new(&jo);
}

static void jv_free(void *rt)
{
	java__free(rt);
}

static int jv_add_image(void *rt, const struct proc_image *img)
{
	return java__add_image(rt, img);
}

/* JVMs found before their code cache was made */
static void jv_retry(void *rt)
{
	java__retry(rt);
}

static void jv_event(void *rt, const struct rt_event *e)
{
	struct proc_image img = rt_event__image(e);

	java__seen(rt, &img, e->kind, e->addr);
}

static int jv_frame(void *rt, const struct proc_image *img, __u64 a, __u64 b,
		    struct src_line *out, int max, __u64 *loc)
{
	return java__frame(rt, img, a, b, out, max, loc);
}

static const char *jv_mark(void *rt, __u64 slot)
{
	return java__lost_name(rt, slot);
}

static void jv_sweep(void *rt)
{
	java__sweep(rt);
}

static void jv_stats_read(const void *rt, void *out)
{
	java__stats(rt, out);
}

#define JS(field) offsetof(struct java_stats, field)

static const struct stat_desc jv_stats[] = {
	STAT_COUNT("processes_total", "JVMs whose frames BPF walks", JS(jvms)),
	STAT_COUNT("unknown_layout_total",
		  "JVMs whose tables lack what the walk needs (native frames only)",
		  JS(unknown_layout)),
	STAT_COUNT("not_ready_total",
		  "Looks at a JVM still starting (no code cache or interpreter yet): looked at again",
		  JS(not_ready)),
	STAT_COUNT("methods_total", "Methods read and cached", JS(methods)),
	STAT_COUNT("compiled_methods_total",
		  "Compiled methods whose debug info was read and cached", JS(nmethods)),
	STAT_COUNT("compiled_methods_replaced_total",
		  "Compiled methods found where another compilation was (read again)",
		  JS(nmethods_replaced)),
	STAT_COUNT("read_failed_total",
		  "Methods or compiled methods that could not be read (unloaded, or the process gone)",
		  JS(read_failed)),
	STAT_LEVEL("cache_bytes", "Memory the cached methods hold", "bytes", JS(cache_bytes)),
	STAT_NS_AS_SECONDS("read_seconds_total",
		  "Time spent reading JVM memory to name frames", STAT_TYPE_COUNTER, JS(read_ns)),
	STAT_COUNT("frames_named_total",
		  "Java frames named (inlined ones included)", JS(frames_named)),
	STAT_COUNT("frames_unnamed_total", "Java frames left unnamed", JS(frames_unnamed)),
	STAT_COUNT_BY("frames_lost_total",
		  "Marks where BPF stopped a Java walk, by reason",
		  "reason=\"no_code_blob\"",
		  JS(frames_lost[JAVA_LOST_NO_BLOB])),
	STAT_COUNT_BY("frames_lost_total",
		  NULL, "reason=\"unreadable_frame\"", JS(frames_lost[JAVA_LOST_READ])),
	STAT_COUNT_BY("frames_lost_total",
		  NULL, "reason=\"bad_frame\"", JS(frames_lost[JAVA_LOST_FRAME])),
	STAT_NS_AS_SECONDS("first_frame_named_seconds",
		  "The last JVM found: from finding it to naming its first frame",
		  STAT_TYPE_GAUGE,
		  JS(first_named_ns)),
};

const struct runtime_ops java_runtime = {
	.name = "java",
	.id = UNWIND_RT_JAVA,
	.procs_map = "java_procs",
	.new = jv_new,
	.free = jv_free,
	.add_image = jv_add_image,
	.retry = jv_retry,
	.event = jv_event,
	.frame = jv_frame,
	.mark = jv_mark,
	.sweep = jv_sweep,
	.stats = jv_stats,
	.n_stats = sizeof(jv_stats) / sizeof(jv_stats[0]),
	.stats_size = sizeof(struct java_stats),
	.stats_read = jv_stats_read,
};
