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
	struct sampler_figures sf = f->sampler;	/* the exec waits, as of the last harvest */

	sampler__stats(a->sampler, sf.bpf);	/* the BPF counters, read now */
	prom__stats(out, "ebpfprof_", sampler_stats, n_sampler_stats, &sf);
	counter(out, "ebpfprof_process_cgroup_reads_saved_total",
		"Cgroup files not read: a process of the same cgroup v2 (a v2-only host) was read",
		f->cgroup_reads_saved);
	counter(out, "ebpfprof_process_cgroup_cache_refused_total",
		"Cgroup files not kept for their cgroup: the path did not lead to the announced cgroup id",
		f->cgroup_refused);
	gauge(out, "ebpfprof_counts_map_entries", "Entries in the counts map at the last harvest",
	      f->records_last);
	gauge(out, "ebpfprof_counts_map_capacity", "Capacity of one counts map",
	      sampler__count_capacity(a->sampler));
	prom__header(out, "ebpfprof_stack_map_entries", "gauge",
		     "Stacks in a slot's stack maps at the last harvest, by map (stacks: kernel and "
		     "frame-pointer user stacks)");
	prom__value(out, "ebpfprof_stack_map_entries", "map=\"stacks\"", f->stacks_last.stacks);
	prom__value(out, "ebpfprof_stack_map_entries", "map=\"cfi_walks\"", f->stacks_last.walked);
	prom__header(out, "ebpfprof_stack_map_capacity", "gauge",
		     "Stacks a slot's stack map holds, by map, as of the last harvest");
	prom__value(out, "ebpfprof_stack_map_capacity", "map=\"stacks\"", f->stacks_last.stacks_max);
	prom__value(out, "ebpfprof_stack_map_capacity", "map=\"cfi_walks\"", f->stacks_last.walked_max);
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
	struct offcpu_figures of = {};

	if (o && !offcpu__stats(o, of.bpf))
		prom__stats(out, "ebpfprof_", offcpu_stats, n_offcpu_stats, &of);
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
	prom__stats(out, "ebpfprof_", symbolizer_stat_descs, n_symbolizer_stat_descs, &f.sym);
	write_offcpu(out, a->offcpu);
	runtime_set__each_stats(sampler__runtimes(a->sampler), write_runtime, out);
	write_pusher(out, a->pusher, "ebpfprof_push_");
	write_pusher(out, a->otlp, "ebpfprof_otlp_");
	if (a->heap) {
		prom__stats(out, "ebpfprof_goheap_", goheap_stat_descs, n_goheap_stat_descs, &f.heap);
		gauge(out, "ebpfprof_goheap_window_seconds",
		      "Reading and naming the last window's Go heap profiles", f.heap_window_seconds);
		write_pusher(out, a->heap_push, "ebpfprof_push_memory_");
		write_pusher(out, a->heap_otlp, "ebpfprof_otlp_memory_");
	}
	gauge(out, "ebpfprof_resident_memory_bytes", "Resident set size", rss_bytes());
	counter(out, "ebpfprof_cpu_seconds_total", "User and system CPU time of the agent",
		ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	return ferror(out) ? -EIO : 0;
}
