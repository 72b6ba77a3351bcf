/* walk.bpf.h -- a user stack walk's state, shared by the native unwinder and every runtime's frame reader */
#ifndef EBPFPROF_WALK_BPF_H
#define EBPFPROF_WALK_BPF_H

#include "profile.h"
#include "unwind.h"
#include "frametypes.h"
#include "arch.bpf.h"

#define USER_ADDR_END ARCH_USER_ADDR_END
#define UNWIND_SNAP_WORDS 32		/* 256 bytes of stack copied at a sample (512 cost more than they saved) */

/*
 * Two builds of each program that walks user stacks, one object each (the
 * Makefile's profile.bpf.o and profile.steps.bpf.o), picked at load time:
 * - the loop build (5.17+): one bpf_loop over the frames, the task's
 *   registers and fields by BTF pointer;
 * - the steps build (EBPFPROF_STEPS_WALK, any kernel from 5.10): a bounded
 *   loop over a global function that walks a few frames (unwind.bpf.h), the
 *   task's fields by probe reads.
 * WALK_FN marks a frame reader verified once on its own: a global function.
 * Before 5.12 one takes scalars only, so in the steps build the reader is
 * inlined into a global function of scalars, F_steps, which finds the
 * scratch, its state and its process's table itself; WALK_CALL calls the
 * one its build has.
 */
#ifdef EBPFPROF_STEPS_WALK
#define WALK_FN static __always_inline
#define WALK_CALL(f, steps_args, args) f##_steps steps_args
#define WALK_TASK_BTF 0		/* bpf_get_current_task_btf is 5.11's */
#else
#define WALK_FN __noinline
#define WALK_CALL(f, steps_args, args) f args
#define WALK_TASK_BTF 1
#endif

/* Walk state kept across native frames: the next Python frame to hand out. */
struct py_walk {
	__u64 frame;
	__u32 started;		/* frame was read from the thread state */
	__u32 pad;
};

/* Walk state kept across native frames: the next PHP frame to hand out. */
struct php_walk {
	__u64 frame;
	__u32 started;		/* 1: read from executor_globals, or PHP_WALK_DONE */
	__u32 pad;
};

/* Walk state kept across native frames: the next null frame to hand out. */
struct null_walk {
	__u64 frame;
	__u32 started;		/* frame was read from the state */
	__u32 pad;
};

/* a row the unwinder found, as kept in its cache (unwind.bpf.h) */
struct row_cache_entry {
	__u64 key;		/* pc << 1 | 1 if looked up at pc - 1 (a call) */
	__u32 gen;		/* struct unwind_proc.gen */
	__u32 check;
	struct unwind_row row;
};

/* The walk's state: too big for the 512-byte BPF stack. */
struct unwind_scratch {
	__u64 pc;
	__u64 sp;
	__u64 bp;
	__u64 hash;
	__u32 unknown_pc;	/* a PC outside every known mapping: the maps changed */
	__u32 exact_pc;		/* pc is where a signal or an injected call struck, not a return address */
	__u32 announced;	/* struct unwind_proc.announced of the process walked */
	__u32 pad;
	struct proc_image img;	/* the process image walked: runtime events name it */
	/* interpreters' state in registers at the sample (ARCH_RUNTIME_REGS names them) */
	__u64 hs_bcp;		/* HotSpot's template interpreter's bcp */
	__u64 v8_offset;	/* V8's interpreter's bytecode offset */
	__u64 zend_ex;		/* the Zend hybrid VM's frame (execute_data) ... */
	__u64 zend_opline;	/* ... and its opline */
	__u64 lr;		/* arm64: the sampled x30, a leaf's return address until it saves it */
	__u64 insns;		/* arm64: the code at a pc without CFI, read to know the signal trampoline */
	struct user_stack stack;
	/*
	 * The stack from the sampled rsp up, copied once: a read of user
	 * memory is a helper call and its checks, about 0.15 us here, and a
	 * frame takes one or two; the innermost frames' words are in the copy.
	 */
	__u64 snap_base;	/* the user address of snap[0] */
	__u64 snap_words;	/* how many words of snap hold the stack */
	__u64 snap[UNWIND_SNAP_WORDS];
	struct unwind_row row;		/* the current frame's, from unwind_lookup_row */
	struct row_cache_entry cached;	/* a cache entry as read */
	/*
	 * Interpreter loops' [start, end) ranges of the process walked, [0, 0)
	 * where a runtime does not run (runtimes.bpf.h): here rather than a
	 * table pointer each on the walk's stack, which would split every
	 * verifier state in two per runtime (seven passed its million
	 * instructions), and would not fit beside the walk's frames.
	 */
	struct {
		__u64 php_exec[2], php_jit[2], php_call[2];
		__u64 perl_runops[4];
		__u64 null_eval[2];
	} rt;
#ifdef EBPFPROF_STEPS_WALK
	/* the steps build's walk state, on the walk's stack in the loop build (unwind.bpf.h) */
	__u32 gen;		/* struct unwind_proc.gen, read as the walk began */
	__u16 bits;		/* the process's runtimes (unwind_pid_bits__of) */
	__u16 pad2;
	struct py_walk py_walk;
	struct php_walk php_walk;
	struct null_walk null_walk;
#endif
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct unwind_scratch);
	__uint(max_entries, 1);
} unwind_scratch SEC(".maps");

