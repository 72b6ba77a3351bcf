/* test_proc_cpu.c -- unit tests for another process's CPU time: one that computes, one that sleeps, one gone */
#include <errno.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "lib/proc_cpu.h"
#include "test.h"

#define MS 1000000ull

static __s64 ns_of(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return t.tv_sec * 1000000000ll + t.tv_nsec;
}

/*
 * A child that uses 60 ms of CPU (its own clock: however loaded the machine)
 * or sleeps 60 ms, then says so on fd and waits to be killed.
 */
static pid_t child(int burn, int fd)
{
	pid_t pid = fork();
	volatile unsigned long acc = 0;
	__s64 start;

	if (pid)
		return pid;
	if (burn) {
		start = ns_of(CLOCK_PROCESS_CPUTIME_ID);
		while (ns_of(CLOCK_PROCESS_CPUTIME_ID) - start < 60 * (__s64)MS)
			for (int i = 0; i < 100000; i++)
				acc += i;
	} else {
		usleep(60 * 1000);
	}
	if (write(fd, "x", 1) != 1)
		_exit(1);
	pause();
	_exit(0);
}

static int test_busy_idle_gone(void)
{
	__u64 busy_ns = 0, idle_ns = 0, ns;
	pid_t busy, idle;
	int p[2], st;
	char c[2];

	CHECK(!pipe(p));
	busy = child(1, p[1]);
	idle = child(0, p[1]);
	CHECK(busy > 0 && idle > 0);
	CHECK(read(p[0], c, 1) == 1 && read(p[0], c + 1, 1) == 1);	/* both done */
	CHECK(!proc_cpu__ns(busy, &busy_ns) && !proc_cpu__ns(idle, &idle_ns));
	printf("  busy child %.1f ms of CPU, idle child %.2f ms\n", busy_ns / 1e6, idle_ns / 1e6);
	CHECK(busy_ns >= 60 * MS && idle_ns < 10 * MS);
	CHECK(!proc_cpu__ns(getpid(), &ns) && ns > 0);
	kill(busy, SIGKILL);
	kill(idle, SIGKILL);
	CHECK(waitpid(busy, &st, 0) == busy && waitpid(idle, &st, 0) == idle);
	CHECK(proc_cpu__ns(busy, &ns) == -ESRCH);	/* reaped: gone */
	CHECK(proc_cpu__ns(0, &ns) == -EINVAL && proc_cpu__ns(0x7fffffff, &ns) == -EINVAL);
	close(p[0]);
	close(p[1]);
	return TEST_OK;
}

TEST_MAIN("proc_cpu", { "busy_idle_gone", test_busy_idle_gone })
