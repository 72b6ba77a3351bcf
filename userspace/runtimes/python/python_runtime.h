/* python_runtime.h -- public header of runtimes/python/: finds CPython in processes, tells BPF, names its frames */
#ifndef EBPFPROF_PYTHON_RUNTIME_H
#define EBPFPROF_PYTHON_RUNTIME_H

#include <stdbool.h>
#include <linux/types.h>
#include "symbolize/srcline.h"
#include "runtimes/runtime.h"

struct python;

struct python_opts {
	const char *proc_root;	/* NULL: /proc */
	int procs_fd;		/* BPF hash pid -> struct py_proc */
	int pids_fd;		/* BPF array: struct unwind_pid_bits, UNWIND_RT_PYTHON of the pids in procs_fd */
	__u32 codes_max;	/* code objects cached per process; 0: 65536 */
};

struct python_stats {
	__u64 procs;		/* CPython processes handed to BPF */
	__u64 unknown_versions;	/* processes with a CPython we do not know: native frames only */
	__u64 layout_mismatch;	/* known version whose memory did not match our offsets */
	__u64 files_skipped;	/* executables known from an earlier process to hold no interpreter */
	__u64 codes;		/* code objects read and cached */
	__u64 codes_failed;	/* code objects we could not read (freed, or the process gone) */
	__u64 code_bytes;	/* memory the cached code objects hold */
	__u64 code_cache_full;	/* code objects not read: their process's cache was full */
	__u64 frames_named;	/* Python frames named at harvests */
	__u64 frames_unnamed;	/* Python frames left unnamed */
	__u64 frames_lost[4];	/* marks of frames BPF could not read, by enum py_lost_reason */
	__u64 trampolines;	/* -X perf trampoline frames folded into the Python frame they call */
	__u64 read_ns;		/* time spent reading code objects */
};

/* NULL with errno set. */
struct python *python__new(const struct python_opts *opts);
void python__free(struct python *py);

/*
 * Looks for CPython in process image IMG (a mapped libpython3.X.so, or an
 * executable with the interpreter linked in) and hands BPF its table. What
 * an earlier image of the pid read stays to name its samples (runtime.h's
 * add_image). 0: a Python BPF now walks; -ENOENT: no Python; -ENOTSUP: a
 * version we do not know (counted once, never guessed).
 */
int python__add_image(struct python *py, const struct proc_image *img);

/*
 * BPF saw code object CODE, of tag TAG (py_code_tag), run in IMG for the
 * first time: read it while it lives.
 */
void python__code_seen(struct python *py, const struct proc_image *img, __u64 code, __u32 tag);

/* Whether a user stack slot is a Python frame (two slots) or a lost-frames mark (one). */
bool python__is_frame(__u64 slot);
bool python__is_lost(__u64 slot);

/* Whether a slot is a -X perf trampoline to fold into its Python frame; counted. */
bool python__fold_trampoline(struct python *py, __u64 slot);

/*
 * Names the Python frame in slots (a, b) of a stack of image IMG: out gets
 * module.qualname, file and line (strings owned by the cache, valid until the
 * second python__sweep after the image ends); *loc gets an address unique
 * to the (image, code object, instruction) for a pprof Location. 0, or
 * -ENOENT when the code object could not be read (out names it unknown).
 */
int python__frame(struct python *py, const struct proc_image *img, __u64 a, __u64 b,
		  struct src_line *out, __u64 *loc);

/* The pseudo frame name of a lost-frames slot; counted. */
const char *python__lost_name(struct python *py, __u64 slot);

/* Once a window: frees the caches of processes dead since the previous sweep. */
void python__sweep(struct python *py);

void python__stats(const struct python *py, struct python_stats *out);

/* python behind the runtime interface (runtimes/runtime.h): its line of runtimes[] */
extern const struct runtime_ops python_runtime;

#endif /* EBPFPROF_PYTHON_RUNTIME_H */
