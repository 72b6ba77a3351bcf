/* test_cgroup_cache.c -- the cgroup cache against real cgroup v2 directories made for the test */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "agent/cgroup_cache.h"
#include "test.h"

static const char *root;
static char dir_a[128], dir_b[128];

/* two fresh cgroups under the v2 root; their ids are their inode numbers */
static int make_cgroups(__u64 *a, __u64 *b)
{
	struct stat st;

	snprintf(dir_a, sizeof(dir_a), "%s/ebpfprof-test-a-%d", root, getpid());
	snprintf(dir_b, sizeof(dir_b), "%s/ebpfprof-test-b-%d", root, getpid());
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
	__u64 ia, ib;
	int ret = TEST_FAIL;

	c = cgroup_cache__new(1);
	if (!c)
		SKIP("no cgroup v2 hierarchy mounted");
	root = cgroup_cache__root(c);
	if (make_cgroups(&ia, &ib))
		goto out;
	a = info(dir_a, true);
	b = info(dir_b, true);
	/* a process read as in b but announced from a (it moved): not kept under a */
	if (cgroup_cache__add(c, ia, &b) || cgroup_cache__find(c, ia) || cgroup_cache__refused(c) != 1)
		goto out;
	/* a hybrid host's file: the v2 id does not stand for it */
	a.v2_only = false;
	if (cgroup_cache__add(c, ia, &a) || cgroup_cache__refused(c) != 2)
		goto out;
	a.v2_only = true;
	if (!cgroup_cache__add(c, ia, &a) || !cgroup_cache__find(c, ia) ||
	    strcmp(cgroup_cache__find(c, ia)->path, a.path) || cgroup_cache__hits(c) != 2)
		goto out;
	/* full (one entry): emptied for the next */
	if (!cgroup_cache__add(c, ib, &b) || cgroup_cache__find(c, ia) || !cgroup_cache__find(c, ib))
		goto out;
	/* a path outside the root's view does not name the id */
	b = info(dir_b, true);
	snprintf(b.path, sizeof(b.path), "/../%s", dir_b + strlen(root) + 1);
	if (cgroup_cache__add(c, ia, &b))
		goto out;
	ret = TEST_OK;
out:
	cgroup_cache__free(c);
	rmdir(dir_a);
	rmdir(dir_b);
	return ret;
}

TEST_MAIN("cgroup_cache", TEST(test_cache))
