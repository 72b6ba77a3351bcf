// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* offcpu.bpf.c -- sched_switch tracer: how long each thread is off CPU, and in which stacks */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "offcpu.h"
#include "filter.bpf.h"
#include "unwind.bpf.h"
#include "events.bpf.h"
#include "stacks.bpf.h"
#include "labels.bpf.h"	/* its label_procs, shared with the sampler */

/* include/linux/sched.h; macros are not in BTF */
#define PF_KTHREAD 0x00200000
#define TASK_INTERRUPTIBLE 0x0001
#define TASK_UNINTERRUPTIBLE 0x0002
#define TASK_DEAD 0x0080
#define TASK_NOLOAD 0x0400

#ifndef bpf_ksym_exists	/* libbpf before 1.2 */
#define bpf_ksym_exists(sym) (!!(sym))
#endif

/*
 * The kernel stack at sched_switch starts in this program and the
 * tracepoint's bpf_trace_run4: our frames, not the task's, so not recorded.
 */
#define OWN_FRAMES 2

/* Set by userspace between open and load. */
const volatile bool per_thread = false;
const volatile bool include_kthreads = false;
const volatile bool collect_kernel = true;
const volatile bool collect_user = true;
const volatile __u64 min_ns = 0;
/* sched_switch passes prev_state as a 4th argument (5.18+): set from vmlinux BTF */
const volatile bool has_prev_state_arg = false;
/*
 * UNWIND_MODE_CFI: walk with the sampler's tables (its maps, reused by fd).
 * Only the programs with the walk compiled in (WALK below) can.
 */
const volatile __u32 unwind_mode = UNWIND_MODE_FP;

/*
 * Window boundaries. gen = (boundary_ns << 1) | active slot, one store by
 * userspace. A block [ts, end) is credited piecewise by whoever moves its
 * start entry's claimed forward (take_claim): the wake (up to its time,
 * settle) or the harvest iterator (up to the boundary); each credits only
 * [max(previous claimed, ts), its own mark), split at the boundary between
 * the old and the new slot, so no nanosecond is credited twice.
 * iter_done = the boundary whose iterator pass has finished: a wake that
 * still finds time before it unclaimed (the iterator missed the entry, or
 * skipped it as shorter than min_ns) credits that time to the new slot,
 * because the old one is being read. Userspace's side: offcpu__harvest.
 */
__u64 gen = 0;
__u64 iter_done = 0;
__u32 harvest_slot = 0;		/* where the iterator credits */
__u32 stack_epoch = 0;		/* bumped by userspace after it empties the stack map */

/*
 * One stack map for both slots (kernel and frame-pointer user stacks, by
 * content: stacks.bpf.h): a block spanning a boundary keeps its stacks.
 */
STACKS_MAP(stacks);

/* stacks the CFI walker took, by hash; shared by both slots and emptied with stacks */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u64);
	__type(value, struct user_stack);
	__uint(max_entries, 8192);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} ustacks SEC(".maps");

/*
 * Label sets blocks began under, by content hash, for both slots: LRU, so a
 * set of a block long over makes room (one still counted then reads back
 * without labels). Preallocated, as LRU maps are: 4096 sets, 3.3 MiB.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u64);
	__type(value, struct label_set);
	__uint(max_entries, 4096);
} offcpu_labels SEC(".maps");

#define COUNTS_MAP(name)                                                        \
	struct {                                                                \
		__uint(type, BPF_MAP_TYPE_HASH);                                \
		__type(key, struct offcpu_key);                                 \
		__type(value, struct offcpu_val);                               \
		__uint(max_entries, 10240);                                     \
	} name SEC(".maps")

COUNTS_MAP(counts0);
COUNTS_MAP(counts1);

/* Threads off CPU now, by tid. LRU: a full map evicts the oldest instead of refusing. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, struct offcpu_start);
	__uint(max_entries, 65536);
} start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, OFFCPU_STAT_MAX);
} stats SEC(".maps");

/*
 * Kernels before 5.12 have no BPF atomic exchange: there a wake and the
 * harvest that race over one block settle who moves its claimed by
 * inserting the block's key here, which succeeds for exactly one of them.
 * Only while a harvest is under way (iter_done behind the boundary) is
 * there a race, so only then is a key inserted; userspace empties the map
 * after each harvest, when no run can be inserting (offcpu__harvest).
 * Preallocated: sched_switch holds the runqueue lock. Sized by userspace.
 */
