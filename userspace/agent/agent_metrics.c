/* agent_metrics.c -- the agent's /metrics: samples, losses, map fill, harvest, caches, push, memory */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/resource.h>
#include "agent_int.h"
#include "deliver/deliver.h"
#include "runtimes/runtime.h"

static void counter(FILE *out, const char *name, const char *help, double v)
{
	prom__header(out, name, "counter", help);
	prom__value(out, name, NULL, v);
}

static void gauge(FILE *out, const char *name, const char *help, double v)
{
	prom__header(out, name, "gauge", help);
	prom__value(out, name, NULL, v);
}

static void write_sampler(FILE *out, struct agent *a, const struct agent_figures *f)
{
	static const char *const reasons[STAT_MAX] = {
		[STAT_KSTACK_COLLISION] = "reason=\"kernel_stack_collision\"",
		[STAT_USTACK_COLLISION] = "reason=\"user_stack_collision\"",
		[STAT_KSTACK_ERROR] = "reason=\"kernel_stack_error\"",
		[STAT_USTACK_ERROR] = "reason=\"user_stack_error\"",
		[STAT_COUNTS_FULL] = "reason=\"counts_map_full\"",
	};
	__u64 st[STAT_MAX] = {};

	sampler__stats(a->sampler, st);
	counter(out, "ebpfprof_samples_total", "Samples taken by the BPF program", st[STAT_SAMPLES]);
	prom__header(out, "ebpfprof_samples_lost_total", "counter",
		     "Stacks lost (sample kept under a pseudo frame) or samples dropped, by reason");
	for (int i = STAT_LOST_FIRST; i <= STAT_LOST_LAST; i++)
		prom__value(out, "ebpfprof_samples_lost_total", reasons[i], st[i]);
	counter(out, "ebpfprof_process_events_dropped_total",
		"New-process announcements lost to a full ring buffer", st[STAT_EVENTS_DROPPED]);
	counter(out, "ebpfprof_process_execs_unsampled_total",
		"Processes that exited unsampled while their exec waited (20 ms, longer if idle), so were never read",
		f->execs_unsampled);
	counter(out, "ebpfprof_process_exec_idle_waits_total",
		"Exec waits begun again because the process had been on a CPU for under a tenth of the time since the last look",
		f->execs_idle);
	counter(out, "ebpfprof_process_exec_rechecks_total",
		"Execs looked at again 5 ms after a first look found them busy (their start counts from the fork)",
		f->execs_rechecked);
	counter(out, "ebpfprof_process_cgroup_reads_saved_total",
		"Cgroup files not read: a process of the same cgroup v2 (a v2-only host) was read",
		f->cgroup_reads_saved);
	counter(out, "ebpfprof_process_cgroup_cache_refused_total",
		"Cgroup files not kept for their cgroup: the path did not lead to the announced cgroup id",
		f->cgroup_refused);
	counter(out, "ebpfprof_unwind_cfi_total", "User stacks walked with CFI tables",
		st[STAT_UNWIND_CFI]);
	counter(out, "ebpfprof_unwind_truncated_total",
		"CFI walks that stopped before the outermost frame", st[STAT_UNWIND_TRUNCATED]);
	counter(out, "ebpfprof_unwind_fp_fallback_total",
		"User stacks taken with frame pointers before the process's tables were loaded",
		st[STAT_UNWIND_FP_FALLBACK]);
	counter(out, "ebpfprof_unwind_exec_drops_total",
		"Execs that dropped their process's CFI tables, built for the image before",
		st[STAT_EXEC_TABLES_DROPPED]);
	gauge(out, "ebpfprof_counts_map_entries", "Entries in the counts map at the last harvest",
	      f->records_last);
	gauge(out, "ebpfprof_counts_map_capacity", "Capacity of one counts map",
	      sampler__count_capacity(a->sampler));
	counter(out, "ebpfprof_samples_harvested_total", "Samples read out of the maps",
		f->samples_harvested);
}

