/* ehframe_cfa.c -- runs CIE and FDE CFA programs; maps each x86-64 or AArch64 row to a struct unwind_row */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "ehframe.h"
#include "ehframe_int.h"

enum rule_kind {
	RULE_UNSPEC,		/* nothing said: callee-saved, so rbp keeps its value */
	RULE_SAME,
	RULE_UNDEF,
	RULE_OFFSET,		/* saved at CFA + off */
	RULE_AT_RBP,		/* saved at *(rbp): DW_OP_breg6 0, GCC's realigning prologue */
	RULE_OTHER,		/* register, expression, val_*: not followed */
};

enum cfa_kind {
	CFA_REG,		/* reg + off */
	CFA_PLT,		/* the lazy-binding PLT expression; plt_k its threshold */
	CFA_DEREF,		/* *(rbp + off) */
	CFA_EXPR,		/* any other expression */
};

struct rule {
	__u8 kind;
	__s64 off;
};

struct state {
	__u8 cfa_kind;
	__u8 plt_k;
	__u64 cfa_reg;
	__s64 cfa_off;
	struct rule rbp;
	struct rule ra;
};

struct interp {
	const struct ehframe_fde *fde;
	const struct cie *cie;
	const struct ehframe_ops *ops;
	void *ctx;
	struct state s;
	struct state init;	/* after the CIE's instructions: what DW_CFA_restore returns to */
	struct state stack[EHFRAME_STATE_STACK];
	int depth;
	__u64 loc;
	bool in_cie;
	bool done;		/* an advance reached the FDE's end */
	int cb_err;		/* what ops->row returned, when not 0 */
};

#define DW_OP_lit0 0x30
#define DW_OP_lit3 0x33
#define DW_OP_lit15 0x3f
#define DW_OP_lit31 0x4f
#define DW_OP_breg6 0x76
#define DW_OP_breg7 0x77
#define DW_OP_deref 0x06
#define DW_OP_and 0x1a
#define DW_OP_ge 0x2a
#define DW_OP_shl 0x24
#define DW_OP_plus 0x22
#define DW_OP_breg16 0x80	/* DW_OP_breg0 + 16, one byte */

/*
 * The CFA expression of a lazy-binding PLT entry:
 * breg7 N; breg16 0; lit15; and; litK; ge; lit3; shl; plus
 */
static bool match_plt(const __u8 *e, size_t len, struct state *s)
{
	struct cur c = { .p = e, .len = len };
	__u8 op[7];
	__s64 n, zero;

	if (cur_u8(&c, &op[0]) || op[0] != DW_OP_breg7 || cur_sleb(&c, &n) ||
	    cur_u8(&c, &op[0]) || op[0] != DW_OP_breg16 || cur_sleb(&c, &zero) || zero ||
	    cur_bytes(&c, op, 7) || c.off != len)
		return false;
	if (op[0] != DW_OP_lit15 || op[1] != DW_OP_and || op[2] < DW_OP_lit0 ||
	    op[2] > DW_OP_lit31 || op[3] != DW_OP_ge || op[4] != DW_OP_lit3 ||
	    op[5] != DW_OP_shl || op[6] != DW_OP_plus)
		return false;
	s->cfa_off = n;
	s->plt_k = op[2] - DW_OP_lit0;
	return true;
}

/* breg6 N; deref: the CFA saved in the frame of a stack-realigning prologue */
static bool match_deref(const __u8 *e, size_t len, struct state *s)
{
	struct cur c = { .p = e, .len = len };
	__s64 n;
	__u8 op;

	if (cur_u8(&c, &op) || op != DW_OP_breg6 || cur_sleb(&c, &n) || cur_u8(&c, &op) ||
	    op != DW_OP_deref || c.off != len)
		return false;
	s->cfa_off = n;
	return true;
}

static void set_cfa_expr(struct state *s, const __u8 *e, size_t len)
{
	if (match_plt(e, len, s))
		s->cfa_kind = CFA_PLT;
	else if (match_deref(e, len, s))
		s->cfa_kind = CFA_DEREF;
	else
		s->cfa_kind = CFA_EXPR;
}

