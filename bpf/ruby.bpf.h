/* ruby.bpf.h -- walks CRuby's control frames when the native walk reaches vm_exec (include/ruby.h) */
#ifndef EBPFPROF_RUBY_BPF_H
#define EBPFPROF_RUBY_BPF_H

#include "ruby.h"
#include "walk.bpf.h"

/* pid -> its interpreter's layout; a process not here has native frames only */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct rb_proc);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} rb_procs SEC(".maps");

/*
 * The walk's state, per CPU and off the BPF stack, whose 512 bytes the
 * walk's call chain shares (kernels before private stacks count them all:
 * 6.12 refused the off-CPU tracer with 24 bytes more on it): where
 * vm_exec is in the process walked ([0, 0) if not Ruby), the next control
 * frame to hand out and the VM stack's end (0: not read yet), and what a
 * control frame's reads land in. Each program has its own.
 */
/* rb_frames' mode: a vm_exec frame, or a YJIT one to step over; then whether the step ended the walk */
enum rb_jit { RB_JIT_NONE, RB_JIT_STEP, RB_JIT_STOP };

struct rb_scratch {
	__u64 exec_start, exec_end;
	__u64 jit_start, jit_end, text_start, text_end;
	__u64 cfp, end;
	__u64 jit;		/* enum rb_jit: rb_frames' mode, and what its step did */
	__u64 cf[RB_JIT_SCAN];	/* the frame's first 40 bytes: pc, sp, iseq, self, ep; a YJIT frame's stack */
	__u64 env[3];		/* ep[-2..0]: method entry or cref, previous ep, flags */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct rb_scratch);
	__uint(max_entries, 1);
} rb_scratch SEC(".maps");


/*
 * The sampled thread's execution context: ruby_current_ec, a thread-local
 * of libruby, found through glibc's DTV as __tls_get_addr would (libruby
 * is loaded at start, so its block is in every thread's static TLS); in a
 * static CRuby, at its fixed offset from the thread pointer. A Fiber switch
 * changes it, so a Fiber's frames are its own.
 */
static __always_inline __u64 rb_current_ec(const struct rb_proc *rb)
{
	__u64 fsbase = walk_fsbase(), dtv, block, ec;

	if (!rb->tls_module)
		return walk_read(&ec, fsbase + (__s64)rb->tls_offset) ? 0 : ec;
	if (walk_read(&dtv, fsbase + RB_TCB_DTV) ||
	    walk_read(&block, dtv + RB_DTV_STRIDE * (rb->tls_module & 0xffff)) || !block ||
	    walk_read(&ec, block + rb->tls_offset))
		return 0;
	return ec;
}

/*
 * The method entry of a Ruby frame whose environment ENV (ep[-2..0]) was
 * read: a block's is its method's, some environments up (read over ENV).
 */
static __always_inline __u64 rb_frame_me(__u64 *env)
{
	for (int i = 0; i < RB_MAX_EP_HOPS; i++) {
		if (env[2] & RB_ENV_FLAG_LOCAL)
			return env[0];
		/* the enclosing environment: ep[-1] without its tag bits */
		if (bpf_probe_read_user(env, 3 * sizeof(*env), (const void *)((env[1] & ~3ULL) - 16)))
			return 0;
	}
	return 0;	/* deeper nesting: named without its class */
}

/* The gen of method entry ME (include/ruby.h): 0 without one */
static __always_inline __u32 rb_me_gen(const struct rb_proc *rb, __u64 me)
{
	__u64 id;

	if (!me || walk_read(&id, me + rb->me_called_id))
		return 0;
	return rb_gen(id);
}

/* Starts the walk at the thread's innermost control frame; false (marked) if it cannot. */
static __always_inline bool rb_walk_start(struct unwind_scratch *sc, const struct rb_proc *rb,
					  struct rb_scratch *w)
{
	__u64 ec = rb_current_ec(rb), stack, size;

	w->end = 1;	/* started: a failure is marked once */
	if (!ec || walk_read(&stack, ec + rb->ec_vm_stack) ||
	    walk_read(&size, ec + rb->ec_vm_stack_size) || walk_read(&w->cfp, ec + rb->ec_cfp)) {
		walk_push_mark(sc, RB_TAG_LOST, RB_LOST_NO_EC);
		return false;
	}
	/* control frames grow down from the VM stack's end; a cfp outside it is not one */
	w->end = stack + size * 8;
	if (w->cfp <= stack || w->cfp >= w->end) {
		walk_push_mark(sc, RB_TAG_LOST, RB_LOST_NO_EC);
		w->cfp = 0;
		return false;
	}
	return true;
}

