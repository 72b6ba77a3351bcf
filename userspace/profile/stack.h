/* stack.h -- one aggregated record's kernel and user stacks, read from the sampler and named */
#ifndef EBPFPROF_STACK_H
#define EBPFPROF_STACK_H

#include <stdbool.h>
#include <linux/types.h>
#include "../../include/profile.h"	/* the BPF-shared one, not profile/profile.h */
#include "unwind.h"
#include "collect/collect.h"
#include "symbolize/symbolize.h"

struct runtime_set;

/* a kernel stack, a CFI-walked user stack and a truncation mark */
#define STACK_MAX_FRAMES (MAX_STACK_DEPTH + UNWIND_MAX_DEPTH + 1)

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

/* Reads the frames of the stack under hash in slot (leaf first); how many, or -errno: lost. */
typedef int (*stack_read_fn)(void *src, int slot, __u64 hash, __u64 *ips, int max);

/*
 * Reads the kernel and user stacks of a CPU sample's key from the sampler's
 * slot and names every frame. A stack the kernel could not record becomes
 * one pseudo frame naming why ("[lost kernel stack: map full]"), so the
 * sample still counts. Returns 0.
 */
int stack__resolve(struct stack *st, struct sampler *s, int slot, struct symbolizer *sym,
		   const struct sample_key *key);

/* The same for an off-CPU block's stacks; rts names the runtimes' frames (NULL: none). */
int stack__resolve_offcpu(struct stack *st, struct offcpu *oc, struct runtime_set *rts,
			  struct symbolizer *sym, const struct offcpu_key *key);

/*
 * A stack of return addresses only, leaf first (a Go heap profile's: each
 * is looked up at the call before it), named as a user stack of IMG.
 * EXPANDED: a Go traceback's, where each inlined call has a PC of its own
 * too; those PCs are folded into the frame that names them, as
 * runtime/pprof does. Otherwise one PC per machine frame (a frame-pointer
 * walk), each with all of its inlined calls.
 */
void stack__resolve_return_pcs(struct stack *st, struct symbolizer *sym,
			       const struct proc_image *img, const __u64 *pcs, int n,
			       bool expanded);

#endif /* EBPFPROF_STACK_H */
