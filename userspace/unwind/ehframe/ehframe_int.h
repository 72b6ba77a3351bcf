/* ehframe_int.h -- shared by the CIE/FDE walker (ehframe.c) and CFA interpreter (ehframe_cfa.c) */
#ifndef EBPFPROF_EHFRAME_INT_H
#define EBPFPROF_EHFRAME_INT_H

#include <errno.h>
#include <string.h>
#include "ehframe.h"

/* A read position in untrusted bytes: every read checks len first. */
struct cur {
	const __u8 *p;
	size_t len;
	size_t off;
	__u64 vaddr;		/* address of p[0] */
};

static inline int cur_bytes(struct cur *c, void *dst, size_t n)
{
	if (c->len - c->off < n)
		return -EINVAL;
	memcpy(dst, c->p + c->off, n);
	c->off += n;
	return 0;
}

static inline int cur_u8(struct cur *c, __u8 *v)
{
	return cur_bytes(c, v, 1);
}

static inline int cur_skip(struct cur *c, __u64 n)
{
	if (c->len - c->off < n)
		return -EINVAL;
	c->off += n;
	return 0;
}

/* values needing more than 64 bits, or more than 10 bytes, are refused */
static inline int cur_uleb(struct cur *c, __u64 *v)
{
	__u64 r = 0;

	for (int shift = 0; shift < 70; shift += 7) {
		__u8 b;

		if (cur_u8(c, &b))
			return -EINVAL;
		if (shift == 63 && (b & 0x7e))
			return -ERANGE;
		r |= (__u64)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -ERANGE;
}

static inline int cur_sleb(struct cur *c, __s64 *v)
{
	__u64 r = 0;
	__u8 b = 0;
	int shift;

	for (shift = 0; shift < 70; shift += 7) {
		if (cur_u8(c, &b))
			return -EINVAL;
		/* the tenth byte holds bit 63 only: the rest must repeat it */
		if (shift == 63 && (b & 0x7f) != 0 && (b & 0x7f) != 0x7f)
			return -ERANGE;
		r |= (__u64)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
	}
	if (b & 0x80)
		return -ERANGE;
	shift += 7;
	if (shift < 64 && (b & 0x40))
		r |= ~0ULL << shift;
	*v = (__s64)r;
	return 0;
}

/* x86-64 DWARF registers the rows care about */
#define DWREG_RBP 6
#define DWREG_RSP 7
#define DWREG_RA 16
/* AArch64's: the frame pointer x29, the link register x30, sp */
#define DWREG_A64_FP 29
#define DWREG_A64_LR 30
#define DWREG_A64_SP 31

/* a parsed CIE: what its FDEs need */
struct cie {
	__u64 code_align;
	__s64 data_align;
	__u64 ra_reg;
	__u8 fde_enc;		/* pointer encoding of the FDE's PC range */
	__u8 addr_size;		/* .debug_frame absolute addresses: 4 or 8 */
	bool aug_z;		/* FDEs carry augmentation data to skip */
	bool signal;		/* "S": a signal trampoline, unwound from the signal frame */
	bool aarch64;		/* its section's rules are AArch64's (struct ehframe_section) */
	const __u8 *insns;	/* initial instructions */
	size_t insns_len;
	__u64 insns_vaddr;
};

struct ehframe_fde {
	const struct cie *cie;
	__u64 start;
	__u64 end;
	const __u8 *insns;
	size_t insns_len;
	__u64 insns_vaddr;
};

/*
 * Runs the CIE's initial instructions, then the FDE's program, calling
 * ops->row for each row. 0 when the program ran to its end, 1 when it was
 * malformed (an UNKNOWN row then covers the rest of the FDE), or an op's
 * negative error.
 */
int ehframe_run_fde(const struct ehframe_fde *fde, const struct ehframe_ops *ops, void *ctx);

#endif /* EBPFPROF_EHFRAME_INT_H */
