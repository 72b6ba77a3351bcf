/* ruby_runtime.h -- public header of runtimes/ruby/: finds CRuby in processes, tells BPF, names its frames */
#ifndef EBPFPROF_RUBY_RUNTIME_H
#define EBPFPROF_RUBY_RUNTIME_H

#include <linux/types.h>
#include "runtimes/runtime.h"
#include "../../../include/ruby.h"

struct ruby_stats {
	__u64 procs;		/* CRuby processes handed to BPF */
	__u64 jit_procs;	/* of which with YJIT's code found */
	__u64 unknown_versions;	/* a CRuby whose layout we do not know, or cannot find: native frames only */
	__u64 iseqs;		/* iseqs read and cached */
	__u64 iseqs_failed;	/* iseqs that could not be read (freed, the process gone) */
	__u64 mes;		/* method entries (a method's name and class) read */
	__u64 mes_failed;
	__u64 cache_bytes;	/* memory the cached names and line tables hold */
	__u64 cache_full;	/* not read: their process's cache was full */
	__u64 frames_named;
	__u64 frames_unnamed;	/* frames whose iseq or method entry was never read */
	__u64 frames_no_line;	/* named frames without a line */
	__u64 frames_lost[RB_LOST_REASONS];	/* marks of frames BPF could not read, by reason */
	__u64 frames_jit;	/* marks of YJIT code */
	__u64 read_ns;		/* time spent reading iseqs and method entries */
};

/* its line of runtimes[] */
extern const struct runtime_ops ruby_runtime;

#endif /* EBPFPROF_RUBY_RUNTIME_H */
