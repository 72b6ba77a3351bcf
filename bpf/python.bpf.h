/* python.bpf.h -- walks CPython's frames when the native walk reaches the interpreter loop (include/python.h) */
#ifndef EBPFPROF_PYTHON_BPF_H
#define EBPFPROF_PYTHON_BPF_H

#include "python.h"
#include "walk.bpf.h"

/* pid -> its interpreter's layout; a process not here has native frames only */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct py_proc);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} py_procs SEC(".maps");

/* tid -> its PyThreadState, checked at every use (thread_id == pthread_self()) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 8192);
} py_tstates SEC(".maps");

/* by its tag too: code made at run time is freed and its address reused by the next */
static __always_inline void py_announce(const struct unwind_scratch *sc, __u64 code, __u32 tag)
{
	rt_announce(sc, PY_EVENT_CODE, code, tag);
}

/*
 * The code object's tag (py_code_tag): its first line, and its version where
 * it has one, in one read (24 bytes on, in 3.12 and 3.13); before 3.12 its
 * name's hash, two reads more.
 */
static __always_inline int py_code_tag_read(const struct py_proc *py, __u64 code, __u32 *tag)
{
	__u32 w[PY_CODE_WORDS], version = 0;
	__u64 name, hash = 0;

	if (bpf_probe_read_user(w, sizeof(w), (const void *)(code + py->co_firstlineno)))
		return -1;
	if (py->co_version_word)
		version = w[py->co_version_word & (PY_CODE_WORDS - 1)];
	else if (py->co_name != PY_NO_OFFSET &&
		 (walk_read(&name, code + py->co_name) || walk_read(&hash, name + py->str_hash)))
		return -1;
	*tag = py_code_tag(w[0], version, hash);
	return 0;
}

/*
 * The sampled thread's PyThreadState: the one whose thread_id is this
 * thread's pthread_self() (its fsbase on x86-64). Remembered per tid,
 * checked again at each use.
 */
static __always_inline __u64 py_tstate(const struct py_proc *py)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 self = walk_pthread_self(), ts, id, interp, *cached;

	cached = bpf_map_lookup_elem(&py_tstates, &tid);
	if (cached && !walk_read(&id, *cached + py->ts_thread_id) && id == self)
		return *cached;
	if (walk_read(&interp, py->runtime + py->rt_interp_head) || !interp ||
	    walk_read(&ts, interp + py->interp_tstate_head))
		return 0;
	for (int i = 0; i < PY_MAX_THREADS && ts; i++) {
		if (walk_read(&id, ts + py->ts_thread_id))
			return 0;
		if (id == self) {
			bpf_map_update_elem(&py_tstates, &tid, &ts, BPF_ANY);
			return ts;
		}
		if (walk_read(&ts, ts + py->ts_next))
			return 0;
	}
	return 0;
}

/* The thread's innermost Python frame, or 0. */
static __always_inline __u64 py_current_frame(const struct py_proc *py)
{
	__u64 ts = py_tstate(py), f;

	if (!ts || walk_read(&f, ts + py->ts_frame))
		return 0;
	if (py->cframe_frame != PY_NO_OFFSET && f && walk_read(&f, f + py->cframe_frame))
		return 0;
	return f;
}

/*
 * Whether the return address pc is in a copy of CPython's perf trampoline
 * (Python/asm_trampoline.S, 3.12 and 3.13: sub $8,%rsp; call *%rcx;
 * add $8,%rsp; ret), which -X perf puts in anonymous memory without CFI or
 * a frame pointer. Its caller's frame is then at sp + 16, rbp untouched.
 */
static __always_inline bool py_trampoline(__u64 pc)
{
	__u64 before, after;

	if (bpf_probe_read_user(&before, 8, (const void *)(pc - 6)) ||
	    bpf_probe_read_user(&after, 8, (const void *)(pc - 3)))
		return false;
	/* 48 83 ec 08 ff d1 | 48 83 and 08 ff d1 | 48 83 c4 08 c3, little-endian */
	return before == 0x8348d1ff08ec8348ULL && after == 0xc308c48348d1ff08ULL;
}

static __always_inline bool py_in_eval(const struct py_proc *py, __u64 pc)
{
	return (pc >= py->eval_start[0] && pc < py->eval_end[0]) ||
	       (pc >= py->eval_start[1] && pc < py->eval_end[1]);
}

/*
 * One interpreter loop call met by the native walk: records the Python frames
 * it runs, innermost first, each as two slots (include/python.h), and leaves
 * in w->frame the first frame of the next call out.
 */
/*
 * A global function, verified once on its own: inlined into the walk's
 * step, its loop multiplied the states of everything after it (the sampler
 * verified 169 k instructions with it inline, 148 k without, with the Java
 * walk added). Returns 0.
 */
WALK_FN int py_frames(struct unwind_scratch *sc, const struct py_proc *py, struct py_walk *w)
{
	__u64 f, code, prev, instr;
	__u32 tag;
	__u8 entry = 0;
	int i;

	if (!sc || !py || !w)
		return 0;

	if (!w->started) {
		w->started = 1;
		w->frame = py_current_frame(py);
		if (!w->frame) {
			walk_push_mark(sc, PY_TAG_LOST, PY_LOST_NO_THREAD);
			return 0;
		}
	}
	f = w->frame;
	for (i = 0; i < PY_MAX_RUN && f; i++) {
		if (walk_read(&code, f + py->fr_code) || walk_read(&prev, f + py->fr_previous) ||
		    walk_read(&instr, f + py->fr_instr))
			goto lost;
		if (py->kind != PY_FRAMES_OBJECT &&
		    bpf_probe_read_user(&entry, 1, (const void *)(f + py->fr_entry)))
			goto lost;
		if (py->kind == PY_FRAMES_OWNER && entry == PY_OWNED_BY_CSTACK) {
			f = prev;	/* the shim that ends this call's run */
			break;
		}
		if (py_code_tag_read(py, code, &tag))
			goto lost;
		if (py->kind == PY_FRAMES_OBJECT)
			instr = (__u32)instr;	/* f_lasti is an int */
		else
			instr -= code;
		walk_push_frame(sc, PY_TAG_FRAME, code, (__u64)tag << 32 | (__u32)instr);
		py_announce(sc, code, tag);
		f = prev;
		if (py->kind == PY_FRAMES_OBJECT || (py->kind == PY_FRAMES_ENTRY && entry))
			break;
	}
	if (i == PY_MAX_RUN) {
		/*
		 * The run's outer frames are not read, so where it began is not
		 * known: the walk ends here, as the next interpreter loop call
		 * would take them for its own, below the native frames that
		 * called this run.
		 */
		walk_push_mark(sc, PY_TAG_LOST, PY_LOST_RUN);
		f = 0;
	}
	w->frame = f;
	return 0;
lost:
	walk_push_mark(sc, PY_TAG_LOST, PY_LOST_READ);
	w->frame = 0;
	return 0;
}

#ifdef EBPFPROF_STEPS_WALK
/* py_frames in the steps build (walk.bpf.h): a global function of scalars */
__noinline int py_frames_steps(void)
{
	struct unwind_scratch *sc = walk_scratch();
	__u32 pid;

	if (!sc)
		return 0;
	pid = sc->img.pid;	/* a key on the stack: 6.1 takes no other */
	return py_frames(sc, bpf_map_lookup_elem(&py_procs, &pid), &sc->py_walk);
}
#endif

#endif /* EBPFPROF_PYTHON_BPF_H */