/*
 * The control frames of one vm_exec call met by the native walk, innermost
 * first, up to the one it began with (FINISH), each as two slots
 * (include/ruby.h); leaves in rb_scratch.cfp the caller's next. A C
 * function's frame stands where its method was called from Ruby. CFUNCS:
 * only the C functions' frames on top, up to the first Ruby frame (left
 * for vm_exec): those YJIT's code called.
 */
static __always_inline void rb_run(struct unwind_scratch *sc, const struct rb_proc *rb,
				   struct rb_scratch *w, bool cfuncs)
{
	__u64 cfp, pc, iseq, ep, me, flags;
	__u32 gen;
	int i;

	if (!w->end && !rb_walk_start(sc, rb, w))
		return;
	cfp = w->cfp;
	for (i = 0; i < RB_MAX_RUN && cfp && cfp < w->end; i++) {
		/* pc, iseq and ep are in its first 40 bytes in every version */
		if (bpf_probe_read_user(w->cf, 40, (const void *)cfp))
			goto lost;
		pc = w->cf[(rb->cfp_pc / 8) & 7];
		iseq = w->cf[(rb->cfp_iseq / 8) & 7];
		ep = w->cf[(rb->cfp_ep / 8) & 7];
		if (bpf_probe_read_user(w->env, sizeof(w->env), (const void *)(ep - 16)))
			goto lost;
		flags = w->env[2];
		if (cfuncs && (flags & RB_FRAME_MAGIC_MASK) != RB_FRAME_MAGIC_DUMMY &&
		    !(flags & RB_FRAME_FLAG_CFRAME))
			break;
		cfp += rb->cfp_size;
		if ((flags & RB_FRAME_MAGIC_MASK) == RB_FRAME_MAGIC_DUMMY)
			continue;	/* VM bookkeeping, no code of the program */
		if (flags & RB_FRAME_FLAG_CFRAME) {
			me = w->env[0] & RB_OBJ_MASK;
			gen = rb_me_gen(rb, me);
			walk_push_frame(sc, RB_TAG_CFUNC, rb_obj_slot(me, gen), 0);
			rt_announce(sc, RB_EVENT_CME, me, gen);
		} else if (iseq && pc) {
			me = rb_frame_me(w->env) & RB_OBJ_MASK;
			gen = rb_me_gen(rb, me);
			iseq &= RB_OBJ_MASK;
			walk_push_frame(sc, RB_TAG_ISEQ, rb_obj_slot(iseq, gen), rb_iseq_where(me, pc));
			rt_announce(sc, RB_EVENT_ISEQ, iseq, rb_iseq_gen(me, gen));
			/* its class, read while it lives: an eval'd method's entry goes with it */
			if (me)
				rt_announce(sc, RB_EVENT_CME, me, gen);
		}
		if (flags & RB_FRAME_FLAG_FINISH)
			break;
	}
	if (i == RB_MAX_RUN) {
		/*
		 * The run's outer frames are not read, so where it began is not
		 * known: the walk ends here, as the next vm_exec would take them for
		 * its own, below the native frames that called this run.
		 */
		walk_push_mark(sc, RB_TAG_LOST, RB_LOST_RUN);
		cfp = 0;
	}
	w->cfp = cfp;
	return;
lost:
	walk_push_mark(sc, RB_TAG_LOST, RB_LOST_READ);
	w->cfp = 0;
}

/*
 * A frame in YJIT's code, which has no CFI: the C methods it called above
 * it, marked, then stepped to the vm_exec call that entered it (vm_exec,
 * or the interpreter loop it calls), whose control frames (the methods
 * YJIT runs, cfp->iseq kept valid) are walked there as the interpreter's
 * are. YJIT's entry pushes the VM's registers (cfp, ec, sp: VM stack and
 * heap addresses; from 3.2 rbp too, a stack address) and calls out without
 * pushing more (a branch stub pushes the VM's stack temps, Ruby values),
 * so the return address is the first word near sp that lies in libruby's
 * code. None: marked lost, w->jit set to RB_JIT_STOP.
 */
static __always_inline void rb_jit_step(struct unwind_scratch *sc, const struct rb_proc *rb,
					struct rb_scratch *w)
{
	int k;

