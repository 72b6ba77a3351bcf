/* go_runtime.h -- public header of runtimes/go/: Go processes whose pprof labels BPF reads at each sample */
#ifndef EBPFPROF_GO_RUNTIME_H
#define EBPFPROF_GO_RUNTIME_H

#include <linux/types.h>
#include "runtimes/runtime.h"

struct go_stats {
	__u64 procs;		/* Go process images whose labels BPF reads */
	__u64 unknown_version;	/* Go binaries of a version without a checked layout: no labels */
	__u64 unreadable;	/* Go binaries whose version could not be read */
};

/* its line of runtimes[] */
extern const struct runtime_ops go_runtime;

#endif /* EBPFPROF_GO_RUNTIME_H */
