/* mono_cond.h -- condition variables whose timed waits follow CLOCK_MONOTONIC */
#ifndef EBPFPROF_MONO_COND_H
#define EBPFPROF_MONO_COND_H

#include <pthread.h>

/*
 * Initializes c so pthread_cond_timedwait deadlines are CLOCK_MONOTONIC
 * times: a step of the wall clock must not stall or rush a backoff or a
 * refresh. Returns 0 or a negative errno.
 */
int mono_cond__init(pthread_cond_t *c);

#endif /* EBPFPROF_MONO_COND_H */