struct claim_key {
	__u64 ts;
	__u32 tid;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct claim_key);
	__type(value, __u8);
	__uint(max_entries, 1);
} claims SEC(".maps");

/* 6.2+; absent kfuncs resolve to NULL and the harvest skips its liveness check */
extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

/* a claim no boundary reaches: the entry is being replaced and must not be credited */
#define CLAIMED_ALL (~0ull)

/* before 5.14 the field was "long state" */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline void stat_inc(__u32 id)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &id);

	if (v)
		(*v)++;	/* per-CPU slot: no atomic needed */
}

static __always_inline __u64 min_u64(__u64 a, __u64 b)
{
	return a < b ? a : b;
}

static __always_inline __u64 max_u64(__u64 a, __u64 b)
{
	return a > b ? a : b;
}

/*
 * The state prev blocked in. The tracepoint's own argument is what __schedule
 * acted on; the field, read later, may already say TASK_WAKING or RUNNING.
 */
static __always_inline unsigned int prev_state(unsigned long long *ctx, struct task_struct *t)
{
	if (has_prev_state_arg)
		return ctx[3];
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___pre514 *)t, state);
}

/* As the sched_switch trace event reports it: a preempted task is runnable, whatever its state. */
static __always_inline __u32 state_class(bool preempt, unsigned int state)
{
	if (preempt)
		return OFFCPU_STATE_OTHER;
	if (state & TASK_INTERRUPTIBLE)
		return OFFCPU_STATE_SLEEPING;
	/* TASK_IDLE: kernel threads waiting for work, not counted as load */
	if (state & TASK_UNINTERRUPTIBLE)
		return state & TASK_NOLOAD ? OFFCPU_STATE_SLEEPING : OFFCPU_STATE_DISK;
	return OFFCPU_STATE_OTHER;
}

static __always_inline void credit(__u32 slot, struct offcpu_key *key, __u64 ns, __u64 count)
{
	void *counts = slot ? (void *)&counts1 : (void *)&counts0;
	struct offcpu_val init = { .ns = ns, .count = count }, *val;
	int err;	/* a map op's result: 6.1 sets only the low 32 bits (-EEXIST) */

	val = bpf_map_lookup_elem(counts, key);
	if (!val) {
		err = bpf_map_update_elem(counts, key, &init, BPF_NOEXIST);
		if (!err)
			return;
		if (err != -EEXIST) {
			stat_inc(OFFCPU_STAT_COUNTS_FULL);
			return;
		}
		/* another CPU inserted the same key between our lookup and update */
		val = bpf_map_lookup_elem(counts, key);
		if (!val)
			return;
	}
	__sync_fetch_and_add(&val->ns, ns);
	if (count)
		__sync_fetch_and_add(&val->count, count);
}

static __always_inline void make_key(struct offcpu_key *key, const struct offcpu_start *e)
{
	key->pid = e->pid;
	key->tid = per_thread ? e->tid : 0;
	key->state = e->state;
	key->kern_stack_id = e->kern_stack_id;
	key->user_stack_id = e->user_stack_id;
	key->stack_epoch = e->stack_epoch;
	key->user_hash = e->user_hash;
	key->kern_hash = e->kern_hash;
	key->start = e->start;
	key->exec = e->exec;
	key->labels_hash = e->labels_hash;
	__builtin_memcpy(key->comm, e->comm, sizeof(key->comm));
}

/*
 * The block's key in claims; 0 when this run took the race over e at this
 * boundary, -EEXIST when the other side did, or the map's error.
 */
