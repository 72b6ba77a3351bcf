/* scope.h -- the cgroup (v2, else v1) the agent restricts sampling to (--cgroup, --scope pod) */
#ifndef EBPFPROF_SCOPE_H
#define EBPFPROF_SCOPE_H

#include <stddef.h>
#include "lib/options.h"
#include "collect/sampler.h"

/*
 * Finds the cgroup to filter on: opens it in cgroup v2 (sc->fd), else finds
 * it in a v1 hierarchy (sc->v1_ssid, sc->v1_id); sc->fd is -1 and v1_id 0
 * when sampling is not restricted. --cgroup takes a path as /proc/PID/cgroup
 * shows it (relative to the hierarchy's mount) or an absolute path under the
 * v2 mount; --scope pod takes the agent's own pod: the parent of its
 * container's cgroup. Prints one line and returns a negative errno when that
 * is impossible.
 */
int scope__open(const struct config *cfg, struct cgroup_scope *sc);

/* Where cgroup2 is mounted ("/sys/fs/cgroup" or ".../unified"), from /proc/self/mountinfo. */
int scope__cgroup2_mount(char *buf, size_t len);

/*
 * Where the cgroup v1 memory hierarchy is mounted (into buf) and 1 + its
 * subsystem's line in /proc/cgroups (*ssid): what announcements carry on v1
 * and hybrid hosts, for the agent's cgroup cache. 0, or -ENOENT (v2 only).
 */
int scope__cgroup1_memory(char *buf, size_t len, __u32 *ssid);

#endif /* EBPFPROF_SCOPE_H */
