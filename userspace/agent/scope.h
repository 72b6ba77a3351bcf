/* scope.h -- the cgroup v2 directory the agent restricts sampling to (--cgroup, --scope pod) */
#ifndef EBPFPROF_SCOPE_H
#define EBPFPROF_SCOPE_H

#include <stddef.h>
#include "lib/options.h"

/*
 * Opens the directory to filter on, or sets *fd to -1 when sampling is not
 * restricted. --cgroup takes a path as /proc/PID/cgroup shows it ("0::" line,
 * relative to the cgroup2 mount) or an absolute path under that mount;
 * --scope pod takes the agent's own pod: the parent of its container's cgroup.
 * Prints one line and returns a negative errno when that is impossible.
 */
int scope__open(const struct config *cfg, int *fd);

/* Where cgroup2 is mounted ("/sys/fs/cgroup" or ".../unified"), from /proc/self/mountinfo. */
int scope__cgroup2_mount(char *buf, size_t len);

#endif /* EBPFPROF_SCOPE_H */
