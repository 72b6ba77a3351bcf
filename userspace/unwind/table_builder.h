/* table_builder.h -- CFI tables of large files built on a thread of their own, smallest first */
#ifndef EBPFPROF_TABLE_BUILDER_H
#define EBPFPROF_TABLE_BUILDER_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

struct table_builder;
struct unwind_table;

/* a finished build: what was submitted with it, and what unwind_table__build() gave */
struct built_table {
	void *arg;
	struct unwind_table *table;	/* NULL: see err */
	int err;			/* the errno of a failed build */
	__u64 cpu_ns;			/* the build's CPU time on the builder's thread */
};

/* Starts the builder's thread; NULL with errno set. */
struct table_builder *table_builder__new(void);

/*
 * Stops the thread (after the build it is in, if any) and frees every
 * result not taken, with its table; ARG of each is the caller's to free,
 * through FREE_ARG (may be NULL). A NULL builder is a no-op.
 */
void table_builder__free(struct table_builder *b, void (*free_arg)(void *arg));

/*
 * Queues the file open at FD (taken over: closed once built) of SIZE bytes.
 * Queued files are built smallest first. 0 or a negative errno (FD is then
 * still the caller's).
 */
int table_builder__submit(struct table_builder *b, int fd, off_t size, void *arg);

/* Takes one finished build into *OUT: false when none is finished. */
bool table_builder__take(struct table_builder *b, struct built_table *out);

/* Files submitted whose results are not taken yet. */
int table_builder__pending(struct table_builder *b);

#endif /* EBPFPROF_TABLE_BUILDER_H */
