/* config_int.h -- parsing helpers shared by the one-shot and agent command lines */
#ifndef EBPFPROF_CONFIG_INT_H
#define EBPFPROF_CONFIG_INT_H

#include <getopt.h>
#include "config.h"

#define EBPFPROF_VERSION "0.2.0"

/* Options both command lines take; values above 255 so they never clash with short options. */
enum {
	OPT_INCLUDE_IDLE = 256, OPT_NO_KERNEL, OPT_NO_USER, OPT_PER_THREAD, OPT_TOP,
	OPT_STACK_SIZE, OPT_COUNT_SIZE, OPT_VERSION, OPT_DEMANGLE, OPT_DEBUGINFOD, OPT_DWARF_MB, OPT_MODE, OPT_OFFCPU_MIN,
	OPT_UNWIND, OPT_UNWIND_MB, OPT_LABEL_FOCUS, OPT_LIVE_SIZE,
	OPT_COMMON_END,
};

/* The long options both command lines take (parsed by config__common), and help/version. */
#define CONFIG_COMMON_OPTIONS                                                       \
	{ "frequency", required_argument, NULL, 'F' },                              \
	{ "pid", required_argument, NULL, 'p' },                                    \
	{ "include-idle", no_argument, NULL, OPT_INCLUDE_IDLE },                    \
	{ "no-kernel", no_argument, NULL, OPT_NO_KERNEL },                          \
	{ "no-user", no_argument, NULL, OPT_NO_USER },                              \
	{ "per-thread", no_argument, NULL, OPT_PER_THREAD },                        \
	{ "stack-storage-size", required_argument, NULL, OPT_STACK_SIZE },          \
	{ "count-storage-size", required_argument, NULL, OPT_COUNT_SIZE },          \
	{ "demangle", required_argument, NULL, OPT_DEMANGLE },                      \
	{ "debuginfod", no_argument, NULL, OPT_DEBUGINFOD },                        \
	{ "dwarf-mb", required_argument, NULL, OPT_DWARF_MB },                      \
	{ "mode", required_argument, NULL, 'm' },                                   \
	{ "off-cpu-min-us", required_argument, NULL, OPT_OFFCPU_MIN },              \
	{ "unwind", required_argument, NULL, OPT_UNWIND },                          \
	{ "unwind-table-mb", required_argument, NULL, OPT_UNWIND_MB },              \
	{ "verbose", no_argument, NULL, 'v' },                                      \
	{ "help", no_argument, NULL, 'h' },                                         \
	{ "version", no_argument, NULL, OPT_VERSION }

typedef int (*config_opt_fn)(struct config *cfg, int opt, const char *arg);

/* Strict decimal integer in [min, max]; prints "invalid NAME 'ARG'" on error. */
int config__long(const char *name, const char *arg, long min, long max, long *out);

/* Seconds as a positive decimal number (fractions allowed). */
int config__seconds(const char *name, const char *arg, double *out);

/* Parses the options every mode has (frequency, pid, filters, map sizes, verbose); -ENOENT: not one. */
int config__common(struct config *cfg, int opt, const char *arg);

/*
 * getopt_long loop over argv with fn for each option; --help prints usage,
 * --version the version. Returns 0, 1 (help/version handled) or -EINVAL.
 */
int config__getopt(struct config *cfg, int argc, char **argv, const char *shortopts,
		   const struct option *opts, const char *usage, config_opt_fn fn);

/* Checks that need the machine (pids exist), done before any collection. */
int config__validate(const struct config *cfg);

int config__parse_oneshot(struct config *cfg, int argc, char **argv);
int config__parse_agent(struct config *cfg, int argc, char **argv);
int config__parse_convert(struct config *cfg, int argc, char **argv);

/* --format's value; prints the error. */
int config__format(struct config *cfg, const char *arg);
void config__free_agent(struct agent_config *ag);

/* --label KEY:VALUE of one-shot runs and convert; prints the error. */
int config__label_focus(struct config *cfg, const char *arg);

#endif /* EBPFPROF_CONFIG_INT_H */
