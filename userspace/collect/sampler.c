/* sampler.c -- loads the BPF sampler, attaches it to a perf event on every online CPU, reads its maps */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/bpf_util.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/proc_cpu.h"
#include "lib/proc_image.h"
#include "sampler.h"
#include "cpus.h"
#include "exec_defer.h"
#include "pidns.h"
#include "preload.h"
#include "unwind.h"
#include "runtimes/runtime.h"
#include "runtimes/labels/labels_runtime.h"
#include "symbolize/symbolize.h"
#include "profile.skel.h"
#include "profile_steps.skel.h"

/*
 * Stacks a slot's map holds. Allocated as used (6.1+), an entry costs what
 * it holds (a 2 KiB allocation for a 1 KiB stack) and the default can be
 * generous; preallocated, as perf_event programs need before 6.1, every
 * entry is paid up front (1 KiB each), as the stack trace maps were.
 */
#define DEFAULT_STACK_ENTRIES 65536
#define DEFAULT_STACK_ENTRIES_PREALLOC 16384
#define PREALLOC_UNWIND_PROCS 1024	/* processes with tables where maps are preallocated: 12 MiB */
#define PRELOAD_NS 1500000000ull	/* start-up time a whole-system profile may spend loading tables */
#define PRELOAD_MAX 4096		/* processes it may load them for */
#define DEFAULT_COUNT_ENTRIES 40960
#define DEFAULT_UNWIND_ROWS (2u << 20)	/* 16 MiB of rows */
/*
 * Files this large (libLLVM, node, a compiler: 60 ms to a second to parse)
 * have their tables built on a thread of their own; smaller ones take a few
 * milliseconds and are built in turn.
 */
#define BUILD_ASIDE_BYTES (16 << 20)
#define BUILD_LOOK_NS (10 * 1000000LL)	/* how soon a look follows while tables are built aside */
#define PENDING_MAX 1024
#define EXEC_DEFER_MAX 16384	/* execs held at once; past that the oldest goes on early */

struct sampler {
	struct profile_bpf *skel;
	struct bpf_program *prog;	/* do_sample, or do_sample_fp where nothing walks CFI */
	bool steps;			/* the steps build is loaded */
	struct ring_buffer *events;
	sampler_event_fn event_fn;	/* set for the duration of one poll */
	void *event_ctx;
	struct unwinder *unwinder;	/* NULL: frame pointers only */
	struct runtime_set *runtimes;	/* every runtime (runtimes/runtime.h); with the unwinder only */
	struct proc_image pending[PENDING_MAX];	/* process images whose tables are to be loaded */
	int n_pending;
	struct exec_defer *execs;	/* execs not yet handed on */
	__u64 execs_skipped;	/* exited unsampled while waiting: never read */
	__u64 execs_idle;	/* waits begun again by processes that had hardly run */
	__u64 execs_rechecked;	/* looked at again after a busy first look */
	__u64 events_seen;	/* announcements read, to tell a poll that found some */
	__u64 news_seen;	/* of them, first samples and remaps (not execs) */
	__u64 images_read;	/* images handed on */
	__u64 images_copied;	/* fork children named from their parent, nothing read */
	__u64 forks_read;	/* fork children BPF gave a parent, read all the same */
	__s64 read_ns;		/* thread CPU time handing them on and loading their tables */
	__s64 recheck_ns;	/* look for announcements that did not wake us (EVENTS_BATCH_NS) */
	struct events_ctl *events_ctl;	/* the promise to BPF to look by a time, mmap'ed; NULL: none */
	__u64 events_dropped;	/* STAT_EVENTS_DROPPED at the last sampler__announcements_lost */
	struct user_stack ustack;	/* read buffer: 2 KiB, reused for every stack */
	struct bpf_link *exec_link;
	struct bpf_link **links;
	int *cpus;
	int n_cpus;
	int n_links;
	int n_attached;		/* CPUs sampled, kept after sampler__stop for reports */
	int frequency;
	int n_possible_cpus;
	__u32 count_entries;
	__u32 unwind_rows;
	bool double_buffer;
	bool stacks_prealloc;	/* the stack maps are preallocated: the kernel wants it */
};

static struct bpf_map *counts_map(struct sampler *s, int slot)
{
	return slot ? s->skel->maps.counts1 : s->skel->maps.counts0;
}

static struct bpf_map *stacks_map(struct sampler *s, int slot)
{
	return slot ? s->skel->maps.stacks1 : s->skel->maps.stacks0;
}

static struct bpf_map *ustacks_map(struct sampler *s, int slot)
{
	return slot ? s->skel->maps.ustacks1 : s->skel->maps.ustacks0;
}

static struct bpf_map *labels_map(struct sampler *s, int slot)
{
	return slot ? s->skel->maps.labels1 : s->skel->maps.labels0;
}

/*
 * A sample may store two new stacks in one run (kernel, and user by frame
 * pointers): the allocator behind maps allocated as used is readied on
 * every CPU first (bpf_util__warm_map; the all-zero hash is never a stack).
 */
