/* null.bpf.h -- the test-only null runtime's frame reader: the skeleton a runtime's BPF part starts from */
#ifndef EBPFPROF_NULL_BPF_H
#define EBPFPROF_NULL_BPF_H

#include "nullrt.h"
#include "walk.bpf.h"

/* pid -> where its interpreter keeps its frames; a process not here has native frames only */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct null_proc);
	__uint(max_entries, 64);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} null_procs SEC(".maps");

static __always_inline bool null_in_eval(const struct null_proc *p, __u64 pc)
{
	return pc >= p->eval_start && pc < p->eval_end;
}

/*
 * One null_eval call met by the native walk: records the one frame it runs
 * and leaves in w->frame its caller's. A global function, verified once on
 * its own, as every runtime's reader should be. Returns 0.
 */
WALK_FN int null_frames(struct unwind_scratch *sc, struct null_walk *w)
{
	const struct null_proc *p;
	__u64 f, func;
	__u32 pid;

	if (!sc || !w)
		return 0;
	pid = sc->img.pid;	/* a key on the stack: 6.1 takes no key in a global function's argument */
	p = bpf_map_lookup_elem(&null_procs, &pid);
	if (!p)
		return 0;
	if (!w->started) {
		w->started = 1;
		if (walk_read(&w->frame, p->state + p->st_top))
			w->frame = 0;
	}
	f = w->frame;
	if (!f || walk_read(&func, f + p->fr_func) || walk_read(&w->frame, f + p->fr_prev)) {
		walk_push_mark(sc, NULL_TAG_LOST, NULL_LOST_READ);
		w->frame = 0;
		return 0;
	}
	func = (__u32)func;
	walk_push_frame(sc, NULL_TAG_FRAME, func, 0);
	rt_announce(sc, NULL_EVENT_FUNC, func, 0);
	return 0;
}

#ifdef EBPFPROF_STEPS_WALK
/* null_frames in the steps build (walk.bpf.h): a global function of scalars */
__noinline int null_frames_steps(void)
{
	struct unwind_scratch *sc = walk_scratch();

	if (!sc)
		return 0;
	return null_frames(sc, &sc->null_walk);
}
#endif

#endif /* EBPFPROF_NULL_BPF_H */
