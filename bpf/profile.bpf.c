// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* profile.bpf.c -- perf_event sampler: counts (process, kernel stack, user stack) in the kernel */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "profile.h"
#include "filter.bpf.h"
#include "unwind.bpf.h"
#include "events.bpf.h"
#include "stacks.bpf.h"
#include "labels.bpf.h"

#define PF_KTHREAD 0x00200000	/* include/linux/sched.h; macros are not in BTF */

/* Set by userspace between open and load. */
const volatile bool include_idle = false;
const volatile bool collect_kernel = true;
const volatile bool collect_user = true;
const volatile bool per_thread = false;
const volatile __u32 unwind_mode = UNWIND_MODE_FP;

/*
 * Two slots of (stack maps, counts map). Samples go to the slot active_slot
 * names; userspace flips it, waits for programs already running to finish
 * (see sync_outer), then reads and clears the other slot at leisure. So a
 * window boundary neither loses nor double counts a sample. max_entries are
 * set by userspace before load (slot 1 shrinks to 1 entry in one-shot mode).
 * stacksN hold kernel stacks and frame-pointer user stacks (stacks.bpf.h).
 */
#define COUNTS_MAP(name)                                                        \
	struct {                                                                \
		__uint(type, BPF_MAP_TYPE_HASH);                                \
		__type(key, struct sample_key);                                 \
		__type(value, __u64);                                           \
		__uint(max_entries, 10240);                                     \
	} name SEC(".maps")

/* stacks the CFI unwinder walked, by hash; allocated as used, they are large */
#define USTACK_MAP(name)                                                        \
	struct {                                                                \
		__uint(type, BPF_MAP_TYPE_HASH);                                \
		__type(key, __u64);                                             \
		__type(value, struct user_stack);                               \
		__uint(max_entries, 16384);                                     \
		__uint(map_flags, BPF_F_NO_PREALLOC);                           \
	} name SEC(".maps")

STACKS_MAP(stacks0);
STACKS_MAP(stacks1);
COUNTS_MAP(counts0);
COUNTS_MAP(counts1);
USTACK_MAP(ustacks0);
USTACK_MAP(ustacks1);
LABELS_MAP(labels0);
LABELS_MAP(labels1);

__u32 active_slot = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, STAT_MAX);
} stats SEC(".maps");

/* when a process was last asked to be re-read (TASK_EVENT_REMAP), and in which image */
struct remap_ask {
	__u64 start;		/* struct proc_image's: another image since makes the ask stale */
	__u64 exec;
	__u64 ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, struct remap_ask);
	__uint(max_entries, 4096);
} remapped SEC(".maps");

#define REMAP_INTERVAL_NS 1000000000ULL

static __always_inline void stat_inc(__u32 id)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &id);

	if (v)
		(*v)++;	/* per-CPU slot: no atomic needed */
}

/*
 * Takes a kernel or frame-pointer user stack into the scratch (stacks.bpf.h);
 * its store waits for count_sample. An empty stack (-EFAULT: a sample taken
 * in user mode has no kernel stack) is not a loss; any other error is.
 */
static __always_inline __s32 get_stack(void *ctx, __u64 flags, __u64 *hash, __u32 stat_error)
{
	int err = stack_take(ctx, flags, hash);

	if (err && err != -EFAULT)
		stat_inc(stat_error);
	return err ? err : STACK_ID_HASHED;
}

/* Stores a taken stack in the slot's map; a full map loses it, counted, the id says why. */
static __always_inline void store_stack(__u32 slot, bool user, __s32 *id, __u64 *hash)
{
	void *stacks = slot ? (void *)&stacks1 : (void *)&stacks0;
	int err = stack_store(stacks, user, *hash);

	if (!err)
		return;
	if (err == -E2BIG)
		stat_inc(user ? STAT_USTACK_MAP_FULL : STAT_KSTACK_MAP_FULL);
	else
		stat_inc(user ? STAT_USTACK_ERROR : STAT_KSTACK_ERROR);
	*id = err;
	*hash = 0;
}

/*
 * Stores the walked stack where userspace reads it, by hash; a full map loses
 * it, counted, and the sample is counted under -E2BIG (another failure: its -errno).
 */
static __always_inline void store_user_stack(__u32 slot, struct unwind_scratch *sc,
					     struct sample_key *key)
{
	void *ustacks = slot ? (void *)&ustacks1 : (void *)&ustacks0;
	int err = bpf_map_update_elem(ustacks, &sc->hash, &sc->stack, BPF_NOEXIST);

	if (err && err != -EEXIST) {
		stat_inc(err == -E2BIG ? STAT_USTACK_MAP_FULL : STAT_USTACK_ERROR);
		key->user_stack_id = err;
		key->user_hash = 0;
	}
}

/*
 * Counts the sample. A key already counted in this slot had its stacks
 * stored when it was first counted (the maps are emptied together), so only
 * a new key stores them: a hash update less at most samples (1.5-2 us here
 * for a walked stack).
 */