/* the frame pointer's DWARF number: rbp, x29 */
static __u64 fp_reg(const struct cie *cie)
{
	return cie->aarch64 ? DWREG_A64_FP : DWREG_RBP;
}

static struct rule *tracked(struct interp *in, __u64 reg)
{
	if (reg == fp_reg(in->cie))
		return &in->s.rbp;
	if (reg == in->cie->ra_reg)
		return &in->s.ra;
	return NULL;
}

static void set_rule(struct interp *in, __u64 reg, __u8 kind, __s64 off)
{
	struct rule *r = tracked(in, reg);

	if (r) {
		r->kind = kind;
		r->off = off;
	}
}

/* OFF factored by the data alignment: -ERANGE when that leaves 64 bits */
static int factored(const struct interp *in, __s64 off, __s64 *out)
{
	return __builtin_mul_overflow(off, in->cie->data_align, out) ? -ERANGE : 0;
}

static int set_offset(struct interp *in, __u64 reg, __s64 off, __u8 kind)
{
	__s64 v;

	if (factored(in, off, &v))
		return -ERANGE;
	set_rule(in, reg, kind, v);
	return 0;
}

/* back to the rule after the CIE's instructions; inside the CIE that is none yet */
static void restore(struct interp *in, __u64 reg)
{
	struct rule *r = tracked(in, reg);

	if (!r)
		return;
	if (in->in_cie)
		r->kind = RULE_UNSPEC;
	else
		*r = reg == fp_reg(in->cie) ? in->init.rbp : in->init.ra;
}

/* a rule saving a register at CFA + 8 * words: words, or 0 when it is not such a rule */
static int saved_words(const struct rule *r)
{
	if (r->kind != RULE_OFFSET || !r->off || r->off % 8 || r->off / 8 < INT8_MIN ||
	    r->off / 8 > INT8_MAX)
		return 0;
	return r->off / 8;
}

/* where x30 is saved, in words from sp (the CFA rule's sp + cfa_off); -1 when not such a slot */
static int ra_sp_words(const struct state *s)
{
	__s64 off;

	if (s->ra.kind != RULE_OFFSET || __builtin_add_overflow(s->cfa_off, s->ra.off, &off) ||
	    off < 0 || off % 8 || off / 8 > INT8_MAX)
		return -1;
	return off / 8;
}

/*
 * An AArch64 state as a row (include/unwind.h): the CFA from sp or x29; x30
 * saved right above x29 (a frame record), saved alone with x29 untouched,
 * or not saved yet (in x30 still). Anything else is UNKNOWN.
 */
static void to_row_aarch64(const struct state *s, struct unwind_row *r)
{
	int fp = saved_words(&s->rbp), ra = saved_words(&s->ra);
	bool fp_kept = s->rbp.kind == RULE_UNSPEC || s->rbp.kind == RULE_SAME;

	if (s->cfa_kind != CFA_REG || s->cfa_off < INT16_MIN || s->cfa_off > INT16_MAX ||
	    (s->cfa_reg != DWREG_A64_SP && s->cfa_reg != DWREG_A64_FP))
		return;
	if (s->ra.kind == RULE_UNSPEC || s->ra.kind == RULE_SAME) {
		if (s->cfa_reg != DWREG_A64_SP || (!fp && !fp_kept))
			return;
		r->cfa_type = UNWIND_CFA_LR;
		r->rbp_off = fp;
	} else if (ra && fp && ra == fp + 1) {
		r->cfa_type = s->cfa_reg == DWREG_A64_SP ? UNWIND_CFA_RSP : UNWIND_CFA_RBP;
		r->rbp_off = fp;
	} else if (fp_kept && s->cfa_reg == DWREG_A64_SP && ra_sp_words(s) >= 0) {
		r->cfa_type = UNWIND_CFA_RA_SAVED;
		r->rbp_off = ra_sp_words(s);
	} else {
		return;
	}
	r->cfa_off = s->cfa_off;
}

