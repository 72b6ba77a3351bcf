/* preload.h -- the processes alive when a whole-system profile starts, busiest first, for their tables to load before sampling */
#ifndef EBPFPROF_PRELOAD_H
#define EBPFPROF_PRELOAD_H

#include <linux/types.h>

/*
 * The user processes under proc_root (no kernel threads), ordered by the CPU
 * time they have used, most first, at most max. *pids is malloc'ed. Returns
 * how many, or a negative errno.
 */
int preload__busiest(const char *proc_root, int max, __u32 **pids);

#endif /* EBPFPROF_PRELOAD_H */
