/* report.h -- turns the sampler's aggregated stacks into a symbolized pprof profile */
#ifndef EBPFPROF_REPORT_H
#define EBPFPROF_REPORT_H

#include <stdbool.h>
#include <linux/types.h>
#include "pprof.h"
#include "sampler.h"
#include "symbolizer.h"

struct report_opts {
	int frequency;
	__s64 time_nanos;	/* start of the run, ns since the epoch */
	__s64 duration_nanos;
	bool per_thread;	/* add a tid label */
};

/* Reads every count and stack from s, names the frames with sym. NULL with errno set. */
struct pprof *report__build(struct sampler *s, struct symbolizer *sym,
			    const struct report_opts *opts);

#endif /* EBPFPROF_REPORT_H */
