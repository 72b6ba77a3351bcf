/* proc_cpu.c -- the CPU time another process has used, in one system call */
#include <errno.h>
#include <time.h>
#include "proc_cpu.h"

/*
 * The kernel's clock of a whole process (include/linux/posix-timers.h:
 * CPUCLOCK_SCHED, the scheduler's exact runtime, on the process's pid). One
 * clock_gettime, against an open, read and close of /proc/PID/stat whose
 * lookup of a pid that is gone costs more than the read; and a process that
 * is gone says so (EINVAL), as kill(pid, 0) would.
 */
#define CPUCLOCK_SCHED 2
#define PROCESS_CPUCLOCK(pid) ((clockid_t)(~(unsigned int)(pid) << 3) | CPUCLOCK_SCHED)

int proc_cpu__ns(__u32 pid, __u64 *ns)
{
	struct timespec ts;

	if (!pid || pid > 0x3fffffff)	/* the clock id has room for 29 bits of pid */
		return -EINVAL;
	if (clock_gettime(PROCESS_CPUCLOCK(pid), &ts))
		return errno == EINVAL ? -ESRCH : -errno;
	*ns = (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
	return 0;
}