/* the CIE's state as an unwind row; only the fields the type uses are set */
static void to_row(const struct cie *cie, const struct state *s, struct unwind_row *r)
{
	memset(r, 0, sizeof(*r));
	r->cfa_type = UNWIND_CFA_UNKNOWN;
	if (cie->signal) {	/* its registers come from the signal frame, not from rules */
		r->cfa_type = UNWIND_CFA_SIGNAL;
		return;
	}
	if (cie->aarch64) {
		if (cie->ra_reg != DWREG_A64_LR)
			return;
		if (s->ra.kind == RULE_UNDEF)
			r->cfa_type = UNWIND_CFA_END;
		else
			to_row_aarch64(s, r);
		return;
	}
	if (cie->ra_reg != DWREG_RA)
		return;
	if (s->ra.kind == RULE_UNDEF) {
		r->cfa_type = UNWIND_CFA_END;
		return;
	}
	if (s->ra.kind != RULE_OFFSET || s->ra.off != -8 || s->cfa_off < INT16_MIN ||
	    s->cfa_off > INT16_MAX)
		return;
	if (s->cfa_kind == CFA_PLT) {
		if (s->rbp.kind == RULE_UNSPEC || s->rbp.kind == RULE_SAME) {
			r->cfa_type = UNWIND_CFA_PLT;
			r->cfa_off = s->cfa_off;
			r->rbp_off = s->plt_k;
		}
		return;
	}
	if (s->cfa_kind == CFA_DEREF) {
		/* the caller's rbp is where rbp points: the row says so by its type */
		if (s->rbp.kind == RULE_AT_RBP) {
			r->cfa_type = UNWIND_CFA_RBP_DEREF;
			r->cfa_off = s->cfa_off;
		}
		return;
	}
	if (s->cfa_kind != CFA_REG || (s->cfa_reg != DWREG_RSP && s->cfa_reg != DWREG_RBP))
		return;
	if (s->rbp.kind == RULE_OFFSET) {
		if (!s->rbp.off || s->rbp.off % 8 || s->rbp.off / 8 < INT8_MIN ||
		    s->rbp.off / 8 > INT8_MAX)
			return;
		r->rbp_off = s->rbp.off / 8;
	} else if (s->rbp.kind != RULE_UNSPEC && s->rbp.kind != RULE_SAME &&
		   s->rbp.kind != RULE_UNDEF) {
		return;
	}
	r->cfa_type = s->cfa_reg == DWREG_RSP ? UNWIND_CFA_RSP : UNWIND_CFA_RBP;
	r->cfa_off = s->cfa_off;
}

/*
 * The row for [loc, loc + delta), then loc moves on; once it reaches the
 * FDE's end the program is done. A callback's error is kept apart from the
 * program's own.
 */
static int advance(struct interp *in, __u64 delta, bool factor)
{
	struct unwind_row row;
	__u64 to;

	if (in->in_cie)
		return -EINVAL;
	if (factor && __builtin_mul_overflow(delta, in->cie->code_align, &delta))
		return -ERANGE;
	if (__builtin_add_overflow(in->loc, delta, &to))
		return -ERANGE;
	if (to == in->loc)
		return 0;
	to_row(in->cie, &in->s, &row);
	in->cb_err = in->ops->row(in->ctx, in->loc, &row);
	in->loc = to;
	in->done = to >= in->fde->end;
	return in->cb_err;
}

static int set_loc(struct interp *in, struct cur *c)
{
	__u64 to;
	size_t off = c->off;

	if (in->in_cie || ehframe__read_pointer(c->p, c->len, &off, in->cie->fde_enc, c->vaddr, 0,
						&to) || to < in->loc)
		return -EINVAL;
	c->off = off;
	return advance(in, to - in->loc, false);
}

/* only a register rule has a register and offset to change: after an expression, unknown */
static void keep_reg_rule(struct state *s)
{
	if (s->cfa_kind != CFA_REG)
		s->cfa_kind = CFA_EXPR;
}

