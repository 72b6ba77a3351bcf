/* agent.h -- `ebpfprof agent`: continuous profiling, one pprof per series per window, delivered */
#ifndef EBPFPROF_AGENT_H
#define EBPFPROF_AGENT_H

#include "lib/options.h"

/* Runs until SIGINT/SIGTERM; returns an exit code (EXIT_OK after a clean shutdown). */
int agent__run(const struct config *cfg);

#endif /* EBPFPROF_AGENT_H */
