/* agent.c -- `ebpfprof agent`: continuous profiling, one pprof per series per window, delivered */
#include <errno.h>
#include <sys/stat.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include "lib/clock.h"
#include "agent.h"
#include "agent_int.h"
#include "lib/log.h"
#include "lib/proc_image.h"
#include "collect/collect.h"
#include "scope.h"

#define POLL_NS 500000000LL		/* look for new processes twice a second */
#define TIMER_SLACK_NS 10000000UL
#define HARVEST_LOOK_NS 10000000LL	/* a harvest looks for new processes this often */
#define SHUTDOWN_DRAIN_MS 5000		/* SIGTERM: time left to push the last windows */
#define SYMBOL_CACHE_BYTES (16 << 20)	/* unreferenced symbol tables kept past this are evicted */

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	stop_requested = 1;
}

/*
 * SIGINT and SIGTERM stay blocked everywhere except inside the loop's ppoll,
 * so the threads we start never take them and the loop never misses one.
 */
static void block_signals(sigset_t *old)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t set;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

static int open_sampler(struct agent *a)
{
	const struct config *cfg = a->cfg;
	struct sampler_maps maps;
	struct offcpu_opts oo = {
		.pids = cfg->pids,
		.n_pids = cfg->n_pids,
		.cgroup = a->scope,
		.per_thread = cfg->per_thread,
		.no_kernel = cfg->no_kernel,
		.no_user = cfg->no_user,
		.min_us = cfg->off_cpu_min_us,
		.double_buffer = true,
		.sampler = &maps,
		.announce_cgroup1_ssid = a->cgroup1_ssid,
	};

	a->sampler = sampler_config__load(cfg, true, &a->scope, a->cgroup1_ssid);
	if (!a->sampler)
		return -errno;
	if (cfg->mode == MODE_CPU)
		return 0;
	sampler__maps(a->sampler, &maps);
	a->offcpu = offcpu__new(&oo);
	if (!a->offcpu) {
		preflight__explain("load the off-CPU tracer (kernel 5.9+; 5.13+ without BPF iterators)",
				   -errno);
		return -errno;
	}
	return 0;
}

/* A pusher to url; an OTLP one spools in its own subdirectory. NULL: said why. */
static struct pusher *open_pusher(struct agent *a, const char *url, bool otlp, bool heap)
{
	const struct agent_config *ag = &a->cfg->ag;
	const char *sub = otlp ? (heap ? "otlp-memory" : "otlp") : heap ? "memory" : NULL;
	char *spool = NULL;
	struct pusher *p;

	/* each pusher spools in a directory of its own */
	if (sub && ag->spool_dir && asprintf(&spool, "%s/%s", ag->spool_dir, sub) < 0)
		return NULL;
	{
		struct pusher_opts po = {
			.url = url,
			.basic_auth = ag->basic_auth,
			.bearer_token = ag->bearer_token,
			.tenant_id = ag->tenant_id,
			.ca_file = ag->ca_file,
			.timeout_ms = ag->push_timeout_ms,
			.max_attempts = ag->push_max_attempts,
			.max_age_ms = ag->push_max_age_ms,
			.queue_max_bytes = ag->queue_max_bytes,
			.spool_dir = sub ? spool : ag->spool_dir,
			.spool_max_bytes = ag->spool_max_bytes,
			.push_api = !otlp && ag->push_api,
			.otlp = otlp,
			/* Pyroscope's names for the three kinds of profile */
			.profile_type = heap ? "memory" :
					a->cfg->mode == MODE_WALL	? "wall" :
					a->cfg->mode == MODE_OFFCPU ? "off_cpu" :
								      "process_cpu",
		};

		if (spool && mkdir(spool, 0700) && errno != EEXIST)
			p_warn("cannot create %s: %s", spool, strerror(errno));
		p = pusher__new(&po);
		if (!p)
			p_err("cannot set up pushing to %s: %s", url, strerror(errno));
	}
	free(spool);
	return p;
}

static int open_delivery(struct agent *a)
{
	const struct agent_config *ag = &a->cfg->ag;

	if (ag->push_url && !(a->pusher = open_pusher(a, ag->push_url, false, false)))
		return -errno;
	if (ag->otlp_url && !(a->otlp = open_pusher(a, ag->otlp_url, true, false)))
		return -errno;
	if (ag->go_heap) {
		if (agent_heap__new(a))
			return -ENOMEM;
		if (ag->push_url && !(a->heap_push = open_pusher(a, ag->push_url, false, true)))
			return -errno;
		if (ag->otlp_url && !(a->heap_otlp = open_pusher(a, ag->otlp_url, true, true)))
			return -errno;
	}
	if (ag->output_dir) {
		a->dir = profile_dir__open(ag->output_dir, ag->retention);
		if (!a->dir) {
			p_err("cannot use output directory %s: %s", ag->output_dir, strerror(errno));
			return -errno;
		}
	}
	return 0;
}

