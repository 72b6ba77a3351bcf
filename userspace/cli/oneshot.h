/* oneshot.h -- `ebpfprof [--duration SEC]`: profile for a while, write one profile, exit */
#ifndef EBPFPROF_ONESHOT_H
#define EBPFPROF_ONESHOT_H

#include "config.h"

/* Runs the whole profile; returns an exit code (EXIT_OK, EXIT_RUNTIME, EXIT_USAGE). */
int oneshot__run(const struct config *cfg);

/* --mode heap: every Go process's heap profile records, read once at the end (oneshot_heap.c) */
int oneshot_heap__run(const struct config *cfg);

/* --mode alloc --pid P: P's allocations sampled through uprobes for the duration (oneshot_heap.c) */
int oneshot_alloc__run(const struct config *cfg);

#endif /* EBPFPROF_ONESHOT_H */