static int warm_stacks(struct sampler *s)
{
	int *cpus, n, err;

	if (s->stacks_prealloc)
		return 0;
	err = cpus__online(&cpus, &n);
	if (err)
		return err;
	err = bpf_util__warm_map(bpf_map__fd(s->skel->maps.stacks0), cpus, n);
	if (!err && s->double_buffer)
		err = bpf_util__warm_map(bpf_map__fd(s->skel->maps.stacks1), cpus, n);
	free(cpus);
	return err;
}

/*
 * Page index entries for a row array: code has at least a row per 256 bytes
 * on average (libc 1 per 49, libLLVM 1 per 110), so a quarter of the rows,
 * one entry per 4 KiB page, is plenty; 2 MiB with the default 16 MiB rows.
 */
static __u32 unwind_pages(__u32 rows)
{
	return rows / 4 + 16;
}

static bool kernel_has_helper(enum bpf_func_id id)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, id, NULL) > 0;
}

/*
 * The loop build where the kernel has bpf_loop and bpf_task_pt_regs (and so
 * BTF task pointers); else the steps build. EBPFPROF_CFI_WALK=steps takes
 * the steps build anyway: tests and measurements compare the two on one kernel.
 */
enum sampler_walk sampler__cfi_walk(void)
{
	const char *force = getenv("EBPFPROF_CFI_WALK");

	if (!kernel_has_helper(BPF_FUNC_probe_read_user))
		return SAMPLER_WALK_NONE;
	if (force && !strcmp(force, "steps"))
		return SAMPLER_WALK_STEPS;
	return sampler__kernel_can_walk_cfi() ? SAMPLER_WALK_LOOP : SAMPLER_WALK_STEPS;
}

bool sampler__kernel_can_walk_cfi(void)
{
	return kernel_has_helper(BPF_FUNC_loop) && kernel_has_helper(BPF_FUNC_task_pt_regs);
}

/* How to walk user stacks; -EOPNOTSUPP when CFI is asked for and impossible. */
static int want_walk(const struct sampler_opts *o, enum sampler_walk *walk)
{
	*walk = SAMPLER_WALK_NONE;
	if (o->no_user || o->unwind == SAMPLER_UNWIND_FP)
		return 0;
	*walk = sampler__cfi_walk();
	return !*walk && o->unwind == SAMPLER_UNWIND_CFI ? -EOPNOTSUPP : 0;
}

/*
 * The steps build of bpf/profile.bpf.c has the same maps, programs and
 * globals by name and layout, so profile.bpf.o's skeleton serves it: only
 * the object's bytes differ.
 */
_Static_assert(sizeof(struct profile_bpf__rodata) == sizeof(struct profile_steps_bpf__rodata),
	       "the two builds' globals differ");
_Static_assert(sizeof(struct profile_bpf__bss) == sizeof(struct profile_steps_bpf__bss),
	       "the two builds' globals differ");

/* Opens the sampler's object, the steps build if STEPS. NULL with errno set on failure. */
static struct profile_bpf *open_object(bool steps)
{
	struct profile_bpf *obj = calloc(1, sizeof(*obj));
	int err;

