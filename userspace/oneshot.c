/* oneshot.c -- `ebpfprof [--duration SEC]`: profile for a while, write one profile, exit */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include "oneshot.h"
#include "hashmap.h"
#include "log.h"
#include "output.h"
#include "preflight.h"
#include "report.h"
#include "sampler.h"
#include "symbolizer.h"

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

static __s64 now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

struct pid_watch {
	struct hmap *seen;	/* pids whose maps were read; the id is the pid itself */
	struct symbolizer *sym;
};

static int same_pid(__u32 id, const void *key, const void *ctx)
{
	return id == *(const __u32 *)key;
}

static int note_pid(const struct sample_key *key, __u64 count, void *ctx)
{
	struct pid_watch *w = ctx;
	__u64 h = hash_u64(key->pid, 0);

	if (!key->pid || hmap__find(w->seen, h, same_pid, &key->pid, NULL))
		return 0;
	/* a process that already exited cannot be read; its frames keep their addresses */
	symbolizer__add_pid(w->sym, key->pid);
	return hmap__insert(w->seen, h, key->pid);
}

/* Sleeps until the deadline or a signal, reading the maps of new processes on the way. */
static int collect(struct sampler *s, struct pid_watch *w, __s64 deadline)
{
	int err = 0;

	while (!stop_requested && !err) {
		__s64 left = deadline - now_ns(CLOCK_MONOTONIC);
		struct timespec ts;

		if (left <= 0)
			break;
		if (left > POLL_INTERVAL_NS)
			left = POLL_INTERVAL_NS;
		ts = (struct timespec){ left / 1000000000LL, left % 1000000000LL };
		nanosleep(&ts, NULL);
		err = sampler__for_each(s, note_pid, w);
	}
	return err;
}

static int write_profile(const struct config *cfg, const struct pprof *p, struct output *out)
{
	FILE *f = output__file(out);

	switch (cfg->format) {
	case FORMAT_FOLDED: return pprof__write_folded(p, f, 0);
	case FORMAT_TOP: return pprof__write_top(p, f, 0, cfg->top_n);
	default: return pprof__write(p, f);
	}
}

static void report_stats(const struct config *cfg, struct sampler *s, struct symbolizer *sym,
			 double seconds)
{
	__u64 st[STAT_MAX] = {}, run_ns = 0, run_cnt = 0, lost;
	struct symbolizer_stats ss = {};
	struct rusage ru = {};

	sampler__stats(s, st);
	lost = st[STAT_KSTACK_COLLISION] + st[STAT_USTACK_COLLISION] + st[STAT_KSTACK_ERROR] +
	       st[STAT_USTACK_ERROR] + st[STAT_COUNTS_FULL];
	p_info("%llu samples on %d CPUs in %.1f s, %llu lost or partial",
	       (unsigned long long)st[STAT_SAMPLES], sampler__cpus(s), seconds,
	       (unsigned long long)lost);
	if (lost)
		p_warn("lost: %llu kernel / %llu user stacks to map collisions, %llu / %llu to errors, %llu samples to a full counts map (raise --stack-storage-size / --count-storage-size)",
		       (unsigned long long)st[STAT_KSTACK_COLLISION],
		       (unsigned long long)st[STAT_USTACK_COLLISION],
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
	p_info("symbols: %llu processes, %llu files read, %llu cache hits, %llu symbols",
	       (unsigned long long)ss.pids, (unsigned long long)ss.files_loaded,
	       (unsigned long long)ss.file_cache_hits, (unsigned long long)ss.symbols);
	p_info("self: user %.3f s, system %.3f s, max rss %ld KiB",
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss);
}

static struct sampler *load_sampler(const struct config *cfg)
{
	struct sampler_opts so = {
		.frequency = cfg->frequency,
		.pids = cfg->pids,
		.n_pids = cfg->n_pids,
		.include_idle = cfg->include_idle,
		.no_kernel = cfg->no_kernel,
		.no_user = cfg->no_user,
		.per_thread = cfg->per_thread,
		.stack_entries = cfg->stack_entries,
		.count_entries = cfg->count_entries,
	};
	struct sampler *s = sampler__new(&so);

	if (!s)
		preflight__explain("load the BPF sampler", -errno);
	return s;
}

int oneshot__run(const struct config *cfg)
{
	struct symbolizer_opts syo = { .no_kernel = cfg->no_kernel };
	struct pid_watch watch = {};
	struct sampler *s = NULL;
	struct output *out = NULL;
	struct pprof *prof = NULL;
	__s64 start_mono, start_real, elapsed;
	int err, ret = EXIT_USAGE;

	out = output__open(cfg->output);
	if (!out) {
		p_err("cannot write %s: %s", cfg->output, strerror(errno));
		goto cleanup;
	}
	if (preflight__check())
		goto cleanup;
	install_signals();
	/* load BPF first: libbpf frees the kernel BTF it parsed, and kallsyms reuses that memory */
	s = load_sampler(cfg);
	if (!s)
		goto cleanup;
	ret = EXIT_RUNTIME;
	watch.seen = hmap__new();
	watch.sym = symbolizer__new(&syo);
	if (!watch.seen || !watch.sym) {
		p_err("cannot set up symbolization: %s", strerror(errno));
		goto cleanup;
	}
	if (!cfg->no_kernel && symbolizer__kernel_status(watch.sym) == -EPERM)
		p_warn("kernel addresses are hidden (kernel.kptr_restrict): kernel frames stay unnamed");
	err = sampler__start(s);
	if (err) {
		preflight__explain("attach to perf events", err);
		ret = EXIT_USAGE;
		goto cleanup;
	}
	start_real = now_ns(CLOCK_REALTIME);
	start_mono = now_ns(CLOCK_MONOTONIC);
	p_info("profiling %s at %d Hz for %.1f s (Ctrl-C to stop early)",
	       cfg->n_pids ? "the given processes" : "the whole system", cfg->frequency,
	       cfg->duration);
	err = collect(s, &watch, start_mono + (__s64)(cfg->duration * 1e9));
	sampler__stop(s);
	elapsed = now_ns(CLOCK_MONOTONIC) - start_mono;
	if (!err)
		err = sampler__for_each(s, note_pid, &watch);	/* the last new processes */
	if (err) {
		p_err("failed to read the sampler's maps: %s", strerror(-err));
		goto cleanup;
	}

	prof = report__build(s, watch.sym, &(struct report_opts){
		.frequency = cfg->frequency,
		.time_nanos = start_real,
		.duration_nanos = elapsed,
		.per_thread = cfg->per_thread,
	});
	if (!prof) {
		p_err("failed to build the profile: %s", strerror(errno));
		goto cleanup;
	}
	err = write_profile(cfg, prof, out);
	if (!err) {
		err = output__commit(out);
		out = NULL;	/* committed, or freed by commit on failure */
	}
	if (err) {
		p_err("failed to write %s: %s", cfg->output, strerror(-err));
		goto cleanup;
	}
	report_stats(cfg, s, watch.sym, elapsed / 1e9);
	ret = EXIT_OK;

cleanup:
	output__abort(out);
	pprof__free(prof);
	sampler__free(s);
	symbolizer__free(watch.sym);
	hmap__free(watch.seen);
	return ret;
}
