/* php.bpf.h -- walks the Zend VM's frames when the native walk reaches execute_ex (include/php.h) */
#ifndef EBPFPROF_PHP_BPF_H
#define EBPFPROF_PHP_BPF_H

#include "php.h"
#include "walk.bpf.h"

/* pid -> its Zend VM's layout; a process not here has native frames only */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct php_proc);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} php_procs SEC(".maps");

static __always_inline bool php_in_exec(const struct php_proc *p, __u64 pc)
{
	return pc >= p->exec_start && pc < p->exec_end;
}

static __always_inline bool php_in_jit(const struct php_proc *p, __u64 pc)
{
	return pc >= p->jit_start && pc < p->jit_end;
}

/*
 * The line of the frame's current opline. The hybrid VM keeps the frame
 * and the opline in global registers while execute_ex runs (x86-64's r14
 * and r15) and writes the opline to the frame only before a call: where
 * the sample struck execute_ex itself (EXACT) with the frame's register
 * this frame, the opline's is the one, if it lies in the function's
 * opcodes. Else the frame's saved one.
 */
static __always_inline __u32 php_line(const struct unwind_scratch *sc, const struct php_proc *p,
				      __u64 f, __u64 func, __u64 opline, __u32 exact)
{
	__u64 code[2];
	__u32 line = 0;

	if (exact && sc->zend_ex == f &&
	    !bpf_probe_read_user(code, sizeof(code), (const void *)(func + p->op_last)) &&
	    sc->zend_opline >= code[1] &&
	    sc->zend_opline < code[1] + (__u64)(__u32)code[0] * p->zop_size)
		opline = sc->zend_opline;
	if (opline)
		bpf_probe_read_user(&line, sizeof(line), (const void *)(opline + p->zop_lineno));
	return line;
}

/*
 * One PHP frame: pushes it and announces its function. Returns 1 if it
 * ends this execute_ex call's run, -1 if it could not be read. A frame
 * without a function is a fake one zend_call_function inserts before a
 * magic method's call: skipped, it is not a call.
 */
static __always_inline int php_frame(struct unwind_scratch *sc, const struct php_proc *p,
				     const __u64 *ex, __u64 f, __u32 exact, __u64 *head, __u64 *tail)
{
	__u64 func = ex[p->ex_func & (PHP_EX_WORDS - 1)];
	__u32 info = (__u32)ex[p->ex_info & (PHP_EX_WORDS - 1)], tag, line = 0;

	if (!func)
		return 0;
	tail[0] = tail[1] = 0;
	if (bpf_probe_read_user(head, 2 * sizeof(*head), (const void *)func))
		return -1;
	if (php_user_code((__u8)head[0])) {
		if (bpf_probe_read_user(tail, 2 * sizeof(*tail), (const void *)(func + p->op_filename)))
			return -1;
		line = php_line(sc, p, f, func, ex[p->ex_opline & (PHP_EX_WORDS - 1)], exact);
	}
	tag = php_func_tag(head[1], tail[0], (__u32)tail[1]);
	walk_push_frame(sc, PHP_TAG_FRAME, func, (__u64)tag << 32 | line);
	rt_announce(sc, PHP_EVENT_FUNC, func, tag);
	return info & PHP_CALL_TOP ? 1 : 0;
}

/*
 * A frame's words and its function's, in per-CPU memory: below the walk's
 * frames the BPF stack (512 bytes in all on kernels without private stacks)
 * has no room for them. A sample on one CPU never nests another.
 */
struct php_scratch {
	__u64 ex[PHP_EX_WORDS];
	__u64 head[2], tail[2];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct php_scratch);
} php_scratch SEC(".maps");

#define PHP_WALK_DONE 2	/* php_walk.started: the walk ended at PHP_MAX_RUN */

/* what the native walk met: php_frames' MODE */
enum php_run {
	PHP_RUN_EXEC,	/* execute_ex */
	PHP_RUN_JIT,	/* opcache's JIT code */
	PHP_RUN_CALL,	/* zend_call_function */
};

/*
 * zend_call_function met before any execute_ex: it has made the current
 * frame (ZEND_CALL_TOP) of the function it calls, an internal one it runs
 * itself or a PHP one whose execute_ex call has not begun. That frame is
 * its callee's: recorded here, above it, rather than taken for the first
 * frame of the execute_ex call that called zend_call_function, which
 * would end that call's run at it and leave its callers unrecorded.
 */