/* one pusher's counters, named PREFIX_sent_total...: ebpfprof_push_ or ebpfprof_otlp_ */
static void write_pusher_stats(FILE *out, const struct pusher_stats ps, const char *prefix)
{
	const struct {
		const char *name, *help;
		__u64 v;
		bool gauge;
	} rows[] = {
		{ "sent_total", "Windows accepted by the backend", ps.sent },
		{ "failures_total", "Failed push attempts", ps.failures },
		{ "timeouts_total", "Failed push attempts that timed out", ps.timeouts },
		{ "spool_errors_total", "Windows the spool could not write (disk full...), kept in memory",
		  ps.spool_errors },
		{ "retries_total", "Push attempts after the first", ps.retries },
		{ "rejected_total", "Windows dropped on a 4xx answer", ps.rejected },
		{ "dropped_total", "Windows dropped because the queue was full", ps.dropped },
		{ "expired_attempts_total", "Windows dropped after --push-max-attempts failed answers",
		  ps.expired_attempts },
		{ "expired_age_total", "Windows dropped older than --push-max-age", ps.expired_age },
		{ "queue_items", "Windows waiting to be pushed", ps.queue_items, true },
		{ "queue_bytes", "Bytes waiting to be pushed", ps.queue_bytes, true },
		{ "bytes_total", "Bytes pushed", ps.bytes_sent },
	};
	char name[64];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		snprintf(name, sizeof(name), "%s%s", prefix, rows[i].name);
		if (rows[i].gauge)
			gauge(out, name, rows[i].help, rows[i].v);
		else
			counter(out, name, rows[i].help, rows[i].v);
	}
}

/* the off-CPU tracer's counters (off-cpu and wall modes): its blocks, walks and losses */
static void write_offcpu(FILE *out, struct offcpu *o)
{
	static const char *const lost[] = {
		"reason=\"kernel_stack_collision\"", "reason=\"user_stack_collision\"",
		"reason=\"kernel_stack_error\"", "reason=\"user_stack_error\"",
		"reason=\"counts_map_full\"", "reason=\"start_failed\"",
	};
	static const int lost_ids[] = { OFFCPU_STAT_KSTACK_COLLISION, OFFCPU_STAT_USTACK_COLLISION,
					OFFCPU_STAT_KSTACK_ERROR, OFFCPU_STAT_USTACK_ERROR,
					OFFCPU_STAT_COUNTS_FULL, OFFCPU_STAT_START_FAILED };
	__u64 st[OFFCPU_STAT_MAX] = {};

	if (!o || offcpu__stats(o, st))
		return;
	counter(out, "ebpfprof_offcpu_switches_total", "Context switches the off-CPU tracer saw",
		st[OFFCPU_STAT_SWITCHES]);
	counter(out, "ebpfprof_offcpu_blocks_total", "Blocks begun by threads that pass the filters",
		st[OFFCPU_STAT_BLOCKS]);
	counter(out, "ebpfprof_offcpu_unwind_cfi_total", "Blocked user stacks walked with CFI",
		st[OFFCPU_STAT_UNWIND_CFI]);
	counter(out, "ebpfprof_offcpu_unwind_truncated_total",
		"CFI walks of blocked stacks that stopped before the outermost frame",
		st[OFFCPU_STAT_UNWIND_TRUNCATED]);
	counter(out, "ebpfprof_offcpu_unwind_fp_fallback_total",
		"Blocked user stacks taken with frame pointers before the process's tables loaded",
		st[OFFCPU_STAT_UNWIND_FP_FALLBACK]);
	counter(out, "ebpfprof_offcpu_missed_switch_in_total",
		"Blocks whose switch-in the tracepoint never reported (end estimated)",
		st[OFFCPU_STAT_MISSED_SWITCH_IN]);
	prom__header(out, "ebpfprof_offcpu_lost_total", "counter",
		     "Off-CPU stacks or time lost, by reason");
	for (size_t i = 0; i < sizeof(lost_ids) / sizeof(lost_ids[0]); i++)
		prom__value(out, "ebpfprof_offcpu_lost_total", lost[i], st[lost_ids[i]]);
}

