/* output.h -- the profile file: created (as a temp file) before profiling, renamed into place at the end */
#ifndef EBPFPROF_OUTPUT_H
#define EBPFPROF_OUTPUT_H

#include <stdio.h>

struct output;

/*
 * Opens path for writing ("-": stdout). A file is written as a temporary in
 * the same directory, so an unwritable path fails now, before any profiling,
 * and a crash never leaves a truncated profile behind. NULL with errno set.
 */
struct output *output__open(const char *path);
FILE *output__file(struct output *o);

/* Flushes and renames the file into place; 0 or a negative errno. Frees o. */
int output__commit(struct output *o);

/* Removes the temporary file; frees o. NULL is a no-op. */
void output__abort(struct output *o);

#endif /* EBPFPROF_OUTPUT_H */
