/* cpus.h -- lists online CPUs from sysfs */
#ifndef EBPFPROF_CPUS_H
#define EBPFPROF_CPUS_H

#include <stddef.h>

/* Parses a kernel CPU list ("0-3,5,7-8") of len bytes; *cpus is malloc'd. 0 or -EINVAL/-ENOMEM. */
int cpus__parse(const char *buf, size_t len, int **cpus, int *n);

/* Reads /sys/devices/system/cpu/online. */
int cpus__online(int **cpus, int *n);

#endif /* EBPFPROF_CPUS_H */