/* "7070" and ":7070" mean loopback: all interfaces only when an address says so. */
static const char *listen_address(const char *listen, char *buf, size_t len)
{
	if (listen[0] == ':' || strspn(listen, "0123456789") == strlen(listen)) {
		snprintf(buf, len, "127.0.0.1%s%s", listen[0] == ':' ? "" : ":", listen);
		return buf;
	}
	return listen;
}

static int open_http(struct agent *a)
{
	const struct agent_config *ag = &a->cfg->ag;
	char buf[64];
	struct http_server_opts ho = {
		.listen = ag->listen ? listen_address(ag->listen, buf, sizeof(buf)) : NULL,
		.bearer_token = ag->http_token,
		.profile = agent_pull__profile,
		.metrics = agent_metrics__write,
		.page = agent_page__render,
		.ctx = a,
	};

	if (!ag->listen)
		return 0;
	a->http = http_server__new(&ho);
	if (!a->http) {
		p_err("cannot listen on %s: %s", ag->listen, strerror(errno));
		return -errno;
	}
	p_info("serving / (flame graph), /debug/pprof/profile and /metrics on %s (port %d)", ho.listen,
	       http_server__port(a->http));
	return 0;
}

static int open_symbols(struct agent *a)
{
	struct symbolizer_opts so = { .no_kernel = a->cfg->no_kernel,
				      .debuginfod = a->cfg->debuginfod,
				      .dwarf_budget = (size_t)a->cfg->dwarf_mb << 20,
				      .lazy_files = true };

	if (a->cfg->ag.kubernetes) {
		struct k8s_opts ko = { .node_name = a->cfg->ag.node_name };

		/* never fatal: without the API server, series keep container ids */
		a->k8s = k8s__new(&ko);
		if (!a->k8s)
			p_warn("kubernetes names unavailable: %s", strerror(errno));
	}
	a->sym = symbolizer__new(&so);
	a->procs = a->sym ? proc_table__new(NULL, a->cfg->ag.group_by, a->k8s,
					    a->cfg->ag.docker_dir,
					    a->cgroup1_ssid ? a->cgroup1_memory : NULL) : NULL;
	if (!a->procs) {
		p_err("cannot set up symbolization: %s", strerror(errno));
		return -ENOMEM;
	}
	return 0;
}

/* Own labels pushed without --label-keys: Pyroscope's span profiles (span_id is never a series). */
#define AGENT_LABEL_KEYS "span_id,span_name"

static int new_window(struct agent *a, __s64 start_real)
{
	struct window_opts wo = {
		.start_ns = start_real,
		.frequency = a->cfg->frequency,
		.per_thread = a->cfg->per_thread,
		.split = a->cfg->ag.group_by != GROUP_NONE,
		.demangle = a->cfg->demangle,
		.mode = a->cfg->mode,
		/* every own label the backend gets is a series, span_id aside: opt-in */
		.label_keys = a->cfg->ag.label_keys ? a->cfg->ag.label_keys : AGENT_LABEL_KEYS,
	};

	a->window_start_real = start_real;
	if (!a->pusher && !a->otlp && !a->dir)
		return 0;	/* pull only: windows would go nowhere */
	a->window = window__new(&wo);
	return a->window ? 0 : -ENOMEM;
}

/* Everything that can fail on the user's input or the machine fails here, before sampling. */
static int setup(struct agent *a)
{
	int err;

	gethostname(a->hostname, sizeof(a->hostname) - 1);
	a->scope.fd = -1;
	a->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (a->wake_fd < 0 || pthread_mutex_init(&a->lock, NULL) ||
	    pthread_cond_init(&a->done_cond, NULL))
		return -errno;
	if (preflight__check() || scope__open(a->cfg, &a->scope))
		return -EINVAL;
	/* v1 and hybrid hosts: announcements carry the memory cgroup, the cgroup cache's key */
	if (scope__cgroup1_memory(a->cgroup1_memory, sizeof(a->cgroup1_memory), &a->cgroup1_ssid))
		a->cgroup1_ssid = 0;
	err = open_sampler(a);	/* before kallsyms: it reuses the memory libbpf frees */
	malloc_trim(0);		/* what libbpf's parse of the kernel BTF left */
	if (!err)
		err = open_symbols(a);
	if (!err)
		err = open_delivery(a);
	if (!err)
		err = open_http(a);
	return err;
}

