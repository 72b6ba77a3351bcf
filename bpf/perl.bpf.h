/* perl.bpf.h -- walks the Perl context stack when the native walk reaches a runops loop (include/perl.h) */
#ifndef EBPFPROF_PERL_BPF_H
#define EBPFPROF_PERL_BPF_H

#include "perl.h"
#include "walk.bpf.h"

/* pid -> its interpreter's layout; a process not here has native frames only */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct perl_proc);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} perl_procs SEC(".maps");

/* Walk state kept across native frames: where the next runops call's contexts start. */
struct perl_walk {
	__u64 si;		/* the stackinfo walked */
	__u64 cop;		/* the statement the next frame runs */
	__s32 cxix;		/* its next context, innermost first */
	__u16 started;		/* the interpreter was read */
	__u16 done;		/* the program's frame was pushed, or the walk stopped */
};

#define PERL_CX_WORDS 16	/* a context read whole: 104 bytes in 5.36 and 5.40 */

/*
 * The context read, off the BPF stack: on it, 6.1's verifier counts the
 * sampler's three nested calls at 544 bytes, over the 512 allowed.
 */
struct perl_cx {
	__u64 w[PERL_CX_WORDS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct perl_cx);
	__uint(max_entries, 1);
} perl_cx_buf SEC(".maps");

static __always_inline bool perl_in_runops(const struct perl_proc *p, __u64 pc)
{
	return (pc >= p->runops_start[0] && pc < p->runops_end[0]) ||
	       (pc >= p->runops_start[1] && pc < p->runops_end[1]);
}

/* the byte at OFF of a context read into CX */
static __always_inline __u64 perl_cx_byte(const __u64 *cx, __u16 off)
{
	return (cx[(off >> 3) & (PERL_CX_WORDS - 1)] >> ((off & 7) * 8)) & 0xff;
}

static __always_inline __u64 perl_cx_word(const __u64 *cx, __u16 off)
{
	return cx[(off >> 3) & (PERL_CX_WORDS - 1)];
}

/* the line of statement COP, 0 if unreadable */
static __always_inline __u64 perl_cop_line(const struct perl_proc *p, __u64 cop)
{
	__u32 line = 0;

	if (cop)
		bpf_probe_read_user(&line, sizeof(line), (const void *)(cop + p->cop_line));
	return line;
}

/* A sub's frame: its CV, checked to be one, and the line it runs. 0, or -1: unreadable. */
static __always_inline int perl_push_sub(struct unwind_scratch *sc, const struct perl_proc *p,
					 __u64 cv, __u64 cop)
{
	__u64 head[2], start;
	__u32 gen;

	if (bpf_probe_read_user(head, sizeof(head), (const void *)cv) ||
	    ((head[1] >> ((p->sv_flags & 7) * 8)) & 0xff) != PERL_SVt_PVCV ||
	    walk_read(&start, head[0] + p->xcv_start))
		return -1;
	gen = (__u32)(start >> 3);
	walk_push_frame(sc, PERL_TAG_SUB, cv, perl_cop_line(p, cop) << 32 | gen);
	rt_announce(sc, PERL_EVENT_CV, cv, gen);
	return 0;
}

/* Code outside any sub: named by its statement's file. 0, or -1: unreadable. */
static __always_inline int perl_push_file(struct unwind_scratch *sc, const struct perl_proc *p,
					  __u64 cop, __u32 kind)
{
	__u64 file;

	if (!cop || walk_read(&file, cop + p->cop_file) || !file)
		return -1;
	walk_push_frame(sc, PERL_TAG_FILE, file, perl_cop_line(p, cop) << 32 | kind);
	rt_announce(sc, PERL_EVENT_FILE, file, 0);
	return 0;
}

/*
 * The sampled thread's interpreter: PL_current_context in the thread's TLS
 * where userspace found it (every ithread's own), else PL_curinterp, the
 * main thread's. 0: none (*other: a thread whose interpreter we cannot find).
 */
static __always_inline __u64 perl_interp(const struct perl_proc *p, __u32 pid, bool *other)
{
	__u64 tid_pid = bpf_get_current_pid_tgid(), interp = 0, fsbase;
	struct task_struct *task;

	if (p->tls_off) {
		task = bpf_get_current_task_btf();
		fsbase = BPF_CORE_READ(task, thread.fsbase);
		if (!walk_read(&interp, fsbase + (__s64)p->tls_off) && interp)
			return interp;
	}
	if ((__u32)tid_pid != pid) {
		*other = true;
		return 0;
	}
	if (walk_read(&interp, p->curinterp))
		return 0;
	return interp;
}