static int read_block(struct cur *c, const __u8 **e, __u64 *len)
{
	if (cur_uleb(c, len) || *len > c->len - c->off)
		return -EINVAL;
	*e = c->p + c->off;
	c->off += *len;
	return 0;
}

/* the extended opcodes: everything but advance_loc, offset and restore */
static int run_ext(struct interp *in, struct cur *c, __u8 op)
{
	__u64 reg, u, len;
	const __u8 *e;
	__u8 u8;
	__u16 u16;
	__u32 u32;
	__s64 s;

	switch (op) {
	case 0x00:	/* nop */
		return 0;
	case 0x01:	/* set_loc */
		return set_loc(in, c);
	case 0x02:	/* advance_loc1 */
		return cur_u8(c, &u8) ?: advance(in, u8, true);
	case 0x03:	/* advance_loc2 */
		return cur_bytes(c, &u16, 2) ?: advance(in, u16, true);
	case 0x04:	/* advance_loc4 */
		return cur_bytes(c, &u32, 4) ?: advance(in, u32, true);
	case 0x1d:	/* MIPS_advance_loc8 */
		return cur_bytes(c, &u, 8) ?: advance(in, u, true);
	case 0x05:	/* offset_extended */
		if (cur_uleb(c, &reg) || cur_uleb(c, &u) || u > INT64_MAX)
			return -EINVAL;
		return set_offset(in, reg, u, RULE_OFFSET);
	case 0x2f:	/* GNU_negative_offset_extended */
		if (cur_uleb(c, &reg) || cur_uleb(c, &u) || u > INT64_MAX)
			return -EINVAL;
		return set_offset(in, reg, -(__s64)u, RULE_OFFSET);
	case 0x11:	/* offset_extended_sf */
		return cur_uleb(c, &reg) ?: cur_sleb(c, &s) ?: set_offset(in, reg, s, RULE_OFFSET);
	case 0x06:	/* restore_extended */
		if (cur_uleb(c, &reg))
			return -EINVAL;
		restore(in, reg);
		return 0;
	case 0x07:	/* undefined */
	case 0x08:	/* same_value */
		if (cur_uleb(c, &reg))
			return -EINVAL;
		set_rule(in, reg, op == 0x07 ? RULE_UNDEF : RULE_SAME, 0);
		return 0;
	case 0x09:	/* register */
		if (cur_uleb(c, &reg) || cur_uleb(c, &u))
			return -EINVAL;
		set_rule(in, reg, RULE_OTHER, 0);
		return 0;
	case 0x14:	/* val_offset */
	case 0x15:	/* val_offset_sf */
		if (cur_uleb(c, &reg) || (op == 0x14 ? cur_uleb(c, &u) : cur_sleb(c, &s)))
			return -EINVAL;
		set_rule(in, reg, RULE_OTHER, 0);
		return 0;
	case 0x10:	/* expression */
	case 0x16:	/* val_expression */
		if (cur_uleb(c, &reg) || read_block(c, &e, &len))
			return -EINVAL;
		if (op == 0x10 && !in->cie->aarch64 && reg == DWREG_RBP && len == 2 &&
		    e[0] == DW_OP_breg6 && !e[1])
			set_rule(in, reg, RULE_AT_RBP, 0);
		else
			set_rule(in, reg, RULE_OTHER, 0);
		return 0;
	case 0x0a:	/* remember_state */
		if (in->depth >= EHFRAME_STATE_STACK)
			return -E2BIG;
		in->stack[in->depth++] = in->s;
		return 0;
	case 0x0b:	/* restore_state */
		if (!in->depth)
			return -EINVAL;
		in->s = in->stack[--in->depth];
		return 0;
	case 0x0c:	/* def_cfa */
		if (cur_uleb(c, &reg) || cur_uleb(c, &u) || u > INT64_MAX)
			return -EINVAL;
		in->s.cfa_kind = CFA_REG;
		in->s.cfa_reg = reg;
		in->s.cfa_off = u;
		return 0;
	case 0x12:	/* def_cfa_sf */
		if (cur_uleb(c, &reg) || cur_sleb(c, &s) || factored(in, s, &in->s.cfa_off))
			return -EINVAL;
		in->s.cfa_kind = CFA_REG;
		in->s.cfa_reg = reg;
		return 0;
	case 0x0d:	/* def_cfa_register */
		if (cur_uleb(c, &reg))
			return -EINVAL;
		in->s.cfa_reg = reg;
		keep_reg_rule(&in->s);
		return 0;
	case 0x0e:	/* def_cfa_offset */
		if (cur_uleb(c, &u) || u > INT64_MAX)
			return -EINVAL;
		in->s.cfa_off = u;
		keep_reg_rule(&in->s);
		return 0;
	case 0x13:	/* def_cfa_offset_sf */
		if (cur_sleb(c, &s) || factored(in, s, &in->s.cfa_off))
			return -EINVAL;
		keep_reg_rule(&in->s);
		return 0;
	case 0x0f:	/* def_cfa_expression */
		if (read_block(c, &e, &len))
			return -EINVAL;
		set_cfa_expr(&in->s, e, len);
		return 0;
	case 0x2e:	/* GNU_args_size: the unwinder does not need it */
		return cur_uleb(c, &u);
	case 0x2d:
		/*
		 * AArch64's negate_ra_state: whether x30 is signed (pointer
		 * authentication). The walk strips the signature from every
		 * return address, so either state reads the same; SPARC's
		 * GNU_window_save, on x86-64, is not ours.
		 */
		return in->cie->aarch64 ? 0 : -EINVAL;
	default:	/* unknown opcodes */
		return -EINVAL;
	}
}

