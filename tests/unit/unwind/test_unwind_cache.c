/* test_unwind_cache.c -- the CFI tables of this very process, loaded into a real BPF array, with their biases */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include "symbolize/proc_maps.h"
#include "test.h"
#include "unwind.h"
#include "unwind/unwind_cache.h"
#include "unwind/unwind_table.h"

__attribute__((noinline)) static int probe_fn(int x)
{
	return x * 3 + 1;
}

static int new_array_flags(__u32 n, __u32 value_size, __u32 flags)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = flags);

	return bpf_map_create(BPF_MAP_TYPE_ARRAY, "test_unwind", sizeof(__u32), value_size, n, &opts);
}

static int new_array(__u32 n, __u32 value_size)
{
	return new_array_flags(n, value_size, 0);
}

/* The BPF search (bpf/unwind.bpf.h find_row), in C over the maps: the page, then the rows in it. */
static int bpf_find(int rows_fd, int pages_fd, const struct unwind_slice *sl, __u64 vaddr,
		    struct unwind_row *out)
{
	__u32 page = (vaddr - sl->base_pc) >> UNWIND_PAGE_SHIFT, lo, hi, idx;
	struct unwind_row r;

	if (vaddr < sl->base_pc || page >= sl->n_pages)
		return -ENOENT;
	idx = sl->page_start + page;
	if (bpf_map_lookup_elem(pages_fd, &idx, &lo))
		return -errno;
	idx++;
	if (bpf_map_lookup_elem(pages_fd, &idx, &hi))
		return -errno;
	lo = lo ? lo - 1 : 0;
	for (idx = sl->start + lo; idx < sl->start + hi; idx++) {
		if (bpf_map_lookup_elem(rows_fd, &idx, &r))
			return -errno;
		if (r.pc > vaddr)
			break;
		*out = r;
	}
	return 0;
}

static const struct proc_map *mapping_of(const struct proc_map *maps, size_t n, __u64 addr)
{
	for (size_t i = 0; i < n; i++)
		if (addr >= maps[i].start && addr < maps[i].end)
			return &maps[i];
	return NULL;
}

/* The row BPF would find for addr, read back from the array, equals the table's own answer. */
static int check_addr(struct unwind_cache *c, int fd, int pages_fd, const struct proc_map *maps,
		      size_t n, __u64 addr, const char *file)
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
	CHECK(bpf_find(fd, pages_fd, &slice, addr - bias, &got) == 0);
	CHECK(!memcmp(&got, want, sizeof(got)));
	unwind_table__free(t);
	return TEST_OK;
}

/* FLAGS: BPF_F_MMAPABLE as the sampler's arrays (copied in by mmap; a __u32 takes 8 bytes there), or 0 */
static int self_and_libc(__u32 flags)
{
	int fd = new_array_flags(1 << 20, sizeof(struct unwind_row), flags), ret = TEST_FAIL;
	int pages_fd = new_array_flags(1 << 18, sizeof(__u32), flags);
	struct unwind_cache *c = NULL;
	struct proc_map *maps = NULL;
	char exe[4096];
	ssize_t len;
	size_t n;

	if (fd < 0 || pages_fd < 0)
		SKIP("cannot create a BPF map (not root?)");
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		goto out;
	exe[len] = '\0';
	c = unwind_cache__new(NULL, fd, 1 << 20, pages_fd, 1 << 18);
	if (!c || proc_maps__read(NULL, getpid(), &maps, &n))
		goto out;
	/* a PIE function of ours and one of libc's (strlen's address is libc's) */
	if (check_addr(c, fd, pages_fd, maps, n, (__u64)(unsigned long)probe_fn, exe) != TEST_OK)
		goto out;
	if (check_addr(c, fd, pages_fd, maps, n, (__u64)(unsigned long)&strerror,
		       mapping_of(maps, n, (unsigned long)&strerror)->path) != TEST_OK)
		goto out;
	ret = probe_fn(1) == 4 ? TEST_OK : TEST_FAIL;
out:
	proc_maps__free(maps);
	unwind_cache__free(c);
	close(fd);
	close(pages_fd);
	return ret;
}

