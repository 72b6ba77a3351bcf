/* test_proc_cpu.c -- unit tests for another process's CPU time: one that computes, one that sleeps, one gone */
#include <errno.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "collect/proc_cpu.h"
#include "test.h"

#define MS 1000000ull

static pid_t child(int burn)
{
	pid_t pid = fork();
	struct timespec t0, t;
	volatile unsigned long acc = 0;

	if (pid)
		return pid;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {	/* about 60 ms of CPU, or of sleep */
		if (burn)
			for (int i = 0; i < 100000; i++)
				acc += i;
		else
			usleep(5000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000ll + t.tv_nsec - t0.tv_nsec < 60 * (long long)MS);
	pause();
	_exit(0);
}

static int test_busy_idle_gone(void)
{
	pid_t busy = child(1), idle = child(0);
	__u64 busy_ns = 0, idle_ns = 0, ns;
	int st;

	CHECK(busy > 0 && idle > 0);
	usleep(150 * 1000);	/* both are at pause() by now, even on a loaded machine mostly */
	CHECK(!proc_cpu__ns(busy, &busy_ns) && !proc_cpu__ns(idle, &idle_ns));
	printf("  busy child %.1f ms of CPU, idle child %.2f ms\n", busy_ns / 1e6, idle_ns / 1e6);
	CHECK(busy_ns >= 40 * MS && idle_ns < 10 * MS);
	CHECK(!proc_cpu__ns(getpid(), &ns) && ns > 0);
	kill(busy, SIGKILL);
	kill(idle, SIGKILL);
	CHECK(waitpid(busy, &st, 0) == busy && waitpid(idle, &st, 0) == idle);
	CHECK(proc_cpu__ns(busy, &ns) == -ESRCH);	/* reaped: gone */
	CHECK(proc_cpu__ns(0, &ns) == -EINVAL && proc_cpu__ns(0x7fffffff, &ns) == -EINVAL);
	return TEST_OK;
}

TEST_MAIN("proc_cpu", { "busy_idle_gone", test_busy_idle_gone })
