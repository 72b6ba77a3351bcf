/* v8_runtime.h -- public header of runtimes/v8/: finds V8 (Node.js) in processes, tells BPF, names its JavaScript frames */
#ifndef EBPFPROF_V8_RUNTIME_H
#define EBPFPROF_V8_RUNTIME_H

#include <linux/types.h>
#include "runtimes/runtime.h"

/* The code a JavaScript frame ran: V8's tiers as the frame tells them */
enum v8_tier {
	V8_TIER_INTERPRETED,	/* Ignition's bytecode */
	V8_TIER_BASELINE,	/* Sparkplug's code: it keeps the bytecode's frame */
	V8_TIER_OPTIMIZED,	/* Maglev's or TurboFan's code */
	V8_TIER_BUILTIN,	/* a JavaScript builtin, in the embedded blob */
	V8_TIERS
};

struct v8_stats {
	__u64 procs;		/* Node.js processes handed to BPF */
	__u64 unknown_versions;	/* a V8 whose v8dbg_* symbols lack what we need: native frames only */
	__u64 code_range_waits;	/* processes looked at again for their JIT code range */
	__u64 code_range_updates;	/* code ranges found grown and given to BPF */
	__u64 funcs;		/* functions (SharedFunctionInfos) read and cached */
	__u64 funcs_failed;	/* functions we could not read (moved, freed, the process gone) */
	__u64 func_bytes;	/* memory the cached functions and scripts hold */
	__u64 func_cache_full;	/* functions not read: their process's cache was full */
	__u64 frames_named;	/* JavaScript frames named at harvests */
	__u64 frames_unnamed;	/* JavaScript frames left unnamed */
	__u64 frames_no_line;	/* named frames without a line (no position table, no line ends) */
	__u64 stub_frames;	/* V8 frames of generated code running no JavaScript function */
	__u64 frames_tier[V8_TIERS];	/* frames by the code they ran (enum v8_tier) */
	__u64 frames_lost[3];	/* marks of frames BPF could not read, by enum v8_lost_reason */
	__u64 read_ns;		/* time spent reading functions */
};

/* its line of runtimes[] */
extern const struct runtime_ops v8_runtime;

#endif /* EBPFPROF_V8_RUNTIME_H */