static int test_self_and_libc(void)
{
	return self_and_libc(0);
}

static int test_self_and_libc_mapped(void)
{
	return self_and_libc(BPF_F_MMAPABLE);
}

/* A table that does not fit says so, is not parsed again, and a reset forgets that. */
static int test_no_room(void)
{
	int fd = new_array(16, sizeof(struct unwind_row)), ret = TEST_FAIL;
	int pages_fd = new_array(1 << 16, sizeof(__u32));
	struct unwind_cache_stats st;
	struct unwind_cache *c = NULL;
	struct proc_map *maps = NULL;
	const struct proc_map *m;
	struct unwind_slice slice;
	__u64 bias;
	size_t n;

	if (fd < 0 || pages_fd < 0)
		SKIP("cannot create a BPF map (not root?)");
	c = unwind_cache__new(NULL, fd, 16, pages_fd, 1 << 16);
	if (!c || proc_maps__read(NULL, getpid(), &maps, &n))
		goto out;
	m = mapping_of(maps, n, (unsigned long)&strerror);	/* libc: thousands of rows */
	if (!m || unwind_cache__get(c, getpid(), m, &slice, &bias) != -ENOSPC || slice.len)
		goto out;
	unwind_cache__stats(c, &st);
	if (st.full != 1 || unwind_cache__get(c, getpid(), m, &slice, &bias) != -ENOSPC)
		goto out;
	unwind_cache__stats(c, &st);
	if (st.full != 1 || st.rows != 0)	/* remembered: not built a second time */
		goto out;
	/* after a reset the file is tried again (and, in 16 rows, still does not fit) */
	if (unwind_cache__reset(c) || unwind_cache__get(c, getpid(), m, &slice, &bias) != -ENOSPC)
		goto out;
	unwind_cache__stats(c, &st);
	ret = st.full == 2 ? TEST_OK : TEST_FAIL;
out:
	proc_maps__free(maps);
	unwind_cache__free(c);
	close(fd);
	close(pages_fd);
	return ret;
}

/*
 * A compaction keeps the live table, moved to the array's start and still
 * what the file says, without parsing it again; the dead one is forgotten.
 * Arrays that cannot be mapped: refused, and the cache is reset.
 */