/* Labels, maps and symbol tables of a new process are read while it still lives. */
static int note_pid(const struct sample_key *key, __u64 count, void *ctx)
{
	struct agent *a = ctx;

	struct proc_image img = proc_image__of(key->pid, key->start, key->exec);

	if (key->pid && proc_table__get(a->procs, &img, key->comm, a->window_seq, NULL))
		symbolizer__add_image(a->sym, &img);
	return 0;
}

static int on_task_event(const struct task_event *e, void *ctx)
{
	struct agent *a = ctx;
	struct proc_image img = proc_image__of(e->pid, e->start, e->exec);
	struct cgroup_key cg = { .v2 = e->cgroup_id, .v1 = e->cgroup1_id };
	char comm[TASK_COMM_LEN] = "";

	/* a new image: its labels and maps are read when it is handed on; the old one's stay */
	if (e->kind == TASK_EVENT_EXEC) {
		symbolizer__image_began(a->sym, &img, (__s64)e->ns);
		return 0;
	}
	if (e->kind == TASK_EVENT_NEW && e->parent_pid) {
		struct proc_image parent = proc_image__of(e->parent_pid, e->parent_start, e->parent_exec);

		/* a fork child not exec'd since: named from its parent, nothing of it read */
		if (!symbolizer__add_fork(a->sym, &img, &parent)) {
			proc_table__get_forked(a->procs, &img, &parent, a->window_seq, &cg);
			return SAMPLER_EVENT_COPIED;
		}
	}
	if (!proc_table__get(a->procs, &img, comm, a->window_seq, &cg))
		return 0;
	if (e->kind == TASK_EVENT_REMAP)	/* code outside the maps we read */
		symbolizer__refresh_image(a->sym, &img);
	else
		symbolizer__add_image(a->sym, &img);
	return 0;
}

/*
 * New processes are read between a harvest's records, as the loop reads
 * them between harvests: a window's first symbolization of a large binary
 * takes up to a second, and a short process announced meanwhile would exit
 * before its maps and tables were read.
 */
static void harvest_look(struct agent *a)
{
	__s64 now = clock_ns(CLOCK_MONOTONIC);

	if (now - a->harvest_looked < HARVEST_LOOK_NS)
		return;
	a->harvest_looked = now;
	sampler__poll_events(a->sampler, 0, on_task_event, a);
}

/* One record, its stack already in a->stack, into the push window and every open pull request. */
static int add_everywhere(struct agent *a, const struct window_record *rec)
{
	static const struct proc_info unknown = { .service = "unknown" };
	const struct proc_info *pi = proc_table__get(a->procs, &rec->img, rec->comm, a->window_seq, NULL);
	int err = 0;

	if (a->window)
		err = window__add(a->window, pi ?: &unknown, rec, &a->stack);
	for (struct pull_req *r = a->active; r && !err; r = r->next)
		err = window__add(r->win, pi ?: &unknown, rec, &a->stack);
	a->harvest_records++;
	return err;
}

static int harvest_record(const struct sample_key *key, __u64 count, void *ctx)
{
	struct agent *a = ctx;
	struct window_record rec = {
		.pid = key->pid,
		.tid = key->tid,
		.img = proc_image__of(key->pid, key->start, key->exec),
		.comm = key->comm,
		.state = a->cfg->mode == MODE_WALL ? "running" : NULL,
		.samples = count,
	};

	a->harvest_samples += count;
	harvest_look(a);
	if (a->cfg->mode == MODE_OFFCPU)
		return 0;	/* the sampler runs for its process announcements only */
	report__cpu_values(a->cfg->mode, 1000000000LL / a->cfg->frequency, count, rec.values);
	if (key->labels_hash &&
	    !sampler__label_set(a->sampler, a->harvest_slot, key->labels_hash, &a->labels))
		rec.labels = &a->labels;
	stack__resolve(&a->stack, a->sampler, a->harvest_slot, a->sym, key);
	return add_everywhere(a, &rec);
}

