/* cgroup_cache.h -- what /proc/PID/cgroup said, by the kernel's cgroup ids, so processes of one cgroup read it once */
#ifndef EBPFPROF_CGROUP_CACHE_H
#define EBPFPROF_CGROUP_CACHE_H

#include <stddef.h>
#include <linux/types.h>
#include "cgroup.h"

struct cgroup_cache;

/* A process's cgroups as its announcement named them (struct task_event). */
struct cgroup_key {
	__u64 v2;	/* its cgroup v2 id; 0: none */
	__u64 v1;	/* its v1 memory cgroup's kernfs id; 0: none (a v2-only host) */
};

/*
 * A cache of at most CAP cgroups, checked against the cgroup v2 hierarchy
 * (/sys/fs/cgroup, or /sys/fs/cgroup/unified beside v1 on a hybrid host)
 * and, on v1 and hybrid hosts, the v1 memory hierarchy mounted at V1_MEMORY
 * (NULL: none). NULL with errno set: ENOENT when neither is mounted.
 */
struct cgroup_cache *cgroup_cache__new(size_t cap, const char *v1_memory);
void cgroup_cache__free(struct cgroup_cache *c);

/* Where the v2 hierarchy it checks against is mounted; NULL: not mounted. */
const char *cgroup_cache__root(const struct cgroup_cache *c);

/* The cgroup of KEY as read before, or NULL. Borrowed: valid until the next add. */
const struct cgroup_info *cgroup_cache__find(struct cgroup_cache *c, const struct cgroup_key *key);

/*
 * Keeps CG as what KEY says, if each part of KEY names the directory CG's
 * path names: v2's under the v2 root (where one is mounted), v1's memory path
 * under the v1 memory mount (where CG has v1 lines). A process that changed
 * cgroup between its announcement and the read is so never kept under the
 * old key. A full cache is emptied first. True when kept.
 */
bool cgroup_cache__add(struct cgroup_cache *c, const struct cgroup_key *key,
		       const struct cgroup_info *cg);

/* Lookups answered, and entries refused because their paths did not check out. */
__u64 cgroup_cache__hits(const struct cgroup_cache *c);
__u64 cgroup_cache__refused(const struct cgroup_cache *c);

#endif /* EBPFPROF_CGROUP_CACHE_H */
