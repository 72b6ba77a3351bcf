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

/* Walk state kept across native frames (in perl_scratch): where the next runops call's contexts start. */
struct perl_walk {
	__u64 si;		/* the stackinfo walked */
	__u64 cop;		/* the statement the next frame runs */
	__s32 cxix;		/* its next context, innermost first */
	__u8 started;		/* the interpreter was read */
	__u8 done;		/* the program's frame was pushed, or the walk stopped */
	__u8 framed;		/* a frame was pushed: cop is a context's oldcop, not PL_curcop */
	__u8 pad;
};

#define PERL_CX_WORDS 16	/* a context read whole: 104 bytes in 5.36 and 5.40 */

/*
 * The walk's state and scratch, off the BPF stack: 6.1's verifier allows
 * 512 bytes for a program's nested calls together, and the off-CPU
 * tracer's (offcpu_switch, whose frame holds struct rt_walk, the walk's
 * step, a runtime's reader) had 32 to spare. Per CPU and per program: a
 * walk is never interrupted by another of the same program.
 */
struct perl_scratch {
	struct perl_walk walk;		/* reset as each walk begins (perl_walk_begin) */
	__u64 cx[PERL_CX_WORDS];	/* the context read */
	__u64 head[2];			/* an SV's head: its body, its refcount and flags */
	__u64 word;			/* one word read */
	__u64 cv[PERL_CV_WORDS];	/* a CV body's words from xcv_start: its generation */
	__u32 line;
	__u32 pad_id;		/* the CV's pad list's id: its generation */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct perl_scratch);
	__uint(max_entries, 1);
} perl_scratch SEC(".maps");

/* A walk of a perl process begins: nothing read of its interpreter yet. */
static __always_inline void perl_walk_begin(void)
{
	struct perl_scratch *b;
	__u32 zero = 0;

	b = bpf_map_lookup_elem(&perl_scratch, &zero);
	if (b)
		__builtin_memset(&b->walk, 0, sizeof(b->walk));
}

static __always_inline bool perl_in_runops(const struct perl_proc *p, __u64 pc)
{
	return (pc >= p->runops_start[0] && pc < p->runops_end[0]) ||
	       (pc >= p->runops_start[1] && pc < p->runops_end[1]);
}

/* the byte at OFF of the context read */
static __always_inline __u64 perl_cx_byte(const struct perl_scratch *b, __u16 off)
{
	return (b->cx[(off >> 3) & (PERL_CX_WORDS - 1)] >> ((off & 7) * 8)) & 0xff;
}

static __always_inline __u64 perl_cx_word(const struct perl_scratch *b, __u16 off)
{
	return b->cx[(off >> 3) & (PERL_CX_WORDS - 1)];
}

/* the line of statement COP, 0 if unreadable */
static __always_inline __u64 perl_cop_line(const struct perl_proc *p, struct perl_scratch *b,
					   __u64 cop)
{
	b->line = 0;
	if (cop)
		bpf_probe_read_user(&b->line, sizeof(b->line), (const void *)(cop + p->cop_line));
	return b->line;
}

/*
 * A sub's frame: its CV, checked to be one, its generation (perl_cv_gen)
 * into *gen, and the line it runs. 0, or -1: unreadable.
 */
static __always_inline int perl_sub_frame(const struct perl_proc *p, struct perl_scratch *b,
					  __u64 cv, __u64 cop, __u64 *where, __u32 *gen)
{
	if (bpf_probe_read_user(b->head, sizeof(b->head), (const void *)cv) ||
	    ((b->head[1] >> ((p->sv_flags & 7) * 8)) & 0xff) != PERL_SVt_PVCV ||
	    bpf_probe_read_user(b->cv, sizeof(b->cv), (const void *)(b->head[0] + p->xcv_start)))
		return -1;
	b->pad_id = 0;	/* no pad list (none is known to run): no id */
	if (b->cv[4] && bpf_probe_read_user(&b->pad_id, sizeof(b->pad_id),
					    (const void *)(b->cv[4] + p->padlist_id)))
		return -1;
	*gen = perl_cv_gen(b->cv, b->pad_id);
	*where = perl_cop_line(p, b, cop) << 32 | *gen;
	return 0;
}

/* Code outside any sub: named by its statement's file (*what). 0, or -1: unreadable. */
static __always_inline int perl_file_frame(const struct perl_proc *p, struct perl_scratch *b,
					   __u64 cop, __u32 kind, __u64 *what, __u64 *where)
{
	if (!cop || walk_read(&b->word, cop + p->cop_file) || !b->word)
		return -1;
	*what = b->word;
	*where = perl_cop_line(p, b, cop) << 32 | kind;
	return 0;
}

/*
 * The sampled thread's interpreter: PL_current_context in the thread's TLS
 * where userspace found it (every ithread's own), else PL_curinterp, the
 * main thread's. 0: none (*other: a thread whose interpreter we cannot find).
 */
