/* pprof_builder.h -- adds resolved stacks to one pprof, keeping its mapping ids per symbolizer mapping */
#ifndef EBPFPROF_PPROF_BUILDER_H
#define EBPFPROF_PPROF_BUILDER_H

#include "symbolize/symbolize.h"
#include "pprof.h"
#include "stack.h"

struct pprof_builder;

/* NULL with errno set. Function names are demangled as mode says. */
struct pprof_builder *pprof_builder__new(const struct pprof_opts *opts, enum demangle_mode mode);

/* Adds values to the sample of this stack and labels. 0 or a negative errno. */
int pprof_builder__add(struct pprof_builder *b, const struct stack *st, const __s64 *values,
		       const struct pprof_label *labels, int n_labels);

/* The profile built so far; borrowed, valid until the builder is freed. */
struct pprof *pprof_builder__pprof(struct pprof_builder *b);

/* Frees the builder and hands its profile to the caller (who pprof__free()s it). */
struct pprof *pprof_builder__finish(struct pprof_builder *b);

/* Frees the builder and its profile. NULL is a no-op. */
void pprof_builder__free(struct pprof_builder *b);

#endif /* EBPFPROF_PPROF_BUILDER_H */