static __always_inline int claim_token(const struct offcpu_start *e, __u32 tid)
{
	struct claim_key k = { .ts = e->ts, .tid = tid };
	__u8 one = 1;
	int err = bpf_map_update_elem(&claims, &k, &one, BPF_NOEXIST);

	if (err && err != -EEXIST)
		stat_inc(OFFCPU_STAT_CLAIMS_FULL);
	return err;
}

/*
 * Moves e's claimed to TO and returns where it was, for exactly one of a
 * wake and the harvest at boundary when both reach the block. XCHG: one
 * BPF atomic exchange (5.12+). Without it, a token in claims (see there):
 * the harvest moves claimed only when it took the token, else it returns
 * the boundary (nothing left for it); a wake that lost the token starts at
 * the boundary the harvest credited up to. A full claims map keeps the
 * rule: a key present wins over a full map, and a map full for one side
 * stays full for the other until emptied.
 */
static __always_inline __u64 take_claim(struct offcpu_start *e, __u32 tid, __u64 boundary,
					__u64 to, bool harvest, bool xchg)
{
	__u64 prev;
	int err = 0;

	if (xchg)
		return __sync_lock_test_and_set(&e->claimed, to);
	/* a wake after the harvest's pass races with nobody */
	if (harvest || *(volatile __u64 *)&iter_done != boundary)
		err = claim_token(e, tid);
	if (err == -EEXIST || (harvest && err))
		return boundary;
	prev = e->claimed;
	e->claimed = to;
	return prev;
}

/*
 * Credits what is left of block e, which ended at end: [max(claimed, ts),
 * end), split at the boundary of g. claim is what claimed becomes: end for
 * a wake, CLAIMED_ALL for a stale entry that is about to be replaced.
 */
static __always_inline void settle(struct offcpu_start *e, __u32 tid, __u64 g, __u64 end,
				   __u64 claim, bool xchg)
{
	__u64 boundary = g >> 1, prev, from;
	__u32 slot = g & 1, old;
	struct offcpu_key key = {};

	prev = take_claim(e, tid, boundary, claim, false, xchg);
	/* the iterator credits nothing of a block shorter than min_ns at its boundary */
	if (prev <= e->ts && end >= e->ts && end - e->ts < min_ns) {
		stat_inc(OFFCPU_STAT_SHORT);
		return;
	}
	from = max_u64(prev, e->ts);
	if (end <= from)
		return;
	make_key(&key, e);
	if (from < boundary) {
		old = slot ^ 1;
		/* read after the claim: the iterator passed over this entry without claiming */
		if (iter_done == boundary) {
			old = slot;
			stat_inc(OFFCPU_STAT_LATE);
		}
		credit(old, &key, min_u64(end, boundary) - from, end <= boundary);
		if (end > boundary)
			credit(slot, &key, end - boundary, 1);
	} else {
		credit(slot, &key, end - from, 1);
	}
}

/* Switch-in: the block of next ends now. */
static __always_inline void end_block(struct task_struct *next, __u64 g, __u64 now, bool xchg)
{
	__u32 tid = BPF_CORE_READ(next, pid), pid;
	struct offcpu_start *e;

	if (tid == 0)
		return;
	e = bpf_map_lookup_elem(&start, &tid);
	if (!e) {
		/* a new task's first run, the first switch-in since attach, or an LRU eviction */
		pid = BPF_CORE_READ(next, tgid);
		if ((!filter_pid || bpf_map_lookup_elem(&pids, &pid)) &&
		    (include_kthreads || !(BPF_CORE_READ(next, flags) & PF_KTHREAD)))
			stat_inc(OFFCPU_STAT_NO_START);
		return;
	}
	stat_inc(OFFCPU_STAT_WAKES);
	settle(e, tid, g, now, now, xchg);
	bpf_map_delete_elem(&start, &tid);
}