static __always_inline __u64 perl_interp(const struct perl_proc *p, struct perl_scratch *b,
					 __u32 pid, bool *other)
{
	b->word = 0;
	if (p->tls_off) {
		if (!walk_read(&b->word, walk_fsbase() + (__s64)p->tls_off) &&
		    b->word)
			return b->word;
	}
	if ((__u32)bpf_get_current_pid_tgid() != pid) {
		*other = true;
		return 0;
	}
	if (walk_read(&b->word, p->curinterp))
		return 0;
	return b->word;
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
 * stackinfo's bottom is the program's own code. A global function, verified
 * once on its own; its frames are pushed and announced in one place, so
 * the verifier's stack holds one announcement's key. Returns 0.
 */
WALK_FN int perl_frames(struct unwind_scratch *sc)
{
	const struct perl_proc *p;
	struct perl_walk *w;
	__u64 what = 0, where = 0, t, retop = 0, oldcop = 0;
	struct perl_scratch *b;
	bool other = false, consumed = false;	/* consumed: this call's contexts began */
	__u32 zero = 0, gen = 0, ev, pid;
	int i;

	if (!sc)
		return 0;
	pid = sc->img.pid;	/* a key on the stack: 6.1 takes no key in a global function's argument */
	p = bpf_map_lookup_elem(&perl_procs, &pid);
	if (!p)
		return 0;
	b = bpf_map_lookup_elem(&perl_scratch, &zero);
	if (!b || b->walk.done)
		return 0;
	w = &b->walk;
	if (!w->started) {
		w->started = 1;
		if (perl_begin(p, perl_interp(p, b, sc->img.pid, &other), w)) {
			walk_push_mark(sc, PERL_TAG_LOST, other ? PERL_LOST_THREAD : PERL_LOST_NO_INTERP);
			w->done = 1;
			return 0;
		}
	}
	for (i = 0; i < PERL_MAX_RUN; i++) {
		if (w->cxix < 0) {
			if (walk_read(&b->word, w->si + p->si_prev))
				goto lost;
			if (!b->word) {
				/* the outermost runops call: the program's own code, the walk's last frame */
				if (perl_file_frame(p, b, w->cop, PERL_FILE_MAIN, &what, &where))
					goto lost;
				w->done = 1;
				ev = PERL_EVENT_FILE;
				goto push;
			}
			w->si = b->word;
			if (bpf_probe_read_user(&w->cxix, sizeof(w->cxix),
						(const void *)(w->si + p->si_cxix)))
				goto lost;
			if (consumed)
				return 0;	/* a stackinfo's contexts are one runops call's */
			continue;	/* the last call ended where its stackinfo did: this one's are below */
		}
		if (walk_read(&t, w->si + p->si_cxstack))
			goto lost;
		t += (__u64)(__u32)w->cxix * p->cx_size;
		if (p->cx_size > sizeof(b->cx) || p->cx_size < 8 ||
		    bpf_probe_read_user(b->cx, p->cx_size & (sizeof(b->cx) - 1), (const void *)t))
			goto lost;
		w->cxix--;
		consumed = true;
		t = perl_cx_byte(b, p->cx_type);
		retop = perl_cx_word(b, p->cx_retop);
		oldcop = perl_cx_word(b, p->cx_oldcop);
		if ((t & PERL_CXTYPEMASK) == PERL_CXt_SUB || (t & PERL_CXTYPEMASK) == PERL_CXt_FORMAT) {
			if ((t & PERL_CXTYPEMASK) == PERL_CXt_SUB && (t & PERL_CXp_SUB_RE_FAKE))
				continue;
			what = perl_cx_word(b, p->cx_sub_cv);
			/*
			 * PL_curcop still the caller's (entersub has pushed the
			 * context, no statement of the sub ran yet), or the caller's
			 * again (leavesub restored it before popping): no line
			 */
			if (perl_sub_frame(p, b, what, !w->framed && w->cop == oldcop ? 0 : w->cop,
					   &where, &gen))
				goto lost;
			ev = PERL_EVENT_CV;
		} else if ((t & PERL_CXTYPEMASK) == PERL_CXt_EVAL && !(t & PERL_CXp_TRYBLOCK)) {
			if (perl_file_frame(p, b, !w->framed && w->cop == oldcop ? 0 : w->cop,
					    PERL_FILE_EVAL, &what, &where))
				goto lost;
			gen = 0;
			ev = PERL_EVENT_FILE;
		} else {
			continue;	/* a loop, a block, an eval block: the same frame's */
		}
push:
		w->framed = 1;
		walk_push_frame(sc, ev == PERL_EVENT_CV ? PERL_TAG_SUB : PERL_TAG_FILE, what, where);
		rt_announce(sc, ev, what, ev == PERL_EVENT_CV ? gen : 0);
		if (w->done)
			return 0;
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

#ifdef EBPFPROF_STEPS_WALK
/* perl_frames in the steps build (walk.bpf.h): a global function of scalars */
__noinline int perl_frames_steps(void)
{
	struct unwind_scratch *sc = walk_scratch();

	if (!sc)
		return 0;
	return perl_frames(sc);
}
#endif

#endif /* EBPFPROF_PERL_BPF_H */