/* each runtime's families, ebpfprof_<runtime>_..., from its declared statistics */
static void write_runtime(const struct runtime_ops *ops, const void *stats, void *ctx)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "ebpfprof_%s_", ops->name);
	prom__stats(ctx, prefix, ops->stats, ops->n_stats, stats);
}

static void write_pusher(FILE *out, struct pusher *p, const char *prefix)
{
	struct pusher_stats ps = {};

	if (!p)
		return;
	pusher__stats(p, &ps);
	write_pusher_stats(out, ps, prefix);
}

static double rss_bytes(void)
{
	long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%*s %ld", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return (double)pages * sysconf(_SC_PAGESIZE);
}

int agent_metrics__write(void *ctx, FILE *out)
{
	struct agent *a = ctx;
	struct agent_figures f;
	struct rusage ru;

	pthread_mutex_lock(&a->lock);
	f = a->fig;
	pthread_mutex_unlock(&a->lock);
	getrusage(RUSAGE_SELF, &ru);

	write_sampler(out, a, &f);
	counter(out, "ebpfprof_windows_total", "Windows closed", f.windows);
	counter(out, "ebpfprof_series_delivered_total", "Series windows delivered", f.series_delivered);
	counter(out, "ebpfprof_delivery_errors_total", "Series windows that failed to deliver",
		f.delivery_errors);
	counter(out, "ebpfprof_push_folded_samples_total",
		"Samples folded into [other] to fit the backend's sample and size limits",
		f.push_folded_samples);
	counter(out, "ebpfprof_push_cut_label_values_total",
		"Label values cut to the backend's length limit", f.push_cut_values);
	counter(out, "ebpfprof_push_dropped_labels_total",
		"Sample labels left out past the backend's label-name limit", f.push_dropped_labels);
	gauge(out, "ebpfprof_harvest_seconds", "Duration of the last harvest (read, symbolize, clear)",
	      f.harvest_seconds_last);
	counter(out, "ebpfprof_harvest_seconds_total", "Time spent harvesting", f.harvest_seconds_total);
	gauge(out, "ebpfprof_processes", "Processes the agent keeps labels for", f.processes);
	counter(out, "ebpfprof_processes_evicted_total", "Processes forgotten after exiting", f.evicted);
	gauge(out, "ebpfprof_symbol_cache_bytes", "Memory of cached symbol tables", f.sym.bytes);
	gauge(out, "ebpfprof_symbol_cache_files", "Files whose symbols are cached", f.sym.files_cached);
	counter(out, "ebpfprof_symbol_files_loaded_total", "Files whose symbols were read",
		f.sym.files_loaded);
	/* what churn must not grow: exited processes leave both tables, idle files the cache */
	counter(out, "ebpfprof_symbol_files_evicted_total", "Symbol tables trimmed from the cache",
		f.sym.files_evicted);
	gauge(out, "ebpfprof_symbol_processes", "Processes whose mappings the symbolizer holds",
	      f.sym.pids_live);
	prom__header(out, "ebpfprof_symbol_access_denied_total", "counter",
		     "Reads the agent's privileges refused, so frames stayed unnamed, by what");
	prom__value(out, "ebpfprof_symbol_access_denied_total", "what=\"maps\"", f.sym.maps_denied);
	prom__value(out, "ebpfprof_symbol_access_denied_total", "what=\"files\"",
		    f.sym.files_denied);
	counter(out, "ebpfprof_symbol_processes_gone_total",
		"Processes first looked up after they exited, so their user frames stayed unnamed",
		f.sym.pids_gone);
	gauge(out, "ebpfprof_symbol_mappings", "Mappings the symbolizer holds, over all processes",
	      f.sym.mappings_live);
	write_offcpu(out, a->offcpu);
	runtime_set__each_stats(sampler__runtimes(a->sampler), write_runtime, out);
	write_pusher(out, a->pusher, "ebpfprof_push_");
	write_pusher(out, a->otlp, "ebpfprof_otlp_");
	gauge(out, "ebpfprof_resident_memory_bytes", "Resident set size", rss_bytes());
	counter(out, "ebpfprof_cpu_seconds_total", "User and system CPU time of the agent",
		ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	return ferror(out) ? -EIO : 0;
}