/* A kernel or frame-pointer user stack into the scratch; stored by store_stacks. */
static __always_inline __s32 get_stack(void *ctx, __u64 flags, __u64 *hash, __u32 stat_error)
{
	int err = stack_take(ctx, flags, hash);

	if (err && err != -EFAULT)
		stat_inc(stat_error);
	return err ? err : STACK_ID_HASHED;
}

/*
 * The user stack of prev, which is current: walked with CFI where its
 * process's tables are loaded, the same walk as a CPU sample's, else by frame
 * pointers (counted: a process's first blocks, before userspace read it).
 * A blocked thread's stack does not change until it runs again, so the walk
 * at switch-out is the stack the whole block waits in. Returns the walk,
 * which store_stacks stores, or NULL. Frame pointers need no registers
 * from us: bpf_get_stack finds the task's user registers itself.
 */
static __always_inline struct unwind_scratch *user_stack(void *ctx, const struct proc_image *img,
							 struct offcpu_start *e, bool walk)
{
	struct unwind_scratch *sc = NULL;

	if (walk && unwind_mode == UNWIND_MODE_CFI) {
		note_sighting(img);
		sc = unwind_user(img);
	}
	if (!sc) {
		if (unwind_mode == UNWIND_MODE_CFI)
			stat_inc(OFFCPU_STAT_UNWIND_FP_FALLBACK);
		e->user_stack_id = get_stack(ctx, BPF_F_USER_STACK, &e->user_hash,
					     OFFCPU_STAT_USTACK_ERROR);
		return NULL;
	}
	stat_inc(OFFCPU_STAT_UNWIND_CFI);
	if (sc->stack.flags & USTACK_TRUNCATED)
		stat_inc(OFFCPU_STAT_UNWIND_TRUNCATED);
	e->user_stack_id = STACK_ID_UNWOUND;
	e->user_hash = sc->hash;
	return sc;
}

/* A store's failure: the stack is lost, counted, and the id says why. */
static __always_inline void stack_lost(int err, bool user, __s32 *id, __u64 *hash)
{
	if (err == -E2BIG)
		stat_inc(user ? OFFCPU_STAT_USTACK_MAP_FULL : OFFCPU_STAT_KSTACK_MAP_FULL);
	else
		stat_inc(user ? OFFCPU_STAT_USTACK_ERROR : OFFCPU_STAT_KSTACK_ERROR);
	*id = err;
	*hash = 0;
}

/*
 * Stores e's stacks unless its key is counted in the active slot already:
 * a key is counted only after its block's switch-out stored (or found
 * counted) the same stacks, in the same stack epoch, which is part of the
 * key, and the maps are emptied only with a new epoch. So the common
 * switch-out costs one lookup instead of a store per stack.
 */
static __always_inline void store_stacks(__u32 slot, struct offcpu_start *e, struct offcpu_key *key,
					 struct unwind_scratch *sc, const struct label_set *set)
{
	void *counts = slot ? (void *)&counts1 : (void *)&counts0;
	int err;

	make_key(key, e);
	if (bpf_map_lookup_elem(counts, key))
		return;
	if (e->kern_stack_id == STACK_ID_HASHED) {
		err = stack_store(&stacks, false, e->kern_hash);
		if (err)
			stack_lost(err, false, &e->kern_stack_id, &e->kern_hash);
	}
	if (e->user_stack_id == STACK_ID_HASHED) {
		err = stack_store(&stacks, true, e->user_hash);
		if (err)
			stack_lost(err, true, &e->user_stack_id, &e->user_hash);
	}
	if (sc) {
		err = bpf_map_update_elem(&ustacks, &sc->hash, &sc->stack, BPF_NOEXIST);
		if (err && err != -EEXIST)
			stack_lost(err, true, &e->user_stack_id, &e->user_hash);
	}
	if (set && e->labels_hash)
		bpf_map_update_elem(&offcpu_labels, &e->labels_hash, set, BPF_NOEXIST);
}