	if (!obj) {
		errno = ENOMEM;
		return NULL;
	}
	err = profile_bpf__create_skeleton(obj);
	if (!err && steps)
		obj->skeleton->data = (void *)profile_steps_bpf__elf_bytes(&obj->skeleton->data_sz);
	if (!err)
		err = bpf_object__open_skeleton(obj->skeleton, NULL);
	if (err) {
		profile_bpf__destroy(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}

static int set_pid_filter(struct sampler *s, const __u32 *pids, int n)
{
	int fd = bpf_map__fd(s->skel->maps.pids);
	__u8 one = 1;

	for (int i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, &pids[i], &one, BPF_ANY))
			return -errno;
	return 0;
}

/*
 * Before 6.1 a perf_event program takes only preallocated hash maps (it may
 * run in NMI context): each map the programs reach is preallocated there,
 * the stacks, the walk's tables and the runtimes' alike.
 */
static int prealloc_maps(struct bpf_object *obj)
{
	struct bpf_map *m;
	int err = 0;

	bpf_object__for_each_map(m, obj) {
		if (bpf_map__type(m) != BPF_MAP_TYPE_HASH ||
		    !(bpf_map__map_flags(m) & BPF_F_NO_PREALLOC))
			continue;
		err = bpf_map__set_map_flags(m, bpf_map__map_flags(m) & ~BPF_F_NO_PREALLOC);
		if (err)
			break;
	}
	return err;
}

static int configure(struct sampler *s, const struct sampler_opts *o, bool cfi)
{
	struct profile_bpf *skel = s->skel;
	__u32 stacks;
	/* slot 1 is never written without double buffering: keep it tiny */
	__u32 spare = o->double_buffer ? 0 : 1;
	__u32 rows = o->unwind_rows ? o->unwind_rows : DEFAULT_UNWIND_ROWS;
	int err = 0;

	s->stacks_prealloc = !bpf_util__perf_event_no_prealloc();
	stacks = s->stacks_prealloc ? DEFAULT_STACK_ENTRIES_PREALLOC : DEFAULT_STACK_ENTRIES;
	if (o->stack_entries)
		stacks = o->stack_entries;
	s->count_entries = o->count_entries ? o->count_entries : DEFAULT_COUNT_ENTRIES;
	s->double_buffer = o->double_buffer;
	skel->rodata->filter_pid = o->n_pids > 0;
	skel->rodata->include_idle = o->include_idle;
	skel->rodata->collect_kernel = !o->no_kernel;
	skel->rodata->collect_user = !o->no_user;
	skel->rodata->per_thread = o->per_thread;
	skel->rodata->filter_cgroup = o->cgroup.fd > 0;
	skel->rodata->filter_cgroup1_ssid = o->cgroup.v1_ssid;
	skel->rodata->announce_cgroup1_ssid = o->announce_cgroup1_ssid;
	skel->rodata->filter_cgroup1_id = o->cgroup.v1_id;
	/* a sidecar in a workload's PID namespace keeps that namespace, under its pids */
	if (pidns__child(&skel->rodata->pidns_dev, &skel->rodata->pidns_ino) < 0)
		skel->rodata->pidns_ino = 0;
	skel->rodata->unwind_mode = cfi ? UNWIND_MODE_CFI : UNWIND_MODE_FP;
	skel->rodata->have_task_pt_regs = kernel_has_helper(BPF_FUNC_task_pt_regs);
	skel->rodata->pthread_self_off = bpf_util__pthread_self_off();
	s->unwind_rows = cfi ? rows : 1;
	/* load only the one that runs: the kernel checks each program it is given */
	s->prog = cfi ? skel->progs.do_sample : skel->progs.do_sample_fp;
	err = bpf_program__set_autoload(cfi ? skel->progs.do_sample_fp : skel->progs.do_sample, false);
	/* -v: the verifier's figures for the sampler ("processed N insns"), by libbpf */
	if (!err && log_level >= LOG_DEBUG)
		err = bpf_program__set_log_level(s->prog, 4);	/* BPF_LOG_STATS */
	if (err)
		return err;

	if (s->stacks_prealloc)
		err = prealloc_maps(skel->obj);
	if (!err && s->stacks_prealloc)
		err = bpf_map__set_max_entries(skel->maps.unwind_procs, PREALLOC_UNWIND_PROCS);
	if (!err && spare)
		err = bpf_map__set_max_entries(skel->maps.labels1, spare);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.stacks0, stacks);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.stacks1, spare ?: stacks);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.counts0, s->count_entries);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.counts1, spare ?: s->count_entries);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.ustacks0, stacks);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.ustacks1, spare ?: stacks);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.unwind_rows, s->unwind_rows);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.unwind_pages, unwind_pages(s->unwind_rows));
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.pids, o->n_pids > 0 ? o->n_pids : 1);
	return err;
}

static int hand_on_exec(struct sampler *s, const struct deferred_exec *x);

/*
 * A fork child named from its parent: nothing of it was read, and its
 * tables wait as an exec's do. A shell's child execs within a millisecond
 * (the wait ends at its exec); a pool's worker that computes is read at
 * its first look, 20 ms in.
 */
static int defer_copied(struct sampler *s, const struct task_event *e)
{
	struct deferred_exec x = { .pid = e->pid, .exec = e->exec, .start = e->start,
				   .cgroup_id = e->cgroup_id, .cgroup1_id = e->cgroup1_id,
				   .copied = true };
	struct deferred_exec oldest;

	s->images_copied++;
	proc_maps__unshare(e->pid);
	proc_image__release(e->pid);
	if (exec_defer__add(s->execs, &x, clock_ns(CLOCK_MONOTONIC), &oldest))
		return hand_on_exec(s, &oldest);
	return 0;
}

/*
 * Hands one event to the caller: its maps are read for names now, its unwind
 * tables once the whole burst of events has been read, so a burst of
 * short-lived processes is named before any table is built.
 */
