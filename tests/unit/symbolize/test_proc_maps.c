/* test_proc_maps.c -- /proc/PID/maps parser: crafted lines, malformed input, and our own maps */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/auxv.h>
#include "symbolize/proc_maps.h"
#include "test.h"

static const char crafted[] =
	"55d0c0a00000-55d0c0a02000 r--p 00000000 fe:00 247134                     /usr/bin/cat\n"
	"55d0c0a02000-55d0c0a07000 r-xp 00002000 fe:00 247134                     /usr/bin/cat\n"
	"7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n"
	"7f0000001000-7f0000002000 r-xp 00001000 08:01 42     /opt/my app/lib with spaces.so\n"
	"7f0000002000-7f0000003000 r-xp 00000000 08:01 43                         /tmp/gone (deleted)\n"
	"7ffd0000a000-7ffd0000c000 r-xp 00000000 00:00 0                          [vdso]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n"
	"7f0000004000-7f0000005000 r-xs 00000000 103:02 18446744073709551615 /dev/shm/x\n";

static int test_crafted(void)
{
	struct proc_map *m;
	size_t n;

	CHECK(proc_maps__parse(crafted, sizeof(crafted) - 1, &m, &n) == 0);
	CHECK(n == 8);
	CHECK(m[0].start == 0x55d0c0a00000ULL && m[0].end == 0x55d0c0a02000ULL);
	CHECK(!strcmp(m[0].perms, "r--p") && !strcmp(m[0].path, "/usr/bin/cat"));
	CHECK(m[1].pgoff == 0x2000 && m[1].dev_major == 0xfe && m[1].dev_minor == 0);
	CHECK(m[1].inode == 247134 && !m[1].deleted);
	CHECK(!strcmp(m[2].path, "") && m[2].inode == 0);
	CHECK(!strcmp(m[3].path, "/opt/my app/lib with spaces.so") && m[3].dev_major == 8);
	CHECK(!strcmp(m[4].path, "/tmp/gone") && m[4].deleted);
	CHECK(!strcmp(m[5].path, "[vdso]") && m[5].perms[2] == 'x');
	CHECK(m[6].start == 0xffffffffff600000ULL && !strcmp(m[6].path, "[vsyscall]"));
	CHECK(m[7].dev_major == 0x103 && m[7].dev_minor == 2 && m[7].inode == UINT64_MAX);
	CHECK(m[7].perms[3] == 's');
	proc_maps__free(m);
	return TEST_OK;
}

static int test_malformed(void)
{
	static const char bad[] =
		"7f00-\n"						/* cut short */
		"garbage line here\n"
		"\n"
		"7f0000002000-7f0000001000 r-xp 00000000 08:01 1 /end-before-start\n"
		"7f0000001000-7f0000002000 rxxp 00000000 08:01 1 /bad-perms\n"
		"7f0000001000-7f0000002000 r-xp 00000000 08:01 /no-inode\n"
		"7f0000001000-7f0000002000 r-xp 00000000 0801 1 /no-colon\n"
		"17f0000001000000-7f0000002000 r-xp 00000000 08:01 1 /17-digits\n"
		"7f0000001000-7f0000002000 r-xp 00000000 08:01 99999999999999999999 /inode-overflow\n"
		"7f0000001000-7f0000002000 r-xp 00000000 08:01 1x /junk-after-inode\n"
		"7f0000001000-7f0000002000 r-xp\n"
		"7f0000001000-7f0000002000 r-xp 00000000 08:01 1 /ok\n"
		"7f0000003000-7f0000004000 r-xp 00000000 08:01 2 /last-without-newline";
	char *big;
	struct proc_map *m;
	size_t n, len;

	CHECK(proc_maps__parse(bad, sizeof(bad) - 1, &m, &n) == 0);
	CHECK(n == 2);
	CHECK(!strcmp(m[0].path, "/ok") && !strcmp(m[1].path, "/last-without-newline"));
	proc_maps__free(m);

	/* a NUL inside a line, and a line over the length bound */
	CHECK(proc_maps__parse("7f00-7f01 r-xp 0 08:01 1 /a\0b\n", 30, &m, &n) == 0);
	CHECK(n == 0);
	proc_maps__free(m);
	len = PROC_MAPS_LINE_MAX + 100;
	big = malloc(len);
	CHECK(big);
	memset(big, 'a', len);
	memcpy(big, "7f00-7f01 r-xp 0 08:01 1 /", 26);
	CHECK(proc_maps__parse(big, len, &m, &n) == 0);
	free(big);
	CHECK(n == 0);
	proc_maps__free(m);

	/* empty input */
	CHECK(proc_maps__parse("", 0, &m, &n) == 0 && n == 0);
	proc_maps__free(m);
	return TEST_OK;
}

/* every prefix of the input parses without reading past it (valgrind/ASan watch) */
static int test_every_prefix(void)
{
	size_t len = sizeof(crafted) - 1;

	for (size_t i = 0; i <= len; i++) {
		char *copy = malloc(i ? i : 1);
		struct proc_map *m;
		size_t n;

		CHECK(copy);
		memcpy(copy, crafted, i);
		CHECK(proc_maps__parse(copy, i, &m, &n) == 0);
		CHECK(n <= 8);
		for (size_t j = 0; j < n; j++)
			CHECK(m[j].start < m[j].end);
		proc_maps__free(m);
		free(copy);
	}
	return TEST_OK;
}