/*
 * The labels prev blocks under (it is current): as a CPU sample's, where
 * the walk runs (the reader is a global function, as the walk's are).
 */
static __always_inline __u64 block_labels(const struct proc_image *img, struct label_set **set,
					   bool walk)
{
	const struct unwind_pid_bits *rt;
	__u32 zero = 0;

	if (!walk || unwind_mode != UNWIND_MODE_CFI)
		return 0;
	rt = bpf_map_lookup_elem(&runtime_pids, &zero);
	return rt ? labels_of(img, unwind_pid_bits__of(rt, img->pid), set) : 0;
}

/*
 * An entry still there when its thread switches out again: the switch-in in
 * between never reached the tracepoint (it happens, rarely, on 6.18). The
 * thread came back at the latest as long before now as the CPU time it has
 * used since: the block is credited up to then, and claimed whole so that
 * a harvest holding the entry now credits nothing more.
 */
static __always_inline void drop_stale(struct task_struct *task, __u32 tid, __u64 g, __u64 now,
				       bool xchg)
{
	struct offcpu_start *old = bpf_map_lookup_elem(&start, &tid);
	__u64 ran;

	if (!old)
		return;
	stat_inc(OFFCPU_STAT_MISSED_SWITCH_IN);
	ran = BPF_CORE_READ(task, se.sum_exec_runtime) - old->runtime;
	if (ran < now - old->ts)
		settle(old, tid, g, now - ran, CLAIMED_ALL, xchg);
	else
		take_claim(old, tid, g >> 1, CLAIMED_ALL, false, xchg);
}

/*
 * drop_stale and end_block as calls of their own, one per way of claiming
 * (a constant each, so a kernel without the exchange never sees its
 * instruction): out of the switch program's frame, which the steps walk's
 * calls stack on (5.10 holds a program and its calls to 512 bytes in all).
 */
static __noinline void drop_stale_xchg(struct task_struct *task, __u32 tid, __u64 g, __u64 now)
{
	drop_stale(task, tid, g, now, true);
}

static __noinline void drop_stale_token(struct task_struct *task, __u32 tid, __u64 g, __u64 now)
{
	drop_stale(task, tid, g, now, false);
}

static __always_inline void drop_stale_by(struct task_struct *task, __u32 tid, __u64 g, __u64 now,
					  bool xchg)
{
	if (xchg)
		drop_stale_xchg(task, tid, g, now);
	else
		drop_stale_token(task, tid, g, now);
}

static __noinline void end_block_xchg(struct task_struct *next, __u64 g, __u64 now)
{
	end_block(next, g, now, true);
}

static __noinline void end_block_token(struct task_struct *next, __u64 g, __u64 now)
{
	end_block(next, g, now, false);
}

/*
 * The switch-out's record and key are built here, not on the BPF stack: beside the
 * walk's frames (a runtime's reader is called from it) the 512 bytes a
 * program may use in all ran out on kernels without private stacks (6.1,
 * 6.12). Switches on one CPU never nest, so one of each a CPU is enough.
 */
struct block_scratch {
	struct offcpu_start e;
	struct offcpu_key key;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct block_scratch);
} block_scratch SEC(".maps");

