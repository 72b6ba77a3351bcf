/* ehframe.h -- bounded .eh_frame / .debug_frame parser: each FDE's CFA program as x86-64 or AArch64 rows */
#ifndef EBPFPROF_EHFRAME_H
#define EBPFPROF_EHFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "unwind.h"

/* DW_EH_PE_* pointer encodings (LSB, "Exception Frames") */
#define DW_EH_PE_absptr 0x00
#define DW_EH_PE_uleb128 0x01
#define DW_EH_PE_udata2 0x02
#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_udata8 0x04
#define DW_EH_PE_sleb128 0x09
#define DW_EH_PE_sdata2 0x0a
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_sdata8 0x0c
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_textrel 0x20
#define DW_EH_PE_datarel 0x30
#define DW_EH_PE_funcrel 0x40
#define DW_EH_PE_aligned 0x50
#define DW_EH_PE_indirect 0x80
#define DW_EH_PE_omit 0xff

/* Nested DW_CFA_remember_state deeper than this makes the FDE's program invalid. */
#define EHFRAME_STATE_STACK 32

enum ehframe_format {
	EHFRAME_EH_FRAME,	/* .eh_frame: CIE id 0, FDEs point back relative to themselves */
	EHFRAME_DEBUG_FRAME,	/* .debug_frame: CIE id ~0, FDEs hold a section offset */
};

/* One section's bytes as read from the file; nothing is kept after ehframe__parse(). */
struct ehframe_section {
	const void *data;
	size_t len;
	__u64 vaddr;		/* ELF address of data[0]: the base of pcrel pointers */
	enum ehframe_format format;
	/*
	 * The bytes run past the section's end (an .eh_frame found through
	 * .eh_frame_hdr, whose size nothing records): the first zero length
	 * ends it. Otherwise zero terminators are skipped.
	 */
	bool stop_at_zero;
	bool aarch64;		/* rows by AArch64's registers and rules (x29, x30, sp), else x86-64's */
};

/* What the parser met; every count only grows, so one struct can sum several sections. */
struct ehframe_stats {
	size_t cies;
	size_t fdes;		/* FDEs whose PC range was decoded */
	size_t bad_cies;	/* CIEs that could not be parsed: their FDEs are dropped */
	size_t bad_fdes;	/* FDEs dropped: bad CIE pointer, pointer encoding, range */
	size_t bad_programs;	/* CFA programs that stopped early: UNKNOWN from there on */
	size_t truncated;	/* sections cut short by an entry running past their end */
};

/*
 * The parser calls fde() once per FDE with its PC range [start, end)
 * (start < end), then row() for each row of it: pcs strictly increasing, the
 * first at start, all below end; each row holds up to the next or to end.
 * fde() returning 1 skips that FDE's rows; a negative return stops the parse
 * and is passed on.
 */
struct ehframe_ops {
	int (*fde)(void *ctx, __u64 start, __u64 end);
	int (*row)(void *ctx, __u64 pc, const struct unwind_row *row);
};

/*
 * Walks every CIE and FDE of SEC. Every length, offset and operand is checked
 * against the bytes present; malformed entries are counted in ST and skipped
 * (an entry running past the end ends the walk). Work is linear in SEC's
 * length. Returns 0, or the negative errno an op returned (-ENOMEM...).
 */
int ehframe__parse(const struct ehframe_section *sec, const struct ehframe_ops *ops, void *ctx,
		   struct ehframe_stats *st);

/*
 * Reads a pointer in encoding ENC from BUF[*off] (BUF's byte 0 at address
 * VADDR) and advances *off. pcrel is relative to the pointer's own address,
 * datarel to DATA_BASE (0: not allowed), aligned aligns to 8 bytes first;
 * textrel, funcrel, indirect and omit are refused. 0 or -EINVAL.
 */
int ehframe__read_pointer(const void *buf, size_t len, size_t *off, __u8 enc, __u64 vaddr,
			  __u64 data_base, __u64 *val);

/*
 * The address of .eh_frame that an .eh_frame_hdr (version 1) of LEN bytes at
 * VADDR names. 0, -EINVAL malformed, -ENOENT when it names none (omit).
 */
int ehframe__hdr_eh_frame(const void *hdr, size_t len, __u64 vaddr, __u64 *eh_frame);

#endif /* EBPFPROF_EHFRAME_H */
