/* report.h -- turns the sampler's aggregated stacks into a symbolized CPU profile (pprof) */
#ifndef EBPFPROF_REPORT_H
#define EBPFPROF_REPORT_H

#include <stdbool.h>
#include <linux/types.h>
#include "pprof.h"
#include "sampler.h"
#include "symbolizer.h"

struct report_opts {
	int frequency;
	__s64 time_nanos;	/* start of the profile, ns since the epoch */
	__s64 duration_nanos;
	bool per_thread;	/* add a tid label */
	int demangle;		/* enum demangle_mode */
};

/* The pprof header of a CPU profile: samples/count and cpu/nanoseconds, period 1e9 / frequency. */
void report__cpu_opts(struct pprof_opts *po, const struct report_opts *opts);

/* Reads every count and stack of slot, names the frames with sym. NULL with errno set. */
struct pprof *report__build(struct sampler *s, int slot, struct symbolizer *sym,
			    const struct report_opts *opts);

#endif /* EBPFPROF_REPORT_H */