static int harvest_offcpu_record(const struct offcpu_key *key, const struct offcpu_val *val,
				 void *ctx)
{
	struct agent *a = ctx;
	struct window_record rec = {
		.pid = key->pid,
		.tid = key->tid,
		.img = proc_image__of(key->pid, key->start, key->exec),
		.comm = key->comm,
		.state = offcpu__state_name(key->state),
		.samples = val->count,
	};

	if (!val->ns)
		return 0;
	harvest_look(a);
	report__offcpu_values(a->cfg->mode, val->ns, val->count, rec.values);
	if (key->labels_hash && !offcpu__label_set(a->offcpu, key->labels_hash, &a->labels))
		rec.labels = &a->labels;
	stack__resolve_offcpu(&a->stack, a->offcpu, sampler__runtimes(a->sampler), a->sym, key);
	return add_everywhere(a, &rec);
}

/* Off-CPU time up to BOUNDARY (0: now) goes to the windows open now, the rest to the next. */
static int harvest_offcpu(struct agent *a, __u64 boundary)
{
	int slot = offcpu__harvest(a->offcpu, boundary), err;

	if (slot < 0)
		return slot;
	err = offcpu__for_each(a->offcpu, slot, harvest_offcpu_record, a);
	if (!err)
		err = offcpu__clear(a->offcpu, slot);
	return err;
}

/* Swaps the map slots and moves everything sampled so far into the open windows. */
static int harvest(struct agent *a)
{
	__s64 start = clock_ns(CLOCK_MONOTONIC), flip_mono;
	struct stack_fill fill = {};
	int slot, err;

	a->flip_real = clock_ns(CLOCK_REALTIME);	/* the windows' end if no flip happens */
	slot = sampler__swap(a->sampler);
	if (slot < 0)
		return slot;
	/*
	 * The windows end where the slots flipped, and off-CPU time is cut at the
	 * same instant: not after the reading, which a host's first symbolization
	 * makes long (the final window then claimed time nothing was counted in).
	 */
	flip_mono = clock_ns(CLOCK_MONOTONIC);
	a->flip_real = clock_ns(CLOCK_REALTIME);
	a->harvest_slot = slot;
	a->harvest_records = a->harvest_samples = 0;
	a->harvest_looked = flip_mono;
	err = sampler__for_each(a->sampler, slot, harvest_record, a);
	/* a figure only: a map that cannot be counted is said as empty */
	if (!err && sampler__stack_fill(a->sampler, slot, &fill))
		fill = (struct stack_fill){};
	if (!err)
		err = sampler__clear(a->sampler, slot);
	if (!err && a->offcpu)
		err = harvest_offcpu(a, a->closing ? 0 : (__u64)flip_mono);	/* stopped: its stop */
	pthread_mutex_lock(&a->lock);
	a->fig.records_last = a->harvest_records;
	a->fig.stacks_last = fill;
	a->fig.samples_harvested += a->harvest_samples;
	a->fig.harvest_seconds_last = (clock_ns(CLOCK_MONOTONIC) - start) / 1e9;
	a->fig.harvest_seconds_total += a->fig.harvest_seconds_last;
	symbolizer__stats(a->sym, &a->fig.sym);
	a->fig.processes = proc_table__count(a->procs);
	sampler__figures(a->sampler, &a->fig.sampler);	/* its exec waits are the loop's to read */
	a->fig.cgroup_reads_saved = proc_table__cgroup_hits(a->procs);
	a->fig.cgroup_refused = proc_table__cgroup_refused(a->procs);
	pthread_mutex_unlock(&a->lock);
	if (err)
		p_warn("harvest failed: %s", strerror(-err));
	return err;
}

static void forget_pid(__u32 pid, void *ctx)
{
	symbolizer__forget_pid(ctx, pid);
}

static void close_window(struct agent *a, __s64 end_real)
{
	size_t evicted;

	if (a->window) {
		agent_deliver__window(a, a->window, end_real);
		window__free(a->window);
		a->window = NULL;
	}
	/* processes not sampled in the last two windows and gone are forgotten */
	evicted = proc_table__evict(a->procs, a->window_seq ? a->window_seq - 1 : 0, forget_pid,
				    a->sym);
	symbolizer__trim(a->sym, SYMBOL_CACHE_BYTES);
	/* give back what the window's model and evicted processes held: glibc keeps freed pages */
	malloc_trim(0);
	a->window_seq++;
	pthread_mutex_lock(&a->lock);
	a->fig.evicted += evicted;
	pthread_mutex_unlock(&a->lock);
	if (new_window(a, end_real))
		p_warn("cannot open the next window: out of memory");
}