	rb_run(sc, rb, w, true);
	walk_push_mark(sc, RB_TAG_JIT, 0);
	if (bpf_probe_read_user(w->cf, sizeof(w->cf), (const void *)sc->sp))
		goto lost;
	for (k = 0; k < RB_JIT_SCAN; k++)
		if (w->cf[k] >= w->text_start && w->cf[k] < w->text_end)
			break;
	if (k >= RB_JIT_SCAN)
		goto lost;
	/* an rbp frame set up below the return address: the caller's rbp is saved there */
	if (k > 0 && sc->bp == sc->sp + 8 * (k - 1))
		sc->bp = w->cf[(k - 1) & (RB_JIT_SCAN - 1)];
	sc->pc = w->cf[k & (RB_JIT_SCAN - 1)];
	sc->sp += 8 * (k + 1);
	sc->exact_pc = 0;
	return;
lost:
	walk_push_mark(sc, RB_TAG_LOST, RB_LOST_JIT);
	sc->stack.flags |= USTACK_TRUNCATED;
	w->jit = RB_JIT_STOP;
}

/*
 * The frame at sc->pc: in vm_exec, the frames it runs (rb_run); in YJIT's
 * code (rb_scratch.jit set by the caller), its step (rb_jit_step). One
 * global function, verified once on its own, its modes in the scratch,
 * not arguments: 6.1 counts its stack with its callers', 512 bytes at
 * most. Returns 0.
 */
WALK_FN int rb_frames(struct unwind_scratch *sc, const struct rb_proc *rb)
{
	struct rb_scratch *w;
	__u32 zero = 0;

	w = bpf_map_lookup_elem(&rb_scratch, &zero);
	if (!sc || !rb || !w)
		return 0;
	if (w->jit)
		rb_jit_step(sc, rb, w);
	else
		rb_run(sc, rb, w, false);
	return 0;
}

#ifdef EBPFPROF_STEPS_WALK
/* rb_frames in the steps build (walk.bpf.h): a global function of scalars */
__noinline int rb_frames_steps(void)
{
	struct unwind_scratch *sc = walk_scratch();
	__u32 pid;

	if (!sc)
		return 0;
	pid = sc->img.pid;	/* a key on the stack: 6.1 takes no other */
	return rb_frames(sc, bpf_map_lookup_elem(&rb_procs, &pid));
}
#endif

/* A walk of process PID begins: its vm_exec, if it runs Ruby (its bit in BITS), else none. */
static __always_inline void rb_walk_begin(__u16 bits, __u32 pid)
{
	const struct rb_proc *rb = NULL;
	struct rb_scratch *x;
	__u32 zero = 0;

	x = bpf_map_lookup_elem(&rb_scratch, &zero);
	if (!x)
		return;
	if (unwind_pid_bits__in(bits, UNWIND_RT_RUBY))
		rb = bpf_map_lookup_elem(&rb_procs, &pid);
	x->exec_start = rb ? rb->exec_start : 0;
	x->exec_end = rb ? rb->exec_end : 0;
	x->jit_start = rb ? rb->jit_start : 0;
	x->jit_end = rb ? rb->jit_end : 0;
	x->text_start = rb ? rb->text_start : 0;
	x->text_end = rb ? rb->text_end : 0;
	x->cfp = x->end = x->jit = 0;
}

/*
 * The frame at sc->pc: in vm_exec, the Ruby frames it runs go above it
 * (RT_NATIVE: walk it natively then); in YJIT's code, stepped over
 * (RT_STEPPED), or the walk's end (RT_STOP).
 */
static __always_inline int rb_walk_frame(struct unwind_scratch *sc)
{
	const struct rb_proc *rb;
	struct rb_scratch *x;
	__u32 zero = 0, pid = sc->img.pid;
	bool jit;

	x = bpf_map_lookup_elem(&rb_scratch, &zero);
	if (!x)
		return RB_JIT_NONE;
	jit = sc->pc >= x->jit_start && sc->pc < x->jit_end;
	if (!jit && (sc->pc < x->exec_start || sc->pc >= x->exec_end))
		return RB_JIT_NONE;
	x->jit = jit ? RB_JIT_STEP : RB_JIT_NONE;
	rb = bpf_map_lookup_elem(&rb_procs, &pid);
	if (rb)
		WALK_CALL(rb_frames, (), (sc, rb));
	else if (jit)
		return RB_JIT_NONE;	/* gone: left to frame pointers */
	x = bpf_map_lookup_elem(&rb_scratch, &zero);
	return x ? x->jit : RB_JIT_NONE;
}

#endif /* EBPFPROF_RUBY_BPF_H */
