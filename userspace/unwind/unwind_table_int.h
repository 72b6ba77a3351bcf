/* unwind_table_int.h -- the table and its builder: unwind_table.c and unwind_table_elf.c */
#ifndef EBPFPROF_UNWIND_TABLE_INT_H
#define EBPFPROF_UNWIND_TABLE_INT_H

#include <elf.h>
#include <libelf.h>
#include <stdbool.h>
#include "symbolize/symbolize.h"
#include "unwind_table.h"

#define UNWIND_LOADS_MAX 64

/*
 * The machine whose files get tables: the one the BPF walk runs on, whose
 * rules the rows are (x86-64's or AArch64's, include/unwind.h).
 */
#if defined(__aarch64__)
#define UNWIND_MACHINE EM_AARCH64
#else
#define UNWIND_MACHINE EM_X86_64
#endif
#define UNWIND_AARCH64 (UNWIND_MACHINE == EM_AARCH64)

struct unwind_table {
	struct unwind_row *rows;
	size_t n;
	struct unwind_load loads[UNWIND_LOADS_MAX];
	size_t n_loads;
	char build_id[ELF_BUILD_ID_HEX_SIZE];
	struct unwind_table_stats stats;
};

/* one FDE's rows in the builder's row array */
struct fde_rec {
	__u32 start;
	__u32 end;
	__u32 first;
	__u32 n;
	__u32 seq;		/* order of arrival: ties sort the same on every run */
	__u32 prio;		/* 0 .eh_frame, 1 .debug_frame: lower wins */
};

/* rows of every FDE as parsed, before sorting and overlap resolution */
struct builder {
	struct unwind_row *rows;
	size_t n, cap;
	struct fde_rec *fdes;
	size_t nf, capf;
	__u32 prio;
	bool skip;		/* the current FDE is dropped */
	struct unwind_table_stats *stats;
};

/* Parses one section into B at priority PRIO. 0 or a negative errno (-ENOMEM, -E2BIG). */
int builder__add(struct builder *b, const struct ehframe_section *sec, __u32 prio);

/*
 * Adds the rows of the Go code of the ELF file at FD from its .gopclntab
 * (unwind_table_go.c), at priority PRIO; *funcs: the functions it has.
 * 0, -ENOENT (no Go table), or a negative errno.
 */
int builder__add_go(struct builder *b, int fd, __u32 prio, size_t *funcs);

/* T's PT_LOAD segments, read from ELF (unwind_table_elf.c). 0 or -EINVAL. */
int unwind_table__read_loads(Elf *elf, struct unwind_table *t);

/* Adds one FDE of [START, END) with the one ROW (its pc START). 0 or a negative errno. */
int builder__add_range(struct builder *b, __u64 start, __u64 end, const struct unwind_row *row);

/*
 * Adds a row for each function of ELF (its symbols; T's loads place them)
 * whose instructions show a frameless AArch64 leaf: code without CFI, as
 * the arm64 vDSO's (unwind_table_leaf.c). 0, -ENOENT (none), or an errno.
 */
int builder__add_leaves(struct builder *b, Elf *elf, const struct unwind_table *t);

/* Sorts and resolves B's FDEs into T's rows and frees B's arrays. 0 or -ENOMEM. */
int builder__finish(struct builder *b, struct unwind_table *t, size_t extra_bytes);

void builder__release(struct builder *b);

#endif /* EBPFPROF_UNWIND_TABLE_INT_H */
