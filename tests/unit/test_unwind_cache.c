/* test_unwind_cache.c -- the CFI tables of this very process, loaded into a real BPF array, with their biases */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "proc_maps.h"
#include "test.h"
#include "unwind.h"
#include "unwind_cache.h"
#include "unwind_table.h"

__attribute__((noinline)) static int probe_fn(int x)
{
	return x * 3 + 1;
}

static int new_rows_map(__u32 n)
{
	return bpf_map_create(BPF_MAP_TYPE_ARRAY, "test_rows", sizeof(__u32),
			      sizeof(struct unwind_row), n, NULL);
}

static const struct proc_map *mapping_of(const struct proc_map *maps, size_t n, __u64 addr)
{
	for (size_t i = 0; i < n; i++)
		if (addr >= maps[i].start && addr < maps[i].end)
			return &maps[i];
	return NULL;
}

/* The row BPF would find for addr, read back from the array, equals the table's own answer. */
static int check_addr(struct unwind_cache *c, int fd, const struct proc_map *maps, size_t n,
		      __u64 addr, const char *file)
{
	const struct proc_map *m = mapping_of(maps, n, addr);
	const struct unwind_row *want;
	struct unwind_table *t;
	struct unwind_slice slice;
	struct unwind_row got = {};
	__u64 bias;
	int tfd;

	CHECK(m && m->inode);
	CHECK(unwind_cache__get(c, getpid(), m, &slice, &bias) == 0);
	CHECK(slice.len > 0);
	tfd = open(file, O_RDONLY | O_CLOEXEC);
	CHECK(tfd >= 0);
	t = unwind_table__build(tfd);
	close(tfd);
	CHECK(t);
	want = unwind_table__find(t, addr - bias);
	CHECK(want && want->cfa_type != UNWIND_CFA_NONE);
	/* the last row of the slice with pc <= the file address, as the BPF search does */
	for (__u32 i = slice.start; i < slice.start + slice.len; i++) {
		struct unwind_row r;

		CHECK(bpf_map_lookup_elem(fd, &i, &r) == 0);
		if (r.pc > addr - bias)
			break;
		got = r;
	}
	CHECK(!memcmp(&got, want, sizeof(got)));
	unwind_table__free(t);
	return TEST_OK;
}

static int test_self_and_libc(void)
{
	int fd = new_rows_map(1 << 20), ret = TEST_FAIL;
	struct unwind_cache *c = NULL;
	struct proc_map *maps = NULL;
	char exe[4096];
	ssize_t len;
	size_t n;

	if (fd < 0)
		SKIP("cannot create a BPF map (not root?)");
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		goto out;
	exe[len] = '\0';
	c = unwind_cache__new(NULL, fd, 1 << 20);
	if (!c || proc_maps__read(NULL, getpid(), &maps, &n))
		goto out;
	/* a PIE function of ours and one of libc's (strlen's address is libc's) */
	if (check_addr(c, fd, maps, n, (__u64)(unsigned long)probe_fn, exe) != TEST_OK)
		goto out;
	if (check_addr(c, fd, maps, n, (__u64)(unsigned long)&strerror,
		       mapping_of(maps, n, (unsigned long)&strerror)->path) != TEST_OK)
		goto out;
	ret = probe_fn(1) == 4 ? TEST_OK : TEST_FAIL;
out:
	proc_maps__free(maps);
	unwind_cache__free(c);
	close(fd);
	return ret;
}

/* A table that does not fit says so, is not parsed again, and a reset makes room. */
static int test_no_room(void)
{
	int fd = new_rows_map(16), ret = TEST_FAIL;
	struct unwind_cache_stats st;
	struct unwind_cache *c = NULL;
	struct proc_map *maps = NULL;
	const struct proc_map *m;
	struct unwind_slice slice;
	__u64 bias;
	size_t n;

	if (fd < 0)
		SKIP("cannot create a BPF map (not root?)");
	c = unwind_cache__new(NULL, fd, 16);
	if (!c || proc_maps__read(NULL, getpid(), &maps, &n))
		goto out;
	m = mapping_of(maps, n, (unsigned long)&strerror);	/* libc: thousands of rows */
	if (!m || unwind_cache__get(c, getpid(), m, &slice, &bias) != -ENOSPC || slice.len)
		goto out;
	unwind_cache__stats(c, &st);
	if (st.full != 1 || unwind_cache__get(c, getpid(), m, &slice, &bias) != -ENOSPC)
		goto out;
	unwind_cache__stats(c, &st);
	if (st.full != 1)	/* remembered: not built a second time */
		goto out;
	ret = unwind_cache__reset(c) == 0 && st.rows == 0 ? TEST_OK : TEST_FAIL;
out:
	proc_maps__free(maps);
	unwind_cache__free(c);
	close(fd);
	return ret;
}

TEST_MAIN("unwind_cache", TEST(test_self_and_libc), TEST(test_no_room))
