/* oneshot_heap.c -- memory profiles: `--mode heap` (Go processes' own records), `--mode alloc` (uprobes on malloc) */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "oneshot.h"
#include "output.h"
#include "convert.h"
#include "collect/goheap/goheap.h"
#include "collect/alloc.h"
#include "collect/preflight.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/proc_image.h"
#include "profile/profile.h"
#include "symbolize/symbolize.h"

static volatile sig_atomic_t heap_stop;

static void on_signal(int sig)
{
	heap_stop = 1;
}

/* the profile is of the processes as they are at the end: wait for it (Ctrl-C ends early) */
static void wait_until_end(double seconds)
{
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART: cut the sleep */
	__s64 end = clock_ns(CLOCK_MONOTONIC) + (__s64)(seconds * 1e9);

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!heap_stop) {
		__s64 left = end - clock_ns(CLOCK_MONOTONIC);
		struct timespec ts;

		if (left <= 0)
			break;
		ts = (struct timespec){ left / 1000000000, left % 1000000000 };
		nanosleep(&ts, NULL);
	}
}

struct heap_run {
	const struct config *cfg;
	struct goheap *heap;
	struct symbolizer *sym;
	struct pprof_builder *b;
	struct goheap_snapshot snap;
	__s64 start_real;
	int read, skipped;
};

