/* cli.h -- public header of cli/: the command line: options parsed and validated, and the one-shot run */
#ifndef EBPFPROF_CLI_MODULE_H
#define EBPFPROF_CLI_MODULE_H

#include "config.h"
#include "oneshot.h"
#include "convert.h"

#endif /* EBPFPROF_CLI_MODULE_H */
