/* offcpu.c -- loads the off-CPU tracer (sched_switch), cuts its counts into windows, reads them */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "lib/bpf_util.h"
#include "lib/log.h"
#include "offcpu.h"
#include "cpus.h"
#include "pidns.h"
#include "preflight.h"
#include "runtimes/labels/labels_runtime.h"
#include "unwind.h"
#include "runtimes/runtime.h"
#include "offcpu.skel.h"
#include "offcpu_steps.skel.h"

#define DEFAULT_START_ENTRIES 65536
#define DEFAULT_COUNT_ENTRIES 10240
/*
 * Stacks the shared stack map holds, allocated as used where the kernel
 * allows (as the sampler's), else preallocated. Unlike the sampler's, it
 * fills across windows until offcpu__clear empties it at 3/4: 16384 keeps
 * that under 24 MiB allocated as used (2 KiB a stack), 17 MiB preallocated.
 */
#define DEFAULT_STACK_ENTRIES 16384

struct offcpu {
	struct offcpu_bpf *skel;
	struct bpf_program *prog;	/* the sched_switch program that was loaded */
	struct bpf_program *harvest;	/* the harvest program that was loaded */
	struct bpf_link *link;		/* attached to sched_switch; NULL when stopped */
	struct bpf_link *iter_link;	/* the harvest iterator over the start map */
	bool no_iter;			/* iterators refused: offcpu_harvest_run is test-run instead */
	bool fp_programs;		/* the programs without exchange (before 5.12) */
	bool steps;			/* the steps build, as the sampler's: walks before 5.17 too */
	__u64 stop_ns;			/* when offcpu__stop detached */
	int n_possible_cpus;
	__u32 stack_entries;
	__u32 stack_resets;
	bool double_buffer;
	bool stacks_prealloc;		/* the stack map is preallocated: the kernel wants it */
	struct user_stack ustack;	/* offcpu__user_stack's buffer: too big for the stack */
};

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);	/* bpf_ktime_get_ns()'s clock */
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static struct bpf_map *counts_map(struct offcpu *o, int slot)
{
	return slot ? o->skel->maps.counts1 : o->skel->maps.counts0;
}

/* What vmlinux BTF says of sched_switch: absent (no tp_btf), or how many arguments it passes. */
static int sched_switch_args(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *t = NULL;
	int id, n = 0;

	if (!btf)
		return 0;
	/* typedef void (*btf_trace_sched_switch)(void *, bool, prev, next[, prev_state]) */
	id = btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	if (id > 0)
		t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	if (t && btf_is_ptr(t))
		t = btf__type_by_id(btf, t->type);
	if (t && btf_is_func_proto(t))
		n = btf_vlen(t) - 1;
	btf__free(btf);
	return n;
}

/*
 * The sampler's unwind tables, ring buffer and seen map become this object's
 * (reused by fd before load): the walk at switch-out reads the same rows, and
 * a process that only blocks is announced to the same reader.
 */
/* Map NAME of DST takes the sampler's map of that name (SRC). */
static int share_map(struct bpf_object *dst, struct bpf_object *src, const char *name)
{
	struct bpf_map *d = bpf_object__find_map_by_name(dst, name);
	struct bpf_map *s = bpf_object__find_map_by_name(src, name);

	return d && s ? bpf_map__reuse_fd(d, bpf_map__fd(s)) : -ENOENT;
}

