/* config.h -- command lines of ebpfprof (one-shot and agent), parsed and validated before anything is collected */
#ifndef EBPFPROF_CONFIG_H
#define EBPFPROF_CONFIG_H

#include "lib/options.h"

/*
 * Fills cfg from argv (and, for the agent, EBPFPROF_* variables first).
 * Returns 0 to go on, 1 when --help or --version was handled, or a negative
 * errno after printing a one-line error. Call config__free in every case.
 */
int config__parse(struct config *cfg, int argc, char **argv);
void config__free(struct config *cfg);

#endif /* EBPFPROF_CONFIG_H */
