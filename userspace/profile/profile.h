/* profile.h -- public header of profile/: the profile model and its encoders: stacks to pprof, folded and top; the protobuf writer */
#ifndef EBPFPROF_PROFILE_MODULE_H
#define EBPFPROF_PROFILE_MODULE_H

#include "pbuf.h"
#include "pprof.h"
#include "pprof_builder.h"
#include "stack.h"
#include "report.h"
#include "heap_report.h"

#endif /* EBPFPROF_PROFILE_MODULE_H */
