/* null_runtime.h -- public header of runtimes/null/: the test-only skeleton runtime, built with EBPFPROF_TEST_RUNTIMES */
#ifndef EBPFPROF_NULL_RUNTIME_H
#define EBPFPROF_NULL_RUNTIME_H

#include <linux/types.h>
#include "runtimes/runtime.h"

struct null_stats {
	__u64 procs;		/* processes whose null frames BPF walks */
	__u64 funcs;		/* function names read */
	__u64 funcs_failed;	/* function names that could not be read */
	__u64 frames_named;
	__u64 frames_unnamed;
	__u64 frames_lost;	/* marks of frames BPF could not read */
};

/* its line of runtimes[] */
extern const struct runtime_ops null_runtime;

#endif /* EBPFPROF_NULL_RUNTIME_H */
