/* collect.h -- public header of collect/: the BPF side of collection: preflight checks, loading the sampler and the off-CPU tracer, harvesting their maps */
#ifndef EBPFPROF_COLLECT_MODULE_H
#define EBPFPROF_COLLECT_MODULE_H

#include "preflight.h"
#include "sampler.h"
#include "sampler_config.h"
#include "offcpu.h"
#include "collect_stats.h"

#endif /* EBPFPROF_COLLECT_MODULE_H */