static int test_self(void)
{
	__u64 here = (__u64)(unsigned long)test_self;
	bool want_vdso = getauxval(AT_SYSINFO_EHDR) != 0;	/* valgrind hides it */
	bool vdso = false, found = false, ok = false;
	char exe[PATH_MAX];
	struct proc_map *m;
	ssize_t len;
	size_t n;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK(len > 0);
	exe[len] = '\0';
	CHECK(proc_maps__read(NULL, getpid(), &m, &n) == 0);
	for (size_t i = 0; i < n; i++) {
		vdso |= !strcmp(m[i].path, "[vdso]");
		if (here >= m[i].start && here < m[i].end) {
			found = true;
			ok = m[i].perms[2] == 'x' && m[i].inode != 0 && !strcmp(m[i].path, exe);
		}
	}
	proc_maps__free(m);
	CHECK(n > 5 && found && ok);
	CHECK(vdso == want_vdso);
	return TEST_OK;
}

/* Whether [addr, addr + 1) is in one of PID's mappings, as proc_maps__read() gives them. */
static int mapped(__u64 addr)
{
	struct proc_map *m;
	size_t n;
	int in = 0;

	if (proc_maps__read(NULL, getpid(), &m, &n))
		return -1;
	for (size_t i = 0; i < n; i++)
		in |= addr >= m[i].start && addr < m[i].end;
	proc_maps__free(m);
	return in;
}

/* two reads of a share: equal entries, each path inside its own copy (ASan sees any other) */
static bool same_copies(void)
{
	struct proc_map *m1, *m2;
	size_t n1, n2;
	bool same;

	if (proc_maps__read(NULL, getpid(), &m1, &n1))
		return false;
	if (proc_maps__read(NULL, getpid(), &m2, &n2)) {
		proc_maps__free(m1);
		return false;
	}
	same = n1 == n2 && n1 > 0;
	for (size_t i = 0; same && i < n1; i++)
		same = m1[i].start == m2[i].start && !strcmp(m1[i].path, m2[i].path) &&
		       m2[i].path >= (const char *)(m2 + n2) && m1[i].path >= (const char *)(m1 + n1) &&
		       m1[i].path != m2[i].path;
	proc_maps__free(m1);
	proc_maps__free(m2);
	return same;
}

static int test_share(void)
{
	void *p;
	__u64 a;

	/* not shared: every read sees the maps as they are */
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	a = (__u64)(unsigned long)p;
	CHECK(mapped(a) == 1);
	munmap(p, 4096);
	CHECK(mapped(a) == 0);

	/* shared: the reads after the first see its text; unshared, the kernel's again */
	proc_maps__share(NULL, getpid());
	CHECK(mapped(a) == 0);
	p = mmap((void *)(unsigned long)a, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	a = (__u64)(unsigned long)p;
	CHECK(mapped(a) == 0);
	CHECK(same_copies());
	proc_maps__unshare(getpid());
	CHECK(mapped(a) == 1);

	/* another process's share is not ours */
	proc_maps__share(NULL, getpid() + 1);
	CHECK(mapped(a) == 1);
	munmap(p, 4096);
	CHECK(mapped(a) == 0);
	proc_maps__unshare(getpid() + 1);

	/* shared twice (a pid's next image in one burst): read anew, shared until unshared twice */
	proc_maps__share(NULL, getpid());
	CHECK(mapped(a) == 0);
	p = mmap((void *)(unsigned long)a, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	a = (__u64)(unsigned long)p;
	proc_maps__share(NULL, getpid());
	CHECK(mapped(a) == 1);
	munmap(p, 4096);
	proc_maps__unshare(getpid());
	CHECK(mapped(a) == 1);
	proc_maps__unshare(getpid());
	CHECK(mapped(a) == 0);
	return TEST_OK;
}

static int test_no_such_pid(void)
{
	struct proc_map *m;
	size_t n;

	/* above PID_MAX_LIMIT (4194304), so never a live process */
	CHECK(proc_maps__read(NULL, 99999999, &m, &n) == -ESRCH);
	CHECK(proc_maps__read("/nonexistent-proc", 1, &m, &n) == -ESRCH);
	/* shared: gone once a read found it so, for its later readers; not before, nor unshared */
	proc_maps__share(NULL, 99999999);
	CHECK(!proc_maps__gone(NULL, 99999999));
	CHECK(proc_maps__read(NULL, 99999999, &m, &n) == -ESRCH);
	CHECK(proc_maps__gone(NULL, 99999999) && !proc_maps__gone("/nonexistent-proc", 99999999));
	proc_maps__share(NULL, getpid());
	CHECK(proc_maps__read(NULL, getpid(), &m, &n) == 0);
	proc_maps__free(m);
	CHECK(!proc_maps__gone(NULL, getpid()));
	proc_maps__unshare(getpid());
	proc_maps__unshare(99999999);
	CHECK(!proc_maps__gone(NULL, 99999999));
	return TEST_OK;
}

TEST_MAIN("proc_maps", TEST(test_crafted), TEST(test_malformed), TEST(test_every_prefix),
	  TEST(test_self), TEST(test_share), TEST(test_no_such_pid))