/* Switch-out: prev is still current here, so the stack helpers see its stacks (WALK: on_switch's). */
static __always_inline void begin_block(unsigned long long *ctx, bool preempt,
					struct task_struct *prev, __u64 g, __u64 now, bool walk,
					bool xchg)
{
	/* the start map is keyed by the host's tid, which switch-in reads from next */
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), pid, seen_tid;
	struct block_scratch *bs;
	struct offcpu_start *e;
	struct unwind_scratch *sc = NULL;
	struct label_set *set = NULL;
	struct task_struct *leader;
	struct proc_image img;
	unsigned int state;
	bool kthread;
	__u32 zero = 0;
	int err;

	/* tid 0 is a CPU's idle task: its "off CPU" time is the CPU's busy time */
	if (tid == 0)
		return;
	kthread = BPF_CORE_READ(prev, flags) & PF_KTHREAD;
	if (kthread && !include_kthreads)
		return;
	if (!current_ids(&pid, &seen_tid) || !task_wanted(pid))	/* prev is current here */
		return;
	state = prev_state(ctx, prev);
	/* an exiting task is never switched in again */
	if (state & TASK_DEAD) {
		drop_stale_by(prev, tid, g, now, xchg);
		bpf_map_delete_elem(&start, &tid);
		return;
	}

	bs = bpf_map_lookup_elem(&block_scratch, &zero);
	if (!bs)
		return;
	e = &bs->e;
	__builtin_memset(bs, 0, sizeof(*bs));
	e->ts = now;
	e->claimed = now;
	e->runtime = BPF_CORE_READ(prev, se.sum_exec_runtime);
	/* prev is current: its image straight from it, the leader read once for start and comm */
	leader = BPF_CORE_READ(prev, group_leader);
	img.pid = pid;
	img.exec = BPF_CORE_READ(prev, self_exec_id);
	img.start = BPF_CORE_READ(leader, start_boottime) / PROC_TICK_NS;
	e->pid = pid;
	e->start = img.start;
	e->exec = img.exec;
	e->tid = seen_tid;
	e->state = state_class(preempt, state);
	e->stack_epoch = stack_epoch;	/* before the captures: see offcpu__clear */
	e->kern_stack_id = STACK_ID_SKIPPED;
	if (collect_kernel)
		e->kern_stack_id = get_stack(ctx, OWN_FRAMES & BPF_F_SKIP_FIELD_MASK, &e->kern_hash,
					    OFFCPU_STAT_KSTACK_ERROR);
	e->user_stack_id = STACK_ID_SKIPPED;
	if (collect_user && !kthread)
		sc = user_stack(ctx, &img, e, walk);
	/* the process's name, not the thread's: labels and folded lines group by process */
	bpf_core_read_str(e->comm, sizeof(e->comm), &leader->comm);
	if (!kthread)
		e->labels_hash = block_labels(&img, &set, walk);
	store_stacks(g & 1, e, &bs->key, sc, set);
	err = bpf_map_update_elem(&start, &tid, e, BPF_NOEXIST);
	if (err == -EEXIST) {
		drop_stale_by(prev, tid, g, now, xchg);
		err = bpf_map_update_elem(&start, &tid, e, BPF_ANY);
	}
	stat_inc(err ? OFFCPU_STAT_START_FAILED : OFFCPU_STAT_BLOCKS);
}

/*
 * WALK and XCHG, constants: the CFI walk and the labels reader, and BPF
 * atomic exchange, compiled in. The loop build's walk (bpf_loop) and the
 * exchange are 5.17's and 5.12's; 5.10's verifier refuses the loop's
 * callback and global functions taking pointers even unreached. So each
 * object has programs with and without the exchange (blocks then claimed
 * by token, take_claim), and the steps build (walk.bpf.h) walks in both,
 * which is how kernels from 5.10 get CFI user stacks off CPU too.
 */
static __always_inline int on_switch(unsigned long long *ctx, bool preempt,
				     struct task_struct *prev, struct task_struct *next, bool walk,
				     bool xchg)
{
	/* gen before the clock: a run that sees a new boundary reads a time at or after it */
	__u64 g = *(volatile __u64 *)&gen;
	__u64 now = bpf_ktime_get_ns();

	stat_inc(OFFCPU_STAT_SWITCHES);
	if (xchg)
		end_block_xchg(next, g, now);
	else
		end_block_token(next, g, now);
	begin_block(ctx, preempt, prev, g, now, walk, xchg);
	return 0;
}

#ifdef EBPFPROF_STEPS_WALK
#define WALK_WITHOUT_XCHG true		/* the steps walk loads on any kernel from 5.10 */
#else
#define WALK_WITHOUT_XCHG false		/* bpf_loop comes after the exchange */
#endif

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, preempt, prev, next, true, true);
}

