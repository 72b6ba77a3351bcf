/* php_runtime.h -- public header of runtimes/php/: finds the Zend VM in processes, tells BPF, names its PHP frames */
#ifndef EBPFPROF_PHP_RUNTIME_H
#define EBPFPROF_PHP_RUNTIME_H

#include <linux/types.h>
#include "runtimes/runtime.h"

struct php_stats {
	__u64 procs;		/* PHP processes handed to BPF */
	__u64 unknown_versions;	/* a PHP whose layout we do not know: native frames only */
	__u64 funcs;		/* functions (zend_function) read and cached */
	__u64 funcs_failed;	/* functions we could not read (freed, another one there, the process gone) */
	__u64 func_bytes;	/* memory the cached functions hold */
	__u64 func_cache_full;	/* functions not read: their process's cache was full */
	__u64 frames_named;	/* PHP frames named at harvests */
	__u64 frames_unnamed;	/* PHP frames left unnamed */
	__u64 frames_lost[5];	/* marks of frames BPF could not read, by enum php_lost_reason */
	__u64 read_ns;		/* time spent reading functions */
};

/* its line of runtimes[] */
extern const struct runtime_ops php_runtime;

#endif /* EBPFPROF_PHP_RUNTIME_H */