static int run(struct interp *in, const __u8 *insns, size_t len, __u64 vaddr)
{
	struct cur c = { .p = insns, .len = len, .vaddr = vaddr };
	int err = 0;

	/* each opcode consumes at least one byte, so the loop ends */
	while (!err && !in->done && c.off < c.len) {
		__u8 op = c.p[c.off++];
		__u64 u;

		switch (op & 0xc0) {
		case 0x40:	/* advance_loc */
			err = advance(in, op & 0x3f, true);
			break;
		case 0x80:	/* offset */
			if (cur_uleb(&c, &u) || u > INT64_MAX)
				err = -EINVAL;
			else
				err = set_offset(in, op & 0x3f, u, RULE_OFFSET);
			break;
		case 0xc0:	/* restore */
			restore(in, op & 0x3f);
			break;
		default:
			err = run_ext(in, &c, op);
		}
	}
	return err;
}

int ehframe_run_fde(const struct ehframe_fde *fde, const struct ehframe_ops *ops, void *ctx)
{
	struct interp in = {
		.fde = fde, .cie = fde->cie, .ops = ops, .ctx = ctx, .loc = fde->start,
		.in_cie = true,
	};
	struct unwind_row row;
	int err;

	/* before any rule: no CFA (an unknown expression), rbp and RA unspecified */
	in.s.cfa_kind = CFA_EXPR;
	err = run(&in, fde->cie->insns, fde->cie->insns_len, fde->cie->insns_vaddr);
	in.in_cie = false;
	in.init = in.s;
	in.depth = 0;		/* the CIE's remembered states are not the FDE's */
	if (!err)
		err = run(&in, fde->insns, fde->insns_len, fde->insns_vaddr);
	if (in.cb_err)
		return in.cb_err;
	if (err && !in.done && in.loc < fde->end) {
		/* what ran is right up to loc; after it nothing can be trusted */
		memset(&row, 0, sizeof(row));
		row.cfa_type = UNWIND_CFA_UNKNOWN;
		return ops->row(ctx, in.loc, &row) ?: 1;
	}
	if (err)
		return 1;
	if (!in.done && in.loc < fde->end) {
		to_row(fde->cie, &in.s, &row);
		return ops->row(ctx, in.loc, &row);
	}
	return 0;
}
