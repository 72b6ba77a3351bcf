/* config.h -- command line of ebpfprof, parsed and validated before anything is collected */
#ifndef EBPFPROF_CONFIG_H
#define EBPFPROF_CONFIG_H

#include <stdbool.h>
#include <linux/types.h>

enum output_format { FORMAT_PPROF, FORMAT_FOLDED, FORMAT_TOP };

struct config {
	double duration;	/* seconds */
	int frequency;		/* Hz per CPU */
	__u32 *pids;		/* --pid filter, malloc'd */
	int n_pids;
	const char *output;	/* path or "-" for stdout */
	enum output_format format;
	int top_n;
	bool include_idle;
	bool no_kernel;
	bool no_user;
	bool per_thread;
	bool verbose;
	__u32 stack_entries;
	__u32 count_entries;
};

/* Exit codes: usage and environment errors are told apart from runtime failures. */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

/*
 * Fills cfg from argv. Returns 0 to go on, 1 when --help or --version was
 * handled, or -EINVAL after printing a one-line error.
 */
int config__parse(struct config *cfg, int argc, char **argv);
void config__free(struct config *cfg);

#endif /* EBPFPROF_CONFIG_H */