static __always_inline void php_call_frame(struct unwind_scratch *sc, const struct php_proc *p,
					   struct php_scratch *ps, struct php_walk *w)
{
	__u64 f = w->frame;

	if (!f || bpf_probe_read_user(ps->ex, sizeof(ps->ex), (const void *)f))
		return;	/* left to execute_ex, which marks what it cannot read */
	if (!ps->ex[p->ex_func & (PHP_EX_WORDS - 1)] ||
	    !((__u32)ps->ex[p->ex_info & (PHP_EX_WORDS - 1)] & PHP_CALL_TOP))
		return;	/* not a frame of its making: the execute_ex below runs it */
	if (php_frame(sc, p, ps->ex, f, 0, ps->head, ps->tail) < 0) {
		walk_push_mark(sc, PHP_TAG_LOST, PHP_LOST_READ);
		w->frame = 0;
		return;
	}
	w->frame = ps->ex[p->ex_prev & (PHP_EX_WORDS - 1)];
}

/*
 * One execute_ex call met by the native walk: records the PHP frames it
 * runs, innermost first, two slots each (include/php.h), and leaves in
 * w->frame the first frame of the next call out. JIT: the pc is opcache's
 * JIT code, which keeps no frame pointer and has no CFI, so the native
 * walk ends here: a mark says so, then every PHP frame left is recorded,
 * whichever execute_ex call it is of. CALL: zend_call_function (above). A
 * global function, verified once on its own. Returns 0.
 */
WALK_FN int php_frames(struct unwind_scratch *sc, struct php_walk *w, __u32 exact, __u32 mode)
{
	const struct php_proc *p;
	struct php_scratch *ps;
	__u32 zero = 0, pid, jit = mode == PHP_RUN_JIT;
	int i, ret = 0;
	__u64 f;

	ps = bpf_map_lookup_elem(&php_scratch, &zero);
	if (!sc || !w || !ps)
		return 0;
	pid = sc->img.pid;	/* a key on the stack: 6.1 takes no key in a global function's argument */
	p = bpf_map_lookup_elem(&php_procs, &pid);
	if (!p)
		return 0;
	if (w->started == PHP_WALK_DONE)
		return 0;	/* ended at the bound below: the rest is lost, marked once */
	if (mode == PHP_RUN_CALL && w->started)
		return 0;	/* an execute_ex call above took the frame it made */
	if (!w->started) {
		w->started = 1;
		if (walk_read(&w->frame, p->current))
			w->frame = 0;
	}
	if (mode == PHP_RUN_CALL) {
		php_call_frame(sc, p, ps, w);
		return 0;
	}
	f = w->frame;
	if (jit)
		walk_push_mark(sc, PHP_TAG_LOST, PHP_LOST_JIT);
	if (!f) {
		walk_push_mark(sc, PHP_TAG_LOST, PHP_LOST_NO_FRAME);
		return 0;
	}
	for (i = 0; i < PHP_MAX_RUN && f; i++) {
		if (bpf_probe_read_user(ps->ex, sizeof(ps->ex), (const void *)f))
			goto lost;
		ret = php_frame(sc, p, ps->ex, f, exact && i == 0 && !jit, ps->head, ps->tail);
		if (ret < 0)
			goto lost;
		f = ps->ex[p->ex_prev & (PHP_EX_WORDS - 1)];
		if (ret && !jit)
			break;
	}
	if (i == PHP_MAX_RUN) {
		/*
		 * Where this run began is past the bound: the frames left would be
		 * taken for the next execute_ex call's, below the native frames
		 * that called this one. The walk ends here.
		 */
		walk_push_mark(sc, PHP_TAG_LOST, PHP_LOST_RUN);
		w->started = PHP_WALK_DONE;
		f = 0;
	}
	w->frame = f;
	return 0;
lost:
	walk_push_mark(sc, PHP_TAG_LOST, PHP_LOST_READ);
	w->frame = 0;
	return 0;
}

#ifdef EBPFPROF_STEPS_WALK
/* php_frames in the steps build (walk.bpf.h): a global function of scalars */
__noinline int php_frames_steps(__u32 exact, __u32 mode)
{
	struct unwind_scratch *sc = walk_scratch();

	if (!sc)
		return 0;
	return php_frames(sc, &sc->php_walk, exact, mode);
}
#endif

#endif /* EBPFPROF_PHP_BPF_H */
