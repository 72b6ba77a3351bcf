/* java_runtime.h -- public header of runtimes/java/: finds HotSpot JVMs, tells BPF their code cache, names their frames */
#ifndef EBPFPROF_JAVA_RUNTIME_H
#define EBPFPROF_JAVA_RUNTIME_H

#include <stdbool.h>
#include <linux/types.h>
#include "symbolize/srcline.h"
#include "runtimes/runtime.h"

struct java;

struct java_opts {
	const char *proc_root;	/* NULL: /proc */
	int procs_fd;		/* BPF hash pid -> struct java_proc */
	int pids_fd;		/* BPF array: struct unwind_pid_bits, UNWIND_RT_JAVA of the pids in procs_fd */
};

struct java_stats {
	__u64 jvms;		/* JVMs handed to BPF */
	__u64 unknown_layout;	/* JVMs whose tables lack what the walk needs: native frames only */
	__u64 not_ready;	/* looks at a JVM still starting (no code cache or interpreter yet, tables short): looked again */
	__u64 methods;		/* methods read and cached */
	__u64 nmethods;		/* compiled methods (their debug info) read and cached */
	__u64 nmethods_replaced; /* a compilation found where another one was: read again */
	__u64 read_failed;	/* methods or nmethods we could not read (unloaded, or the process gone) */
	__u64 cache_bytes;	/* memory the caches hold */
	__u64 frames_named;	/* Java frames named at harvests (inlined ones included) */
	__u64 frames_unnamed;	/* Java frames left unnamed */
	__u64 frames_lost[4];	/* marks where BPF stopped a Java walk, by enum java_lost_reason */
	__u64 read_ns;		/* time spent reading JVM memory to name frames */
	__u64 first_named_ns;	/* the last JVM found: from finding it to naming its first frame */
};

/* NULL with errno set. */
struct java *java__new(const struct java_opts *opts);
void java__free(struct java *j);

/*
 * Looks for a HotSpot JVM in PID (a mapped libjvm.so), reads its tables and
 * hands BPF its code cache. 0: BPF walks it; -ENOENT: no JVM; -ENOTSUP: a
 * JVM whose tables lack what we need, still a second after the first look
 * (counted); -EAGAIN: a JVM still starting (its interpreter not yet made, or
 * its tables short until then), looked at again by java__retry.
 */
int java__add_image(struct java *j, const struct proc_image *img);

/* Looks again at JVMs that were starting; cheap when there are none. */
void java__retry(struct java *j);

/* BPF saw method or nmethod ADDR (JAVA_EVENT_METHOD, _NMETHOD) run in IMG first: read it while it lives. */
void java__seen(struct java *j, const struct proc_image *img, __u32 kind, __u64 addr);

/* Whether a slot of a walked stack starts a Java frame (two slots) or is a lost-frames mark (one). */
bool java__is_frame(__u64 slot);
bool java__is_lost(__u64 slot);

/*
 * Names the Java frame in slots (a, b) of a stack of image IMG: out[0, n) get the
 * frames, callee first (a compiled frame with inlined methods gives several),
 * at most max. Strings are owned by the cache (valid until the second
 * java__sweep after the process exits). *loc is unique to the (process,
 * method or nmethod, position). Returns n >= 1 (an unnamed frame is one
 * "[unknown java frame]").
 */
int java__frame(struct java *j, const struct proc_image *img, __u64 a, __u64 b,
		struct src_line *out, int max, __u64 *loc);

/* The pseudo frame name of a lost-frames slot; counted. */
const char *java__lost_name(struct java *j, __u64 slot);

/* Once a window: frees the caches of processes dead since the previous sweep. */
void java__sweep(struct java *j);

void java__stats(const struct java *j, struct java_stats *out);

/* java behind the runtime interface (runtimes/runtime.h): its line of runtimes[] */
extern const struct runtime_ops java_runtime;

#endif /* EBPFPROF_JAVA_RUNTIME_H */