static int share_sampler_maps(struct offcpu *o, const struct sampler_maps *m, bool walk)
{
	struct offcpu_bpf *skel = o->skel;
	int err;

	err = bpf_map__reuse_fd(skel->maps.events, m->events_fd);
	if (!err)
		err = bpf_map__reuse_fd(skel->maps.seen, m->seen_fd);
	if (!err)
		err = bpf_map__reuse_fd(skel->maps.events_lost, m->events_lost_fd);
	if (!err)
		err = bpf_map__reuse_fd(skel->maps.events_ctl, m->events_ctl_fd);
	if (err || !m->cfi || !walk)
		return err;
	err = bpf_map__reuse_fd(skel->maps.unwind_rows, m->rows_fd);
	if (!err)
		err = bpf_map__reuse_fd(skel->maps.unwind_pages, m->pages_fd);
	if (!err)
		err = bpf_map__reuse_fd(skel->maps.unwind_procs, m->procs_fd);
	if (!err)
		err = bpf_map__reuse_fd(skel->maps.runtime_pids, m->runtime_pids_fd);
	/* the same runtimes' processes, their events and what they saw run */
	if (!err)
		err = share_map(skel->obj, m->obj, "rt_seen");
	if (!err)
		err = share_map(skel->obj, m->obj, "rt_events");
	for (int i = 0; !err && i < UNWIND_RT_MAX; i++) {
		const struct runtime_ops *ops = runtimes[i];

		if (!ops)
			continue;
		err = share_map(skel->obj, m->obj, ops->procs_map);
		for (int k = 0; !err && ops->maps && ops->maps[k]; k++)
			err = share_map(skel->obj, m->obj, ops->maps[k]);
	}
	if (!err) {
		skel->rodata->unwind_mode = UNWIND_MODE_CFI;
		skel->rodata->pthread_self_off = bpf_util__pthread_self_off();
	}
	return err;
}

/*
 * Exactly one of the four sched_switch programs is loaded: tp_btf or raw_tp
 * (BTF), with atomic exchange or without; the loop build walks CFI only in
 * the first (5.17+), the steps build in both.
 */
static int pick_switch_program(struct offcpu *o, bool btf)
{
	struct bpf_program *all[] = { o->skel->progs.offcpu_switch, o->skel->progs.offcpu_switch_raw,
				      o->skel->progs.offcpu_switch_fp,
				      o->skel->progs.offcpu_switch_fp_raw };
	int err = 0;

	o->prog = all[o->fp_programs * 2 + !btf];
	for (int i = 0; i < 4 && !err; i++)
		if (all[i] != o->prog)
			err = bpf_program__set_autoload(all[i], false);
	return err;
}

static int configure(struct offcpu *o, const struct offcpu_opts *opts)
{
	struct offcpu_bpf *skel = o->skel;
	__u32 counts = opts->count_entries ? opts->count_entries : DEFAULT_COUNT_ENTRIES;
	__u32 starts = opts->start_entries ? opts->start_entries : DEFAULT_START_ENTRIES;
	int args = sched_switch_args();
	bool btf = !opts->force_raw_tp && args > 0;
	int err;

	/* sched_switch holds the runqueue lock: allocate there only where the BPF allocator is safe */
	o->stacks_prealloc = !bpf_util__perf_event_no_prealloc();
	o->stack_entries = opts->stack_entries ? opts->stack_entries : DEFAULT_STACK_ENTRIES;
	o->double_buffer = opts->double_buffer;
	skel->rodata->filter_pid = opts->n_pids > 0;
	skel->rodata->filter_cgroup = opts->cgroup.fd > 0;
	skel->rodata->filter_cgroup1_ssid = opts->cgroup.v1_ssid;
	skel->rodata->filter_cgroup1_id = opts->cgroup.v1_id;
	skel->rodata->announce_cgroup1_ssid = opts->announce_cgroup1_ssid;
	if (pidns__child(&skel->rodata->pidns_dev, &skel->rodata->pidns_ino) < 0)
		skel->rodata->pidns_ino = 0;	/* cannot tell: the host's pids */
	skel->rodata->per_thread = opts->per_thread;
	skel->rodata->include_kthreads = opts->include_kernel_threads;
	skel->rodata->min_ns = opts->min_us * 1000;
	skel->rodata->collect_kernel = !opts->no_kernel;
	skel->rodata->collect_user = !opts->no_user;
	skel->rodata->has_prev_state_arg = args >= 4;

	err = pick_switch_program(o, btf);
	if (!err && o->stacks_prealloc)
		err = bpf_map__set_map_flags(skel->maps.stacks, 0);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.stacks, o->stack_entries);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.counts0, counts);
	/* slot 1 is never written without double buffering: keep it tiny */
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.counts1, o->double_buffer ? counts : 1);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.start, starts);
	/* a token for each block the harvest credits, and for wakes racing it */
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.claims, o->fp_programs ? starts : 1);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.pids, opts->n_pids > 0 ? opts->n_pids : 1);
	if (!err && opts->sampler)
		err = share_sampler_maps(o, opts->sampler, o->steps || !o->fp_programs);
	return err;
}

