/* perl_runtime.h -- public header of runtimes/perl/: finds perl in processes, tells BPF, names its subs */
#ifndef EBPFPROF_PERL_RUNTIME_H
#define EBPFPROF_PERL_RUNTIME_H

#include <linux/types.h>
#include "runtimes/runtime.h"

struct perl_stats {
	__u64 procs;		/* perl processes handed to BPF */
	__u64 unknown_versions;	/* a perl of a version or build we do not know: native frames only */
	__u64 funcs;		/* subs and file names read and cached */
	__u64 funcs_failed;	/* subs we could not read (freed, reused, the process gone) */
	__u64 func_bytes;	/* memory the cached names hold */
	__u64 func_cache_full;	/* names not read: their process's cache was full */
	__u64 frames_named;	/* Perl frames named at harvests */
	__u64 frames_unnamed;	/* Perl frames left unnamed */
	__u64 frames_lost[5];	/* marks of frames BPF could not read, by enum perl_lost_reason */
	__u64 read_ns;		/* time spent reading names */
};

/* its line of runtimes[] */
extern const struct runtime_ops perl_runtime;

#endif /* EBPFPROF_PERL_RUNTIME_H */
