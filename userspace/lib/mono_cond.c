/* mono_cond.c -- condition variables whose timed waits follow CLOCK_MONOTONIC */
#include <time.h>
#include "mono_cond.h"

int mono_cond__init(pthread_cond_t *c)
{
	pthread_condattr_t attr;
	int err;

	err = pthread_condattr_init(&attr);
	if (err)
		return -err;
	err = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!err)
		err = pthread_cond_init(c, &attr);
	pthread_condattr_destroy(&attr);
	return -err;
}
