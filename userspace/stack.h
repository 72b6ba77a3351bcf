/* stack.h -- one aggregated record's kernel and user stacks, read from the sampler and named */
#ifndef EBPFPROF_STACK_H
#define EBPFPROF_STACK_H

#include <linux/types.h>
#include "profile.h"
#include "sampler.h"
#include "symbolizer.h"

#define STACK_MAX_FRAMES (2 * MAX_STACK_DEPTH)

/* Source lines kept for one stack; past this, frames keep their function name only. */
#define STACK_MAX_LINES (4 * STACK_MAX_FRAMES)

/* One frame; strings and mappings are borrowed from the symbolizer. */
struct frame {
	const struct sym_mapping *mapping;	/* NULL: in no known mapping, or a lost-stack frame */
	const char *name;			/* NULL: not named */
	__u64 addr;				/* the sampled address (a reason code for lost stacks) */
	const struct src_line *lines;		/* n_lines source frames, callee first, or NULL */
	int n_lines;
};

/* Leaf first: the kernel part of a stack sits above its user part. */
struct stack {
	struct frame frames[STACK_MAX_FRAMES];
	int n;
	struct src_line lines[STACK_MAX_LINES];	/* what frames[].lines point into */
	int n_lines;
};

/*
 * Reads the stacks of key from slot and names every frame. A stack the kernel
 * could not record becomes one pseudo frame naming why, so the sample still
 * counts. Returns 0 or a negative errno.
 */
int stack__resolve(struct stack *st, struct sampler *s, int slot, struct symbolizer *sym,
		   const struct sample_key *key);

#endif /* EBPFPROF_STACK_H */