/* A switch-out may store two new stacks in one run: the allocator is readied (as the sampler's). */
static int warm_stacks(struct offcpu *o)
{
	int *cpus, n, err;

	if (o->stacks_prealloc)
		return 0;
	err = cpus__online(&cpus, &n);
	if (err)
		return err;
	err = bpf_util__warm_map(bpf_map__fd(o->skel->maps.stacks), cpus, n);
	free(cpus);
	return err;
}

static int set_filters(struct offcpu *o, const struct offcpu_opts *opts)
{
	int fd = bpf_map__fd(o->skel->maps.pids);
	__u32 zero = 0;
	__u8 one = 1;

	for (int i = 0; i < opts->n_pids; i++)
		if (bpf_map_update_elem(fd, &opts->pids[i], &one, BPF_ANY))
			return -errno;
	if (opts->cgroup.fd > 0 &&
	    bpf_map_update_elem(bpf_map__fd(o->skel->maps.cgroup_filter), &zero, &opts->cgroup.fd,
				BPF_ANY))
		return -errno;
	return 0;
}

/* The harvest iterator runs over the start map; the link is made once, iterated per harvest. */
static int attach_iter(struct offcpu *o)
{
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo = {};

	linfo.map.map_fd = bpf_map__fd(o->skel->maps.start);
	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	o->iter_link = bpf_program__attach_iter(o->harvest, &opts);
	return o->iter_link ? 0 : -errno;
}

/* The one harvest program: by iterator (claiming as the switch program does) or by test run. */
static int pick_harvest_program(struct offcpu *o, bool iter)
{
	struct bpf_program *all[] = { o->skel->progs.offcpu_harvest, o->skel->progs.offcpu_harvest_fp,
				      o->skel->progs.offcpu_harvest_run };
	struct bpf_program *keep = !iter ? all[2] : o->fp_programs ? all[1] : all[0];
	int err = 0;

	/* the test run's walk needs bpf_for_each_map_elem (5.13) and the exchange */
	if (!iter && o->fp_programs)
		return -EOPNOTSUPP;
	o->harvest = keep;
	for (int i = 0; i < 3 && !err; i++)
		if (all[i] != keep)
			err = bpf_program__set_autoload(all[i], false);
	return err;
}

/*
 * The steps build of bpf/offcpu.bpf.c has the same maps, programs and
 * globals by name and layout (as the sampler's, sampler.c): the loop build's
 * skeleton serves it, with its bytes.
 */
_Static_assert(sizeof(struct offcpu_bpf__rodata) == sizeof(struct offcpu_steps_bpf__rodata),
	       "the two builds' globals differ");
_Static_assert(sizeof(struct offcpu_bpf__bss) == sizeof(struct offcpu_steps_bpf__bss),
	       "the two builds' globals differ");

static struct offcpu_bpf *open_object(bool steps)
{
	struct offcpu_bpf *obj = calloc(1, sizeof(*obj));
	int err;

