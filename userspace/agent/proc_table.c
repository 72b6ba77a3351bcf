/* proc_table.c -- what the agent knows of each sampled process: exe, container, pod, service name */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/array.h"
#include "lib/hashmap.h"
#include "lib/proc_image.h"
#include "cgroup_cache.h"
#include "docker_meta.h"
#include "proc_table.h"

#define CGROUP_CACHE_CAP 64	/* cgroups whose processes come and go; 40 KB */

struct proc_table {
	char proc_root[64];
	enum group_by group_by;
	struct k8s *k8s;
	char docker_dir[256];		/* "": no Docker names */
	struct proc_info **entries;	/* hmap ids are index + 1; NULL: a freed slot */
	size_t n, cap;
	__u32 *free_ids;		/* slots to reuse, so the table does not grow with churn */
	size_t n_free, cap_free;
	struct hmap *index;		/* by image */
	struct hmap *latest;		/* by pid: its newest image's entry */
	/*
	 * A process's cgroup ids (v2's, and v1 memory's on v1 and hybrid
	 * hosts) stand for its whole cgroup file here: only where /proc is
	 * ours (the kernel's ids are of the processes we read) and the
	 * hierarchies are mounted to check entries against. Else NULL.
	 */
	struct cgroup_cache *cgroups;
};

struct proc_table *proc_table__new(const char *proc_root, enum group_by group_by, struct k8s *k8s,
				   const char *docker_dir, const char *cgroup1_memory)
{
	struct proc_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	snprintf(t->proc_root, sizeof(t->proc_root), "%s", proc_root ? proc_root : "/proc");
	t->group_by = group_by;
	t->k8s = k8s;
	snprintf(t->docker_dir, sizeof(t->docker_dir), "%s", docker_dir ? docker_dir : "");
	t->index = hmap__new();
	t->latest = hmap__new();
	if (!t->index || !t->latest) {
		hmap__free(t->index);
		hmap__free(t->latest);
		free(t);
		return NULL;
	}
	if (!strcmp(t->proc_root, "/proc"))
		t->cgroups = cgroup_cache__new(CGROUP_CACHE_CAP, cgroup1_memory);	/* NULL: all read */
	return t;
}

void proc_table__free(struct proc_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->entries[i]);
	free(t->entries);
	free(t->free_ids);
	hmap__free(t->index);
	hmap__free(t->latest);
	cgroup_cache__free(t->cgroups);
	free(t);
}

static int image_eq(__u32 id, const void *key, const void *ctx)
{
	const struct proc_table *t = ctx;

	return t->entries[id - 1] && proc_image__eq(&t->entries[id - 1]->img, key);
}