static int hand_on(struct sampler *s, const struct task_event *announced)
{
	__s64 t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	struct task_event ev = *announced, *e = &ev;
	struct proc_image img = proc_image__of(e->pid, e->start, e->exec);
	struct proc_image parent = proc_image__of(e->parent_pid, e->parent_start, e->parent_exec);
	bool tables_copied = false;
	int ret;

	/*
	 * A fork child: not named from a parent a runtime walks (a forked
	 * interpreter's worker is read at once, so its frames are named from
	 * its first ms). BPF walks it with the parent's tables, when BPF has
	 * them already (not when the parent came in the same batch of news).
	 */
	if (e->parent_pid && runtime_set__may_hold(s->runtimes, e->parent_pid)) {
		s->forks_read++;
		e->parent_pid = 0;	/* read as any new process */
	}
	if (e->parent_pid)
		tables_copied = !s->unwinder || !unwinder__add_fork(s->unwinder, &img, &parent);
	/* the symbolizer now, the unwinder and the runtimes in load_pending: one read of its maps */
	proc_maps__share(NULL, e->pid);
	proc_image__hold(e->pid);	/* and one open stat file for the checks that its pid holds it */
	ret = s->event_fn ? s->event_fn(e, s->event_ctx) : 0;
	if (ret == SAMPLER_EVENT_COPIED && tables_copied)
		return defer_copied(s, e);
	if (ret == SAMPLER_EVENT_COPIED)
		s->images_copied++;	/* named so; its tables are loaded from its maps */
	else
		s->images_read++;
	s->forks_read += e->parent_pid && ret != SAMPLER_EVENT_COPIED;	/* the symbolizer says why */
	ret = ret == SAMPLER_EVENT_COPIED ? 0 : ret;
	s->read_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	/*
	 * Gone before its maps were read (the symbolizer counts it): nothing
	 * to load. Its share would not outlive a burst of news to tell the
	 * unwinder and every runtime so, and each would ask /proc again.
	 */
	if (s->unwinder && s->n_pending < PENDING_MAX && !proc_maps__gone(NULL, e->pid))
		s->pending[s->n_pending++] = img;	/* past PENDING_MAX: frame pointers, counted in BPF */
	else {
		proc_maps__unshare(e->pid);
		proc_image__release(e->pid);
	}
	return ret;
}

/* An exec that waited (exec_defer.h), handed on as the new image it made. */
static int hand_on_exec(struct sampler *s, const struct deferred_exec *x)
{
	struct task_event e = { .pid = x->pid, .kind = TASK_EVENT_NEW, .start = x->start,
				.exec = x->exec, .ns = (__u64)x->exec_ns, .cgroup_id = x->cgroup_id,
				.cgroup1_id = x->cgroup1_id };

	return hand_on(s, &e);
}

/*
 * A new process, an exec or unknown code. An exec is told at once (nothing
 * is read for it: what named the old image stays until its samples are
 * named), and its new image is handed on when it is sampled or has waited
 * (exec_defer.h).
 */
static int on_event(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;
	const struct task_event *e = data;
	struct deferred_exec oldest;

	s->events_seen++;
	if (size < sizeof(*e) || !e->pid)
		return 0;
	if (e->kind == TASK_EVENT_EXEC) {
		/* the wait counts from the exec, not from when a batched wakeup brought the news */
		__s64 now = clock_ns(CLOCK_MONOTONIC), at = e->ns && (__s64)e->ns < now ? (__s64)e->ns : now;
		struct deferred_exec x = { .pid = e->pid, .exec = e->exec, .start = e->start,
					   .cgroup_id = e->cgroup_id, .cgroup1_id = e->cgroup1_id };
		int ret = s->event_fn ? s->event_fn(e, s->event_ctx) : 0;

		exec_defer__take(s->execs, e->pid);	/* exec'd again: the newer image counts */
		if (!ret && exec_defer__add(s->execs, &x, at, &oldest))
			return hand_on_exec(s, &oldest);
		return ret;
	}
	/* sampled since its exec: the exec's work is due now */
	s->news_seen++;
	exec_defer__take(s->execs, e->pid);
	return hand_on(s, e);
}

/*
 * Execs whose wait is over: gone, only counted; alive but hardly run (so
 * unlikely to be sampled), or maybe only busy starting, waiting again
 * (exec_defer__judge); else handed on. Asking costs one system call; a
 * hand-on reads the maps, the executable, the cgroup and loads the tables.
 */
static int hand_on_due(struct sampler *s)
{
	__s64 now = clock_ns(CLOCK_MONOTONIC);
	struct deferred_exec x;
	int ret = 0;

	while (!ret && exec_defer__pop_due(s->execs, now, &x)) {
		__u64 cpu_ns = 0;
		int err = proc_cpu__ns(x.pid, &cpu_ns);

		if (err == -ESRCH) {
			s->execs_skipped += !x.copied;
			continue;
		}
		switch (err ? EXEC_HAND_ON : exec_defer__judge(s->execs, &x, cpu_ns, now)) {
		case EXEC_IDLE:
			s->execs_idle += !x.copied;
			break;
		case EXEC_RECHECK:
			s->execs_rechecked += !x.copied;
			break;
		case EXEC_HAND_ON:
			ret = hand_on_exec(s, &x);
			break;
		}
	}
	return ret;
}

/*
 * Loads the tables of the processes the last events named. Events that came
 * meanwhile are read between two processes, so a table build delays the
 * naming of a new process by one process's tables at most.
 */
