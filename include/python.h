/* python.h -- what userspace tells the BPF Python frame reader (bpf/python.bpf.h) about one CPython process */
#ifndef EBPFPROF_PYTHON_H
#define EBPFPROF_PYTHON_H

#include "frametypes.h"

/*
 * How an interpreter loop call owns its Python frames:
 * - OBJECT (3.8-3.10): each _PyEval_EvalFrameDefault call runs one PyFrameObject.
 * - ENTRY (3.11): a run of _PyInterpreterFrames, the last one with is_entry set.
 * - OWNER (3.12+): a run of _PyInterpreterFrames ended by the C-stack shim
 *   frame the call pushed (owner == PY_OWNED_BY_CSTACK), skipped.
 */
enum py_frames_kind { PY_FRAMES_OBJECT = 1, PY_FRAMES_ENTRY = 2, PY_FRAMES_OWNER = 3 };

#define PY_OWNED_BY_CSTACK 3	/* FRAME_OWNED_BY_CSTACK, 3.12 and 3.13 */
#define PY_NO_OFFSET 0xffff	/* a pointer hop a version does not have */

/* Python frames one interpreter loop call may own before the rest is marked lost */
#ifndef PY_MAX_RUN
#define PY_MAX_RUN 32
#endif
/* threads searched for the sampled one's PyThreadState */
#ifndef PY_MAX_THREADS
#define PY_MAX_THREADS 64
#endif

/*
 * One CPython process: where the interpreter loop is, where _PyRuntime is,
 * and the struct offsets the walk needs (from _Py_DebugOffsets on 3.13+, from
 * our table checked against the process before). Addresses are the process's.
 */
struct py_proc {
	__u64 runtime;		/* &_PyRuntime */
	__u64 eval_start[2];	/* _PyEval_EvalFrameDefault and its .cold part: [start, end) */
	__u64 eval_end[2];
	__u32 version;		/* PY_VERSION_HEX >> 16: 0x030b for 3.11 */
	__u16 kind;		/* enum py_frames_kind */
	__u16 rt_interp_head;	/* _PyRuntime.interpreters.head */
	__u16 interp_tstate_head; /* PyInterpreterState: tstate_head / threads.head */
	__u16 ts_next;		/* PyThreadState.next */
	__u16 ts_thread_id;	/* PyThreadState.thread_id: pthread_self(), the thread's fsbase */
	__u16 ts_frame;		/* PyThreadState: frame (3.8-3.10), cframe (3.11-3.12), current_frame (3.13+) */
	__u16 cframe_frame;	/* _PyCFrame.current_frame, or PY_NO_OFFSET */
	__u16 fr_code;		/* f_code / f_executable */
	__u16 fr_previous;	/* f_back / previous */
	__u16 fr_instr;		/* f_lasti (int, OBJECT) or prev_instr / instr_ptr (pointer) */
	__u16 fr_entry;		/* is_entry (ENTRY) or owner (OWNER) byte */
	__u16 co_firstlineno;	/* the check against a reused code object address */
	/* co_version's index among the PY_CODE_WORDS read at co_firstlineno (3.12+), else 0 */
	__u16 co_version_word;
	__u16 co_name;		/* before 3.12 (no co_version): co_name, whose hash joins the tag */
	__u16 str_hash;		/* PyASCIIObject.hash */
	__u16 pad[3];
};

/* 32-bit words of a code object read at co_firstlineno: its first line, and its version from 3.12 */
#define PY_CODE_WORDS 8

/*
 * What a frame tells of its code object beside the address. Code made at run
 * time is freed and its address reused, by code whose first line may be the
 * same (exec of generated source). From 3.12 each code object a process makes
 * takes the next co_version (CPython's func_state counter), which tells the
 * two apart. Before, the hash of its name does (an identifier, interned, so
 * hashed), unless the two have one name too.
 */
static inline __u32 py_code_tag(__u32 first, __u32 version, __u64 name_hash)
{
	/* a golden-ratio multiple: near versions spread */
	return first + version * 0x9e3779b1u + (__u32)(name_hash ^ name_hash >> 32);
}

/*
 * A Python frame takes two slots of a walked user stack (tags in
 * frametypes.h): PY_TAG_FRAME | code object address, then (py_code_tag << 32
 * | instruction offset). The offset is f_lasti on OBJECT versions, else the
 * byte distance from the code object to the instruction pointer. One slot:
 * PY_TAG_LOST | enum py_lost_reason, where Python frames could not be read;
 * PY_TAG_TRAMPOLINE, a -X perf trampoline (3.12+) that called the
 * interpreter loop, whose perf map name would repeat the Python frame BPF
 * read: folded into that frame (and counted) instead of shown twice.
 */
enum py_lost_reason {
	PY_LOST_NO_THREAD = 1,	/* no PyThreadState of the sampled thread */
	PY_LOST_READ = 2,	/* a frame could not be read */
	PY_LOST_RUN = 3,	/* more than PY_MAX_RUN frames in one loop call */
};

#endif /* EBPFPROF_PYTHON_H */