static int pid_eq(__u32 id, const void *key, const void *ctx)
{
	const struct proc_table *t = ctx;

	return t->entries[id - 1] && t->entries[id - 1]->pid == *(const __u32 *)key;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static bool alive(const struct proc_table *t, __u32 pid)
{
	char path[96];

	snprintf(path, sizeof(path), "%s/%u", t->proc_root, pid);
	return access(path, F_OK) == 0;
}

/* whether /proc/PID is PI's process still (a fake proc tree has no processes to recycle) */
static bool holds_pid(const struct proc_table *t, const struct proc_info *pi)
{
	__u64 start;

	if (strcmp(t->proc_root, "/proc"))
		return alive(t, pi->pid);
	return !proc_image__start_of(t->proc_root, pi->pid, &start) && start == pi->img.start;
}

/*
 * The series a process belongs to: its container's name when grouping by
 * container (the id when no name is known), else its executable's name.
 * Kernel threads (alive, no exe) share the series "kernel"; a process gone
 * before we could look is named by its comm.
 */
static void name_service(const struct proc_table *t, struct proc_info *pi, const char *comm,
			 bool is_alive)
{
	const char *name = pi->exe[0] ? base_name(pi->exe) : is_alive ? "kernel" : comm;

	if (t->group_by == GROUP_NONE)
		name = "ebpfprof";
	else if (t->group_by == GROUP_CONTAINER && pi->k8s.container[0])
		name = pi->k8s.container;
	else if (t->group_by == GROUP_CONTAINER && pi->cg.container_id[0])
		name = pi->cg.container_id;
	snprintf(pi->service, sizeof(pi->service), "%.127s", name[0] ? name : "unknown");
}

/* PID's cgroup: cached by the ids its announcement came with (NULL: none), else read */
static void read_cgroup(const struct proc_table *t, __u32 pid, const struct cgroup_key *key,
			struct cgroup_info *cg)
{
	const struct cgroup_info *known = t->cgroups && key ?
					  cgroup_cache__find(t->cgroups, key) : NULL;

	if (known) {
		*cg = *known;
		return;
	}
	if (cgroup__read(t->proc_root, pid, cg))
		memset(cg, 0, sizeof(*cg));
	else if (t->cgroups && key)
		cgroup_cache__add(t->cgroups, key, cg);
}

/* its container's and pod's names, from its cgroup */
static void name_container(const struct proc_table *t, struct proc_info *pi)
{
	if (t->k8s && pi->cg.pod_uid[0])
		k8s__lookup(t->k8s, pi->cg.pod_uid, pi->cg.container_id, &pi->k8s);
	/* without Kubernetes names, Docker's own, where its metadata is mounted */
	if (!pi->k8s.container[0] && pi->cg.container_id[0] && t->docker_dir[0] &&
	    docker_meta__name(t->docker_dir, pi->cg.container_id, pi->k8s.container,
			      sizeof(pi->k8s.container)))
		pi->k8s.container[0] = '\0';
}

/*
 * A fork child not exec'd since runs its parent's executable: with its
 * cgroup known by the ids BPF saw it in, nothing of it is read.
 */
static bool copy_info(const struct proc_table *t, struct proc_info *pi,
		      const struct proc_info *parent, const struct cgroup_key *key)
{
	const struct cgroup_info *known = t->cgroups && key ? cgroup_cache__find(t->cgroups, key) : NULL;

	if (!parent || !parent->exe[0] || !known || pi->superseded)
		return false;
	memcpy(pi->exe, parent->exe, sizeof(pi->exe));
	pi->cg = *known;
	name_container(t, pi);
	name_service(t, pi, "", true);
	return true;
}

static void read_info(const struct proc_table *t, struct proc_info *pi, const char *comm,
		      const struct cgroup_key *key)
{
	char path[96];
	ssize_t n;

	if (pi->superseded) {
		name_service(t, pi, comm, false);	/* /proc shows a later image: the comm only */
		return;
	}
	snprintf(path, sizeof(path), "%s/%u/exe", t->proc_root, pi->pid);
	n = readlink(path, pi->exe, sizeof(pi->exe) - 1);
	pi->exe[n > 0 ? n : 0] = '\0';
	read_cgroup(t, pi->pid, key, &pi->cg);
	name_container(t, pi);
	/* read from another process (the pid recycled meanwhile): not its labels */
	if (!holds_pid(t, pi)) {
		memset(&pi->cg, 0, sizeof(pi->cg));
		memset(&pi->k8s, 0, sizeof(pi->k8s));
		pi->exe[0] = '\0';
		name_service(t, pi, comm, false);
		return;
	}
	name_service(t, pi, comm, n > 0 || alive(t, pi->pid));
}

static __u32 take_slot(struct proc_table *t)
{
	if (t->n_free)
		return t->free_ids[--t->n_free];
	if (ARRAY_RESERVE(t->entries, t->cap, t->n + 1))
		return 0;
	t->entries[t->n++] = NULL;
	return t->n;
}

/*
 * Files entry ID of PI as the newest of its pid, or as an older image met
 * late (superseded, so not read from /proc); 0 or -ENOMEM.
 */
static int index_latest(struct proc_table *t, __u32 id, struct proc_info *pi)
{
	__u64 h = hash_u64(pi->pid, 0);
	__u32 prev = hmap__find(t->latest, h, pid_eq, &pi->pid, t);

	if (prev && !proc_image__after(&t->entries[prev - 1]->img, &pi->img)) {
		pi->superseded = true;
		return 0;
	}
	if (prev) {
		t->entries[prev - 1]->superseded = true;
		hmap__remove(t->latest, h, prev);
	}
	return hmap__insert(t->latest, h, id);
}

static struct proc_info *get(struct proc_table *t, const struct proc_image *img,
			    const char *comm, __u64 window, const struct cgroup_key *cg,
			    const struct proc_info *parent)
{
	__u64 h = proc_image__hash(img);
	__u32 id = hmap__find(t->index, h, image_eq, img, t);
	struct proc_info *pi;

	if (id) {
		t->entries[id - 1]->last_window = window;
		return t->entries[id - 1];
	}
	/* room to give the slot back, so a failure below cannot leak it */
	if (ARRAY_RESERVE(t->free_ids, t->cap_free, t->n_free + 1))
		return NULL;
	pi = calloc(1, sizeof(*pi));
	id = pi ? take_slot(t) : 0;
	if (!id || hmap__insert(t->index, h, id)) {
		if (id)
			t->free_ids[t->n_free++] = id;
		free(pi);
		return NULL;
	}
	pi->pid = img->pid;
	pi->img = *img;
	pi->last_window = window;
	t->entries[id - 1] = pi;
	if (index_latest(t, id, pi)) {
		hmap__remove(t->index, h, id);
		t->entries[id - 1] = NULL;
		t->free_ids[t->n_free++] = id;
		free(pi);
		return NULL;
	}
	if (!copy_info(t, pi, parent, cg))
		read_info(t, pi, comm, cg);
	return pi;
}

const struct proc_info *proc_table__get(struct proc_table *t, const struct proc_image *img,
					const char *comm, __u64 window, const struct cgroup_key *cg)
{
	return get(t, img, comm, window, cg, NULL);
}

const struct proc_info *proc_table__get_forked(struct proc_table *t, const struct proc_image *img,
					       const struct proc_image *parent, __u64 window,
					       const struct cgroup_key *cg)
{
	__u32 id = hmap__find(t->index, proc_image__hash(parent), image_eq, parent, t);

	return get(t, img, "", window, cg, id ? t->entries[id - 1] : NULL);
}

size_t proc_table__evict(struct proc_table *t, __u64 before, void (*forget)(__u32 pid, void *ctx),
			 void *ctx)
{
	size_t evicted = 0;

	for (size_t i = 0; i < t->n; i++) {
		struct proc_info *pi = t->entries[i];
		__u64 hp;

		if (!pi || pi->last_window >= before || (!pi->superseded && holds_pid(t, pi)))
			continue;
		if (ARRAY_RESERVE(t->free_ids, t->cap_free, t->n_free + 1))
			break;	/* keep the entry; try again next window */
		hmap__remove(t->index, proc_image__hash(&pi->img), i + 1);
		hp = hash_u64(pi->pid, 0);
		if (hmap__find(t->latest, hp, pid_eq, &pi->pid, t) == i + 1) {
			/* the pid's newest image: what else knows the pid may forget it */
			hmap__remove(t->latest, hp, i + 1);
			if (forget)
				forget(pi->pid, ctx);
		}
		free(pi);
		t->entries[i] = NULL;
		t->free_ids[t->n_free++] = i + 1;
		evicted++;
	}
	return evicted;
}

__u64 proc_table__cgroup_hits(const struct proc_table *t)
{
	return t->cgroups ? cgroup_cache__hits(t->cgroups) : 0;
}

__u64 proc_table__cgroup_refused(const struct proc_table *t)
{
	return t->cgroups ? cgroup_cache__refused(t->cgroups) : 0;
}

size_t proc_table__count(const struct proc_table *t)
{
	return hmap__count(t->index);
}
