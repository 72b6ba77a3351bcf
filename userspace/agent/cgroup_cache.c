/* cgroup_cache.c -- what /proc/PID/cgroup said, by the kernel's cgroup ids, so processes of one cgroup read it once */
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
	struct cgroup_key key;
	struct cgroup_info cg;
};

struct cgroup_cache {
	struct hmap *index;	/* hash of the id -> entries[] index + 1 */
	struct cgroup_entry *entries;
	size_t n, cap;
	char root[PATH_MAX];		/* the v2 hierarchy; "": none */
	char v1_memory[PATH_MAX];	/* the v1 memory hierarchy; "": none */
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

struct cgroup_cache *cgroup_cache__new(size_t cap, const char *v1_memory)
{
	const char *root = v2_root();
	struct cgroup_cache *c;

	if (!root && !v1_memory) {
		errno = ENOENT;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->cap = cap ? cap : 1;
	snprintf(c->root, sizeof(c->root), "%s", root ?: "");
	snprintf(c->v1_memory, sizeof(c->v1_memory), "%s", v1_memory ?: "");
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

static int key_eq(__u32 idx, const void *key, const void *ctx)
{
	const struct cgroup_cache *c = ctx;
	const struct cgroup_key *k = key;

	return c->entries[idx - 1].key.v2 == k->v2 && c->entries[idx - 1].key.v1 == k->v1;
}

static __u64 key_hash(const struct cgroup_key *key)
{
	return hash_u64(key->v2, key->v1);
}

static __u32 lookup(const struct cgroup_cache *c, const struct cgroup_key *key)
{
	return hmap__find(c->index, key_hash(key), key_eq, key, c);
}

const struct cgroup_info *cgroup_cache__find(struct cgroup_cache *c, const struct cgroup_key *key)
{
	__u32 idx = lookup(c, key);

	if (!idx)
		return NULL;
	c->hits++;
	return &c->entries[idx - 1].cg;
}

/*
 * Whether PATH under ROOT is the cgroup ID: a cgroup's id (v2's, or a v1
 * cgroup's kernfs id) is its directory's inode number. Paths come from the
 * kernel; one outside our cgroup namespace ("/../..") or cut short finds
 * another directory, or none, and is refused.
 */
static bool names_id(const char *root, const char *rel, size_t cap, __u64 id)
{
	char path[PATH_MAX];
	struct stat st;
	int n;

	if (!root[0] || !id || rel[0] != '/' || strlen(rel) >= cap - 1)
		return false;
	n = snprintf(path, sizeof(path), "%s%s", root, rel);
	if (n < 0 || (size_t)n >= sizeof(path))
		return false;
	return !fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode) &&
	       st.st_ino == id;
}

/*
 * Whether KEY stands for CG's whole file. v2-only: its v2 id. With v1 lines,
 * the memory cgroup's id too: container runtimes give each container its own
 * cgroup in every hierarchy, so memory and v2 together tell containers apart.
 */
static bool key_checks(const struct cgroup_cache *c, const struct cgroup_key *key,
		       const struct cgroup_info *cg)
{
	if (cg->v2_only)
		return !key->v1 && names_id(c->root, cg->path, sizeof(cg->path), key->v2);
	if (!names_id(c->v1_memory, cg->memory_path, sizeof(cg->memory_path), key->v1))
		return false;
	/* a hybrid host's v2 line (the path a read prefers); a v1-only host has none */
	return !c->root[0] || names_id(c->root, cg->path, sizeof(cg->path), key->v2);
}

bool cgroup_cache__add(struct cgroup_cache *c, const struct cgroup_key *key,
		       const struct cgroup_info *cg)
{
	struct hmap *fresh;

	if ((!key->v2 && !key->v1) || lookup(c, key))
		return false;
	if (!key_checks(c, key, cg)) {
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
	if (hmap__insert(c->index, key_hash(key), c->n + 1))
		return false;
	c->entries[c->n++] = (struct cgroup_entry){ *key, *cg };
	return true;
}

const char *cgroup_cache__root(const struct cgroup_cache *c)
{
	return c->root[0] ? c->root : NULL;
}

__u64 cgroup_cache__hits(const struct cgroup_cache *c)
{
	return c->hits;
}

__u64 cgroup_cache__refused(const struct cgroup_cache *c)
{
	return c->refused;
}
