/* heap_report.h -- Go heap profile records -> pprof, as runtime/pprof and godeltaprof write them */
#ifndef EBPFPROF_HEAP_REPORT_H
#define EBPFPROF_HEAP_REPORT_H

#include "collect/goheap/goheap.h"
#include "pprof.h"
#include "pprof_builder.h"

/* The sample types, in runtime/pprof's order; inuse_space (go tool pprof's default) is the last. */
enum heap_value { HEAP_ALLOC_OBJECTS, HEAP_ALLOC_SPACE, HEAP_INUSE_OBJECTS, HEAP_INUSE_SPACE };

/* A heap profile's options: four sample types, period "space/bytes" RATE (0: none). */
void heap_report__opts(struct pprof_opts *o, __s64 rate, __s64 time_nanos, __s64 duration_nanos);

/*
 * Adds IMG's records (SNAP) to B, stacks named by SYM with their inlined
 * calls, runtime frames above the first non-runtime one hidden as
 * runtime/pprof hides them; counts scaled as runtime/pprof scales them by
 * SNAP's rate. With PREV (the same image's previous snapshot, or NULL)
 * alloc_* are the growth since PREV, as godeltaprof emits them, so a
 * backend's sum of windows is the process's total; inuse_* stay as of the
 * last GC. A record with nothing to say is left out. LABELS go on every
 * sample, with "bytes" (the average object size) as runtime/pprof's.
 * 0 or a negative errno.
 */
int heap_report__add(struct pprof_builder *b, struct symbolizer *sym, const struct proc_image *img,
		     const struct goheap_snapshot *snap, const struct goheap_snapshot *prev,
		     const struct pprof_label *labels, int n_labels);

/* runtime/pprof's scaleHeapSample: the count and bytes of a Poisson sample at RATE, unbiased. */
void heap_report__scale(__u64 count, __u64 bytes, __s64 rate, __s64 *out_count, __s64 *out_bytes);

#endif /* EBPFPROF_HEAP_REPORT_H */
