/* srcline.h -- one source-level frame (function, file, line) as Go tables and DWARF report it */
#ifndef EBPFPROF_SRCLINE_H
#define EBPFPROF_SRCLINE_H

#include <linux/types.h>

/*
 * One address can stand for several frames when calls were inlined: lookups
 * fill an array callee first, caller last (the order profile.proto wants for
 * the Lines of one Location). Strings are borrowed from the table that
 * answered and stay valid until that table is freed.
 */
struct src_line {
	const char *function;	/* as the table names it (Go: "main.work"; DWARF: linkage name if any) */
	const char *file;	/* NULL when unknown */
	__u32 line;		/* 0 when unknown */
};

#define SRC_LINES_MAX 16	/* inline depth kept per address */

#endif /* EBPFPROF_SRCLINE_H */
