/* cgroup_cache.h -- what /proc/PID/cgroup said, by cgroup v2 id, so processes of one cgroup read it once */
#ifndef EBPFPROF_CGROUP_CACHE_H
#define EBPFPROF_CGROUP_CACHE_H

#include <stddef.h>
#include <linux/types.h>
#include "cgroup.h"

struct cgroup_cache;

/*
 * A cache of at most CAP cgroups, checked against the cgroup v2 hierarchy
 * (/sys/fs/cgroup, or /sys/fs/cgroup/unified beside v1 on a hybrid host).
 * NULL with errno set: ENOENT when neither is mounted as cgroup2.
 */
struct cgroup_cache *cgroup_cache__new(size_t cap);
void cgroup_cache__free(struct cgroup_cache *c);

/* Where the v2 hierarchy it checks against is mounted. */
const char *cgroup_cache__root(const struct cgroup_cache *c);

/* The cgroup of ID as read before, or NULL. Borrowed: valid until the next add. */
const struct cgroup_info *cgroup_cache__find(struct cgroup_cache *c, __u64 id);

/*
 * Keeps CG as what cgroup ID says, if it is a v2-only read whose path is, under
 * the cgroup root, the directory whose inode is ID (a process that changed
 * cgroup between its announcement and the read is not kept under the old id).
 * A full cache is emptied first. True when kept.
 */
bool cgroup_cache__add(struct cgroup_cache *c, __u64 id, const struct cgroup_info *cg);

/* Lookups answered, and entries refused because their path did not check out. */
__u64 cgroup_cache__hits(const struct cgroup_cache *c);
__u64 cgroup_cache__refused(const struct cgroup_cache *c);

#endif /* EBPFPROF_CGROUP_CACHE_H */
