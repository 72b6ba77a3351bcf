/* goheap_find.h -- internal to goheap/: a Go binary's version and heap profile variables */
#ifndef EBPFPROF_GOHEAP_FIND_H
#define EBPFPROF_GOHEAP_FIND_H

#include <stdbool.h>
#include <linux/types.h>
#include "goheap_int.h"

#define GOHEAP_RW_MAX 8

struct goheap_range {
	__u64 start, end, off;
};

/* What one binary tells: file addresses (the load bias is the process's). */
struct goheap_layout {
	char version[32];
	bool pie;
	__u64 first_load;	/* the lowest PT_LOAD's page */
	bool first_load_set;
	__u64 mbuckets;		/* 0: not found */
	bool mbuckets_from_code;	/* found by the code scan: checked against the process */
	__u64 rate;		/* runtime.MemProfileRate; 0: not found */
	bool rate_sym;		/* ... from .symtab */
	struct goheap_range rw[GOHEAP_RW_MAX], x[GOHEAP_RW_MAX];
	int n_rw, n_x;
};

/*
 * Reads the ELF file open at FD: 0; -ENOENT not a 64-bit x86 Go 1.18+
 * binary; -ENOTSUP a release whose layout we do not know (l->version says
 * which); -ESRCH Go, but runtime.mbuckets is nowhere to be found.
 */
int goheap_layout__find(int fd, struct goheap_layout *l);

/* Whether the 8 bytes at VADDR lie in a writable segment of the binary. */
bool goheap_layout__writable(const struct goheap_layout *l, __u64 vaddr);

#endif /* EBPFPROF_GOHEAP_FIND_H */