	if (!obj)
		return NULL;
	err = offcpu_bpf__create_skeleton(obj);
	if (!err && steps)
		obj->skeleton->data = (void *)offcpu_steps_bpf__elf_bytes(&obj->skeleton->data_sz);
	if (!err)
		err = bpf_object__open_skeleton(obj->skeleton, NULL);
	if (err) {
		offcpu_bpf__destroy(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}

/* Opens, configures and loads the object, harvesting by iterator or by test run. */
static int open_and_load(struct offcpu *o, const struct offcpu_opts *opts, bool iter)
{
	int err;

	o->skel = open_object(o->steps);
	if (!o->skel)
		return -errno;
	err = pick_harvest_program(o, iter);
	/* set rodata, size maps, pick the sched_switch program */
	if (!err)
		err = configure(o, opts);
	if (!err)
		err = offcpu_bpf__load(o->skel);
	return err;
}

struct offcpu *offcpu__new(const struct offcpu_opts *opts)
{
	struct offcpu *o = calloc(1, sizeof(*o));
	int err;

	if (!o)
		return NULL;
	o->n_possible_cpus = libbpf_num_possible_cpus();
	/*
	 * The kernel decides, through the sampler's choice: its steps build
	 * walks without bpf_loop and without the exchange; the loop build's
	 * walk needs bpf_loop, which comes after the exchange.
	 */
	o->steps = opts->sampler && opts->sampler->steps;
	o->fp_programs = opts->force_fp_programs || !preflight__bpf_xchg() ||
			 (!o->steps && !sampler__kernel_can_walk_cfi());
	if (o->n_possible_cpus <= 0) {
		err = o->n_possible_cpus ? o->n_possible_cpus : -EINVAL;
		goto err_free;
	}
	err = open_and_load(o, opts, true);
	if (err) {
		/* an LSM may refuse BPF iterators (EPERM) while the rest loads */
		offcpu_bpf__destroy(o->skel);
		o->skel = NULL;
		if (open_and_load(o, opts, false)) {
			if (o->fp_programs)
				p_warn("BPF iterators are refused here (%s), and this kernel's off-CPU "
				       "programs harvest only by iterator", strerror(-err));
			goto err_free;
		}
		o->no_iter = true;
		p_warn("BPF iterators are refused here (%s): off-CPU windows are cut by a test run of a "
		       "program instead, which cannot check that a thread whose switch-in was missed "
		       "is still off CPU", strerror(-err));
		err = 0;
	}
	/* fill the filters; ready the stack map's allocator; make the harvest iterator */
	err = set_filters(o, opts);
	if (!err)
		err = warm_stacks(o);
	if (!err && !o->no_iter)
		err = attach_iter(o);
	if (err)
		goto err_free;
	return o;

err_free:
	offcpu__free(o);
	errno = -err;
	return NULL;
}

int offcpu__start(struct offcpu *o)
{
	int err;

	if (o->link)
		return -EALREADY;
	/* blocks seen before a stop may have ended unseen: they would be credited forever */
	err = bpf_util__clear_map(bpf_map__fd(o->skel->maps.start));
	if (err)
		return err;
	o->link = bpf_program__attach(o->prog);
	if (!o->link)
		return -errno;
	o->stop_ns = 0;
	return 0;
}

void offcpu__stop(struct offcpu *o)
{
	if (!o->link)
		return;
	bpf_link__destroy(o->link);
	o->link = NULL;
	o->stop_ns = mono_ns();
}

/* Returns after an RCU grace period: every sched_switch run that began before has ended. */
static int sync_programs(struct offcpu *o)
{
	return bpf_util__grace_period(bpf_map__fd(o->skel->maps.sync_outer),
				      bpf_map__fd(o->skel->maps.sync_inner));
}

/* Runs the harvest program over every start entry; it writes no output. */
static int run_iter(struct offcpu *o)
{
	LIBBPF_OPTS(bpf_test_run_opts, topts);
	char buf[64];
	ssize_t n;
	int fd, err = 0;

	if (o->no_iter)
		return bpf_prog_test_run_opts(bpf_program__fd(o->harvest), &topts) ? -errno : 0;
	fd = bpf_iter_create(bpf_link__fd(o->iter_link));
	if (fd < 0)
		return -errno;
	/* EAGAIN: a million entries visited without output; the next read goes on */
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			err = -errno;
			break;
		}
	}
	close(fd);
	return err;
}