/* Sleeps until deadline, a pull request or a signal, reading new processes' maps meanwhile. */
static void wait_until(struct agent *a, __s64 deadline_mono, const sigset_t *unblocked)
{
	struct pollfd pfd[2] = {
		{ .fd = a->wake_fd, .events = POLLIN },
		{ .fd = sampler__events_fd(a->sampler), .events = POLLIN },
	};
	__u64 v;

	while (!stop_requested) {
		__s64 now = clock_ns(CLOCK_MONOTONIC), left = deadline_mono - now;
		__s64 due = sampler__next_event_ns(a->sampler) - now;
		struct timespec ts;
		int n;

		if (left <= 0)
			return;
		if (due < left)	/* a deferred exec falls due first */
			left = due > 0 ? due : 0;
		ts = (struct timespec){ left / 1000000000LL, left % 1000000000LL };
		n = ppoll(pfd, 2, &ts, unblocked);
		if (n < 0)
			return;	/* a signal */
		if (n == 0 && due >= deadline_mono - now)
			return;	/* the deadline */
		if (n == 0 || pfd[1].revents)
			sampler__poll_events(a->sampler, 0, on_task_event, a);
		if (pfd[0].revents) {
			if (read(a->wake_fd, &v, sizeof(v)) < 0)
				p_debug("eventfd read: %m");
			return;	/* a pull request */
		}
	}
}

static void loop(struct agent *a, const sigset_t *unblocked)
{
	__s64 interval = (__s64)(a->cfg->ag.interval * 1e9);

	a->window_end_mono = clock_ns(CLOCK_MONOTONIC) + interval;
	while (!stop_requested) {
		__s64 now = clock_ns(CLOCK_MONOTONIC), next = now + POLL_NS, pull_end;
		bool window_due, pull_due, pull_new;

		if (a->window_end_mono < next)
			next = a->window_end_mono;
		pull_end = agent_pull__next_end(a);
		if (pull_end < next)
			next = pull_end;
		wait_until(a, next, unblocked);
		if (stop_requested)
			break;
		now = clock_ns(CLOCK_MONOTONIC);
		window_due = now >= a->window_end_mono;
		pull_due = now >= agent_pull__next_end(a);
		pull_new = agent_pull__pending(a);
		if (!window_due && !pull_due && !pull_new) {
			if (sampler__announcements_lost(a->sampler))
				sampler__for_each(a->sampler, sampler__active_slot(a->sampler),
						  note_pid, a);
			continue;
		}
		harvest(a);
		if (window_due) {
			close_window(a, a->flip_real);
			/* the next boundary follows the schedule, not the time this one took */
			while (a->window_end_mono <= now)
				a->window_end_mono += interval;
		}
		agent_pull__finish_due(a, now, clock_ns(CLOCK_REALTIME), false);
		/* a pull's span starts after the harvest that opens it, however slow (a host's first symbolization) */
		agent_pull__activate(a, clock_ns(CLOCK_MONOTONIC), clock_ns(CLOCK_REALTIME));
	}
}

static void report_totals(struct agent *a)
{
	__u64 st[STAT_MAX] = {}, lost = 0;

	sampler__stats(a->sampler, st);
	for (int i = STAT_LOST_FIRST; i <= STAT_LOST_LAST; i++)
		lost += st[i];
	p_info("agent stopped: %llu samples taken, %llu harvested, %llu lost or partial; %llu windows, %llu series delivered, %llu failed",
	       (unsigned long long)st[STAT_SAMPLES], (unsigned long long)a->fig.samples_harvested,
	       (unsigned long long)lost, (unsigned long long)a->fig.windows,
	       (unsigned long long)a->fig.series_delivered,
	       (unsigned long long)a->fig.delivery_errors);
}

