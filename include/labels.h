/* labels.h -- types shared by the BPF label reader (bpf/labels.bpf.h) and userspace (runtimes/labels) */
#ifndef EBPFPROF_LABELS_H
#define EBPFPROF_LABELS_H

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
#define LABEL_SET_UNKNOWN_KEY 2	/* a thread-context attribute whose key index has no name: left out */

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

/* Where a process keeps the labels of the code a thread runs. */
enum label_source {
	LABELS_GO_MAP = 1,	/* Go 1.19's runtime/pprof labelMap, a map[string]string: g.labels -> *hmap */
	LABELS_GO_SLICE = 2,	/* Go 1.24's, struct{ list []label }: g.labels -> a slice header */
	LABELS_CUSTOM_V0 = 3,	/* custom-labels ABI v0: a thread's {storage, count} at a TLS offset */
	LABELS_OTEL = 4,	/* OpenTelemetry thread context: a pointer to the thread's record at a TLS offset */
	LABELS_CUSTOM_V1 = 5,	/* custom-labels ABI v1: a pointer to the thread's {storage, count, capacity} */
};

/*
 * One process image's label source and offsets, found by userspace in its
 * executable or libraries. Go: g at fsbase + tls, then g.m, m.curg,
 * curg.labels. Custom labels: the thread's table at fsbase + tls (v0), or
 * a pointer to it there (v1).
 * OpenTelemetry: the pointer to the thread's record at fsbase + tls. start
 * and exec are its struct proc_image's: a table of an earlier image is
 * never used.
 */
struct label_proc {
	__u64 start;
	__u32 exec;
	__u32 source;		/* enum label_source */
	__s64 tls;		/* offset from the thread pointer (negative on x86-64) */
	__u32 g_m;
	__u32 m_curg;
	__u32 g_labels;
	__u32 pad;
};

/*
 * OpenTelemetry's thread-context record (OTEP 4947), in native byte order,
 * packed as laid out here (the u16 falls on its own alignment): a 28-byte
 * header, then attrs_size bytes of {key index u8, length u8, value} entries.
 */
struct otel_record {
	__u8 trace_id[16];
	__u8 span_id[8];
	__u8 valid;		/* 1: the record may be read; anything else: ignored */
	__u8 trace_flags;
	__u16 attrs_size;
};

#define OTEL_ATTRS_READ 512	/* attribute bytes BPF reads of a record; past them it is cut, counted */
#define OTEL_ATTRS_ENTRIES 16	/* attribute entries BPF parses of a record; the same */

/* The name of key index `index` of process `pid`'s thread-context records (its process context). */
struct otel_key_id {
	__u32 pid;
	__u32 index;
};

struct otel_key {
	char name[LABEL_KEY_MAX];	/* NUL-ended; "" is no name (no label) */
	__u32 flags;			/* LABEL_SET_TRUNCATED: the name was cut */
};

#endif /* EBPFPROF_LABELS_H */