int offcpu__harvest(struct offcpu *o, __u64 boundary_ns)
{
	struct offcpu_bpf__bss *bss = o->skel->bss;
	__u64 gen = __atomic_load_n(&bss->gen, __ATOMIC_RELAXED), now = mono_ns();
	int old = gen & 1, next, harvest, err;

	if (!boundary_ns)
		boundary_ns = !o->link && o->stop_ns ? o->stop_ns : now;
	/* a future boundary would credit time a block may never spend off CPU */
	if (boundary_ns > now || boundary_ns < gen >> 1 || boundary_ns >> 63)
		return -EINVAL;
	if (o->double_buffer) {
		harvest = old;
		next = !old;
	} else {
		if (o->link)
			return -EBUSY;
		harvest = next = 0;
	}
	/* 1: publish the boundary and the new active slot in one store */
	bss->harvest_slot = harvest;
	__atomic_store_n(&bss->gen, boundary_ns << 1 | next, __ATOMIC_SEQ_CST);
	/* 2: every run that may have read the old gen has finished */
	err = sync_programs(o);
	if (err)
		return err;
	/* 3: credit blocks still off CPU up to the boundary, into the harvested slot */
	err = run_iter(o);
	if (err)
		return err;
	__atomic_store_n(&bss->iter_done, boundary_ns, __ATOMIC_SEQ_CST);
	/* 4: wakes that began before iter_done was set have finished writing the old slot */
	err = sync_programs(o);
	/* 5: and the claim tokens (fp programs) with them: none is taken until the next boundary */
	if (!err && o->fp_programs)
		err = bpf_util__clear_map(bpf_map__fd(o->skel->maps.claims));
	return err ? err : harvest;
}

struct each_ctx {
	offcpu_fn fn;
	void *ctx;
	__u32 epoch;
};

static int each_record(const void *k, const void *v, void *ctx)
{
	struct each_ctx *e = ctx;
	struct offcpu_key key = *(const struct offcpu_key *)k;
	struct offcpu_val val = *(const struct offcpu_val *)v;

	/* captured before the stack maps were emptied: the stack may be gone */
	if (key.stack_epoch != e->epoch) {
		if (key.kern_stack_id == STACK_ID_HASHED)
			key.kern_stack_id = OFFCPU_STACK_LOST;
		if (key.user_stack_id == STACK_ID_HASHED || key.user_stack_id == STACK_ID_UNWOUND)
			key.user_stack_id = OFFCPU_STACK_LOST;
	}
	return e->fn(&key, &val, e->ctx);
}

int offcpu__for_each(struct offcpu *o, int slot, offcpu_fn fn, void *ctx)
{
	struct each_ctx e = { fn, ctx, o->skel->bss->stack_epoch };

	return bpf_util__for_each(bpf_map__fd(counts_map(o, slot)), each_record, &e);
}

int offcpu__stack(struct offcpu *o, __u64 hash, __u64 *ips, int max)
{
	struct stack_frames buf;
	int n = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(o->skel->maps.stacks), &hash, &buf))
		return -errno;
	/* zero past the last frame (bpf_get_stack fills the rest of its buffer so) */
	while (n < MAX_STACK_DEPTH && n < max && buf.ips[n]) {
		ips[n] = buf.ips[n];
		n++;
	}
	return n;
}

int offcpu__label_set(struct offcpu *o, __u64 hash, struct label_set *out)
{
	if (bpf_map_lookup_elem(bpf_map__fd(o->skel->maps.offcpu_labels), &hash, out))
		return -errno;
	labels__tidy(out);
	return 0;
}

