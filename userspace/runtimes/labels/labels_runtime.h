/* labels_runtime.h -- public header of runtimes/labels/: processes whose own labels BPF reads at each sample */
#ifndef EBPFPROF_LABELS_RUNTIME_H
#define EBPFPROF_LABELS_RUNTIME_H

#include <linux/types.h>
#include "runtimes/runtime.h"

struct labels_stats {
	__u64 go_procs;		/* Go process images whose pprof labels BPF reads */
	__u64 custom_procs[2];	/* process images publishing custom labels BPF reads: ABI v0, v1 */
	__u64 otel_procs;	/* process images publishing an OpenTelemetry thread context BPF reads */
	__u64 dynamic_tls;	/* thread contexts in dynamic TLS: not read */
	__u64 unknown_version;	/* Go binaries, or custom-labels ABIs, of a version we do not know */
	__u64 unreadable;	/* Go binaries whose version, or labels whose place, could not be read */
	__u64 context_looks;	/* looks again for the process context of a process that had none */
	__u64 context_late;	/* label sources found by such a look */
	__u64 waits_full;	/* processes without labels not looked at again: no room */
};

struct label_set;

/*
 * A set as BPF stored it, made one to use: its count bounded, its strings
 * NUL-ended, and of labels with one key the first alone kept (the rule of
 * custom-labels v1, whose table may repeat a key; Go's and OpenTelemetry's
 * have none to drop).
 */
void labels__tidy(struct label_set *set);

/* its line of runtimes[] */
extern const struct runtime_ops labels_runtime;

#endif /* EBPFPROF_LABELS_RUNTIME_H */