/* Stores the sample's label set where userspace reads it, by hash; a full map loses it, counted. */
static __always_inline void store_labels(__u32 slot, struct sample_key *key,
					 const struct label_set *set)
{
	void *labels = slot ? (void *)&labels1 : (void *)&labels0;
	int err = bpf_map_update_elem(labels, &key->labels_hash, set, BPF_NOEXIST);

	if (err && err != -EEXIST) {
		stat_inc(STAT_LABELS_LOST);
		key->labels_hash = 0;
	}
}

static __always_inline void count_sample(__u32 slot, struct sample_key *key,
					 struct unwind_scratch *sc, const struct label_set *set)
{
	void *counts = slot ? (void *)&counts1 : (void *)&counts0;
	__u64 one = 1, *val;
	int err;	/* a map op's result: 6.1 sets only the low 32 bits (-EEXIST) */

	val = bpf_map_lookup_elem(counts, key);
	if (val) {
		__sync_fetch_and_add(val, 1);
		return;
	}
	if (key->kern_stack_id == STACK_ID_HASHED)
		store_stack(slot, false, &key->kern_stack_id, &key->kern_hash);
	if (key->user_stack_id == STACK_ID_HASHED)
		store_stack(slot, true, &key->user_stack_id, &key->user_hash);
	if (sc)
		store_user_stack(slot, sc, key);
	if (set && key->labels_hash)
		store_labels(slot, key, set);
	err = bpf_map_update_elem(counts, key, &one, BPF_NOEXIST);
	if (err == -EEXIST) {
		/* another CPU inserted the same key between our lookup and update */
		val = bpf_map_lookup_elem(counts, key);
		if (val)
			__sync_fetch_and_add(val, 1);
	} else if (err) {
		stat_inc(STAT_COUNTS_FULL);
	}
}

/* Asks userspace, at most once a second per process image, to read its maps again. */
static __always_inline void request_remap(const struct proc_image *img)
{
	struct remap_ask ask = { .start = img->start, .exec = img->exec, .ns = bpf_ktime_get_ns() };
	struct remap_ask *last = bpf_map_lookup_elem(&remapped, &img->pid);

	if (last && last->exec == ask.exec && last->start == ask.start &&
	    ask.ns - last->ns < REMAP_INTERVAL_NS)
		return;
	bpf_map_update_elem(&remapped, &img->pid, &ask, BPF_ANY);
	announce(img, TASK_EVENT_REMAP);
}

/*
 * The user stack by CFI where the process's tables are loaded, else by frame
 * pointers (counted: the first samples of a process, before userspace read it).
 * Returns the walk, which count_sample stores, or NULL for frame pointers.
 */
static __always_inline struct unwind_scratch *get_user_stack(void *ctx,
							     const struct proc_image *img,
							     struct sample_key *key, bool walk)
{
	struct unwind_scratch *sc = NULL;

	if (walk && unwind_mode == UNWIND_MODE_CFI)
		sc = unwind_user(img);
	if (!sc) {
		if (walk && unwind_mode == UNWIND_MODE_CFI)
			stat_inc(STAT_UNWIND_FP_FALLBACK);
		key->user_stack_id = get_stack(ctx, BPF_F_USER_STACK, &key->user_hash,
					       STAT_USTACK_ERROR);
		return NULL;
	}
	stat_inc(STAT_UNWIND_CFI);
	if (sc->stack.flags & USTACK_TRUNCATED)
		stat_inc(STAT_UNWIND_TRUNCATED);
	if (sc->unknown_pc)
		request_remap(img);
	key->user_stack_id = STACK_ID_UNWOUND;
	key->user_hash = sc->hash;
	return sc;
}

/* a raw tracepoint needs no tracefs mount, unlike tp/sched/... */
SEC("raw_tp/sched_process_exec")
int on_exec(void *ctx)
{
	const struct unwind_pid_bits *has;
	__u32 pid, tid, zero = 0;
	struct proc_image img;

	if (!current_ids(&pid, &tid) || !task_wanted(pid))
		return 0;
	current_image(&img, pid);
	/*
	 * The old image's tables go: its samples until userspace reads the new
	 * one are walked by frame pointers, and announced (note_sighting, by
	 * image: the seen and remapped maps need no write here). Most
	 * execs are of processes that never had tables (a shell's children):
	 * their bit spares the hash map's delete.
	 */
	has = bpf_map_lookup_elem(&runtime_pids, &zero);
	if (has && unwind_pid_bits__has(has, pid, UNWIND_RT_NATIVE) &&
	    !bpf_map_delete_elem(&unwind_procs, &pid))
		stat_inc(STAT_EXEC_TABLES_DROPPED);
	announce(&img, TASK_EVENT_EXEC);
	return 0;
}

/*
 * Whether the sample interrupted user code. There the kernel's stack walk
 * finds nothing, and bpf_get_stack says so (-EFAULT) after fetching a
 * callchain buffer: cold memory at every other sample at 19 Hz, about 1 us.
 * The same test as the kernel's user_mode(regs).
 */