int offcpu__user_stack(struct offcpu *o, __u64 hash, __u64 *ips, int max, __u32 *flags)
{
	struct user_stack *us = &o->ustack;
	int n = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(o->skel->maps.ustacks), &hash, us))
		return -errno;
	*flags = us->flags;
	for (; n < (int)us->n && n < UNWIND_MAX_DEPTH && n < max; n++)
		ips[n] = us->ips[n];
	return n;
}

/* True when map holds more than 3/4 of its capacity; stops counting there. */
static bool map_filling(const struct bpf_map *map)
{
	__u32 limit = bpf_map__max_entries(map) / 4 * 3, n = 0;

	bpf_util__count_keys(bpf_map__fd(map), limit + 1, &n);
	return n > limit;
}

static bool stacks_filling(struct offcpu *o)
{
	return map_filling(o->skel->maps.stacks) || map_filling(o->skel->maps.ustacks);
}

/*
 * Empties the stack map, then bumps the epoch. A switch-out reads the epoch
 * before it captures: one that sees the new epoch captured after the map was
 * emptied, so its ids stay valid; one that saw the old epoch is reported lost
 * even if its stack survived. Never a wrong stack.
 */
static int reset_stacks(struct offcpu *o)
{
	int err = bpf_util__clear_map(bpf_map__fd(o->skel->maps.stacks));

	if (!err)
		err = bpf_util__clear_map(bpf_map__fd(o->skel->maps.ustacks));
	if (err)
		return err;
	__atomic_add_fetch(&o->skel->bss->stack_epoch, 1, __ATOMIC_SEQ_CST);
	o->stack_resets++;
	return 0;
}

int offcpu__clear(struct offcpu *o, int slot)
{
	int err = bpf_util__clear_map(bpf_map__fd(counts_map(o, slot)));

	if (!err && stacks_filling(o))
		err = reset_stacks(o);
	return err;
}

int offcpu__stack_fill(struct offcpu *o, struct stack_fill *out)
{
	int err;

	*out = (struct stack_fill){
		.stacks_max = bpf_map__max_entries(o->skel->maps.stacks),
		.walked_max = o->skel->rodata->unwind_mode == UNWIND_MODE_CFI
				      ? bpf_map__max_entries(o->skel->maps.ustacks) : 0,
		.prealloc = o->stacks_prealloc,
	};
	err = bpf_util__count_keys(bpf_map__fd(o->skel->maps.stacks), out->stacks_max,
				   &out->stacks);
	if (!err && out->walked_max)
		err = bpf_util__count_keys(bpf_map__fd(o->skel->maps.ustacks), out->walked_max,
					   &out->walked);
	return err;
}

__u32 offcpu__stack_resets(const struct offcpu *o)
{
	return o->stack_resets;
}

int offcpu__stats(struct offcpu *o, __u64 out[OFFCPU_STAT_MAX])
{
	return bpf_util__sum_percpu(bpf_map__fd(o->skel->maps.stats), OFFCPU_STAT_MAX,
				    o->n_possible_cpus, out);
}

int offcpu__bpf_runtime(struct offcpu *o, __u64 *run_ns, __u64 *run_cnt)
{
	return bpf_util__prog_runtime(bpf_program__fd(o->prog), run_ns, run_cnt);
}

bool offcpu__by_iterator(const struct offcpu *o)
{
	return !o->no_iter;
}

const char *offcpu__state_name(__u32 state)
{
	static const char *const names[OFFCPU_STATE_MAX] = {
		[OFFCPU_STATE_OTHER] = "other",
		[OFFCPU_STATE_SLEEPING] = "sleeping",
		[OFFCPU_STATE_DISK] = "disk",
	};

	return state < OFFCPU_STATE_MAX ? names[state] : "unknown";
}

void offcpu__free(struct offcpu *o)
{
	if (!o)
		return;
	offcpu__stop(o);
	bpf_link__destroy(o->iter_link);
	offcpu_bpf__destroy(o->skel);
	free(o);
}
