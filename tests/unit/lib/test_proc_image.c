/* test_proc_image.c -- unit tests for process images: /proc/PID/stat's start, and whether an image still holds its pid */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "lib/proc_image.h"
#include "test.h"

/* a comm is the process's to choose: spaces and parentheses in it, or none at all */
static int test_parse_stat(void)
{
	static const struct { const char *line; int err; __u64 start; } cases[] = {
		{ "1 (init) S 0 1 1 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 17 1 2", 0, 17 },
		{ "42 (a) b) (c) S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 12345 0 0", 0, 12345 },
		{ "42 ( ) R 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 99\n", 0, 99 },
		{ "42 (x) S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0", -EINVAL, 0 },	/* cut short */
		{ "42 (x) S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 -5 0", -EINVAL, 0 },
		{ "42 x S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 5 0", -EINVAL, 0 },	/* no comm */
		{ "42 (x) S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 99999999999999999999999", -EINVAL, 0 },
		{ "", -EINVAL, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		__u64 start = 0;
		int err = proc_image__parse_stat(cases[i].line, strlen(cases[i].line), &start);

		if (err != cases[i].err || (!err && start != cases[i].start)) {
			fprintf(stderr, "  case %zu: %d, %llu\n", i, err, (unsigned long long)start);
			return TEST_FAIL;
		}
	}
	return TEST_OK;
}

/* a process holds its pid while it lives; not once it is reaped, nor under another start */
static int test_lives(void)
{
	struct proc_image self = { .pid = (__u32)getpid() }, child = {}, other;
	pid_t pid;

	CHECK(!proc_image__start_of("/proc", self.pid, &self.start) && self.start > 0);
	CHECK(proc_image__lives("/proc", &self));
	other = self;
	other.start++;
	CHECK(!proc_image__lives("/proc", &other));
	pid = fork();
	if (!pid) {
		pause();
		_exit(0);
	}
	CHECK(pid > 0);
	child.pid = (__u32)pid;
	CHECK(!proc_image__start_of("/proc", child.pid, &child.start) && child.start >= self.start);
	CHECK(proc_image__lives("/proc", &child));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	CHECK(!proc_image__lives("/proc", &child));
	CHECK(proc_image__start_of("/proc", child.pid, &child.start) == -ESRCH);
	return TEST_OK;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

/*
 * A held pid's checks read one open stat file, opened at the first; it
 * fails once its process is reaped; held twice, released twice; not for
 * another proc root
 */
static int test_hold(void)
{
	struct proc_image child = {};
	__u64 start = 0;
	int fds = count_fds();
	pid_t pid = fork();

	if (!pid) {
		pause();
		_exit(0);
	}
	CHECK(pid > 0);
	child.pid = (__u32)pid;
	CHECK(!proc_image__start_of("/proc", child.pid, &child.start));
	proc_image__hold(child.pid);
	CHECK(count_fds() == fds);	/* opened at the first check, not before */
	CHECK(proc_image__lives("/proc", &child));
	CHECK(count_fds() == fds + 1);
	CHECK(!proc_image__start_of("/proc", child.pid, &start) && start == child.start);
	CHECK(count_fds() == fds + 1);
	CHECK(!proc_image__start_of("/proc/", child.pid, &start) && count_fds() == fds + 1);
	proc_image__hold(child.pid);	/* its next image: opened anew, at its first check */
	CHECK(count_fds() == fds);
	CHECK(proc_image__lives("/proc", &child) && count_fds() == fds + 1);
	proc_image__release(child.pid);
	CHECK(count_fds() == fds + 1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	CHECK(!proc_image__lives("/proc", &child));	/* the open file's process is reaped */
	CHECK(proc_image__start_of("/proc", child.pid, &start) == -ESRCH);
	proc_image__release(child.pid);
	CHECK(count_fds() == fds);
	return TEST_OK;
}

/* newer means a later process at the pid, or a later exec of the same */
static int test_after(void)
{
	struct proc_image a = proc_image__of(7, 100, 2), b = a;

	CHECK(proc_image__eq(&a, &b) && !proc_image__after(&a, &b));
	b.exec = 3;
	CHECK(proc_image__after(&a, &b) && !proc_image__after(&b, &a));
	b = proc_image__of(7, 101, 1);
	CHECK(proc_image__after(&a, &b) && !proc_image__after(&b, &a));
	b = proc_image__of(8, 101, 3);
	CHECK(!proc_image__after(&a, &b));	/* another pid: no order */
	CHECK(proc_image__hash(&a) != proc_image__hash(&b));
	return TEST_OK;
}

TEST_MAIN("proc_image",
	  TEST(test_parse_stat),
	  TEST(test_lives),
	  TEST(test_hold),
	  TEST(test_after))