/* Reads the interpreter's current stackinfo and statement into W. 0, or -1. */
static __always_inline int perl_begin(const struct perl_proc *p, __u64 interp, struct perl_walk *w)
{
	if (!interp ||
	    walk_read(&w->si, interp + p->interp_curstackinfo) || !w->si ||
	    walk_read(&w->cop, interp + p->interp_curcop) ||
	    bpf_probe_read_user(&w->cxix, sizeof(w->cxix), (const void *)(w->si + p->si_cxix)))
		return -1;
	return 0;
}

/*
 * One runops call met by the native walk: records the Perl frames it runs,
 * innermost first, each as two slots (include/perl.h), and leaves in W where
 * the next call out starts. A call's contexts end at a sub or eval a C
 * caller entered (retop NULL: call_sv, MULTICALL, sort) or at the bottom of
 * its stackinfo (a sort block's, whose code is its caller's); the last
 * stackinfo's bottom is the program's own code. A global
 * function, verified once on its own. Returns 0.
 */
__noinline int perl_frames(struct unwind_scratch *sc, const struct perl_proc *p, struct perl_walk *w)
{
	__u64 t, prev, retop, oldcop, interp, *cx;
	struct perl_cx *buf;
	bool other = false;
	__u32 zero = 0;
	bool consumed = false;	/* this call's contexts began: a stackinfo's bottom ends them */
	int i;

	if (!sc || !p || !w || w->done)
		return 0;
	buf = bpf_map_lookup_elem(&perl_cx_buf, &zero);
	if (!buf)
		return 0;
	cx = buf->w;
	if (!w->started) {
		w->started = 1;
		interp = perl_interp(p, sc->img.pid, &other);
		if (perl_begin(p, interp, w)) {
			walk_push_mark(sc, PERL_TAG_LOST, other ? PERL_LOST_THREAD : PERL_LOST_NO_INTERP);
			w->done = 1;
			return 0;
		}
	}
	for (i = 0; i < PERL_MAX_RUN; i++) {
		if (w->cxix < 0) {
			if (walk_read(&prev, w->si + p->si_prev))
				goto lost;
			if (!prev) {
				/* the outermost runops call: the program's own code */
				if (perl_push_file(sc, p, w->cop, PERL_FILE_MAIN))
					goto lost;
				w->done = 1;
				return 0;
			}
			if (bpf_probe_read_user(&w->cxix, sizeof(w->cxix),
						(const void *)(prev + p->si_cxix)))
				goto lost;
			w->si = prev;
			if (consumed)
				return 0;	/* a stackinfo's contexts are one runops call's */
			continue;	/* the last call ended where its stackinfo did: this one's are below */
		}
		if (walk_read(&t, w->si + p->si_cxstack))
			goto lost;
		t += (__u64)(__u32)w->cxix * p->cx_size;
		if (p->cx_size > sizeof(buf->w) || p->cx_size < 8 ||
		    bpf_probe_read_user(cx, p->cx_size & (sizeof(buf->w) - 1), (const void *)t))
			goto lost;
		w->cxix--;
		consumed = true;
		t = perl_cx_byte(cx, p->cx_type);
		retop = perl_cx_word(cx, p->cx_retop);
		oldcop = perl_cx_word(cx, p->cx_oldcop);
		if ((t & PERL_CXTYPEMASK) == PERL_CXt_SUB || (t & PERL_CXTYPEMASK) == PERL_CXt_FORMAT) {
			if ((t & PERL_CXTYPEMASK) == PERL_CXt_SUB && (t & PERL_CXp_SUB_RE_FAKE))
				continue;
			if (perl_push_sub(sc, p, perl_cx_word(cx, p->cx_sub_cv), w->cop))
				goto lost;
		} else if ((t & PERL_CXTYPEMASK) == PERL_CXt_EVAL && !(t & PERL_CXp_TRYBLOCK)) {
			if (perl_push_file(sc, p, w->cop, PERL_FILE_EVAL))
				goto lost;
		} else {
			continue;	/* a loop, a block, an eval block: the same frame's */
		}
		w->cop = oldcop;
		if (!retop)
			return 0;	/* entered from C: its caller is the next runops call's */
	}
	walk_push_mark(sc, PERL_TAG_LOST, PERL_LOST_RUN);
	w->done = 1;
	return 0;
lost:
	walk_push_mark(sc, PERL_TAG_LOST, PERL_LOST_READ);
	w->done = 1;
	return 0;
}

#endif /* EBPFPROF_PERL_BPF_H */
