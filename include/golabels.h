/* golabels.h -- types shared by the BPF label reader (bpf/golabels.bpf.h) and userspace (runtimes/go) */
#ifndef EBPFPROF_GOLABELS_H
#define EBPFPROF_GOLABELS_H

#ifndef __bpf__	/* BPF has these from vmlinux.h */
#include <linux/types.h>
#endif

/*
 * Bounds of one sample's labels: past them a label or its tail is left
 * out, and the sample's set says so (LABEL_SET_TRUNCATED, counted). Sizes
 * are powers of two: BPF masks lengths with them.
 */
#define LABELS_MAX 8
#define LABEL_KEY_MAX 32	/* bytes kept of a key, NUL included */
#define LABEL_VALUE_MAX 64	/* bytes kept of a value, NUL included: a trace id's 32 hex digits fit */

struct label_kv {
	char key[LABEL_KEY_MAX];
	char value[LABEL_VALUE_MAX];
};

#define LABEL_SET_TRUNCATED 1	/* more labels than LABELS_MAX, or a key or value cut */

/*
 * The labels a sample was taken under, stored once per distinct set in a
 * slot's label map under a 64-bit hash of its content (sample_key.labels_hash),
 * as stacks are: order-independent, so one set read in two orders is one.
 */
struct label_set {
	__u32 n;
	__u32 flags;
	struct label_kv kv[LABELS_MAX];
};

/* How a Go version keeps a goroutine's labels (runtime/pprof's labelMap). */
enum go_labels_layout {
	GO_LABELS_MAP = 1,	/* map[string]string (Go 1.19): g.labels -> *hmap */
	GO_LABELS_SLICE = 2,	/* struct{ list []label } (Go 1.24): g.labels -> slice header */
};

/*
 * One Go process image's offsets, found by userspace in its binary: g at
 * fsbase + tls_g, then g.m, m.curg, curg.labels. start and exec are its
 * struct proc_image's: a table of an earlier image is never used.
 */
struct go_labels_proc {
	__u64 start;
	__u32 exec;
	__u32 layout;		/* enum go_labels_layout */
	__s64 tls_g;		/* g's offset from the thread pointer (negative on x86-64) */
	__u32 g_m;
	__u32 m_curg;
	__u32 g_labels;
	__u32 pad;
};

#endif /* EBPFPROF_GOLABELS_H */
