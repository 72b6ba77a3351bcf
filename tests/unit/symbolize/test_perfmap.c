/* test_perfmap.c -- perf map symbols: crafted lines, overlaps, appends, namespaces, hostile files, Node.js */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "symbolize/perfmap.h"
#include "test.h"

#define NODE "/usr/bin/node"

static char map_path[64];

static const char *path_for(pid_t pid)
{
	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", (int)pid);
	return map_path;
}

static int write_file(const char *path, const char *mode, const char *text)
{
	FILE *f = fopen(path, mode);

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static bool name_is(const struct perfmap *m, __u64 addr, const char *want, __u64 want_off)
{
	__u64 off = ~0ULL;
	const char *name = perfmap__lookup(m, addr, &off);

	if (!want)
		return name == NULL;
	if (!name || strcmp(name, want) || off != want_off) {
		fprintf(stderr, "  lookup %#llx: got \"%s\"+%#llx, want \"%s\"+%#llx\n",
			(unsigned long long)addr, name ? name : "(null)", (unsigned long long)off,
			want, (unsigned long long)want_off);
		return false;
	}
	return true;
}

/* a child that idles until *hold is closed; it first writes TEXT to its own perf map */
static pid_t spawn_idle(const char *text, uid_t uid, int *hold)
{
	int ready[2], keep[2];
	pid_t pid;
	char c;

	if (pipe(ready) || pipe(keep))
		return -1;
	pid = fork();
	if (pid == 0) {
		/* hold no other child's pipe open, or that child would never see EOF */
		for (int fd = 3; fd < 1024; fd++)
			if (fd != ready[1] && fd != keep[0])
				close(fd);
		/* an earlier holder's of our pid (pids come round): ours has not begun */
		unlink(path_for(getpid()));
		if (uid && setresuid(uid, uid, uid))
			_exit(1);
		if (text && write_file(path_for(getpid()), "w", text))
			_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		while (read(keep[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(ready[1]);
	close(keep[0]);
	if (pid < 0 || read(ready[0], &c, 1) != 1) {
		close(ready[0]);
		close(keep[1]);
		return -1;
	}
	close(ready[0]);
	*hold = keep[1];
	return pid;
}

static void end_child(pid_t pid, int hold)
{
	close(hold);
	waitpid(pid, NULL, 0);
	unlink(path_for(pid));
}

static int test_parse_basic(void)
{
	static const char text[] =
		"1000 10 first\n"
		"0x2000 0X20 with 0x prefix\n"
		"3000\t8\tName with  spaces (and parens)  \r\n"
		"7f32d8005900 2b0 JS:*hotLoop [eval]:1:17\n"
		"ffffffffffffff00 ff top of the address space\n";
	struct perfmap *m = perfmap__new();
	struct perfmap_stats st;

	CHECK(m);
	CHECK(perfmap__parse(m, text, sizeof(text) - 1) == 0);
	CHECK(perfmap__count(m) == 5);
	CHECK(name_is(m, 0x1000, "first", 0));
	CHECK(name_is(m, 0x100f, "first", 0xf));
	CHECK(name_is(m, 0x1010, NULL, 0));
	CHECK(name_is(m, 0xfff, NULL, 0));
	CHECK(name_is(m, 0x2010, "with 0x prefix", 0x10));
	CHECK(name_is(m, 0x3007, "Name with  spaces (and parens)", 7));
	CHECK(name_is(m, 0x7f32d8005a00, "JS:*hotLoop [eval]:1:17", 0x100));
	CHECK(name_is(m, 0xfffffffffffffffeULL, "top of the address space", 0xfe));
	CHECK(name_is(m, UINT64_MAX, NULL, 0));
	CHECK(perfmap__lookup(m, 0x1000, NULL) != NULL);
	perfmap__stats(m, &st);
	CHECK(st.malformed == 0 && st.dropped == 0);
	CHECK(perfmap__mem_size(m) > sizeof(text) / 2);
	CHECK(perfmap__refresh(m) == -EINVAL);
	perfmap__free(m);
	return TEST_OK;
}

static int test_overlap_later_wins(void)
{
	static const char first[] =
		"1000 1000 old\n"		/* [0x1000, 0x2000) */
		"1400 400 mid\n"		/* [0x1400, 0x1800) */
		"1600 100 inner\n"		/* [0x1600, 0x1700) */
		"1000 100 same start\n"		/* [0x1000, 0x1100) */
		"5000 10 small\n"
		"5000 100 big\n";		/* hides small entirely */
	static const char second[] =
		"1700 900 appended\n";		/* [0x1700, 0x2000): over mid and old */
	struct perfmap *m = perfmap__new();

	CHECK(m);
	CHECK(perfmap__parse(m, first, sizeof(first) - 1) == 0);
	CHECK(perfmap__count(m) == 6);
	CHECK(name_is(m, 0x1000, "same start", 0));
	CHECK(name_is(m, 0x1100, "old", 0x100));
	CHECK(name_is(m, 0x1500, "mid", 0x100));
	CHECK(name_is(m, 0x1650, "inner", 0x50));
	CHECK(name_is(m, 0x1750, "mid", 0x350));
	CHECK(name_is(m, 0x1900, "old", 0x900));
	CHECK(name_is(m, 0x5005, "big", 5));
	CHECK(name_is(m, 0x5050, "big", 0x50));
	CHECK(perfmap__parse(m, second, sizeof(second) - 1) == 0);
	CHECK(perfmap__count(m) == 7);
	CHECK(name_is(m, 0x1650, "inner", 0x50));
	CHECK(name_is(m, 0x1750, "appended", 0x50));
	CHECK(name_is(m, 0x1fff, "appended", 0x8ff));
	CHECK(name_is(m, 0x16ff, "inner", 0xff));
	CHECK(name_is(m, 0x1500, "mid", 0x100));
	CHECK(name_is(m, 0x2000, NULL, 0));
	perfmap__free(m);
	return TEST_OK;
}

/* random overlapping lines in several batches against "the last line covering addr" */
static int test_overlap_random(void)
{
	enum { LINES = 600, BATCHES = 6, SPACE = 4096 };
	static __u64 start[LINES], size[LINES];
	struct perfmap *m = perfmap__new();
	char buf[64], want[16];

	CHECK(m);
	srand(42);
	for (int b = 0; b < BATCHES; b++) {
		for (int i = b * LINES / BATCHES; i < (b + 1) * LINES / BATCHES; i++) {
			int n;

			start[i] = rand() % SPACE;
			size[i] = 1 + rand() % (i % 10 ? 40 : 700);
			n = snprintf(buf, sizeof(buf), "%llx %llx s%d\n",
				     (unsigned long long)start[i], (unsigned long long)size[i], i);
			CHECK(perfmap__parse(m, buf, n) == 0);
		}
		for (__u64 a = 0; a < SPACE + 800; a++) {
			int last = -1;

			for (int i = 0; i < (b + 1) * LINES / BATCHES; i++)
				if (start[i] <= a && a < start[i] + size[i])
					last = i;
			if (last < 0) {
				CHECK(name_is(m, a, NULL, 0));
				continue;
			}
			snprintf(want, sizeof(want), "s%d", last);
			CHECK(name_is(m, a, want, a - start[last]));
		}
	}
	CHECK(perfmap__count(m) == LINES);
	perfmap__free(m);
	return TEST_OK;
}

static int test_partial_last_line(void)
{
	static const char text[] = "1000 10 done\n2000 10 being writ";
	struct perfmap *m = perfmap__new();
	struct perfmap_stats st;

	CHECK(m);
	CHECK(perfmap__parse(m, text, sizeof(text) - 1) == 0);
	CHECK(perfmap__count(m) == 1);
	CHECK(name_is(m, 0x1000, "done", 0));
	CHECK(name_is(m, 0x2000, NULL, 0));
	perfmap__stats(m, &st);
	CHECK(st.malformed == 0);
	perfmap__free(m);
	return TEST_OK;
}

static int test_malformed(void)
{
	static const char bad[] =
		"\n"
		"garbage\n"
		"1000\n"				/* no size */
		"1000 10\n"				/* no name */
		"1000 10   \n"				/* blank name */
		"xyz 10 not hex\n"
		"1000 1g bad size\n"
		"1000-10 no blank\n"
		"-1000 10 negative\n"
		"0x 10 bare prefix\n"
		"10000000000000000 10 seventeen digits\n"
		"ffffffffffffff00 101 overflows\n"
		"1000 0 zero size\n"
		"1000 ffffffffffff absurd size\n"
		"1000 10 escape \x1b[31m in name\n"
		"1000 10 nul \0 in name\n"
		"2000 10 good\n";
	enum { BAD_LINES = 16 };
	size_t long_len = PERFMAP_LINE_MAX + 100;
	struct perfmap *m = perfmap__new();
	struct perfmap_stats st;
	char *big;

	CHECK(m);
	CHECK(perfmap__parse(m, bad, sizeof(bad) - 1) == 0);
	CHECK(perfmap__count(m) == 1);
	CHECK(name_is(m, 0x2000, "good", 0));
	CHECK(name_is(m, 0x1000, NULL, 0));
	perfmap__stats(m, &st);
	CHECK(st.malformed == BAD_LINES);

	/* an over-long line is skipped whole, the next one is taken */
	big = malloc(long_len + 32);
	CHECK(big);
	memcpy(big, "3000 10 ", 8);
	memset(big + 8, 'x', long_len - 8);
	memcpy(big + long_len, "\n4000 10 next\n", 14);
	CHECK(perfmap__parse(m, big, long_len + 14) == 0);
	free(big);
	CHECK(name_is(m, 0x3000, NULL, 0));
	CHECK(name_is(m, 0x4000, "next", 0));
	perfmap__stats(m, &st);
	CHECK(st.malformed == BAD_LINES + 1);
	perfmap__free(m);
	return TEST_OK;
}

/* random bytes biased towards perf map syntax: never a crash, never a bad range */
static int test_random_garbage(void)
{
	static const char alphabet[] = "0123456789abcdefxX \t\n\r\n\n\0zZ-:*";
	struct perfmap *m = perfmap__new();
	char buf[2048];
	__u64 off;

	CHECK(m);
	srand(7);
	for (int round = 0; round < 300; round++) {
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = rand() % 8 ? alphabet[rand() % (sizeof(alphabet) - 1)] : rand();
		CHECK(perfmap__parse(m, buf, rand() % sizeof(buf)) == 0);
	}
	for (int i = 0; i < 100000; i++) {
		__u64 addr = (__u64)rand() << 32 | (__u64)rand();
		const char *name = perfmap__lookup(m, i % 2 ? addr : addr & 0xffff, &off);

		CHECK(!name || off < PERFMAP_SYM_SIZE_MAX);
	}
	perfmap__free(m);
	return TEST_OK;
}

static int test_empty(void)
{
	struct perfmap *m = perfmap__new();

	CHECK(m);
	CHECK(perfmap__parse(m, "", 0) == 0);
	CHECK(perfmap__parse(m, NULL, 0) == 0);
	CHECK(perfmap__count(m) == 0);
	CHECK(name_is(m, 0, NULL, 0));
	CHECK(name_is(m, 0x1000, NULL, 0));
	perfmap__free(m);
	perfmap__free(NULL);
	CHECK(perfmap__lookup(NULL, 0, NULL) == NULL && perfmap__count(NULL) == 0);
	return TEST_OK;
}

static int test_entry_cap(void)
{
	size_t n = PERFMAP_ENTRIES_MAX + 5, len = 0;
	struct perfmap *m = perfmap__new();
	struct perfmap_stats st;
	char *buf = malloc(n * 16);

	CHECK(m && buf);
	for (size_t i = 0; i < n; i++)
		len += sprintf(buf + len, "%zx 1 f\n", i);
	CHECK(perfmap__parse(m, buf, len) == 0);
	free(buf);
	perfmap__stats(m, &st);
	CHECK(perfmap__count(m) == PERFMAP_ENTRIES_MAX);
	CHECK(st.dropped == 5);
	CHECK(name_is(m, PERFMAP_ENTRIES_MAX - 1, "f", 0));
	CHECK(name_is(m, PERFMAP_ENTRIES_MAX, NULL, 0));
	perfmap__free(m);
	return TEST_OK;
}

/* a process in our mount namespace: lookups, appends read incrementally, rewrites reloaded */
static int test_process_appends(void)
{
	static const char first[] = "1000 100 jit_one\n2000 100 jit_two\n";
	static const char more[] = "3000 100 jit_three\n1000 80 jit_one_v2\n4000 10 partial";
	static const char rest[] = "_done\n";
	struct perfmap_stats st, st2;
	struct perfmap *m;
	int hold, ret = TEST_FAIL;
	char tmp[80];
	pid_t pid;

	pid = spawn_idle(first, 0, &hold);
	CHECK(pid > 0);
	m = perfmap__open(NULL, pid);
	if (!m) {
		fprintf(stderr, "  perfmap__open: %s\n", strerror(errno));
		goto out;
	}
	if (perfmap__count(m) != 0 || perfmap__refresh(m) || perfmap__count(m) != 2)
		goto out;
	if (!name_is(m, 0x1010, "jit_one", 0x10) || !name_is(m, 0x20ff, "jit_two", 0xff))
		goto out;
	perfmap__stats(m, &st);
	if (st.bytes_read != sizeof(first) - 1 || st.reloads != 1)
		goto out;
	/* unchanged: nothing read */
	if (perfmap__refresh(m))
		goto out;
	perfmap__stats(m, &st2);
	if (st2.bytes_read != st.bytes_read)
		goto out;

	/* appended, the last line still being written: only the new bytes are read */
	if (write_file(path_for(pid), "a", more) || perfmap__refresh(m))
		goto out;
	perfmap__stats(m, &st2);
	if (st2.bytes_read - st.bytes_read != sizeof(more) - 1 || st2.reloads != 1)
		goto out;
	if (perfmap__count(m) != 4 || !name_is(m, 0x3000, "jit_three", 0) ||
	    !name_is(m, 0x1010, "jit_one_v2", 0x10) || !name_is(m, 0x1090, "jit_one", 0x90) ||
	    !name_is(m, 0x4000, NULL, 0))
		goto out;

	/* its newline arrives: the partial line is read again and taken */
	st = st2;
	if (write_file(path_for(pid), "a", rest) || perfmap__refresh(m))
		goto out;
	perfmap__stats(m, &st2);
	if (st2.bytes_read - st.bytes_read != strlen("4000 10 partial_done\n") || st2.reloads != 1)
		goto out;
	if (perfmap__count(m) != 5 || !name_is(m, 0x4005, "partial_done", 5))
		goto out;

	/* rewritten shorter, then replaced by another file: read again from the start */
	if (write_file(path_for(pid), "w", "5000 10 fresh\n") || perfmap__refresh(m))
		goto out;
	perfmap__stats(m, &st2);
	if (st2.reloads != 2 || perfmap__count(m) != 1 || !name_is(m, 0x1000, NULL, 0) ||
	    !name_is(m, 0x5000, "fresh", 0))
		goto out;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path_for(pid));
	if (write_file(tmp, "w", "6000 10 renamed over, longer than before\n") ||
	    rename(tmp, path_for(pid)) || perfmap__refresh(m))
		goto out;
	perfmap__stats(m, &st2);
	if (st2.reloads != 3 || !name_is(m, 0x5000, NULL, 0) ||
	    !name_is(m, 0x6000, "renamed over, longer than before", 0))
		goto out;

	/* rewritten in place, same length, same tail: still noticed by size/mtime + tail */
	if (write_file(path_for(pid), "w", "7000 10 renamed over, longer than before\n") ||
	    perfmap__refresh(m))
		goto out;
	if (!name_is(m, 0x6000, NULL, 0) ||
	    !name_is(m, 0x7000, "renamed over, longer than before", 0))
		goto out;

	/* a refused file leaves the table as it was */
	if (chown(path_for(pid), 65534, 65534) || perfmap__refresh(m) != -EPERM ||
	    !name_is(m, 0x7000, "renamed over, longer than before", 0))
		goto out;
	ret = TEST_OK;
out:
	perfmap__free(m);
	end_child(pid, hold);
	return ret;
}

static int test_empty_file(void)
{
	struct perfmap *m;
	int hold, ret = TEST_FAIL;
	pid_t pid;

	pid = spawn_idle("", 0, &hold);
	CHECK(pid > 0);
	m = perfmap__open(NULL, pid);
	if (m && perfmap__refresh(m) == 0 && perfmap__count(m) == 0 && name_is(m, 0, NULL, 0))
		ret = TEST_OK;
	perfmap__free(m);
	end_child(pid, hold);
	return ret;
}

/* a child that is pid 1 of a new pid namespace writes /tmp/perf-1.map */
static int test_nspid(void)
{
	static char skip[160];
	char marker[64], line[96], c;
	int ready[2], hold[2], ret = TEST_FAIL, err = 0;
	struct perfmap *m = NULL;
	pid_t helper, inner = 0;

	if (!access("/tmp/perf-1.map", F_OK))
		SKIP("/tmp/perf-1.map exists already; not overwriting it");
	snprintf(marker, sizeof(marker), "nspid_marker_%d", (int)getpid());
	snprintf(line, sizeof(line), "1000 10 %s\n", marker);
	CHECK(pipe(ready) == 0 && pipe(hold) == 0);
	helper = fork();
	CHECK(helper >= 0);
	if (helper == 0) {
		int up[2];
		pid_t child;

		close(ready[0]);
		close(hold[1]);
		if (unshare(CLONE_NEWPID)) {
			err = errno;
			_exit(write(ready[1], &err, sizeof(err)) < 0);
		}
		if (pipe(up))
			_exit(1);
		child = fork();
		if (child == 0) {
			if (getpid() != 1 || write_file("/tmp/perf-1.map", "w", line) ||
			    write(up[1], "r", 1) != 1)
				_exit(1);
			while (read(hold[0], &c, 1) > 0)
				;
			_exit(0);
		}
		close(up[1]);
		/* once its map is written, tell our parent the pid only we know */
		if (child < 0 || read(up[0], &c, 1) != 1 ||
		    write(ready[1], &err, sizeof(err)) != sizeof(err) ||
		    write(ready[1], &child, sizeof(child)) != sizeof(child))
			_exit(1);
		close(ready[1]);
		waitpid(child, NULL, 0);
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);
	if (read(ready[0], &err, sizeof(err)) != sizeof(err))
		goto out;
	if (err) {
		snprintf(skip, sizeof(skip), "unshare(CLONE_NEWPID): %s", strerror(err));
		ret = TEST_SKIP;
		test__skip_reason = skip;
		goto out;
	}
	if (read(ready[0], &inner, sizeof(inner)) != sizeof(inner) || inner <= 1)
		goto out;
	/* a file at the outer pid's path is an earlier holder's: gone, only the inner path names */
	if (unlink(path_for(inner)) && errno != ENOENT)
		goto out;
	m = perfmap__open(NULL, inner);
	if (!m) {
		fprintf(stderr, "  perfmap__open(%d): %s\n", (int)inner, strerror(errno));
		goto out;
	}
	if (perfmap__refresh(m) || !name_is(m, 0x1005, marker, 5))
		goto out;
	ret = TEST_OK;
out:
	perfmap__free(m);
	close(ready[0]);
	close(hold[1]);
	waitpid(helper, NULL, 0);
	if (inner > 1)
		unlink("/tmp/perf-1.map");
	return ret;
}

/* whether opening PID's map is refused with WANT (M, if opened, is kept in *M); says what not */
static bool refused(pid_t pid, struct perfmap **m, int want, const char *what)
{
	*m = perfmap__open(NULL, pid);
	if (!*m && errno == want)
		return true;
	fprintf(stderr, "  %s: %s, want %s\n", what, *m ? "opened" : strerror(errno),
		strerror(want));
	return false;
}

/* whether PID's map opens, and once read names ADDR WANT (M kept in *M) */
static bool opened_names(pid_t pid, struct perfmap **m, __u64 addr, const char *want)
{
	*m = perfmap__open(NULL, pid);
	return *m && !perfmap__refresh(*m) && name_is(*m, addr, want, 0);
}

/* /tmp/perf-PID.map as a symlink, to a secret or to a harmless file: never followed */
static int test_symlink_refused(void)
{
	static const char decoy[] = "/tmp/ebpfprof-test-perfmap-decoy.map";
	struct perfmap *m = NULL;
	int hold, ret = TEST_FAIL;
	pid_t pid;

	pid = spawn_idle(NULL, 0, &hold);
	CHECK(pid > 0);
	if (symlink("/etc/shadow", path_for(pid)))
		goto out;
	if (!refused(pid, &m, ELOOP, "a symlink to a secret"))
		goto out;
	if (write_file(decoy, "w", "1000 10 decoy\n") || unlink(path_for(pid)) ||
	    symlink(decoy, path_for(pid)))
		goto out;
	if (!refused(pid, &m, ELOOP, "a symlink to a harmless file"))
		goto out;

	/* a symlink put in place of a good file later: refresh refuses it, keeps the table */
	if (unlink(path_for(pid)) || write_file(path_for(pid), "w", "2000 10 good\n"))
		goto out;
	if (!opened_names(pid, &m, 0x2000, "good"))
		goto out;
	if (unlink(path_for(pid)) || symlink(decoy, path_for(pid)) ||
	    perfmap__refresh(m) != -ELOOP || !name_is(m, 0x2000, "good", 0) ||
	    !name_is(m, 0x1000, NULL, 0))
		goto out;
	ret = TEST_OK;
out:
	perfmap__free(m);
	unlink(decoy);
	end_child(pid, hold);
	return ret;
}

/* files the process could not have written, or that are no plain file, are refused */
static int test_untrusted_files(void)
{
	static const char other[] = "/tmp/ebpfprof-test-perfmap-link.map";
	struct perfmap *m = NULL;
	int hold, hold_nobody, ret = TEST_FAIL;
	pid_t pid, nobody = -1;

	pid = spawn_idle(NULL, 0, &hold);
	CHECK(pid > 0);
	if (!refused(pid, &m, ENOENT, "no map"))
		goto out;
	if (write_file(path_for(pid), "w", "1000 10 planted\n") ||
	    chown(path_for(pid), 65534, 65534))
		goto out;
	if (!refused(pid, &m, EPERM, "another user's file"))
		goto out;
	if (unlink(path_for(pid)) || mkfifo(path_for(pid), 0600))
		goto out;
	if (!refused(pid, &m, EINVAL, "a FIFO"))	/* refused, without blocking */
		goto out;
	if (unlink(path_for(pid)) || mkdir(path_for(pid), 0700))
		goto out;
	if (!refused(pid, &m, EINVAL, "a directory"))
		goto out;
	if (rmdir(path_for(pid)) || write_file(other, "w", "1000 10 linked\n") ||
	    link(other, path_for(pid)))
		goto out;
	if (!refused(pid, &m, EINVAL, "a second name of another file"))
		goto out;
	if (unlink(path_for(pid)) || !refused(0x7ffffff0, &m, ENOENT, "no such process"))
		goto out;

	/* a process running as nobody: its own file is accepted */
	nobody = spawn_idle("1000 10 mine\n", 65534, &hold_nobody);
	if (nobody <= 0)
		goto out;
	if (!opened_names(nobody, &m, 0x1000, "mine"))
		goto out;
	ret = TEST_OK;
out:
	perfmap__free(m);
	end_child(pid, hold);
	if (nobody > 0)
		end_child(nobody, hold_nobody);
	return ret;
}

/* sets PATH's mtime SECS seconds from now */
static int age(const char *path, double secs)
{
	struct timespec t[2];

	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec += (time_t)secs;
	t[1] = t[0];
	return utimensat(AT_FDCWD, path, t, 0);
}

/* a map written before its process started is an earlier holder's of the pid: refused */
static int test_stale(void)
{
	static const char moved[] = "/tmp/ebpfprof-test-perfmap-old.map";
	struct perfmap *m = NULL;
	int hold, ret = TEST_FAIL;
	pid_t pid;

	pid = spawn_idle("1000 10 mine\n", 0, &hold);
	CHECK(pid > 0);
	/* a minute before the process: the pid's last holder wrote it */
	if (age(path_for(pid), -60) || !refused(pid, &m, ESTALE, "a file older than its process"))
		goto out;
	/* written again by the process (as CPython's -X perf appends): its own */
	if (age(path_for(pid), 0))
		goto out;
	if (!opened_names(pid, &m, 0x1000, "mine"))
		goto out;
	/* an old file moved into place later: refused, the table kept */
	if (write_file(moved, "w", "2000 10 old\n") || age(moved, -60) ||
	    rename(moved, path_for(pid)))
		goto out;
	if (perfmap__refresh(m) != -ESTALE || !name_is(m, 0x1000, "mine", 0) ||
	    !name_is(m, 0x2000, NULL, 0))
		goto out;
	ret = TEST_OK;
out:
	perfmap__free(m);
	unlink(moved);
	end_child(pid, hold);
	return ret;
}

/* the start address of the first line of PATH whose name contains WANT, or 0 */
static __u64 find_in_file(const char *path, const char *want)
{
	unsigned long long start = 0, size;
	char line[1024], name[900];
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %llx %899[^\n]", &start, &size, name) == 3 &&
		    strstr(name, want))
			break;
		start = 0;
	}
	fclose(f);
	return start;
}

static int test_node(void)
{
	static const char script[] =
		"function hotLoop(n) { let s = 0; for (let i = 0; i < n; i++) s += i % 7; return s; }\n"
		"const t = Date.now(); let r = 0;\n"
		"while (Date.now() - t < 2000) r += hotLoop(1e5);\n";
	struct timespec tick = { .tv_nsec = 100 * 1000 * 1000 };
	struct perfmap *m = NULL;
	int ret = TEST_FAIL;
	const char *name;
	__u64 addr = 0, off;
	pid_t pid;

	if (access(NODE, X_OK))
		SKIP(NODE " not installed");
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 1);
		dup2(null, 2);
		/* --perf-basic-prof also writes a v8 log into the cwd: send it to stdout */
		execl(NODE, "node", "--perf-basic-prof", "--no-logfile-per-isolate", "--logfile=-",
		      "-e", script, (char *)NULL);
		_exit(127);
	}
	/* after ~1 s the optimized hotLoop should be in the map */
	for (int i = 0; i < 40 && !addr; i++) {
		nanosleep(&tick, NULL);
		if (i >= 10)
			addr = find_in_file(path_for(pid), "*hotLoop");
	}
	if (!addr) {
		fprintf(stderr, "  no *hotLoop line in %s\n", path_for(pid));
		goto out;
	}
	m = perfmap__open(NULL, pid);
	if (!m || perfmap__refresh(m))
		goto out;
	name = perfmap__lookup(m, addr, &off);
	if (!name || !strstr(name, "hotLoop") || off != 0) {
		fprintf(stderr, "  lookup %#llx: %s\n", (unsigned long long)addr, name ? name : "(null)");
		goto out;
	}
	printf("  node: %zu symbols, %#llx -> %s\n", perfmap__count(m), (unsigned long long)addr,
	       name);
	if (perfmap__count(m) < 100)
		goto out;
	ret = TEST_OK;
out:
	perfmap__free(m);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unlink(path_for(pid));
	return ret;
}

TEST_MAIN("perfmap",
	  TEST(test_parse_basic),
	  TEST(test_overlap_later_wins),
	  TEST(test_overlap_random),
	  TEST(test_partial_last_line),
	  TEST(test_malformed),
	  TEST(test_random_garbage),
	  TEST(test_empty),
	  TEST(test_entry_cap),
	  TEST(test_process_appends),
	  TEST(test_empty_file),
	  TEST(test_nspid),
	  TEST(test_symlink_refused),
	  TEST(test_untrusted_files),
	  TEST(test_stale),
	  TEST(test_node))