static void load_pending(struct sampler *s)
{
	for (int i = 0; i < s->n_pending; i++) {
		__s64 t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

		/*
		 * The runtimes first: BPF walks a runtime's frames only in a
		 * process whose native tables are of its image, so a runtime
		 * table left from the pid's last holder is never read.
		 */
		runtime_set__add_image(s->runtimes, &s->pending[i]);	/* failure: native frames only */
		unwinder__add_announced(s->unwinder, &s->pending[i]);	/* failure: frame pointers */
		proc_maps__unshare(s->pending[i].pid);
		proc_image__release(s->pending[i].pid);
		s->read_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
		ring_buffer__consume(s->events);		/* may append to pending */
	}
	s->n_pending = 0;
	runtime_set__retry(s->runtimes);	/* runtimes found too early (a JVM still starting) */
}

/*
 * A whole-system profile: the tables of the processes already running load
 * before sampling starts, busiest first, so their first samples are whole
 * too. Bounded in time and in rows, since idle processes may never be
 * sampled; the rest load at their first sample, as new processes do.
 */
static void preload_running(struct sampler *s)
{
	__s64 deadline = clock_ns(CLOCK_MONOTONIC) + (__s64)PRELOAD_NS;
	struct unwinder_stats us;
	__u32 *pids;
	int n = preload__busiest("/proc", PRELOAD_MAX, &pids), i;

	for (i = 0; i < n && clock_ns(CLOCK_MONOTONIC) < deadline; i++) {
		unwinder__stats(s->unwinder, &us);
		if (us.cache.rows > us.cache.capacity / 2)
			break;
		runtime_set__add_pid(s->runtimes, NULL, pids[i]);
		unwinder__add_pid(s->unwinder, pids[i]);
	}
	p_debug("preloaded the tables of %d of %d running processes", i > 0 ? i : 0, n);
	if (n >= 0)
		free(pids);
}

/* The fd of the sampler's BPF map NAME, for the runtimes: theirs are found by name. */
static int map_fd_by_name(void *ctx, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(ctx, name);

	return m ? bpf_map__fd(m) : -ENOENT;
}

static int new_unwinder(struct sampler *s, const __u32 *pids, int n_pids, bool whole_system)
{
	struct unwinder_opts uo = {
		.rows_fd = bpf_map__fd(s->skel->maps.unwind_rows),
		.rows = s->unwind_rows,
		.pages_fd = bpf_map__fd(s->skel->maps.unwind_pages),
		.pages = unwind_pages(s->unwind_rows),
		.procs_fd = bpf_map__fd(s->skel->maps.unwind_procs),
		.pids_fd = bpf_map__fd(s->skel->maps.runtime_pids),
		.sync_outer_fd = bpf_map__fd(s->skel->maps.sync_outer),
		.sync_inner_fd = bpf_map__fd(s->skel->maps.sync_inner),
	};
	struct runtime_set_opts ro = { .pids_fd = bpf_map__fd(s->skel->maps.runtime_pids),
				       .map_fd = map_fd_by_name, .ctx = s->skel->obj };

	if (s->skel->rodata->unwind_mode != UNWIND_MODE_CFI)
		return 0;
	/* a new process's bits set in place; failing that, by reads and writes of the value */
	if (bpf_util__map_bits(uo.pids_fd))
		p_debug("runtime_pids not mapped: bits set by system calls");
	s->unwinder = unwinder__new(&uo);
	if (!s->unwinder)
		return -errno;
	s->runtimes = runtime_set__new(&ro);
	if (!s->runtimes)
		return -errno;
	/* processes named up front get their tables before the first sample */
	for (int i = 0; i < n_pids; i++) {
		runtime_set__add_pid(s->runtimes, NULL, pids[i]);
		unwinder__add_pid(s->unwinder, pids[i]);
	}
	if (whole_system)
		preload_running(s);
	/* from the first sample on, a large file's build delays no other process's tables */
	if (unwinder__build_aside(s->unwinder, BUILD_ASIDE_BYTES))
		p_debug("unwind tables: no builder thread, every table built in turn");
	return 0;
}

/*
 * The events_ctl map, mmap'ed: BPF reads the promise at each announcement,
 * userspace writes it after each look. NULL if the map cannot be mapped:
 * then BPF wakes userspace as it would without a promise.
 */
static struct events_ctl *map_events_ctl(struct sampler *s)
{
	void *p = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE, MAP_SHARED,
		       bpf_map__fd(s->skel->maps.events_ctl), 0);

	if (p != MAP_FAILED)
		return p;
	p_debug("events_ctl: mmap: %s: every batch of announcements wakes us", strerror(errno));
	return NULL;
}

struct sampler *sampler__new(const struct sampler_opts *opts)
{
	struct sampler *s = calloc(1, sizeof(*s));
	enum sampler_walk walk;
	int err;

