/* labels_runtime.h -- public header of runtimes/labels/: processes whose own labels BPF reads at each sample */
#ifndef EBPFPROF_LABELS_RUNTIME_H
#define EBPFPROF_LABELS_RUNTIME_H

#include <linux/types.h>
#include "runtimes/runtime.h"

struct labels_stats {
	__u64 go_procs;		/* Go process images whose pprof labels BPF reads */
	__u64 custom_procs;	/* process images publishing custom labels (ABI v0) BPF reads */
	__u64 otel_procs;	/* process images publishing an OpenTelemetry thread context BPF reads */
	__u64 dynamic_tls;	/* thread contexts in dynamic TLS: not read */
	__u64 unknown_version;	/* Go binaries, or custom-labels ABIs, of a version we do not know */
	__u64 unreadable;	/* Go binaries whose version, or labels whose place, could not be read */
};

/* its line of runtimes[] */
extern const struct runtime_ops labels_runtime;

#endif /* EBPFPROF_LABELS_RUNTIME_H */
