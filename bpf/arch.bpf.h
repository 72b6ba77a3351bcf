/* arch.bpf.h -- the target architecture's registers and frame layouts, picked by __TARGET_ARCH_* */
#ifndef EBPFPROF_ARCH_BPF_H
#define EBPFPROF_ARCH_BPF_H

#if defined(__TARGET_ARCH_arm64)
#include "arch_arm64.bpf.h"
#elif defined(__TARGET_ARCH_x86)
#include "arch_x86.bpf.h"
#else
#error "ebpfprof's BPF builds for x86 and arm64 only (-D__TARGET_ARCH_x86 or arm64)"
#endif

#endif /* EBPFPROF_ARCH_BPF_H */
