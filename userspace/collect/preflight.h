/* preflight.h -- checks that the kernel and our privileges allow BPF profiling, before we try */
#ifndef EBPFPROF_PREFLIGHT_H
#define EBPFPROF_PREFLIGHT_H

#include <stdbool.h>

/* Prints one line naming what is missing and returns a negative errno, or returns 0. */
int preflight__check(void);

/* Whether BPF has atomic exchange (BPF_XCHG, 5.12), which off-CPU tracing uses where there. */
bool preflight__bpf_xchg(void);

/* Whether the running kernel's version is below MAJOR.MINOR (false when uname cannot tell). */
bool preflight__kernel_before(int major, int minor);

/* One line for a load or attach failure of the sampler, naming the likely cause. */
void preflight__explain(const char *what, int err);

#endif /* EBPFPROF_PREFLIGHT_H */
