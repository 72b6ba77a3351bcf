/* oneshot.c -- `ebpfprof [--duration SEC]`: profile for a while, write one profile, exit */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include "lib/clock.h"
#include "oneshot.h"
#include "lib/proc_image.h"
#include "lib/log.h"
#include "output.h"
#include "convert.h"
#include "collect/collect.h"
#include "profile/profile.h"
#include "symbolize/symbolize.h"
#include "lib/stats.h"
#include "runtimes/runtime.h"

/* How often we look for new processes, to read their maps while they live. */
#define POLL_INTERVAL_NS 500000000LL

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	stop_requested = 1;
}

static void install_signals(void)
{
	/* no SA_RESTART: the signal must cut the sleep short */
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

struct pid_watch {
	struct symbolizer *sym;
	__s64 deadline;		/* CLOCK_MONOTONIC ns the run ends at */
};

static int note_pid(const struct sample_key *key, __u64 count, void *ctx)
{
	struct pid_watch *w = ctx;
	struct proc_image img = proc_image__of(key->pid, key->start, key->exec);

	/* a process that already exited cannot be read; its frames keep their addresses */
	if (key->pid)
		symbolizer__add_image(w->sym, &img);	/* a no-op for a known image */
	return 0;
}

/*
 * A process's first sample: read its maps now, while it lives (a fork child
 * not exec'd since takes its parent's); code outside
 * them (libraries mapped after the exec): read them again. An exec: its
 * new image supersedes the old, whose mappings name its samples still.
 */
static int on_task_event(const struct task_event *e, void *ctx)
{
	struct pid_watch *w = ctx;
	struct proc_image img = proc_image__of(e->pid, e->start, e->exec);
	struct proc_image parent = proc_image__of(e->parent_pid, e->parent_start, e->parent_exec);

	/*
	 * The ring is read for as long as BPF fills it: under a flood of new
	 * processes a poll would not return, and Ctrl-C or the deadline would
	 * wait for the flood to end. Stop reading; the sampled processes are
	 * read at the end all the same (note_pid).
	 */
	if (stop_requested || clock_ns(CLOCK_MONOTONIC) >= w->deadline)
		return -EINTR;
	if (e->kind == TASK_EVENT_EXEC)
		symbolizer__image_began(w->sym, &img, (__s64)e->ns);
	else if (e->kind == TASK_EVENT_REMAP)
		symbolizer__refresh_image(w->sym, &img);
	else if (e->parent_pid && !symbolizer__add_fork(w->sym, &img, &parent))
		return SAMPLER_EVENT_COPIED;	/* a fork child not exec'd since: its parent's maps */
	else
		symbolizer__add_image(w->sym, &img);
	return 0;
}

/*
 * Waits until the deadline or a signal, reading the maps of new processes as
 * the BPF side announces them; if announcements were lost to a full ring
 * buffer, a scan of the counts map every poll interval finds the processes
 * they named.
 */
static int collect(struct sampler *s, struct pid_watch *w, __s64 deadline)
{
	__s64 next_scan = clock_ns(CLOCK_MONOTONIC) + POLL_INTERVAL_NS;
	int err = 0;

	while (!stop_requested && err >= 0) {
		__s64 now = clock_ns(CLOCK_MONOTONIC), until = deadline < next_scan ? deadline : next_scan;

		if (now >= deadline)
			break;
		if (now >= next_scan) {
			if (sampler__announcements_lost(s))
				err = sampler__for_each(s, sampler__active_slot(s), note_pid, w);
			next_scan = now + POLL_INTERVAL_NS;
			continue;
		}
		err = sampler__poll_events(s, (until - now) / 1000000 + 1, on_task_event, w);
	}
	return err < 0 ? err : 0;
}

static int write_profile(const struct config *cfg, const struct pprof *whole, struct output *out)
{
	struct pprof_html_opts ho = { .title = "ebpfprof", .value_index = report__default_value(cfg->mode) };
	FILE *f = output__file(out);
	struct pprof_top_opts to;
	struct pprof *owned;
	const struct pprof *p = convert__focus(cfg, whole, &owned);	/* --label */
	int err;

	if (!p)
		return -errno;
	switch (cfg->format) {
	case FORMAT_FOLDED: err = pprof__write_folded(p, f, report__default_value(cfg->mode)); break;
	case FORMAT_TOP:
		convert__top_opts(f, &to);
		err = pprof__write_top_opts(p, f, report__default_value(cfg->mode), cfg->top_n, &to);
		break;
	case FORMAT_HTML: err = pprof__write_html(p, f, &ho); break;
	default: err = pprof__write(p, f);
	}
	pprof__free(owned);
	return err;
}

static void report_unwind(struct sampler *s)
{
	struct unwinder_stats us;

	if (sampler__unwind_stats(s, &us)) {
		p_info("user stacks: frame pointers (--unwind fp, or the kernel cannot walk CFI)");
		return;
	}
	p_info("unwind tables: %llu files (%llu without CFI, %llu did not fit, %llu shared by build ID), %llu rows (%.1f of %.1f MB), %.0f ms to build, %llu processes, %llu resets",
	       (unsigned long long)us.cache.files, (unsigned long long)us.cache.files_without_cfi,
	       (unsigned long long)us.cache.full, (unsigned long long)us.cache.shared,
	       (unsigned long long)us.cache.rows, us.cache.rows * 8 / 1048576.0,
	       us.cache.capacity * 8 / 1048576.0, us.cache.build_ns / 1e6,
	       (unsigned long long)us.procs, (unsigned long long)us.resets);
}

/* "stack maps: 812 of 65536 stacks, 301 of 65536 walks": what a full map would cost us */
static void report_stack_fill(const char *what, int err, const struct stack_fill *f)
{
	if (err) {
		p_info("%s stack maps: cannot count: %s", what, strerror(-err));
		return;
	}
	if (f->walked_max)
		p_info("%s stack maps: %u of %u stacks%s, %u of %u CFI walks", what, f->stacks,
		       f->stacks_max, f->prealloc ? " (preallocated)" : "", f->walked, f->walked_max);
	else
		p_info("%s stack maps: %u of %u stacks%s", what, f->stacks, f->stacks_max,
		       f->prealloc ? " (preallocated)" : "");
}

/* one -v line from declared statistics: "sampler: samples_total=1 ..." */
static void report_declared(const char *what, const struct stat_desc *d, int n, const void *stats)
{
	char line[4096];

	stats__format(line, sizeof(line), d, n, stats);
	p_info("%s: %s", what, line);
}

static void report_runtime(const struct runtime_ops *ops, const void *stats, void *ctx)
{
	report_declared(ops->name, ops->stats, ops->n_stats, stats);
}

/* off-cpu and wall modes: the tracer's blocks, walks and losses, and its BPF cost per switch */
static void report_offcpu(struct offcpu *o)
{
	struct offcpu_figures of = {};
	__u64 run_ns = 0, run_cnt = 0;
	struct stack_fill fill;
	int err;

	if (!o || offcpu__stats(o, of.bpf))
		return;
	offcpu__bpf_runtime(o, &run_ns, &run_cnt);
	report_declared("off-cpu", offcpu_stats, n_offcpu_stats, &of);
	err = offcpu__stack_fill(o, &fill);
	report_stack_fill("off-cpu", err, &fill);
	p_info("off-cpu bpf: %.0f ns per switch", run_cnt ? (double)run_ns / run_cnt : 0.0);
}

static void report_stats(const struct config *cfg, struct sampler *s, struct offcpu *offcpu,
			 struct symbolizer *sym, double seconds)
{
	struct sampler_figures sf = {};
	const __u64 *st = sf.bpf;	/* read once: the summary and -v say the same */
	__u64 run_ns = 0, run_cnt = 0, lost;
	struct symbolizer_stats ss = {};
	struct stack_fill fill;
	struct rusage ru = {};
	int err;

	sampler__figures(s, &sf);
	lost = st[STAT_KSTACK_MAP_FULL] + st[STAT_USTACK_MAP_FULL] + st[STAT_KSTACK_ERROR] +
	       st[STAT_USTACK_ERROR] + st[STAT_COUNTS_FULL];
	p_info("%llu samples on %d CPUs in %.1f s, %llu lost or partial",
	       (unsigned long long)st[STAT_SAMPLES], sampler__cpus(s), seconds,
	       (unsigned long long)lost);
	if (lost)
		p_warn("lost: %llu kernel / %llu user stacks to full stack maps, %llu / %llu to errors, %llu samples to a full counts map (raise --stack-storage-size / --count-storage-size)",
		       (unsigned long long)st[STAT_KSTACK_MAP_FULL],
		       (unsigned long long)st[STAT_USTACK_MAP_FULL],
		       (unsigned long long)st[STAT_KSTACK_ERROR],
		       (unsigned long long)st[STAT_USTACK_ERROR],
		       (unsigned long long)st[STAT_COUNTS_FULL]);
	if (!cfg->verbose)
		return;
	sampler__bpf_runtime(s, &run_ns, &run_cnt);
	symbolizer__stats(sym, &ss);
	getrusage(RUSAGE_SELF, &ru);
	p_info("bpf: %llu runs, %llu ns total, %.0f ns per sample (needs kernel.bpf_stats_enabled=1)",
	       (unsigned long long)run_cnt, (unsigned long long)run_ns,
	       run_cnt ? (double)run_ns / run_cnt : 0.0);
	report_declared("sampler", sampler_stats, n_sampler_stats, &sf);
	err = sampler__stack_fill(s, sampler__active_slot(s), &fill);
	report_stack_fill("sampler", err, &fill);
	report_declared("symbols", symbolizer_stat_descs, n_symbolizer_stat_descs, &ss);
	report_unwind(s);
	runtime_set__each_stats(sampler__runtimes(s), report_runtime, NULL);
	report_offcpu(offcpu);
	p_info("self: user %.3f s, system %.3f s, max rss %ld KiB",
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss);
}

/* Everything one run holds; torn down in one place. */
struct run {
	const struct config *cfg;
	struct output *out;
	struct sampler *sampler;
	struct offcpu *offcpu;		/* off-cpu and wall modes */
	int offcpu_slot;
	struct pid_watch watch;
	__s64 start_real;
	__s64 elapsed;
};

static int load_offcpu(struct run *r)
{
	const struct config *cfg = r->cfg;
	struct sampler_maps maps;
	struct offcpu_opts oo = {
		.pids = cfg->pids,
		.n_pids = cfg->n_pids,
		.per_thread = cfg->per_thread,
		.no_kernel = cfg->no_kernel,
		.no_user = cfg->no_user,
		.min_us = cfg->off_cpu_min_us,
		.sampler = &maps,
	};

	sampler__maps(r->sampler, &maps);
	r->offcpu = offcpu__new(&oo);
	if (!r->offcpu) {
		preflight__explain("load the off-CPU tracer (kernel 5.9+; 5.13+ without BPF iterators)",
				   -errno);
		return -errno;
	}
	return 0;
}

/* Fails before any profiling on a bad path, a missing privilege or kernel feature. */
static int setup(struct run *r)
{
	struct symbolizer_opts syo = { .no_kernel = r->cfg->no_kernel,
				       .debuginfod = r->cfg->debuginfod,
				       .dwarf_budget = (size_t)r->cfg->dwarf_mb << 20,
				       .lazy_files = true };

	r->out = output__open(r->cfg->output);
	if (!r->out) {
		p_err("cannot write %s: %s", r->cfg->output, strerror(errno));
		return EXIT_USAGE;
	}
	if (preflight__check())
		return EXIT_USAGE;
	/* load BPF first: libbpf frees the kernel BTF it parsed, and kallsyms reuses that memory */
	r->sampler = sampler_config__load(r->cfg, false, NULL, 0);
	if (!r->sampler)
		return EXIT_USAGE;
	if (r->cfg->mode != MODE_CPU && load_offcpu(r))
		return EXIT_USAGE;
	r->watch.sym = symbolizer__new(&syo);
	if (!r->watch.sym) {
		p_err("cannot set up symbolization: %s", strerror(errno));
		return EXIT_RUNTIME;
	}
	if (!r->cfg->no_kernel && symbolizer__kernel_status(r->watch.sym) == -EPERM)
		p_warn("kernel addresses are hidden (kernel.kptr_restrict): kernel frames stay unnamed");
	return EXIT_OK;
}

static int profile(struct run *r)
{
	__s64 start_mono;
	int err;

	err = sampler__start(r->sampler);
	if (!err && r->offcpu)
		err = offcpu__start(r->offcpu);
	if (err) {
		preflight__explain("attach to perf events and the scheduler", err);
		return EXIT_USAGE;
	}
	r->start_real = clock_ns(CLOCK_REALTIME);
	start_mono = clock_ns(CLOCK_MONOTONIC);
	p_info("profiling %s at %d Hz for %.1f s (Ctrl-C to stop early)",
	       r->cfg->n_pids ? "the given processes" : "the whole system", r->cfg->frequency,
	       r->cfg->duration);
	r->watch.deadline = start_mono + (__s64)(r->cfg->duration * 1e9);
	err = collect(r->sampler, &r->watch, r->watch.deadline);
	sampler__stop(r->sampler);
	if (r->offcpu) {
		offcpu__stop(r->offcpu);
		/* threads still blocked are credited up to the moment tracing stopped */
		r->offcpu_slot = offcpu__harvest(r->offcpu, 0);
		if (r->offcpu_slot < 0 && !err)
			err = r->offcpu_slot;
	}
	r->elapsed = clock_ns(CLOCK_MONOTONIC) - start_mono;
	if (!err)
		err = sampler__for_each(r->sampler, sampler__active_slot(r->sampler), note_pid,
					&r->watch);	/* the last new pids */
	if (err) {
		p_err("failed to read the sampler's maps: %s", strerror(-err));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

static int write_output(struct run *r)
{
	struct report_opts ro = {
		.frequency = r->cfg->frequency,
		.time_nanos = r->start_real,
		.duration_nanos = r->elapsed,
		.per_thread = r->cfg->per_thread,
		.demangle = r->cfg->demangle,
		.mode = r->cfg->mode,
	};
	struct pprof *prof = report__build(r->sampler,
					   sampler__active_slot(r->sampler), r->offcpu,
					   r->offcpu_slot, r->watch.sym, &ro);
	int err;

	if (!prof) {
		p_err("failed to build the profile: %s", strerror(errno));
		return EXIT_RUNTIME;
	}
	err = write_profile(r->cfg, prof, r->out);
	if (!err) {
		err = output__commit(r->out);
		r->out = NULL;	/* committed, or freed by commit on failure */
	}
	pprof__free(prof);
	if (err) {
		p_err("failed to write %s: %s", r->cfg->output, strerror(-err));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

int oneshot__run(const struct config *cfg)
{
	struct run r = { .cfg = cfg };
	int ret;

	if (cfg->mode == MODE_HEAP)
		return oneshot_heap__run(cfg);	/* no BPF: the processes' own records */
	if (cfg->mode == MODE_ALLOC)
		return oneshot_alloc__run(cfg);
	/*
	 * Before the seconds setup may take: a background job starts with
	 * SIGINT ignored, and a Ctrl-C or SIGTERM sent while it loads would be
	 * lost, leaving the whole duration to run. One that came during setup
	 * ends the run at once, with what it holds (nothing yet).
	 */
	install_signals();
	ret = setup(&r);
	if (ret == EXIT_OK)
		ret = profile(&r);
	if (ret == EXIT_OK)
		ret = write_output(&r);
	if (ret == EXIT_OK)
		report_stats(cfg, r.sampler, r.offcpu, r.watch.sym, r.elapsed / 1e9);
	output__abort(r.out);
	offcpu__free(r.offcpu);
	sampler__free(r.sampler);
	symbolizer__free(r.watch.sym);
	return ret;
}