/* Kernels without tp_btf: userspace autoloads this one instead. */
SEC("raw_tp/sched_switch")
int BPF_PROG(offcpu_switch_raw, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, preempt, prev, next, true, true);
}

/* The two again for kernels without the exchange (before 5.12): userspace picks one of the four. */
SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch_fp, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, preempt, prev, next, WALK_WITHOUT_XCHG, false);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(offcpu_switch_fp_raw, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, preempt, prev, next, WALK_WITHOUT_XCHG, false);
}

/*
 * False when the thread exited (its entry goes) or is on a CPU now: then its
 * switch-in was never seen, and crediting up to the boundary would count time
 * it ran. A thread off CPU at this check was off CPU at the boundary, which
 * is earlier, unless it switched out again since: then its entry was
 * replaced and the old one claimed whole (drop_stale).
 */
static __always_inline bool still_off_cpu(__u32 tid)
{
	struct task_struct *task;
	int on_cpu;

	if (!bpf_ksym_exists(bpf_task_from_pid) ||
	    !bpf_core_field_exists(struct task_struct, on_cpu))
		return true;
	task = bpf_task_from_pid(tid);
	if (!task) {
		bpf_map_delete_elem(&start, &tid);
		stat_inc(OFFCPU_STAT_ITER_STALE);
		return false;
	}
	on_cpu = BPF_CORE_READ(task, on_cpu);
	bpf_task_release(task);
	if (on_cpu)
		stat_inc(OFFCPU_STAT_ITER_STALE);
	return !on_cpu;
}

/*
 * Harvest: run over the start map after the boundary was published and every
 * switch program that could have missed it has finished. Credits each block
 * still off CPU up to the boundary, to the slot being harvested. alive: the
 * thread is checked to be off CPU still (needs bpf_task_from_pid, an
 * iterator's kfunc).
 */
static __always_inline void harvest_entry(__u32 tid, struct offcpu_start *e, bool alive, bool xchg)
{
	__u64 boundary = *(volatile __u64 *)&gen >> 1, prev, from;
	struct offcpu_key key = {};

	/* too short so far: left whole to the wake (or to a later boundary) */
	if (e->ts >= boundary || boundary - e->ts < min_ns)
		return;
	if (alive && !still_off_cpu(tid))
		return;
	prev = take_claim(e, tid, boundary, boundary, true, xchg);
	from = max_u64(prev, e->ts);
	if (from >= boundary)
		return;
	stat_inc(OFFCPU_STAT_ITER_SPLITS);
	make_key(&key, e);
	credit(harvest_slot, &key, boundary - from, 0);
}

SEC("iter/bpf_map_elem")
int offcpu_harvest(struct bpf_iter__bpf_map_elem *ctx)
{
	struct offcpu_start *e = ctx->value;
	__u32 *tid = ctx->key;

	if (tid && e)
		harvest_entry(*tid, e, true, true);
	return 0;
}

/* The same, claiming by token: for the switch programs without exchange (offcpu_switch_fp*). */
SEC("iter/bpf_map_elem")
int offcpu_harvest_fp(struct bpf_iter__bpf_map_elem *ctx)
{
	struct offcpu_start *e = ctx->value;
	__u32 *tid = ctx->key;

	if (tid && e)
		harvest_entry(*tid, e, true, false);
	return 0;
}

static long harvest_cb(struct bpf_map *map, __u32 *tid, struct offcpu_start *e, void *ctx)
{
	harvest_entry(*tid, e, false, true);
	return 0;
}

/*
 * Where BPF iterators are not permitted (an LSM may refuse them), userspace
 * runs this once per harvest instead (BPF_PROG_TEST_RUN): the same walk over
 * the start map, without the liveness check (5.13+, with the exchange:
 * kernels that need offcpu_harvest_fp have no such fallback).
 */
SEC("raw_tp")
int offcpu_harvest_run(void *ctx)
{
	bpf_for_each_map_elem(&start, harvest_cb, NULL, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