	if (!s)
		return NULL;
	s->frequency = opts->frequency;
	s->n_possible_cpus = libbpf_num_possible_cpus();
	if (s->n_possible_cpus <= 0) {
		err = s->n_possible_cpus ? s->n_possible_cpus : -EINVAL;
		goto err_free;
	}
	err = want_walk(opts, &walk);
	if (err)
		goto err_free;
	s->steps = walk == SAMPLER_WALK_STEPS;
	s->skel = open_object(s->steps);
	if (!s->skel) {
		err = -errno;
		goto err_free;
	}
	err = configure(s, opts, walk != SAMPLER_WALK_NONE);
	if (err)
		goto err_free;
	err = profile_bpf__load(s->skel);
	if (!err)
		err = warm_stacks(s);
	if (err)
		goto err_free;
	s->events_ctl = map_events_ctl(s);
	err = set_pid_filter(s, opts->pids, opts->n_pids);
	if (!err && opts->cgroup.fd > 0 &&
	    bpf_map_update_elem(bpf_map__fd(s->skel->maps.cgroup_filter), &(__u32){ 0 },
				&opts->cgroup.fd, BPF_ANY))
		err = -errno;
	if (!err)
		err = new_unwinder(s, opts->pids, opts->n_pids,
				   !opts->n_pids && opts->cgroup.fd <= 0 && !opts->cgroup.v1_id);
	if (err)
		goto err_free;
	s->events = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_event, s, NULL);
	if (s->events && s->runtimes &&
	    ring_buffer__add(s->events, bpf_map__fd(s->skel->maps.rt_events), runtime_set__on_event,
			     s->runtimes)) {
		err = -errno;
		goto err_free;
	}
	if (s->events)
		s->execs = exec_defer__new(EXEC_DEFER_MAX);
	if (!s->execs) {
		err = -errno;
		goto err_free;
	}
	return s;

err_free:
	sampler__free(s);
	errno = -err;
	return NULL;
}

static int open_cpu_clock(int cpu, int frequency)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = frequency,
		.freq = 1,
	};
	int fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int sampler__start(struct sampler *s)
{
	int err;

	s->exec_link = bpf_program__attach(s->skel->progs.on_exec);
	if (!s->exec_link)
		return -errno;
	err = cpus__online(&s->cpus, &s->n_cpus);
	if (err)
		return err;
	s->links = calloc(s->n_cpus, sizeof(*s->links));
	if (!s->links)
		return -ENOMEM;
	for (int i = 0; i < s->n_cpus; i++) {
		int fd = open_cpu_clock(s->cpus[i], s->frequency);

		if (fd == -ENODEV)	/* went offline since we read the list */
			continue;
		if (fd < 0)
			return fd;
		s->links[s->n_links] = bpf_program__attach_perf_event(s->prog, fd);
		if (!s->links[s->n_links]) {
			err = -errno;
			close(fd);
			return err;
		}
		s->n_links++;
	}
	s->n_attached = s->n_links;
	return s->n_links ? 0 : -ENODEV;
}

void sampler__stop(struct sampler *s)
{
	/* destroying a perf_event link also closes its perf event fd */
	for (int i = 0; i < s->n_links; i++)
		bpf_link__destroy(s->links[i]);
	s->n_links = 0;
	bpf_link__destroy(s->exec_link);
	s->exec_link = NULL;
}

int sampler__events_fd(const struct sampler *s)
{
	return ring_buffer__epoll_fd(s->events);
}

void sampler__maps(const struct sampler *s, struct sampler_maps *out)
{
	const struct profile_bpf *skel = s->skel;

	*out = (struct sampler_maps){
		.cfi = skel->rodata->unwind_mode == UNWIND_MODE_CFI,
		.steps = s->steps,
		.rows_fd = bpf_map__fd(skel->maps.unwind_rows),
		.pages_fd = bpf_map__fd(skel->maps.unwind_pages),
		.procs_fd = bpf_map__fd(skel->maps.unwind_procs),
		.events_fd = bpf_map__fd(skel->maps.events),
		.seen_fd = bpf_map__fd(skel->maps.seen),
		.events_lost_fd = bpf_map__fd(skel->maps.events_lost),
		.events_ctl_fd = bpf_map__fd(skel->maps.events_ctl),
		.obj = skel->obj,
		.runtime_pids_fd = bpf_map__fd(skel->maps.runtime_pids),
	};
}

/* the first point of the EXEC_LOOK_NS grid after NS: every look for execs alone falls on it */
static __s64 exec_grid(__s64 ns)
{
	return (ns / (__s64)EXEC_LOOK_NS + 1) * (__s64)EXEC_LOOK_NS;
}

/*
 * After a look: BPF may have submitted more without waking us. A look that
 * found a first sample or a remap is followed by another within the batch
 * time (BPF held back those that came since); one that found execs alone,
 * by one on the exec grid. BPF is promised that look (with the timer slack
 * the agent allows, 10 ms), so execs announced meanwhile need no wakeup.
 * The promise ends at a look that finds none; one more look follows it, for
 * an announcement whose program read the promise just before it ended and
 * whose record came in after this look.
 */
