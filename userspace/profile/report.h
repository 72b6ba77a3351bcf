/* report.h -- turns aggregated on-CPU samples and off-CPU time into one symbolized pprof profile */
#ifndef EBPFPROF_REPORT_H
#define EBPFPROF_REPORT_H

#include <stdbool.h>
#include <linux/types.h>
#include "lib/options.h"
#include "collect/collect.h"
#include "pprof.h"
#include "symbolize/symbolize.h"

struct report_opts {
	int frequency;
	__s64 time_nanos;	/* start of the profile, ns since the epoch */
	__s64 duration_nanos;
	bool per_thread;	/* add a tid label */
	int demangle;		/* enum demangle_mode */
	enum profile_mode mode;
};

/*
 * The pprof header for a mode: cpu has samples/count and cpu/nanoseconds
 * (period 1e9 / frequency); off-cpu has off_cpu/nanoseconds and blocks/count;
 * wall has cpu/nanoseconds, off_cpu/nanoseconds and wall/nanoseconds, wall
 * the default, so that for every stack wall = on-CPU samples x period +
 * off-CPU time.
 */
void report__pprof_opts(struct pprof_opts *po, const struct report_opts *opts);

/* The value folded and top output show by default: samples, off-CPU time, or wall time. */
int report__default_value(enum profile_mode mode);

/* Values of count CPU samples, laid out for mode; returns how many. */
int report__cpu_values(enum profile_mode mode, __s64 period, __u64 count, __s64 *values);

/* Values of ns of off-CPU time in blocks blocks, laid out for mode. */
int report__offcpu_values(enum profile_mode mode, __u64 ns, __u64 blocks, __s64 *values);

/*
 * Reads every count and stack of s's slot (s may be NULL; its samples are
 * left out in off-cpu mode) and of oc's slot oc_slot (oc may be NULL), names
 * the frames with sym. NULL with errno set.
 */
struct pprof *report__build(struct sampler *s, int slot, struct offcpu *oc, int oc_slot,
			    struct symbolizer *sym, const struct report_opts *opts);

#endif /* EBPFPROF_REPORT_H */
