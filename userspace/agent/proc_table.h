/* proc_table.h -- what the agent knows of each sampled process: exe, container, pod, service name */
#ifndef EBPFPROF_PROC_TABLE_H
#define EBPFPROF_PROC_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "cgroup.h"
#include "cgroup_cache.h"
#include "lib/options.h"
#include "k8s.h"
#include "profile.h"

struct proc_table;

/* Read once, when a process is first sampled; strings live as long as the entry. */
struct proc_info {
	__u32 pid;
	struct proc_image img;		/* which process and image: an exec or a recycled pid is another */
	bool superseded;		/* a later image of the pid is known: never read from /proc again */
	char exe[256];			/* path of the main executable, "" for kernel threads */
	struct cgroup_info cg;
	struct k8s_meta k8s;		/* names, when --kubernetes found them */
	char service[128];		/* series name: container name, else executable name */
	__u64 last_window;		/* the last window a sample of it was seen in */
};

/*
 * k8s may be NULL; docker_dir (NULL: none) is where dockerd's per-container
 * config.v2.json files are, for container names without Kubernetes;
 * cgroup1_memory (NULL: none) where the v1 memory hierarchy is mounted, on
 * v1 and hybrid hosts. NULL with errno set.
 */
struct proc_table *proc_table__new(const char *proc_root, enum group_by group_by, struct k8s *k8s,
				   const char *docker_dir, const char *cgroup1_memory);
void proc_table__free(struct proc_table *t);

/*
 * The entry of process image IMG, read from /proc on first sight (comm
 * names kernel threads and processes already gone, and an image first met
 * after a later one of its pid: /proc shows the later one). CG, the cgroup
 * ids BPF saw it in (NULL: not known), lets a process of cgroups read before
 * skip its cgroup file. Borrowed: valid until proc_table__evict.
 */
const struct proc_info *proc_table__get(struct proc_table *t, const struct proc_image *img,
					const char *comm, __u64 window, const struct cgroup_key *cg);

/*
 * As proc_table__get, for a fork child not exec'd since of image PARENT:
 * the parent's executable, and the cgroup its ids have in the cache, are
 * its own, so nothing is read when both are known (else it is read).
 */
const struct proc_info *proc_table__get_forked(struct proc_table *t, const struct proc_image *img,
					       const struct proc_image *parent, __u64 window,
					       const struct cgroup_key *cg);

/*
 * Drops the entries not sampled since window `before` whose image ended
 * (its process gone, or a later image of its pid known); calls forget(pid)
 * when a pid's newest image goes.
 */
size_t proc_table__evict(struct proc_table *t, __u64 before, void (*forget)(__u32 pid, void *ctx),
			 void *ctx);

size_t proc_table__count(const struct proc_table *t);

/* Cgroup files not read: another process of the same cgroup's answered. */
__u64 proc_table__cgroup_hits(const struct proc_table *t);

/* Cgroup files not kept for their cgroup: the path did not lead to the id (cgroup_cache.h). */
__u64 proc_table__cgroup_refused(const struct proc_table *t);

#endif /* EBPFPROF_PROC_TABLE_H */