/* rows in the table of the file mapped at the code address ADDR, built on its own; 0 on failure */
static __u32 rows_at(const struct proc_map *maps, size_t n, __u64 addr)
{
	const struct proc_map *m = mapping_of(maps, n, addr);
	struct unwind_table *t;
	size_t rows = 0;
	int fd;

	if (!m || (fd = open(m->path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	t = unwind_table__build(fd);
	close(fd);
	if (t)
		unwind_table__rows(t, &rows);
	unwind_table__free(t);
	return rows;
}


static int compact(__u32 flags)
{
	int fd = -1, ret = TEST_FAIL, pages_fd = new_array_flags(1 << 18, sizeof(__u32), flags);
	const struct proc_map *exe, *libc;
	struct unwind_slice s_exe, s_libc, again;
	struct unwind_cache_stats st;
	struct unwind_cache *c = NULL;
	struct proc_map *maps = NULL;
	struct unwind_move live[2];
	__u32 rows;
	__u64 bias;
	size_t n;
	int err;

	if (proc_maps__read(NULL, getpid(), &maps, &n))
		goto out;
	/* room for both, but libc's alone fills more than half: no table it drops is kept */
	rows = rows_at(maps, n, (unsigned long)probe_fn) + rows_at(maps, n, (unsigned long)&strerror);
	fd = new_array_flags(rows + 1, sizeof(struct unwind_row), flags);
	if (fd < 0 || pages_fd < 0)
		SKIP("cannot create a BPF map (not root?)");
	c = unwind_cache__new(NULL, fd, rows + 1, pages_fd, 1 << 18);
	if (!c)
		goto out;
	exe = mapping_of(maps, n, (unsigned long)probe_fn);
	libc = mapping_of(maps, n, (unsigned long)&strerror);
	/* ours first, so libc's table has to move down to where ours was */
	if (!exe || !libc || unwind_cache__get(c, getpid(), exe, &s_exe, &bias) ||
	    unwind_cache__get(c, getpid(), libc, &s_libc, &bias) || !s_exe.len || !s_libc.len ||
	    s_libc.start != s_exe.len || s_libc.len <= (rows + 1) / 2)
		goto out;
	/* libc's start, and one naming no table */
	live[0] = (struct unwind_move){ .start = s_libc.start + 1 };
	live[1] = (struct unwind_move){ .start = s_libc.start };
	err = unwind_cache__compact(c, live, 2);
	unwind_cache__stats(c, &st);
	if (!flags) {
		ret = err == -EOPNOTSUPP && st.rows == 0 && st.files == 0 ? TEST_OK : TEST_FAIL;
		goto out;
	}
	if (err || st.compactions != 1 || st.rows != s_libc.len || st.files != 1 || st.builds != 2)
		goto out;
	/* sorted by start, each told where its table went */
	if (live[0].start != s_libc.start || live[0].to != 0 || live[0].page_to != 0 ||
	    live[1].to != UNWIND_MOVE_NONE)
		goto out;
	/* libc: known, at 0, not built again; and BPF's search there finds what the file says */
	if (unwind_cache__get(c, getpid(), libc, &again, &bias) || again.start != 0 ||
	    again.page_start != 0 || again.len != s_libc.len)
		goto out;
	if (check_addr(c, fd, pages_fd, maps, n, (__u64)(unsigned long)&strerror, libc->path) != TEST_OK)
		goto out;
	unwind_cache__stats(c, &st);
	if (st.builds != 2)
		goto out;
	/* ours: forgotten, so built again, after libc */
	if (unwind_cache__get(c, getpid(), exe, &again, &bias) || again.start != s_libc.len)
		goto out;
	unwind_cache__stats(c, &st);
	ret = st.builds == 3 && probe_fn(1) == 4 ? TEST_OK : TEST_FAIL;
out:
	proc_maps__free(maps);
	unwind_cache__free(c);
	close(fd);
	close(pages_fd);
	return ret;
}

/*
 * Tables no process uses stay, the most recently used first, while all kept
 * fill at most half the array: of ld.so's and ours, ours (used last) stays,
 * moved, and ld.so's is dropped.
 */
static int test_compact_keeps_recent(void)
{
	int fd = -1, ret = TEST_FAIL, pages_fd = new_array_flags(1 << 18, sizeof(__u32), BPF_F_MMAPABLE);
	const struct proc_map *exe, *libc, *ld = NULL;
	struct unwind_slice s_exe, s_libc, s_ld, again;
	struct unwind_cache_stats st;
	struct unwind_cache *c = NULL;
	struct proc_map *maps = NULL;
	struct unwind_move live;
	__u32 half;
	__u64 bias;
	size_t n;

	if (proc_maps__read(NULL, getpid(), &maps, &n))
		goto out;
	exe = mapping_of(maps, n, (unsigned long)probe_fn);
	libc = mapping_of(maps, n, (unsigned long)&strerror);
	for (size_t i = 0; i < n && !ld; i++)
		if (maps[i].perms[2] == 'x' && strstr(maps[i].path, "/ld-linux"))
			ld = &maps[i];
	if (!exe || !libc || !ld)
		SKIP("no ld.so mapping to tell apart");
	/* half the array holds libc's and ours, not ld.so's too */
	half = rows_at(maps, n, (unsigned long)probe_fn) + rows_at(maps, n, (unsigned long)&strerror);
	fd = new_array_flags(2 * half + 1, sizeof(struct unwind_row), BPF_F_MMAPABLE);
	if (fd < 0 || pages_fd < 0)
		SKIP("cannot create a BPF map (not root?)");
	c = unwind_cache__new(NULL, fd, 2 * half + 1, pages_fd, 1 << 18);
	/* ld.so's, then libc's, then ours: ours the more recently used of the two not live */
	if (!c || unwind_cache__get(c, getpid(), ld, &s_ld, &bias) ||
	    unwind_cache__get(c, getpid(), libc, &s_libc, &bias) ||
	    unwind_cache__get(c, getpid(), exe, &s_exe, &bias) || !s_ld.len || !s_exe.len ||
	    s_libc.len + s_exe.len != half)
		goto out;
	live = (struct unwind_move){ .start = s_libc.start };
	if (unwind_cache__compact(c, &live, 1))
		goto out;
	unwind_cache__stats(c, &st);
	/* libc's to 0, ours after it, not built again; ld.so's forgotten, so built again */
	if (st.files != 2 || st.builds != 3 || live.to != 0 ||
	    unwind_cache__get(c, getpid(), exe, &again, &bias) || again.start != s_libc.len)
		goto out;
	unwind_cache__stats(c, &st);
	if (st.builds != 3 || unwind_cache__get(c, getpid(), ld, &again, &bias) || again.start != half)
		goto out;
	if (check_addr(c, fd, pages_fd, maps, n, (__u64)(unsigned long)probe_fn, exe->path) != TEST_OK)
		goto out;
	unwind_cache__stats(c, &st);
	ret = st.builds == 4 && probe_fn(1) == 4 ? TEST_OK : TEST_FAIL;
out:
	proc_maps__free(maps);
	unwind_cache__free(c);
	if (fd >= 0)
		close(fd);
	close(pages_fd);
	return ret;
}

static int test_compact_mapped(void)
{
	return compact(BPF_F_MMAPABLE);
}

static int test_compact_unmappable(void)
{
	return compact(0);
}

/* Starts path (argv[1] = seconds) and returns its pid, or -1. */
static pid_t spawn(const char *path)
{
	pid_t pid = fork();

	if (pid == 0) {
		execl(path, path, "3", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* The mapping of pid's main executable text (r-xp, named like path). */
static int exe_text(pid_t pid, const char *path, struct proc_map **maps, const struct proc_map **m)
{
	size_t n;

	*m = NULL;
	for (int tries = 0; tries < 100 && !*m; tries++) {
		usleep(10000);	/* until the exec happened */
		proc_maps__free(*maps);
		*maps = NULL;
		if (proc_maps__read(NULL, pid, maps, &n))
			return -1;
		for (size_t i = 0; i < n; i++)
			if ((*maps)[i].perms[2] == 'x' && strstr((*maps)[i].path, path))
				*m = &(*maps)[i];
	}
	return *m ? 0 : -1;
}

/* The same binary under two inodes (as in two containers) is parsed once. */
static int test_shared_by_build_id(void)
{
	const char *build = getenv("BUILD") ?: "build";
	char orig[4096], copy[] = "/tmp/test_unwind_cache_XXXXXX", cmd[8300];
	int fd = new_array(1 << 20, sizeof(struct unwind_row)), ret = TEST_FAIL, cfd;
	int pages_fd = new_array(1 << 18, sizeof(__u32));
	struct proc_map *maps1 = NULL, *maps2 = NULL;
	const struct proc_map *m1, *m2;
	struct unwind_slice s1, s2;
	struct unwind_cache_stats st;
	struct unwind_cache *c = NULL;
	pid_t p1 = -1, p2 = -1;
	__u64 b1, b2;

	if (fd < 0 || pages_fd < 0)
		SKIP("cannot create a BPF map (not root?)");
	snprintf(orig, sizeof(orig), "%s/fixtures/unwind/unwind_deep", build);
	if (access(orig, X_OK))
		SKIP("fixture unwind_deep not built");
	cfd = mkstemp(copy);
	if (cfd < 0)
		goto out;
	close(cfd);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && chmod +x '%s'", orig, copy, copy);
	if (system(cmd))
		goto out;
	p1 = spawn(orig);
	p2 = spawn(copy);
	c = unwind_cache__new(NULL, fd, 1 << 20, pages_fd, 1 << 18);
	if (!c || p1 < 0 || p2 < 0 || exe_text(p1, "unwind_deep", &maps1, &m1) ||
	    exe_text(p2, copy, &maps2, &m2))
		goto out;
	if (m1->inode == m2->inode || unwind_cache__get(c, p1, m1, &s1, &b1) ||
	    unwind_cache__get(c, p2, m2, &s2, &b2))
		goto out;
	unwind_cache__stats(c, &st);
	ret = s1.len && s1.start == s2.start && s1.len == s2.len && st.shared == 1 && st.files == 1
		      ? TEST_OK : TEST_FAIL;
out:
	if (p1 > 0)
		kill(p1, SIGKILL), waitpid(p1, NULL, 0);
	if (p2 > 0)
		kill(p2, SIGKILL), waitpid(p2, NULL, 0);
	unlink(copy);
	proc_maps__free(maps1);
	proc_maps__free(maps2);
	unwind_cache__free(c);
	close(fd);
	close(pages_fd);
	return ret;
}

/* the mapping of ours holding ADDR, asked of C: its get's result */
static int get_at(struct unwind_cache *c, const struct proc_map *maps, size_t n, __u64 addr)
{
	const struct proc_map *m = mapping_of(maps, n, addr);
	struct unwind_slice slice;
	__u64 bias;

	return m ? unwind_cache__get(c, getpid(), m, &slice, &bias) : -ENOENT;
}

/*
 * Built aside, our tables and libc's come in progress first, once each,
 * then loaded by a collect as a build in turn loads them; a cache freed
 * with builds queued frees them.
 */
static int test_built_aside(void)
{
	int fd = new_array(1 << 20, sizeof(struct unwind_row)), ret = TEST_FAIL;
	int pages_fd = new_array(1 << 18, sizeof(__u32)), got = 0;
	__u64 self = (__u64)(unsigned long)probe_fn, libc = (__u64)(unsigned long)&strerror;
	struct unwind_cache *c = NULL;
	struct proc_map *maps = NULL;
	char exe[4096];
	ssize_t len;
	size_t n;

	if (fd < 0 || pages_fd < 0)
		SKIP("cannot create a BPF map (not root?)");
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	c = unwind_cache__new(NULL, fd, 1 << 20, pages_fd, 1 << 18);
	if (len <= 0 || !c || proc_maps__read(NULL, getpid(), &maps, &n) ||
	    unwind_cache__build_aside(c, 0))
		goto out;
	exe[len] = '\0';
	if (get_at(c, maps, n, self) != -EINPROGRESS || get_at(c, maps, n, libc) != -EINPROGRESS ||
	    get_at(c, maps, n, self) != -EINPROGRESS || unwind_cache__building(c) != 2)
		goto out;
	for (int i = 0; i < 5000 && got < 2; i++) {
		got += unwind_cache__collect(c);
		usleep(1000);
	}
	if (got != 2 || unwind_cache__building(c))
		goto out;
	if (check_addr(c, fd, pages_fd, maps, n, self, exe) != TEST_OK ||
	    check_addr(c, fd, pages_fd, maps, n, libc, mapping_of(maps, n, libc)->path) != TEST_OK)
		goto out;
	/* queued and freed at once: nothing leaks (the sanitizer pass would say) */
	unwind_cache__free(c);
	c = unwind_cache__new(NULL, fd, 1 << 20, pages_fd, 1 << 18);
	if (!c || unwind_cache__build_aside(c, 0) || get_at(c, maps, n, self) != -EINPROGRESS ||
	    get_at(c, maps, n, libc) != -EINPROGRESS)
		goto out;
	ret = TEST_OK;
out:
	proc_maps__free(maps);
	unwind_cache__free(c);
	close(fd);
	close(pages_fd);
	return ret;
}

TEST_MAIN("unwind_cache", TEST(test_self_and_libc), TEST(test_self_and_libc_mapped), TEST(test_no_room),
	  TEST(test_shared_by_build_id), TEST(test_compact_mapped), TEST(test_compact_unmappable),
	  TEST(test_compact_keeps_recent), TEST(test_built_aside))