static __always_inline bool sampled_in_user_mode(struct bpf_perf_event_data *ctx)
{
	/* by offset in the UAPI registers (arch_*.bpf.h says why not CO-RE) */
	return ARCH_CTX_USER(*(volatile unsigned long *)((void *)ctx + ARCH_CTX_MODE_OFF));
}

/*
 * Fills key->comm with the process's name (the group leader's, not the
 * thread's: labels and folded lines group by process) and *img with its
 * image (struct proc_image); true for a kernel thread. Where the loop walk
 * is compiled in (5.17+) the task is a BTF pointer, read by plain loads;
 * elsewhere each field is a probe-read helper call.
 */
static __always_inline bool read_task(struct sample_key *key, struct proc_image *img, bool walk)
{
	struct task_struct *task, *leader;

	if (walk && WALK_TASK_BTF) {
		task = bpf_get_current_task_btf();
		leader = task->group_leader;
		/* comm is NUL-padded (__set_task_comm): the whole array is the name */
		__builtin_memcpy(key->comm, leader->comm, sizeof(key->comm));
		img->exec = task->self_exec_id;
		img->start = leader->start_boottime / PROC_TICK_NS;
		return task->flags & PF_KTHREAD;
	}
	task = (struct task_struct *)bpf_get_current_task();
	leader = BPF_CORE_READ(task, group_leader);
	bpf_core_read_str(key->comm, sizeof(key->comm), &leader->comm);
	img->exec = BPF_CORE_READ(task, self_exec_id);
	img->start = BPF_CORE_READ(leader, start_boottime) / PROC_TICK_NS;
	return BPF_CORE_READ(task, flags) & PF_KTHREAD;
}

/*
 * The labels the thread runs under (Go pprof labels, custom labels,
 * OpenTelemetry thread context) into
 * key->labels_hash; *set is left holding them for count_sample. Only where
 * the walk is compiled in, as its tables are.
 */
static __always_inline void read_labels(const struct proc_image *img, struct sample_key *key,
					struct label_set **set)
{
	const struct unwind_pid_bits *rt;
	__u32 zero = 0;

	rt = bpf_map_lookup_elem(&runtime_pids, &zero);
	if (!rt)
		return;
	key->labels_hash = labels_of(img, unwind_pid_bits__of(rt, img->pid), set);
	/* a record of unnamed keys only has no labels, and is counted all the same */
	if (*set && ((*set)->flags & LABEL_SET_UNKNOWN_KEY))
		stat_inc(STAT_LABELS_UNKNOWN_KEY);
	if (!key->labels_hash)
		return;
	stat_inc(STAT_LABELS_READ);
	if ((*set)->flags & LABEL_SET_TRUNCATED)
		stat_inc(STAT_LABELS_TRUNCATED);
}

/* WALK: the CFI walk is compiled in; a constant, so do_sample_fp has no trace of it */
static __always_inline int sample(struct bpf_perf_event_data *ctx, bool walk)
{
	__u32 host_tid = (__u32)bpf_get_current_pid_tgid(), pid, tid;
	struct sample_key key = {};
	struct unwind_scratch *sc = NULL;
	struct label_set *set = NULL;
	__u32 slot = active_slot & 1;
	struct proc_image img;
	bool kthread;

	/* tid 0 is a CPU's idle task (swapper/N) */
	if (host_tid == 0 && !include_idle)
		return 0;
	if (!current_ids(&pid, &tid) || !task_wanted(pid))
		return 0;
	stat_inc(STAT_SAMPLES);

	key.pid = img.pid = pid;
	key.tid = per_thread ? tid : 0;
	kthread = read_task(&key, &img, walk);
	key.start = img.start;
	key.exec = img.exec;

	key.kern_stack_id = STACK_ID_SKIPPED;
	if (collect_kernel && sampled_in_user_mode(ctx))
		key.kern_stack_id = -EFAULT;	/* what the helper finds there: no kernel stack */
	else if (collect_kernel)
		key.kern_stack_id = get_stack(ctx, 0, &key.kern_hash, STAT_KSTACK_ERROR);
	key.user_stack_id = STACK_ID_SKIPPED;
	if (collect_user && !kthread)
		sc = get_user_stack(ctx, &img, &key, walk);
	if (walk && !kthread)
		read_labels(&img, &key, &set);
	/*
	 * A process whose tables came with its announcement was handed on: the
	 * seen map's lookup (a cold bucket and element, 1-2 us here) is spared.
	 * The rest are announced as they are sampled.
	 */
	if (!sc || !sc->announced)
		note_sighting(&img);
	count_sample(slot, &key, sc, set);
	return 0;
}

SEC("perf_event")
int do_sample(struct bpf_perf_event_data *ctx)
{
	return sample(ctx, true);
}

/*
 * User stacks by frame pointers only: no trace of the walk, the labels'
 * reader or its tables in the program the kernel checks and runs.
 * Userspace loads this one for --unwind fp.
 */
SEC("perf_event")
int do_sample_fp(struct bpf_perf_event_data *ctx)
{
	return sample(ctx, false);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
