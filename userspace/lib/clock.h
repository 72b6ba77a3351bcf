/* clock.h -- one reading of a clock in nanoseconds, for every module that times or schedules */
#ifndef EBPFPROF_CLOCK_H
#define EBPFPROF_CLOCK_H

#include <time.h>
#include <linux/types.h>

static inline __s64 clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#endif /* EBPFPROF_CLOCK_H */
