/* convert.h -- `ebpfprof convert IN` and `ebpfprof diff BEFORE AFTER`: pprof files read and written as html, folded, top */
#ifndef EBPFPROF_CONVERT_H
#define EBPFPROF_CONVERT_H

#include <stdio.h>
#include "config.h"

struct pprof;
struct pprof_top_opts;

/* Reads, converts, writes; returns an exit code (EXIT_OK, EXIT_RUNTIME, EXIT_USAGE). */
int convert__run(const struct config *cfg);

/*
 * The sample type a text view shows: name when given, else the profile's
 * default when CPU-like, else samples, cpu, wall, off_cpu in that order.
 * -1 when there is none (prints why when name is set or verbose).
 */
int convert__pick_type(const struct pprof *p, const char *name);

/*
 * The profile a view shows: p, or with --label the samples carrying that
 * label, then *owned (the caller frees it). NULL with errno set.
 */
const struct pprof *convert__focus(const struct config *cfg, const struct pprof *p,
				   struct pprof **owned);

/* How --format top fits where it goes: a terminal's width and block bars, else plain. */
void convert__top_opts(FILE *out, struct pprof_top_opts *o);

#endif /* EBPFPROF_CONVERT_H */