static void plan_next_look(struct sampler *s, bool found, bool found_new)
{
	bool promised = s->events_ctl && __atomic_load_n(&s->events_ctl->look_by, __ATOMIC_RELAXED);
	__s64 now = clock_ns(CLOCK_MONOTONIC);

	if (found_new || (promised && !found))
		s->recheck_ns = now + (__s64)EVENTS_BATCH_NS;
	else
		s->recheck_ns = found ? exec_grid(now) : INT64_MAX;
	if (s->events_ctl)
		__atomic_store_n(&s->events_ctl->look_by,
				 found ? (__u64)s->recheck_ns + EVENTS_BATCH_NS / 2 : 0, __ATOMIC_SEQ_CST);
}

int sampler__poll_events(struct sampler *s, int timeout_ms, sampler_event_fn fn, void *ctx)
{
	__s64 due = sampler__next_event_ns(s) - clock_ns(CLOCK_MONOTONIC);
	__u64 seen = s->events_seen, news = s->news_seen;
	int n;

	/* wake for the next deferred exec too */
	if (timeout_ms && due < (__s64)timeout_ms * 1000000)
		timeout_ms = due > 0 ? due / 1000000 + 1 : 0;
	s->event_fn = fn;
	s->event_ctx = ctx;
	n = timeout_ms ? ring_buffer__poll(s->events, timeout_ms) : 0;
	/* poll reads only the rings that woke it: what BPF submitted without a wakeup is read here */
	if (n >= 0)
		n = ring_buffer__consume(s->events);
	/* a deferred exec handed on stops the reading as an event would (-EINTR: the caller's stop) */
	if (n >= 0) {
		int due_err = hand_on_due(s);

		n = due_err < 0 ? due_err : n;
	}
	load_pending(s);
	if (s->unwinder)
		unwinder__collect(s->unwinder);	/* tables built aside meanwhile */
	s->event_fn = NULL;
	plan_next_look(s, s->events_seen != seen, s->news_seen != news);
	return n == -EINTR ? 0 : n;
}

__s64 sampler__next_event_ns(const struct sampler *s)
{
	__s64 due = exec_defer__next_due(s->execs);

	/* execs falling due on one step of the exec grid are handed on together */
	if (due != INT64_MAX)
		due = exec_grid(due - 1);
	if (s->recheck_ns < due)
		due = s->recheck_ns;
	/* a table built aside is loaded soon after it is done (builds are rare: no wakeup of its own) */
	if (s->unwinder && unwinder__building(s->unwinder)) {
		__s64 soon = clock_ns(CLOCK_MONOTONIC) + BUILD_LOOK_NS;

		due = soon < due ? soon : due;
	}
	return due;
}

int sampler__figures(struct sampler *s, struct sampler_figures *out)
{
	struct unwinder_stats us = {};

	if (s->unwinder)
		unwinder__stats(s->unwinder, &us);
	*out = (struct sampler_figures){
		.table_files = us.cache.builds,
		.table_build_ns = us.cache.build_ns,
		.table_resets = us.resets,
		.table_compactions = us.cache.compactions,
		.table_rows = us.cache.rows,
		.table_rows_max = us.cache.capacity,
		.execs_unsampled = s->execs_skipped,
		.execs_idle = s->execs_idle,
		.execs_rechecked = s->execs_rechecked,
		.processes_read = s->images_read,
		.processes_copied = s->images_copied,
		.forks_read = s->forks_read,
		.process_read_ns = (__u64)s->read_ns,
	};
	return sampler__stats(s, out->bpf);
}

int sampler__cpus(const struct sampler *s)
{
	return s->n_attached;
}

int sampler__active_slot(const struct sampler *s)
{
	return s->skel->bss->active_slot & 1;
}

int sampler__swap(struct sampler *s)
{
	int old = sampler__active_slot(s), inner, err;

	if (!s->double_buffer)
		return 0;
	/* the program reads active_slot once per sample, from the mmap'd .bss */
	__atomic_store_n(&s->skel->bss->active_slot, !old, __ATOMIC_SEQ_CST);
	/* returns after an RCU grace period: every run that saw the old slot has ended */
	inner = bpf_map__fd(s->skel->maps.sync_inner);
	err = bpf_util__grace_period(bpf_map__fd(s->skel->maps.sync_outer), inner);
	if (s->unwinder)
		unwinder__sweep(s->unwinder);	/* once a window: tables of dead processes go */
	runtime_set__sweep(s->runtimes);	/* caches of processes dead a whole window go */
	return err ? err : old;
}

struct each_ctx {
	sampler_fn fn;
	void *ctx;
};

static int each_count(const void *key, const void *value, void *ctx)
{
	struct each_ctx *e = ctx;

	return e->fn(key, *(const __u64 *)value, e->ctx);
}

int sampler__for_each(struct sampler *s, int slot, sampler_fn fn, void *ctx)
{
	struct each_ctx e = { fn, ctx };

	return bpf_util__for_each(bpf_map__fd(counts_map(s, slot)), each_count, &e);
}

