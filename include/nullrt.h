/* nullrt.h -- what userspace tells the null runtime's BPF frame reader (bpf/null.bpf.h) about one process */
#ifndef EBPFPROF_NULLRT_H
#define EBPFPROF_NULLRT_H

#include "frametypes.h"

/*
 * The null runtime is the smallest runtime there can be, built only for
 * tests: it proves the checklist in userspace/runtimes/README.md and is the
 * skeleton a new runtime starts from. Its interpreter
 * (tests/fixtures/null/null_interp.c) keeps a chain of frames, each a
 * function id, whose innermost a global state points at; each call of its
 * loop, null_eval, runs one frame.
 */
#define NULL_STATE_MAGIC 0x6e756c6c72746d31ULL	/* "1mtrllun": the state is what we think */
#define NULL_FUNCS_MAX 16	/* function ids a process may name */
#define NULL_NAME_MAX 32

/* One process: where its state and its loop are, and the offsets the walk needs. */
struct null_proc {
	__u64 state;		/* &null_runtime_state */
	__u64 eval_start;	/* null_eval: [start, end) */
	__u64 eval_end;
	__u16 st_top;		/* state: the innermost frame */
	__u16 fr_prev;		/* frame: its caller */
	__u16 fr_func;		/* frame: its function id (32 bits) */
	__u16 pad;
	__u32 pad2;
};

/*
 * A null frame takes two slots (tags in frametypes.h): NULL_TAG_FRAME |
 * function id, then 0. One slot, NULL_TAG_LOST | NULL_LOST_READ: a frame
 * could not be read. A function id first seen is announced as
 * NULL_EVENT_FUNC, so userspace reads its name while the process lives.
 */
enum null_lost_reason {
	NULL_LOST_READ = 1,
};

#endif /* EBPFPROF_NULLRT_H */