/*
 * which pids may be in unwind_procs and each runtime's map (frametypes.h): most misses skip their
 * lookups. Mmapable: userspace sets a new process's bit in place (lib/bpf_util.c).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct unwind_pid_bits);
	__uint(max_entries, 1);
} runtime_pids SEC(".maps");

/* the walk's scratch, as a steps build's global function finds it */
static __always_inline struct unwind_scratch *walk_scratch(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&unwind_scratch, &zero);
}

#ifdef EBPFPROF_STEPS_WALK
/*
 * FN_steps(leaf): a runtime's step FN(sc, its table's entry, leaf) in the
 * steps build, a global function of scalars; the entry is TABLE's for the
 * walked pid (a key on the stack: 6.1 takes no other).
 */
#define WALK_STEP_STEPS(fn, table)						\
	__noinline long fn##_steps(__u32 leaf)					\
	{									\
		struct unwind_scratch *sc = walk_scratch();			\
		__u32 pid;							\
										\
		if (!sc)							\
			return 1;						\
		pid = sc->img.pid;						\
		return fn(sc, bpf_map_lookup_elem(&table, &pid), leaf);		\
	}
#endif

/*
 * Appends slot V to the walked stack and to its hash; a full stack keeps
 * what it has. The one way a frame gets onto a stack, native or a runtime's.
 */
static __always_inline void walk_push(struct unwind_scratch *sc, __u64 v)
{
	__u32 n = sc->stack.n;

	if (n >= UNWIND_MAX_DEPTH)
		return;
	barrier_var(n);	/* keeps the mask: 6.1's verifier cannot bound n from the check */
	sc->stack.ips[n & (UNWIND_MAX_DEPTH - 1)] = v;
	sc->stack.n = n + 1;
	sc->hash = (sc->hash ^ v) * 0x9e3779b97f4a7c15ULL;
	sc->hash ^= sc->hash >> 29;
}

/* A runtime's frame: its tag and what ran, then where in it. */
static __always_inline void walk_push_frame(struct unwind_scratch *sc, __u64 tag, __u64 what,
					    __u64 where)
{
	walk_push(sc, tag << FRAME_TAG_SHIFT | (what & FRAME_ADDR_MASK));
	walk_push(sc, where);
}

/* A runtime's mark, one slot: its tag and why (a lost reason). */
static __always_inline void walk_push_mark(struct unwind_scratch *sc, __u64 tag, __u64 why)
{
	walk_push(sc, tag << FRAME_TAG_SHIFT | why);
}

struct rt_seen_key {
	__u32 pid;
	__u32 kind;		/* as struct rt_event's */
	__u64 addr;
	/*
	 * An nmethod's compile id, a code object's tag (py_code_tag): HotSpot
	 * puts a new compilation where a freed one was, CPython new code made
	 * at run time where freed code was, and each must be announced (read
	 * while it lives) in its turn.
	 */
	__u32 gen;
	__u32 exec;		/* the image's (struct proc_image): a new one announces anew */
	__u64 start;
};

/* what every runtime's frames ran, already announced: each is read once, soon after it first ran */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct rt_seen_key);
	__type(value, __u8);
	__uint(max_entries, 65536);
} rt_seen SEC(".maps");

/* the one ring of runtime events (struct rt_event), for every runtime */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} rt_events SEC(".maps");

/* Asks userspace once per (process image, kind, object, generation) to read its names while they live. */
static __always_inline void rt_announce(const struct unwind_scratch *sc, __u32 kind, __u64 addr,
					__u32 gen)
{
	struct rt_seen_key k = { .pid = sc->img.pid, .kind = kind, .addr = addr, .gen = gen,
				 .exec = sc->img.exec, .start = sc->img.start };
	struct rt_event *e;
	__u8 one = 1;

	if (bpf_map_lookup_elem(&rt_seen, &k))
		return;
	if (bpf_map_update_elem(&rt_seen, &k, &one, BPF_NOEXIST))
		return;
	e = bpf_ringbuf_reserve(&rt_events, sizeof(*e), 0);
	if (!e) {
		/* a full ring: the next sample of it asks again (and harvest names it if it lives) */
		bpf_map_delete_elem(&rt_seen, &k);
		return;
	}
	e->pid = sc->img.pid;
	e->kind = kind;
	e->addr = addr;
	e->gen = gen;
	e->exec = sc->img.exec;
	e->start = sc->img.start;
	bpf_ringbuf_submit(e, 0);
}

/* the sampled thread's thread pointer (glibc's pthread_self): fs base, tpidr_el0 */
static __always_inline __u64 walk_fsbase(void)
{
	struct task_struct *task;

	if (!WALK_TASK_BTF) {
		task = (struct task_struct *)bpf_get_current_task();
		return BPF_CORE_READ(task, ARCH_THREAD_POINTER);
	}
	return bpf_get_current_task_btf()->ARCH_THREAD_POINTER;	/* a plain load: no helper call */
}

/*
 * pthread_self() minus the thread pointer in the walked processes' glibc:
 * userspace's own (lib/bpf_util.h), 0 on x86-64.
 */
const volatile __s64 pthread_self_off = 0;

/* the sampled thread's pthread_self(): CPython's name for it (PyThreadState.thread_id) */
static __always_inline __u64 walk_pthread_self(void)
{
	return walk_fsbase() + pthread_self_off;
}

/* one word of the walked process's memory */
static __always_inline int walk_read(__u64 *dst, __u64 addr)
{
	return bpf_probe_read_user(dst, sizeof(*dst), (const void *)addr);
}

#endif /* EBPFPROF_WALK_BPF_H */
