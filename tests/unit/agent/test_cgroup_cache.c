/* test_cgroup_cache.c -- the cgroup cache against real cgroup v2 and v1 memory directories made for the test */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "agent/cgroup_cache.h"
#include "agent/scope.h"
#include "test.h"

static const char *root;
static char dir_a[256], dir_b[256];

/* two fresh cgroups under BASE; their ids are their inode numbers */
static int make_cgroups(const char *base, __u64 *a, __u64 *b)
{
	struct stat st;

	snprintf(dir_a, sizeof(dir_a), "%s/ebpfprof-test-a-%d", base, getpid());
	snprintf(dir_b, sizeof(dir_b), "%s/ebpfprof-test-b-%d", base, getpid());
	if (mkdir(dir_a, 0755) || mkdir(dir_b, 0755) || stat(dir_a, &st))
		return -errno;
	*a = st.st_ino;
	if (stat(dir_b, &st))
		return -errno;
	*b = st.st_ino;
	return 0;
}

static struct cgroup_info info(const char *dir, bool v2_only)
{
	struct cgroup_info cg = { .v2_only = v2_only };

	snprintf(cg.path, sizeof(cg.path), "%s", dir + strlen(root));
	return cg;
}

static int test_cache(void)
{
	struct cgroup_info a, b;
	struct cgroup_cache *c;
	struct cgroup_key ka = {}, kb = {};
	int ret = TEST_FAIL;

	c = cgroup_cache__new(1, NULL);
	if (!c || !cgroup_cache__root(c))
		SKIP("no cgroup v2 hierarchy mounted");
	root = cgroup_cache__root(c);
	if (make_cgroups(root, &ka.v2, &kb.v2))
		goto out;
	a = info(dir_a, true);
	b = info(dir_b, true);
	/* a process read as in b but announced from a (it moved): not kept under a */
	if (cgroup_cache__add(c, &ka, &b) || cgroup_cache__find(c, &ka) || cgroup_cache__refused(c) != 1)
		goto out;
	/* a hybrid host's file, and no v1 hierarchy to check its v1 lines against */
	a.v2_only = false;
	if (cgroup_cache__add(c, &ka, &a) || cgroup_cache__refused(c) != 2)
		goto out;
	a.v2_only = true;
	if (!cgroup_cache__add(c, &ka, &a) || !cgroup_cache__find(c, &ka) ||
	    strcmp(cgroup_cache__find(c, &ka)->path, a.path) || cgroup_cache__hits(c) != 2)
		goto out;
	/* full (one entry): emptied for the next */
	if (!cgroup_cache__add(c, &kb, &b) || cgroup_cache__find(c, &ka) || !cgroup_cache__find(c, &kb))
		goto out;
	/* a path outside the root's view does not name the id */
	b = info(dir_b, true);
	snprintf(b.path, sizeof(b.path), "/../%s", dir_b + strlen(root) + 1);
	if (cgroup_cache__add(c, &ka, &b))
		goto out;
	ret = TEST_OK;
out:
	cgroup_cache__free(c);
	rmdir(dir_a);
	rmdir(dir_b);
	return ret;
}

/*
 * A v1 or hybrid host: the memory cgroup's kernfs id beside the v2 id is the
 * key, checked against the memory hierarchy; two processes in one v2 cgroup
 * but two memory cgroups (two containers on a hybrid host) are told apart.
 */
static int test_v1_key(void)
{
	char mem[256];
	struct cgroup_info a = {}, b = {};
	struct cgroup_key ka = {}, kb = {};
	struct cgroup_cache *c = NULL;
	struct stat st;
	__u32 ssid;
	int ret = TEST_FAIL;

	if (scope__cgroup1_memory(mem, sizeof(mem), &ssid))
		SKIP("no cgroup v1 memory hierarchy mounted");
	c = cgroup_cache__new(8, mem);
	if (!c || make_cgroups(mem, &ka.v1, &kb.v1))
		goto out;
	if (cgroup_cache__root(c)) {	/* hybrid: both in the v2 root */
		if (stat(cgroup_cache__root(c), &st))
			goto out;
		ka.v2 = kb.v2 = st.st_ino;
		snprintf(a.path, sizeof(a.path), "/");
		snprintf(b.path, sizeof(b.path), "/");
	}
	snprintf(a.memory_path, sizeof(a.memory_path), "%s", dir_a + strlen(mem));
	snprintf(b.memory_path, sizeof(b.memory_path), "%s", dir_b + strlen(mem));
	/* moved between announcement (a) and read (b): refused */
	if (cgroup_cache__add(c, &ka, &b) || cgroup_cache__refused(c) != 1)
		goto out;
	if (!cgroup_cache__add(c, &ka, &a) || !cgroup_cache__add(c, &kb, &b))
		goto out;
	if (!cgroup_cache__find(c, &ka) || !cgroup_cache__find(c, &kb) ||
	    strcmp(cgroup_cache__find(c, &ka)->memory_path, a.memory_path) ||
	    strcmp(cgroup_cache__find(c, &kb)->memory_path, b.memory_path))
		goto out;
	/* a v1 read with no memory id announced (the one-shot, the off-CPU tracer) is not kept */
	ka.v1 = 0;
	if (cgroup_cache__add(c, &ka, &a) || cgroup_cache__find(c, &ka))
		goto out;
	ret = TEST_OK;
out:
	cgroup_cache__free(c);
	rmdir(dir_a);
	rmdir(dir_b);
	return ret;
}

TEST_MAIN("cgroup_cache", TEST(test_cache), TEST(test_v1_key))
