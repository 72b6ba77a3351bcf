/* cgroup_cache.c -- what /proc/PID/cgroup said, by cgroup v2 id, so processes of one cgroup read it once */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include "cgroup_cache.h"
#include "lib/hashmap.h"

struct cgroup_entry {
	__u64 id;
	struct cgroup_info cg;
};

struct cgroup_cache {
	struct hmap *index;	/* hash of the id -> entries[] index + 1 */
	struct cgroup_entry *entries;
	size_t n, cap;
	char root[PATH_MAX];
	__u64 hits, refused;
};

static const char *v2_root(void)
{
	static const char *const roots[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	struct statfs sfs;

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (!statfs(roots[i], &sfs) && sfs.f_type == CGROUP2_SUPER_MAGIC)
			return roots[i];
	return NULL;
}

struct cgroup_cache *cgroup_cache__new(size_t cap)
{
	const char *root = v2_root();
	struct cgroup_cache *c;

	if (!root) {
		errno = ENOENT;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->cap = cap ? cap : 1;
	snprintf(c->root, sizeof(c->root), "%s", root);
	c->index = hmap__new();
	c->entries = malloc(c->cap * sizeof(*c->entries));
	if (!c->index || !c->entries) {
		cgroup_cache__free(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

void cgroup_cache__free(struct cgroup_cache *c)
{
	if (!c)
		return;
	hmap__free(c->index);
	free(c->entries);
	free(c);
}

static int id_eq(__u32 idx, const void *key, const void *ctx)
{
	const struct cgroup_cache *c = ctx;

	return c->entries[idx - 1].id == *(const __u64 *)key;
}

static __u32 lookup(const struct cgroup_cache *c, __u64 id)
{
	return hmap__find(c->index, hash_u64(id, 0), id_eq, &id, c);
}

const struct cgroup_info *cgroup_cache__find(struct cgroup_cache *c, __u64 id)
{
	__u32 idx = lookup(c, id);

	if (!idx)
		return NULL;
	c->hits++;
	return &c->entries[idx - 1].cg;
}

/*
 * Whether CG's path is the cgroup ID: a v2 cgroup's id is its directory's
 * inode number. Paths come from the kernel; one outside our cgroup namespace
 * ("/../..") or cut short finds another directory, or none, and is refused.
 */
static bool names_id(const struct cgroup_cache *c, const struct cgroup_info *cg, __u64 id)
{
	char path[PATH_MAX];
	struct stat st;
	int n;

	if (!cg->v2_only || cg->path[0] != '/' || strlen(cg->path) >= sizeof(cg->path) - 1)
		return false;
	n = snprintf(path, sizeof(path), "%s%s", c->root, cg->path);
	if (n < 0 || (size_t)n >= sizeof(path))
		return false;
	return !fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode) &&
	       st.st_ino == id;
}

bool cgroup_cache__add(struct cgroup_cache *c, __u64 id, const struct cgroup_info *cg)
{
	struct hmap *fresh;

	if (!id || lookup(c, id))
		return false;
	if (!names_id(c, cg, id)) {
		c->refused++;
		return false;
	}
	if (c->n == c->cap) {
		fresh = hmap__new();
		if (!fresh)
			return false;
		hmap__free(c->index);
		c->index = fresh;
		c->n = 0;
	}
	if (hmap__insert(c->index, hash_u64(id, 0), c->n + 1))
		return false;
	c->entries[c->n++] = (struct cgroup_entry){ id, *cg };
	return true;
}

const char *cgroup_cache__root(const struct cgroup_cache *c)
{
	return c->root;
}

__u64 cgroup_cache__hits(const struct cgroup_cache *c)
{
	return c->hits;
}

__u64 cgroup_cache__refused(const struct cgroup_cache *c)
{
	return c->refused;
}