int sampler__stack(struct sampler *s, int slot, __u64 hash, __u64 *ips, int max)
{
	struct stack_frames buf;
	int n = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(stacks_map(s, slot)), &hash, &buf))
		return -errno;
	/* zero past the last frame (bpf_get_stack fills the rest of its buffer so) */
	while (n < MAX_STACK_DEPTH && n < max && buf.ips[n]) {
		ips[n] = buf.ips[n];
		n++;
	}
	return n;
}

int sampler__stack_fill(struct sampler *s, int slot, struct stack_fill *out)
{
	bool cfi = s->skel->rodata->unwind_mode == UNWIND_MODE_CFI;
	int err;

	*out = (struct stack_fill){
		.stacks_max = bpf_map__max_entries(stacks_map(s, slot)),
		.walked_max = cfi ? bpf_map__max_entries(ustacks_map(s, slot)) : 0,
		.prealloc = s->stacks_prealloc,
	};
	err = bpf_util__count_keys(bpf_map__fd(stacks_map(s, slot)), out->stacks_max,
				   &out->stacks);
	if (!err && cfi)
		err = bpf_util__count_keys(bpf_map__fd(ustacks_map(s, slot)), out->walked_max,
					   &out->walked);
	return err;
}

int sampler__user_stack(struct sampler *s, int slot, __u64 hash, __u64 *ips, int max,
			__u32 *flags)
{
	struct user_stack *us = &s->ustack;
	int n = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(ustacks_map(s, slot)), &hash, us))
		return -errno;
	*flags = us->flags;
	for (; n < (int)us->n && n < UNWIND_MAX_DEPTH && n < max; n++)
		ips[n] = us->ips[n];
	return n;
}

int sampler__clear(struct sampler *s, int slot)
{
	int err = bpf_util__clear_map(bpf_map__fd(counts_map(s, slot)));

	if (!err)
		err = bpf_util__clear_map(bpf_map__fd(stacks_map(s, slot)));
	if (!err)
		err = bpf_util__clear_map(bpf_map__fd(ustacks_map(s, slot)));
	if (!err)
		err = bpf_util__clear_map(bpf_map__fd(labels_map(s, slot)));
	return err;
}

int sampler__label_set(struct sampler *s, int slot, __u64 hash, struct label_set *out)
{
	if (bpf_map_lookup_elem(bpf_map__fd(labels_map(s, slot)), &hash, out))
		return -errno;
	labels__tidy(out);
	return 0;
}

__u32 sampler__count_capacity(const struct sampler *s)
{
	return s->count_entries;
}

int sampler__stats(struct sampler *s, __u64 out[STAT_MAX])
{
	__u64 lost = 0;
	int err;

	err = bpf_util__sum_percpu(bpf_map__fd(s->skel->maps.stats), STAT_MAX,
				   s->n_possible_cpus, out);
	/* the ring buffer is shared with the off-CPU tracer: so is its loss counter */
	if (!err)
		err = bpf_util__sum_percpu(bpf_map__fd(s->skel->maps.events_lost), 1,
					   s->n_possible_cpus, &lost);
	if (!err)
		out[STAT_EVENTS_DROPPED] = lost;
	return err;
}

/* Asked twice a second: the loss counter alone, one lookup, not every BPF counter. */
bool sampler__announcements_lost(struct sampler *s)
{
	__u64 dropped = 0;
	bool lost;

	if (bpf_util__sum_percpu(bpf_map__fd(s->skel->maps.events_lost), 1, s->n_possible_cpus,
				 &dropped))
		return true;	/* cannot tell: scan */
	lost = dropped != s->events_dropped;
	s->events_dropped = dropped;
	return lost;
}

int sampler__unwind_stats(const struct sampler *s, struct unwinder_stats *out)
{
	if (!s->unwinder)
		return -ENOENT;
	unwinder__stats(s->unwinder, out);
	return 0;
}

struct runtime_set *sampler__runtimes(struct sampler *s)
{
	return s ? s->runtimes : NULL;	/* off-cpu mode runs without a sampler */
}

int sampler__bpf_runtime(struct sampler *s, __u64 *run_ns, __u64 *run_cnt)
{
	return bpf_util__prog_runtime(bpf_program__fd(s->prog), run_ns, run_cnt);
}

void sampler__free(struct sampler *s)
{
	if (!s)
		return;
	sampler__stop(s);
	if (s->events_ctl)
		munmap(s->events_ctl, sysconf(_SC_PAGESIZE));
	ring_buffer__free(s->events);
	exec_defer__free(s->execs);
	unwinder__free(s->unwinder);
	runtime_set__free(s->runtimes);
	if (s->skel)	/* before the map's descriptor closes */
		bpf_util__unmap_bits(bpf_map__fd(s->skel->maps.runtime_pids));
	free(s->links);
	free(s->cpus);
	profile_bpf__destroy(s->skel);
	free(s);
}