static void comm_of(__u32 pid, char *buf, size_t size)
{
	char path[64];
	FILE *f;

	snprintf(buf, size, "?");
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, size, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* the period is the sampling rate in bytes, the first process's, as runtime/pprof writes it */
static struct pprof_builder *new_builder_at(__s64 rate, enum demangle_mode dm, __s64 start)
{
	struct pprof_opts po;

	heap_report__opts(&po, rate, start, 0);
	return pprof_builder__new(&po, dm);
}

/* one process: its records, its stacks named while it lives */
static int add_pid(struct heap_run *r, __u32 pid)
{
	struct pprof_label l[2];
	char pid_s[16], comm[32];
	struct proc_image img;
	__u64 start;
	int err;

	if (proc_image__start_of("/proc", pid, &start))
		return 0;	/* gone */
	img = proc_image__of(pid, start, PROC_EXEC_ANY);
	err = goheap__read(r->heap, &img, &r->snap);
	if (err) {
		/* an unknown release was said where it was found, with its version: not twice */
		if (err != -ENOENT && err != -ENOTSUP && (r->cfg->n_pids || r->cfg->verbose))
			p_warn("pid %u: no heap profile: %s", pid,
			       err == -ENODATA ? "memory profiling is off in it (runtime/pprof not linked)" :
			       strerror(-err));
		r->skipped += err != -ENOENT;
		return 0;
	}
	symbolizer__add_image(r->sym, &img);
	if (!r->b && !(r->b = new_builder_at(r->snap.rate, r->cfg->demangle, r->start_real)))
		return -errno;
	snprintf(pid_s, sizeof(pid_s), "%u", pid);
	comm_of(pid, comm, sizeof(comm));
	l[0] = (struct pprof_label){ .key = "pid", .str = pid_s };
	l[1] = (struct pprof_label){ .key = "comm", .str = comm };
	r->read++;
	return heap_report__add(r->b, r->sym, &img, &r->snap, NULL, l, 2);
}

/* the given pids, or every process but ourselves */
static int add_all(struct heap_run *r)
{
	struct dirent *d;
	DIR *dir;
	int err = 0;

	for (int i = 0; i < r->cfg->n_pids && !err; i++)
		err = add_pid(r, r->cfg->pids[i]);
	if (r->cfg->n_pids)
		return err;
	dir = opendir("/proc");
	if (!dir)
		return -errno;
	while (!err && (d = readdir(dir))) {
		char *end;
		unsigned long pid = strtoul(d->d_name, &end, 10);

		if (!*end && pid && pid != (unsigned long)getpid())
			err = add_pid(r, pid);
	}
	closedir(dir);
	return err;
}

static int write_heap(const struct config *cfg, const struct pprof *p, struct output *out)
{
	struct pprof_html_opts ho = { .title = "ebpfprof heap", .value_index = HEAP_INUSE_SPACE };
	FILE *f = output__file(out);
	struct pprof_top_opts to;

	switch (cfg->format) {
	case FORMAT_FOLDED: return pprof__write_folded(p, f, HEAP_INUSE_SPACE);
	case FORMAT_TOP:
		convert__top_opts(f, &to);
		return pprof__write_top_opts(p, f, HEAP_INUSE_SPACE, cfg->top_n, &to);
	case FORMAT_HTML: return pprof__write_html(p, f, &ho);
	default: return pprof__write(p, f);
	}
}

static void report_heap(const struct heap_run *r)
{
	struct goheap_stats st;
	char line[2048];

	goheap__stats(r->heap, &st);
	p_info("go heap: %d processes read, %d skipped, %llu buckets in %.2f ms (%.2f ms per 1000 buckets)",
	       r->read, r->skipped, (unsigned long long)st.buckets, st.read_ns / 1e6,
	       st.buckets ? st.read_ns / 1e3 / st.buckets : 0.0);
	if (!r->cfg->verbose)
		return;
	stats__format(line, sizeof(line), goheap_stat_descs, n_goheap_stat_descs, &st);
	p_info("goheap: %s", line);
}

static int build_and_write(struct heap_run *r, struct output *out)
{
	struct pprof *p;
	int err = add_all(r);

	if (err) {
		p_err("failed to read heap profiles: %s", strerror(-err));
		return EXIT_RUNTIME;
	}
	if (!r->b && !(r->b = new_builder_at(GOHEAP_DEFAULT_RATE, r->cfg->demangle, r->start_real))) {
		p_err("cannot build the profile: %s", strerror(errno));
		return EXIT_RUNTIME;
	}
	p = pprof_builder__pprof(r->b);
	pprof__set_time(p, r->start_real, clock_ns(CLOCK_REALTIME) - r->start_real);
	err = write_heap(r->cfg, p, out);
	if (err) {
		p_err("failed to write %s: %s", r->cfg->output, strerror(-err));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

int oneshot_heap__run(const struct config *cfg)
{
	struct symbolizer_opts syo = { .no_kernel = true, .dwarf_budget = (size_t)cfg->dwarf_mb << 20,
				       .debuginfod = cfg->debuginfod };
	struct heap_run r = { .cfg = cfg, .start_real = clock_ns(CLOCK_REALTIME) };
	struct output *out = output__open(cfg->output);
	int ret = EXIT_RUNTIME;

	if (!out) {
		p_err("cannot write %s: %s", cfg->output, strerror(errno));
		return EXIT_USAGE;
	}
	r.heap = goheap__new(NULL);
	r.sym = symbolizer__new(&syo);
	if (!r.heap || !r.sym) {
		p_err("cannot set up: %s", strerror(errno));
		goto out;
	}
	p_info("reading Go heap profiles of %s in %.1f s (Ctrl-C: now)",
	       cfg->n_pids ? "the given processes" : "every process", cfg->duration);
	wait_until_end(cfg->duration);
	ret = build_and_write(&r, out);
	if (ret == EXIT_OK) {
		ret = output__commit(out) ? EXIT_RUNTIME : EXIT_OK;
		out = NULL;
		report_heap(&r);
	}
out:
	output__abort(out);
	goheap_snapshot__fini(&r.snap);
	pprof_builder__free(r.b);
	symbolizer__free(r.sym);
	goheap__free(r.heap);
	return ret;
}

/* -v: what the probes saw and lost, and what they cost per call */
static void report_alloc(struct alloc_tracer *t, const struct config *cfg)
{
	__u64 st[ALLOC_STAT_MAX], en, ec, xn, xc;

	alloc_tracer__stats(t, st);
	alloc_tracer__cost(t, &en, &ec, &xn, &xc);
	p_info("alloc: %llu allocation calls, %llu sampled, %llu frees; lost: %llu live blocks untracked (live map of %u full: in alloc_*, not in inuse_*), %llu to a full stack map, %llu without a stack, %llu returns missed",
	       (unsigned long long)st[ALLOC_STAT_CALLS], (unsigned long long)st[ALLOC_STAT_SAMPLED],
	       (unsigned long long)st[ALLOC_STAT_FREES], (unsigned long long)st[ALLOC_STAT_LIVE_FULL],
	       cfg->live_entries ? cfg->live_entries : ALLOC_LIVE_MAX,
	       (unsigned long long)st[ALLOC_STAT_STACKS_FULL], (unsigned long long)st[ALLOC_STAT_NO_STACK],
	       (unsigned long long)st[ALLOC_STAT_RET_MISSED]);
	/* the probe's own clock splits its paths; bpf_stats (when enabled) counts whole runs */
	p_info("alloc cost: %.0f ns in the entry probe per call not sampled, %.0f ns per sampled call (the uprobe traps come on top)",
	       st[ALLOC_STAT_CALLS] > st[ALLOC_STAT_SAMPLED] ?
		       (double)st[ALLOC_STAT_NS_UNSAMPLED] / (st[ALLOC_STAT_CALLS] - st[ALLOC_STAT_SAMPLED]) : 0.0,
	       st[ALLOC_STAT_SAMPLED] ? (double)st[ALLOC_STAT_NS_SAMPLED] / st[ALLOC_STAT_SAMPLED] : 0.0);
	if (cfg->verbose && ec)
		p_info("alloc bpf: %.0f ns per entry probe run, %.0f ns per return probe run (kernel.bpf_stats_enabled)",
		       (double)en / ec, xc ? (double)xn / xc : 0.0);
}

/* IMG's samples so far as a profile in *OUT, committed (*OUT is then NULL): 0 or a negative errno */
static int write_alloc(struct heap_run *r, struct alloc_tracer *t, const struct proc_image *img,
		       struct output **out)
{
	int err = alloc_tracer__read(t, &r->snap);

	if (!err && !(r->b = new_builder_at(r->snap.rate, r->cfg->demangle, r->start_real)))
		err = -errno;
	if (!err)
		err = heap_report__add(r->b, r->sym, img, &r->snap, NULL, NULL, 0);
	if (!err) {
		pprof__set_time(pprof_builder__pprof(r->b), r->start_real,
				clock_ns(CLOCK_REALTIME) - r->start_real);
		err = write_heap(r->cfg, pprof_builder__pprof(r->b), *out);
	}
	if (!err) {
		err = output__commit(*out);
		*out = NULL;
	}
	return err;
}

/* the process of --pid, one: its image; 0 or EXIT_USAGE */
static int alloc_target(const struct config *cfg, struct proc_image *img)
{
	__u64 start;

	if (cfg->n_pids != 1) {
		p_err("--mode alloc takes one process: --pid PID");
		return EXIT_USAGE;
	}
	if (proc_image__start_of("/proc", cfg->pids[0], &start)) {
		p_err("no process %u", cfg->pids[0]);
		return EXIT_USAGE;
	}
	*img = proc_image__of(cfg->pids[0], start, PROC_EXEC_ANY);
	return 0;
}

int oneshot_alloc__run(const struct config *cfg)
{
	struct symbolizer_opts syo = { .no_kernel = true, .dwarf_budget = (size_t)cfg->dwarf_mb << 20,
				       .debuginfod = cfg->debuginfod };
	struct heap_run r = { .cfg = cfg, .start_real = clock_ns(CLOCK_REALTIME) };
	struct alloc_tracer_opts ao = {};
	struct alloc_tracer *t = NULL;
	struct output *out = NULL;
	struct proc_image img;
	int ret = alloc_target(cfg, &img), err;

	if (ret)
		return ret;
	ret = EXIT_USAGE;
	ao.pid = img.pid;
	ao.live_max = cfg->live_entries;
	out = output__open(cfg->output);
	if (!out) {
		p_err("cannot write %s: %s", cfg->output, strerror(errno));
		goto out;
	}
	if (preflight__check())
		goto out;
	t = alloc_tracer__new(&ao);
	if (!t) {
		p_err("cannot probe the allocator of pid %u: %s", ao.pid,
		      errno == ENOENT ? "no glibc, jemalloc or tcmalloc mapped" : strerror(errno));
		goto out;
	}
	ret = EXIT_RUNTIME;
	r.sym = symbolizer__new(&syo);
	if (!r.sym) {
		p_err("cannot set up symbolization: %s", strerror(errno));
		goto out;
	}
	symbolizer__add_image(r.sym, &img);	/* its maps while it lives */
	p_info("sampling the allocations of pid %u (%s) every %d KiB on average for %.1f s",
	       ao.pid, alloc_tracer__libs(t), ALLOC_DEFAULT_RATE >> 10, cfg->duration);
	wait_until_end(cfg->duration);
	err = write_alloc(&r, t, &img, &out);
	if (err)
		p_err("failed to write the profile: %s", strerror(-err));
	else
		ret = EXIT_OK;
	report_alloc(t, cfg);
out:
	output__abort(out);
	alloc_tracer__free(t);
	goheap_snapshot__fini(&r.snap);
	pprof_builder__free(r.b);
	symbolizer__free(r.sym);
	return ret;
}