/* The partial window and every open pull request are delivered before exiting. */
static void shutdown_agent(struct agent *a)
{
	__s64 now_real, drain_start;
	int err;

	pthread_mutex_lock(&a->lock);
	a->closing = true;
	pthread_mutex_unlock(&a->lock);
	sampler__stop(a->sampler);
	if (a->offcpu)
		offcpu__stop(a->offcpu);
	harvest(a);
	now_real = clock_ns(CLOCK_REALTIME);
	if (a->window) {
		agent_deliver__window(a, a->window, a->flip_real);
		window__free(a->window);
		a->window = NULL;
	}
	agent_pull__activate(a, clock_ns(CLOCK_MONOTONIC), now_real);
	agent_pull__finish_due(a, clock_ns(CLOCK_MONOTONIC), now_real, true);
	/* one drain budget for all: each waits only for what those before it left */
	drain_start = clock_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < 4; i++) {
		struct pusher *const all[] = { a->pusher, a->otlp, a->heap_push, a->heap_otlp };
		struct pusher *p = all[i];
		__s64 left = SHUTDOWN_DRAIN_MS - (clock_ns(CLOCK_MONOTONIC) - drain_start) / 1000000;

		if (!p)
			continue;
		err = pusher__drain(p, left > 0 ? (int)left : 0);
		if (err)
			p_warn("%s unreachable at shutdown: undelivered windows %s",
			       i % 2 ? "OTLP backend" : "backend",
			       a->cfg->ag.spool_dir ? "stay in the spool directory" : "are lost");
	}
	report_totals(a);
}

static void teardown(struct agent *a)
{
	http_server__free(a->http);	/* waits for running requests, all answered by now */
	agent_page__free(a);
	pusher__free(a->pusher);
	pusher__free(a->otlp);
	pusher__free(a->heap_push);
	pusher__free(a->heap_otlp);
	agent_heap__free(a->heap);
	profile_dir__free(a->dir);
	window__free(a->window);
	proc_table__free(a->procs);
	symbolizer__free(a->sym);
	k8s__free(a->k8s);
	offcpu__free(a->offcpu);
	sampler__free(a->sampler);
	if (a->scope.fd >= 0)
		close(a->scope.fd);
	if (a->wake_fd >= 0)
		close(a->wake_fd);
	pthread_cond_destroy(&a->done_cond);
	pthread_mutex_destroy(&a->lock);
}

int agent__run(const struct config *cfg)
{
	struct agent *a = calloc(1, sizeof(*a));	/* holds a 6 KB scratch stack */
	sigset_t unblocked;
	int err, ret = EXIT_USAGE;

	if (!a)
		return EXIT_RUNTIME;
	/* the HTTP and push threads would each get a 64 MB malloc arena of their own */
	mallopt(M_ARENA_MAX, 2);
	/*
	 * The loop wakes for deferred execs falling due (on a 100 ms grid) and
	 * for first samples: a 10 ms slack lets the kernel serve several with
	 * one wakeup, and a 200 ms process is still read before it ends.
	 * Threads made later inherit it.
	 */
	prctl(PR_SET_TIMERSLACK, TIMER_SLACK_NS);
	/*
	 * A table built once (a Go binary's .gopclntab, 17 MB for dockerd) would
	 * raise glibc's dynamic mmap threshold, and every later large block would
	 * come from the heap and stay resident after free: a fixed threshold
	 * gives large blocks back to the kernel when they are freed.
	 */
	mallopt(M_MMAP_THRESHOLD, 256 << 10);
	/*
	 * A fixed threshold also fixes the heap's trim at 128 KB: each free of
	 * a few hundred KB at its top (zlib's state, per pushed series) gave
	 * pages back, and the kernel then flushed the TLB of every CPU by IPI:
	 * up to 14 % of the agent's CPU on a busy VM. Trimmed once a window
	 * instead (close_window), which keeps RSS where it was between windows.
	 */
	mallopt(M_TRIM_THRESHOLD, 4 << 20);
	a->cfg = cfg;
	block_signals(&unblocked);
	sigdelset(&unblocked, SIGINT);
	sigdelset(&unblocked, SIGTERM);
	err = setup(a);
	if (!err)
		err = new_window(a, clock_ns(CLOCK_REALTIME));
	if (!err)
		err = sampler__start(a->sampler);
	if (!err && a->offcpu)
		err = offcpu__start(a->offcpu);
	if (err) {
		if (err == -EPERM || err == -EACCES || err == -ENOENT)
			preflight__explain("start the agent", err);
		goto out;
	}
	p_info("agent: %d Hz, %.1f s windows, delivering to %s%s%s", cfg->frequency,
	       cfg->ag.interval, cfg->ag.push_url ? cfg->ag.push_url : "",
	       cfg->ag.push_url && cfg->ag.output_dir ? " and " : "",
	       cfg->ag.output_dir ? cfg->ag.output_dir : cfg->ag.push_url ? "" : "pull requests only");
	loop(a, &unblocked);
	shutdown_agent(a);
	ret = EXIT_OK;
out:
	teardown(a);
	free(a);
	return ret;
}
