/* unwind_table.h -- one ELF file's CFI (.eh_frame, .debug_frame) as sorted 8-byte unwind rows */
#ifndef EBPFPROF_UNWIND_TABLE_H
#define EBPFPROF_UNWIND_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "unwind.h"
#include "unwind/ehframe/ehframe.h"

/* More rows than this in one file is refused (E2BIG); libLLVM has about 1.3 million. */
#define UNWIND_TABLE_ROWS_MAX (1u << 26)
/* A compressed .debug_frame larger than this once inflated is ignored. */
#define UNWIND_DEBUG_FRAME_MAX (256u << 20)

struct unwind_table;

/* One PT_LOAD segment: what turns a mapping's file offset into ELF addresses. */
struct unwind_load {
	__u64 offset;
	__u64 vaddr;
	__u64 filesz;
	bool exec;
};

/* What building the table met, for logs and the benchmark. */
struct unwind_table_stats {
	struct ehframe_stats cfi;	/* .eh_frame and .debug_frame together */
	size_t fdes_above_4g;		/* FDEs past 4 GiB: dropped, pc is 32 bits */
	size_t fdes_overlapped;		/* FDEs cut or dropped because another covered them */
	size_t eh_frame_bytes;
	size_t debug_frame_bytes;
	size_t go_funcs;		/* Go functions whose rows came from .gopclntab's pcsp */
	size_t peak_bytes;		/* transient: sections + working arrays at their peak */
};

/*
 * Builds the table of the ELF file open at FD (x86-64 executable or shared
 * object; FD stays open and untouched for the caller; read through libelf
 * with read(2), never mmap'ed). .eh_frame is found by section header, else
 * through PT_GNU_EH_FRAME -> .eh_frame_hdr (files without section headers);
 * .debug_frame (possibly SHF_COMPRESSED) by section header. Returns NULL with
 * errno: ENOENT the file has no CFI at all, ENOEXEC not an x86-64 ELF
 * executable or shared object, EFBIG over ELF_FILE_MAX, E2BIG over
 * UNWIND_TABLE_ROWS_MAX rows, ENOMEM, EINVAL unreadable.
 *
 * The rows (see unwind_table__rows) are sorted by pc, pcs strictly
 * increasing: each holds up to the next row's pc. Where FDEs overlap, the one
 * starting first keeps its range, except that .eh_frame always wins over
 * .debug_frame (a .debug_frame FDE is cut where an .eh_frame FDE starts in
 * it). Where a gap between FDEs starts, and after the last FDE, an
 * UNWIND_CFA_NONE row ends the covered range; consecutive rows with equal
 * contents are merged. Malformed CFI is skipped (counted in the stats): a CFA
 * program that breaks off leaves an UNWIND_CFA_UNKNOWN row from there to its
 * FDE's end.
 */
struct unwind_table *unwind_table__build(int fd);

/*
 * The same from section contents in memory, for tests and fuzzing: EH (may be
 * NULL) is .eh_frame whose byte 0 is at address EH_VADDR, DBG (may be NULL)
 * is .debug_frame. ENOENT when both are empty. No load segments, no build ID.
 */
struct unwind_table *unwind_table__from_sections(const void *eh, size_t eh_len, __u64 eh_vaddr,
						 const void *dbg, size_t dbg_len);

/*
 * The same from an ELF image in memory (LEN bytes at IMAGE, not kept): the
 * vDSO, which a process maps whole and no file holds. Its .eh_frame where it
 * has one (x86-64's); else, on AArch64, a row for each function whose
 * instructions show a frameless leaf (CFA = sp, the return address in x30),
 * the arm64 vDSO's clock_gettime among them. NULL with errno as above.
 */
struct unwind_table *unwind_table__from_image(const void *image, size_t len);

/*
 * Whether AArch64 code (LEN bytes, whole instructions) is a frameless leaf:
 * no call, no use of sp, no write of x29 or x30; never the signal trampoline.
 */
bool unwind_a64__frameless(const void *code, size_t len);

void unwind_table__free(struct unwind_table *t);

/* The rows, borrowed until unwind_table__free(); *n their count (may be 0). */
const struct unwind_row *unwind_table__rows(const struct unwind_table *t, size_t *n);

/*
 * The row covering PC, an ELF virtual address: the one with the largest
 * pc <= PC. NULL when PC is before the first row. An UNWIND_CFA_NONE row
 * means no FDE covers PC.
 */
const struct unwind_row *unwind_table__find(const struct unwind_table *t, __u64 pc);

/*
 * p_vaddr - p_offset of the PT_LOAD segment that maps file offset PGOFF (the
 * page-aligned offset of a mapping, /proc/PID/maps' third field; an
 * executable segment is preferred where two share the page). A PC in a
 * mapping [start, end) with offset pgoff is then at ELF address
 * pc - start + pgoff + delta, and the mapping's bias is start - pgoff - delta.
 * 0, or -ENOENT when no segment maps PGOFF.
 */
int unwind_table__vaddr_delta(const struct unwind_table *t, __u64 pgoff, __s64 *delta);

/* The same over LOADS[0, N), kept by a caller after the table is freed. */
int unwind_loads__vaddr_delta(const struct unwind_load *loads, size_t n, __u64 pgoff,
			      __s64 *delta);

/* The file's PT_LOAD segments in program-header order, borrowed; *n their count. */
const struct unwind_load *unwind_table__loads(const struct unwind_table *t, size_t *n);

/* Lower-case hex GNU build ID, "" when the file has none. */
const char *unwind_table__build_id(const struct unwind_table *t);

/* Bytes the table holds while it lives (rows, 8 each, plus a fixed part). */
size_t unwind_table__mem_size(const struct unwind_table *t);

const struct unwind_table_stats *unwind_table__stats(const struct unwind_table *t);

#endif /* EBPFPROF_UNWIND_TABLE_H */
