/* test_ehframe.c -- the CFI parser on hand-made CIEs, FDEs and CFA programs: every opcode, encoding and malformed input */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "ehframe.h"
#include "unwind_table.h"
#include "test.h"

#define VADDR 0x1000		/* where the test .eh_frame is "loaded" */
#define FN 0x2000		/* the function the FDE covers: [FN, FN + FN_LEN) */
#define FN_LEN 0x100

/* a section being written: little-endian fields and LEB128 as the formats have them */
struct sec {
	__u8 b[2048];
	size_t n;
};

static void put(struct sec *s, const void *p, size_t n)
{
	if (s->n + n > sizeof(s->b))
		abort();
	memcpy(s->b + s->n, p, n);
	s->n += n;
}

static void u8(struct sec *s, __u8 v)
{
	put(s, &v, 1);
}

static void u32(struct sec *s, __u32 v)
{
	put(s, &v, 4);
}

static void u64(struct sec *s, __u64 v)
{
	put(s, &v, 8);
}

static void uleb(struct sec *s, __u64 v)
{
	do {
		u8(s, (v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

static void sleb(struct sec *s, __s64 v)
{
	bool more = true;

	while (more) {
		__u8 b = v & 0x7f;

		v >>= 7;
		more = !((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40)));
		u8(s, b | (more ? 0x80 : 0));
	}
}

static void patch_len(struct sec *s, size_t at)
{
	__u32 len = s->n - at - 4;

	memcpy(s->b + at, &len, 4);
}

/* def_cfa rsp 8; offset ra at cfa-8: what GCC's CIEs say */
static const __u8 std_init[] = { 0x0c, 7, 8, 0x90, 1 };

struct cie_opts {
	const char *aug;	/* default "zR" */
	__u8 version;		/* default 1 */
	__u64 code_align;	/* default 1 */
	__u64 ra;		/* default 16 */
	const __u8 *aug_data;	/* default: R = pcrel|sdata4 */
	size_t aug_len;
	const __u8 *init;	/* default std_init */
	size_t init_len;
};

/* an .eh_frame CIE; returns its offset */
static size_t eh_cie(struct sec *s, const struct cie_opts *o)
{
	static const __u8 r_pcrel4[] = { 0x1b };
	size_t at = s->n;

	u32(s, 0);
	u32(s, 0);			/* CIE id */
	u8(s, o->version ? o->version : 1);
	put(s, o->aug ? o->aug : "zR", strlen(o->aug ? o->aug : "zR") + 1);
	uleb(s, o->code_align ? o->code_align : 1);
	sleb(s, -8);
	if ((o->version ? o->version : 1) == 1)
		u8(s, o->ra ? o->ra : 16);
	else
		uleb(s, o->ra ? o->ra : 16);
	if (!o->aug || o->aug[0] == 'z') {
		uleb(s, o->aug_data ? o->aug_len : 1);
		put(s, o->aug_data ? o->aug_data : r_pcrel4, o->aug_data ? o->aug_len : 1);
	}
	put(s, o->init ? o->init : std_init, o->init ? o->init_len : sizeof(std_init));
	patch_len(s, at);
	return at;
}

/* an .eh_frame FDE for [start, start + len) with pcrel sdata4 addresses and empty "z" data */
static void eh_fde(struct sec *s, size_t cie, __u32 start, __u32 len, const __u8 *insns,
		   size_t n)
{
	size_t at = s->n;

	u32(s, 0);
	u32(s, s->n - cie);		/* back to the CIE from this field */
	u32(s, start - (VADDR + s->n));
	u32(s, len);
	uleb(s, 0);
	put(s, insns, n);
	patch_len(s, at);
}

/* rows as the parser hands them over */
struct got {
	struct unwind_row r[64];
	__u64 pc[64];
	int n, fdes;
	__u64 start, end;
};

static int got_fde(void *ctx, __u64 start, __u64 end)
{
	struct got *g = ctx;

	g->fdes++;
	g->start = start;
	g->end = end;
	return 0;
}

static int got_row(void *ctx, __u64 pc, const struct unwind_row *row)
{
	struct got *g = ctx;

	if (g->n >= 64)
		return -E2BIG;
	g->pc[g->n] = pc;
	g->r[g->n++] = *row;
	return 0;
}

static const struct ehframe_ops got_ops = { .fde = got_fde, .row = got_row };

static int parse(const struct sec *s, enum ehframe_format format, struct got *g,
		 struct ehframe_stats *st)
{
	struct ehframe_section sec = {
		.data = s->b, .len = s->n, .vaddr = VADDR, .format = format,
	};

	memset(g, 0, sizeof(*g));
	memset(st, 0, sizeof(*st));
	return ehframe__parse(&sec, &got_ops, g, st);
}

/* one FDE over [FN, FN + FN_LEN) with the standard CIE and INSNS */
static int run_insns(const __u8 *insns, size_t n, struct got *g, struct ehframe_stats *st)
{
	struct sec s = {};
	struct cie_opts o = {};
	size_t cie = eh_cie(&s, &o);

	eh_fde(&s, cie, FN, FN_LEN, insns, n);
	return parse(&s, EHFRAME_EH_FRAME, g, st);
}

static bool is_row(const struct got *g, int i, __u64 pc, int type, int cfa_off, int rbp_off)
{
	if (i >= g->n || g->pc[i] != pc || g->r[i].cfa_type != type || g->r[i].cfa_off != cfa_off ||
	    g->r[i].rbp_off != rbp_off) {
		fprintf(stderr, "  row %d: want pc %#llx type %d cfa %d rbp %d, got ", i,
			(unsigned long long)pc, type, cfa_off, rbp_off);
		if (i < g->n)
			fprintf(stderr, "pc %#llx type %d cfa %d rbp %d\n",
				(unsigned long long)g->pc[i], g->r[i].cfa_type, g->r[i].cfa_off,
				g->r[i].rbp_off);
		else
			fprintf(stderr, "%d rows\n", g->n);
		return false;
	}
	return true;
}

/* the single row INSNS leave at FN: its type and offsets */
static bool one_row(const __u8 *insns, size_t n, int type, int cfa_off, int rbp_off)
{
	struct ehframe_stats st;
	struct got g;

	return !run_insns(insns, n, &g, &st) && g.n == 1 && is_row(&g, 0, FN, type, cfa_off, rbp_off);
}

#define ROW(...) ((const __u8[]){ __VA_ARGS__ })
#define ONE(type, cfa, rbp, ...) one_row(ROW(__VA_ARGS__), sizeof(ROW(__VA_ARGS__)), type, cfa, rbp)

/* a push rbp prologue, GCC style, row by row */
static int test_prologue(void)
{
	/* advance 1; def_cfa_offset 16; offset rbp cfa-16; advance 3; def_cfa_register rbp */
	static const __u8 p[] = { 0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6, 0x4a, 0x0c, 7, 8 };
	struct ehframe_stats st;
	struct got g;

	CHECK(run_insns(p, sizeof(p), &g, &st) == 0);
	CHECK(g.fdes == 1 && g.start == FN && g.end == FN + FN_LEN && g.n == 4);
	CHECK(is_row(&g, 0, FN, UNWIND_CFA_RSP, 8, 0));
	CHECK(is_row(&g, 1, FN + 1, UNWIND_CFA_RSP, 16, -2));
	CHECK(is_row(&g, 2, FN + 4, UNWIND_CFA_RBP, 16, -2));
	CHECK(is_row(&g, 3, FN + 14, UNWIND_CFA_RSP, 8, -2));
	CHECK(st.cies == 1 && st.fdes == 1 && !st.bad_cies && !st.bad_fdes && !st.bad_programs);
	return TEST_OK;
}

static int test_advance(void)
{
	struct ehframe_stats st;
	struct got g;
	/* advance_loc1 0x10, loc2 0x20, loc4 0x30, MIPS loc8 0x8, set_loc FN+0xf0, nop, args_size */
	static const __u8 p[] = { 0x02, 0x10, 0x0e, 16, 0x03, 0x20, 0, 0x0e, 24, 0x04, 0x30, 0, 0, 0,
				  0x0e, 32, 0x1d, 8, 0, 0, 0, 0, 0, 0, 0, 0x0e, 40, 0x00, 0x2e, 0x10 };
	struct sec s = {};
	struct cie_opts o = { .code_align = 4 };
	size_t cie;

	CHECK(run_insns(p, sizeof(p), &g, &st) == 0);
	CHECK(g.n == 5 && !st.bad_programs);
	CHECK(is_row(&g, 1, FN + 0x10, UNWIND_CFA_RSP, 16, 0));
	CHECK(is_row(&g, 2, FN + 0x30, UNWIND_CFA_RSP, 24, 0));
	CHECK(is_row(&g, 3, FN + 0x60, UNWIND_CFA_RSP, 32, 0));
	CHECK(is_row(&g, 4, FN + 0x68, UNWIND_CFA_RSP, 40, 0));
	/* the code alignment factor multiplies every advance */
	cie = eh_cie(&s, &o);
	eh_fde(&s, cie, FN, FN_LEN, ROW(0x43, 0x0e, 16), 3);
	CHECK(parse(&s, EHFRAME_EH_FRAME, &g, &st) == 0);
	CHECK(g.n == 2 && is_row(&g, 1, FN + 12, UNWIND_CFA_RSP, 16, 0));
	/* an advance past the FDE's end ends it: later rows are not emitted */
	CHECK(run_insns(ROW(0x03, 0x00, 0x01, 0x0e, 16), 5, &g, &st) == 0);
	CHECK(g.n == 1 && !st.bad_programs);
	return TEST_OK;
}

/* an FDE whose program is set_loc TARGET; def_cfa_offset 48 (set_loc in pcrel sdata4, like the FDE) */
static int set_loc_to(__u64 target, struct got *g, struct ehframe_stats *st)
{
	struct sec s = {};
	struct cie_opts o = {};
	size_t cie = eh_cie(&s, &o), at = s.n;
	__s32 rel;

	u32(&s, 0);
	u32(&s, s.n - cie);
	u32(&s, FN - (VADDR + s.n));
	u32(&s, FN_LEN);
	uleb(&s, 0);
	u8(&s, 0x01);
	rel = target - (VADDR + s.n);	/* relative to the operand itself */
	put(&s, &rel, 4);
	u8(&s, 0x0e);
	u8(&s, 48);
	patch_len(&s, at);
	return parse(&s, EHFRAME_EH_FRAME, g, st);
}

static int test_set_loc(void)
{
	struct ehframe_stats st;
	struct got g;

	CHECK(set_loc_to(FN + 0x20, &g, &st) == 0);
	CHECK(g.n == 2 && !st.bad_programs);
	CHECK(is_row(&g, 1, FN + 0x20, UNWIND_CFA_RSP, 48, 0));
	/* backwards: malformed, UNKNOWN from the current location */
	CHECK(set_loc_to(FN - 4, &g, &st) == 0);
	CHECK(g.n == 1 && st.bad_programs == 1 && is_row(&g, 0, FN, UNWIND_CFA_UNKNOWN, 0, 0));
	return TEST_OK;
}

static int test_def_cfa(void)
{
	CHECK(ONE(UNWIND_CFA_RBP, 16, 0, 0x0c, 6, 16));
	CHECK(ONE(UNWIND_CFA_RBP, 8, 0, 0x0d, 6));			/* def_cfa_register */
	CHECK(ONE(UNWIND_CFA_RSP, 16, 0, 0x12, 7, 0x7e));		/* def_cfa_sf -2 * -8 */
	CHECK(ONE(UNWIND_CFA_RSP, 24, 0, 0x13, 0x7d));			/* def_cfa_offset_sf -3 */
	CHECK(ONE(UNWIND_CFA_RSP, 4000, 0, 0x0e, 0xa0, 0x1f));		/* def_cfa_offset 4000 */
	CHECK(ONE(UNWIND_CFA_UNKNOWN, 0, 0, 0x0c, 10, 0));		/* r10: DRAP */
	CHECK(ONE(UNWIND_CFA_UNKNOWN, 0, 0, 0x0e, 0x80, 0x80, 0x02));	/* 32768 does not fit */
	CHECK(ONE(UNWIND_CFA_RSP, 32767, 0, 0x0e, 0xff, 0xff, 0x01));
	return TEST_OK;
}

static int test_cfa_expressions(void)
{
	/* binutils' PLT: breg7 8; breg16 0; lit15; and; lit11; ge; lit3; shl; plus */
	CHECK(ONE(UNWIND_CFA_PLT, 8, 11, 0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33,
		  0x24, 0x22));
	CHECK(ONE(UNWIND_CFA_PLT, 8, 10, 0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3a, 0x2a, 0x33,
		  0x24, 0x22));
	/* a different operator at the end: not the PLT */
	CHECK(ONE(UNWIND_CFA_UNKNOWN, 0, 0, 0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a,
		  0x33, 0x24, 0x1c));
	/* GCC's DRAP: rbp saved at *rbp (expression breg6 0), CFA = *(rbp - 8) */
	CHECK(ONE(UNWIND_CFA_RBP_DEREF, -8, 0, 0x10, 6, 2, 0x76, 0, 0x0f, 3, 0x76, 0x78, 0x06));
	/* the same CFA while rbp's rule is anything else cannot be followed */
	CHECK(ONE(UNWIND_CFA_UNKNOWN, 0, 0, 0x0f, 3, 0x76, 0x78, 0x06));
	CHECK(ONE(UNWIND_CFA_UNKNOWN, 0, 0, 0x0f, 2, 0x77, 0x08));
	/* def_cfa_offset after an expression: no register rule to change */
	CHECK(ONE(UNWIND_CFA_UNKNOWN, 0, 0, 0x0f, 2, 0x77, 0x08, 0x0e, 16));
	/* an expression block longer than the program */
	CHECK(ONE(UNWIND_CFA_UNKNOWN, 0, 0, 0x0f, 40, 0x77));
	return TEST_OK;
}

static int test_rbp_rules(void)
{
	CHECK(ONE(UNWIND_CFA_RSP, 8, -3, 0x05, 6, 3));			/* offset_extended */
	CHECK(ONE(UNWIND_CFA_RSP, 8, -3, 0x11, 6, 3));			/* offset_extended_sf */
	CHECK(ONE(UNWIND_CFA_RSP, 8, 2, 0x11, 6, 0x7e));			/* cfa+16 */
	CHECK(ONE(UNWIND_CFA_RSP, 8, 3, 0x2f, 6, 3));			/* negative_offset_extended */
	CHECK(ONE(UNWIND_CFA_RSP, 8, 0, 0x86, 2, 0xc6));			/* offset, restore */
	CHECK(ONE(UNWIND_CFA_RSP, 8, 0, 0x86, 2, 0x06, 6));		/* restore_extended */
	CHECK(ONE(UNWIND_CFA_RSP, 8, 0, 0x86, 2, 0x08, 6));		/* same_value */
	CHECK(ONE(UNWIND_CFA_RSP, 8, 0, 0x07, 6));			/* undefined */
	CHECK(ONE(UNWIND_CFA_UNKNOWN, 0, 0, 0x09, 6, 3));			/* register */
	CHECK(ONE(UNWIND_CFA_UNKNOWN, 0, 0, 0x14, 6, 2));			/* val_offset */
	CHECK(ONE(UNWIND_CFA_UNKNOWN, 0, 0, 0x15, 6, 2));			/* val_offset_sf */
	CHECK(ONE(UNWIND_CFA_UNKNOWN, 0, 0, 0x10, 6, 2, 0x77, 0));	/* expression */
	CHECK(ONE(UNWIND_CFA_UNKNOWN, 0, 0, 0x16, 6, 2, 0x76, 0));	/* val_expression */
	CHECK(ONE(UNWIND_CFA_UNKNOWN, 0, 0, 0x11, 6, 0xff, 0x7e));	/* cfa+1032: over s8 */
	CHECK(ONE(UNWIND_CFA_UNKNOWN, 0, 0, 0x0c, 7, 8, 0x86, 0x80, 0x02)); /* -2048: over s8 */
	/* other registers' rules do not matter */
	CHECK(ONE(UNWIND_CFA_RSP, 8, 0, 0x83, 2, 0x09, 12, 3, 0x10, 13, 1, 0x00));
	return TEST_OK;
}

static int test_ra_rules(void)
{
	static const __u8 zrs[] = { 0x1b };
	struct cie_opts o = { .aug = "zRS", .aug_data = zrs, .aug_len = 1 };
	struct ehframe_stats st;
	struct sec s = {};
	struct got g;

	CHECK(ONE(UNWIND_CFA_END, 0, 0, 0x07, 16));			/* undefined rip */
	CHECK(ONE(UNWIND_CFA_UNKNOWN, 0, 0, 0x90, 2));			/* rip at cfa-16 */
	CHECK(ONE(UNWIND_CFA_UNKNOWN, 0, 0, 0x09, 16, 1));		/* rip in rdx */
	CHECK(ONE(UNWIND_CFA_UNKNOWN, 0, 0, 0x10, 16, 2, 0x77, 0));	/* rip by expression */
	CHECK(ONE(UNWIND_CFA_RSP, 8, 0, 0x90, 2, 0xd0));		/* restored to the CIE's rule */
	/* a signal frame CIE: never unwound through */
	eh_fde(&s, eh_cie(&s, &o), FN, FN_LEN, ROW(0), 1);
	CHECK(parse(&s, EHFRAME_EH_FRAME, &g, &st) == 0);
	CHECK(g.n == 1 && g.r[0].cfa_type == UNWIND_CFA_UNKNOWN);
	return TEST_OK;
}

static int test_remember_restore(void)
{
	/* offset rbp; remember; advance; def_cfa_offset 48; same_value rbp; advance; restore */
	static const __u8 p[] = { 0x0e, 16, 0x86, 2, 0x0a, 0x41, 0x0e, 48, 0x08, 6, 0x41, 0x0b };
	__u8 deep[EHFRAME_STATE_STACK + 4];
	struct ehframe_stats st;
	struct got g;

	CHECK(run_insns(p, sizeof(p), &g, &st) == 0);
	CHECK(g.n == 3 && !st.bad_programs);
	CHECK(is_row(&g, 0, FN, UNWIND_CFA_RSP, 16, -2));
	CHECK(is_row(&g, 1, FN + 1, UNWIND_CFA_RSP, 48, 0));
	CHECK(is_row(&g, 2, FN + 2, UNWIND_CFA_RSP, 16, -2));
	/* one remember_state too many: UNKNOWN from there to the FDE's end */
	memset(deep, 0x0a, sizeof(deep));
	deep[0] = 0x41;
	deep[1] = 0x0e;
	deep[2] = 16;
	CHECK(run_insns(deep, sizeof(deep), &g, &st) == 0);
	CHECK(st.bad_programs == 1 && g.n == 2);
	CHECK(is_row(&g, 0, FN, UNWIND_CFA_RSP, 8, 0));
	CHECK(is_row(&g, 1, FN + 1, UNWIND_CFA_UNKNOWN, 0, 0));
	/* restore_state with nothing remembered */
	CHECK(run_insns(ROW(0x41, 0x0b), 2, &g, &st) == 0);
	CHECK(st.bad_programs == 1 && is_row(&g, 1, FN + 1, UNWIND_CFA_UNKNOWN, 0, 0));
	return TEST_OK;
}

static int test_bad_programs(void)
{
	const __u8 *const progs[] = {
		ROW(0x0e, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01),
		ROW(0x0e, 0xff),				/* truncated ULEB */
		ROW(0x2d),					/* GNU_window_save */
		ROW(0x3f),					/* unassigned opcode */
		ROW(0x03, 0x01),				/* truncated advance_loc2 */
		ROW(0x0c, 7, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01),
		ROW(0x12, 7, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40),
	};
	static const size_t lens[] = { 12, 2, 1, 1, 2, 12, 11 };
	struct ehframe_stats st;
	struct got g;

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		CHECK(run_insns(progs[i], lens[i], &g, &st) == 0);
		if (st.bad_programs != 1 || g.n != 1 || g.r[0].cfa_type != UNWIND_CFA_UNKNOWN) {
			fprintf(stderr, "  program %zu\n", i);
			return TEST_FAIL;
		}
	}
	return TEST_OK;
}

static int read_ptr(const __u8 *b, size_t len, __u8 enc, __u64 vaddr, __u64 data_base,
		    __u64 *v, size_t *off)
{
	*off = 0;
	return ehframe__read_pointer(b, len, off, enc, vaddr, data_base, v);
}

static int test_pointer_encodings(void)
{
	static const __u8 b[16] = { 0xf0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 1, 2, 3, 4 };
	static const __u8 leb[] = { 0xe5, 0x8e, 0x26 };			/* 624485 */
	static const __u8 sleb_neg[] = { 0xc0, 0xbb, 0x78 };		/* -123456 */
	static const __u8 huge[11] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 };
	static const __u8 over[10] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x03 };
	static const __u8 max[10] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	__u8 al[24] = {};
	size_t off;
	__u64 v;

	CHECK(!read_ptr(b, 16, DW_EH_PE_absptr, 0, 0, &v, &off) && v == 0x7ffffffffffffff0 && off == 8);
	CHECK(!read_ptr(b, 16, DW_EH_PE_udata2, 0, 0, &v, &off) && v == 0xfff0 && off == 2);
	CHECK(!read_ptr(b, 16, DW_EH_PE_sdata2, 0, 0, &v, &off) && v == (__u64)-16 && off == 2);
	CHECK(!read_ptr(b, 16, DW_EH_PE_udata4, 0, 0, &v, &off) && v == 0xfffffff0 && off == 4);
	CHECK(!read_ptr(b, 16, DW_EH_PE_sdata4, 0, 0, &v, &off) && v == (__u64)-16);
	CHECK(!read_ptr(b, 16, DW_EH_PE_udata8, 0, 0, &v, &off) && v == 0x7ffffffffffffff0);
	CHECK(!read_ptr(b, 16, DW_EH_PE_sdata8, 0, 0, &v, &off) && v == 0x7ffffffffffffff0);
	CHECK(!read_ptr(leb, 3, DW_EH_PE_uleb128, 0, 0, &v, &off) && v == 624485 && off == 3);
	CHECK(!read_ptr(sleb_neg, 3, DW_EH_PE_sleb128, 0, 0, &v, &off) && (__s64)v == -123456);
	/* pcrel counts from the pointer's own address, datarel from the base given */
	CHECK(!read_ptr(b, 16, DW_EH_PE_pcrel | DW_EH_PE_sdata4, 0x5000, 0, &v, &off) &&
	      v == 0x5000 - 16);
	CHECK(!read_ptr(b + 8, 8, DW_EH_PE_pcrel | DW_EH_PE_udata4, 0x5008, 0, &v, &off) &&
	      v == 0x5008 + 0x04030201);
	CHECK(!read_ptr(b, 16, DW_EH_PE_datarel | DW_EH_PE_sdata4, 0, 0x9000, &v, &off) &&
	      v == 0x9000 - 16);
	CHECK(read_ptr(b, 16, DW_EH_PE_datarel | DW_EH_PE_sdata4, 0, 0, &v, &off) == -EINVAL);
	/* aligned: the next 8-byte boundary in memory, then an absolute pointer */
	al[8] = 0x42;
	CHECK(!read_ptr(al + 3, 21, DW_EH_PE_aligned, 0x1003, 0, &v, &off) && v == 0x42 &&
	      off == 13);
	CHECK(read_ptr(b, 16, DW_EH_PE_textrel | DW_EH_PE_sdata4, 0, 0, &v, &off) == -EINVAL);
	CHECK(read_ptr(b, 16, DW_EH_PE_funcrel | DW_EH_PE_sdata4, 0, 0, &v, &off) == -EINVAL);
	CHECK(read_ptr(b, 16, DW_EH_PE_indirect | DW_EH_PE_pcrel | DW_EH_PE_sdata4, 0, 0, &v,
		       &off) == -EINVAL);
	CHECK(read_ptr(b, 16, DW_EH_PE_omit, 0, 0, &v, &off) == -EINVAL);
	CHECK(read_ptr(b, 16, 0x0d, 0, 0, &v, &off) == -EINVAL);	/* no such format */
	CHECK(read_ptr(b, 16, 0x70 | DW_EH_PE_sdata4, 0, 0, &v, &off) == -EINVAL);
	/* truncated, and LEB128 past 64 bits */
	CHECK(read_ptr(b, 3, DW_EH_PE_udata4, 0, 0, &v, &off) == -EINVAL && off == 0);
	CHECK(read_ptr(b, 7, DW_EH_PE_absptr, 0, 0, &v, &off) == -EINVAL);
	CHECK(read_ptr(huge, 11, DW_EH_PE_uleb128, 0, 0, &v, &off) == -EINVAL);
	CHECK(read_ptr(over, 10, DW_EH_PE_uleb128, 0, 0, &v, &off) == -EINVAL);
	CHECK(!read_ptr(max, 10, DW_EH_PE_uleb128, 0, 0, &v, &off) && v == ~0ULL);
	CHECK(read_ptr(leb, 2, DW_EH_PE_uleb128, 0, 0, &v, &off) == -EINVAL);
	off = 17;
	CHECK(ehframe__read_pointer(b, 16, &off, DW_EH_PE_udata2, 0, 0, &v) == -EINVAL);
	return TEST_OK;
}

/* "zPLR": a personality (indirect pcrel) and an LSDA; the FDE carries its LSDA pointer */
static int test_cie_augmentations(void)
{
	static const __u8 plr[] = { 0x9b, 0x10, 0x20, 0x30, 0x40, 0x1b, 0x1b };
	struct cie_opts o = { .aug = "zPLR", .aug_data = plr, .aug_len = sizeof(plr) };
	struct cie_opts v3 = { .version = 3, .ra = 16 };
	struct cie_opts eh = { .aug = "eh" }, odd = { .aug = "xyz" };
	struct ehframe_stats st;
	struct sec s = {};
	struct got g;
	size_t cie, at;

	cie = eh_cie(&s, &o);
	at = s.n;
	u32(&s, 0);
	u32(&s, s.n - cie);
	u32(&s, FN - (VADDR + s.n));
	u32(&s, FN_LEN);
	uleb(&s, 4);
	u32(&s, 0x1234);		/* LSDA */
	put(&s, ROW(0x41, 0x0e, 16), 3);
	patch_len(&s, at);
	CHECK(parse(&s, EHFRAME_EH_FRAME, &g, &st) == 0);
	CHECK(g.n == 2 && is_row(&g, 1, FN + 1, UNWIND_CFA_RSP, 16, 0));
	/* version 3: the return address register is a ULEB */
	memset(&s, 0, sizeof(s));
	eh_fde(&s, eh_cie(&s, &v3), FN, FN_LEN, ROW(0), 1);
	CHECK(parse(&s, EHFRAME_EH_FRAME, &g, &st) == 0 && g.n == 1 && !st.bad_cies);
	/* augmentations whose data layout is unknown: the CIE and its FDEs are dropped */
	memset(&s, 0, sizeof(s));
	eh_fde(&s, eh_cie(&s, &eh), FN, FN_LEN, ROW(0), 1);
	eh_fde(&s, eh_cie(&s, &odd), FN + FN_LEN, FN_LEN, ROW(0), 1);
	CHECK(parse(&s, EHFRAME_EH_FRAME, &g, &st) == 0);
	CHECK(g.n == 0 && st.bad_cies == 2 && st.bad_fdes == 2);
	return TEST_OK;
}

/* .debug_frame: CIE id ~0, version 4 with address size, FDE pointing by section offset */
static int test_debug_frame(void)
{
	struct ehframe_stats st;
	struct sec s = {};
	struct got g;
	size_t at;

	u32(&s, 0);
	u32(&s, 0xffffffff);
	u8(&s, 4);
	u8(&s, 0);			/* augmentation "" */
	u8(&s, 8);			/* address size */
	u8(&s, 0);			/* segment selector size */
	uleb(&s, 1);
	sleb(&s, -8);
	uleb(&s, 16);
	put(&s, std_init, sizeof(std_init));
	patch_len(&s, 0);
	at = s.n;
	u32(&s, 0);
	u32(&s, 0);			/* the CIE at section offset 0 */
	u64(&s, 0x400000);
	u64(&s, 0x40);
	put(&s, ROW(0x44, 0x0e, 32), 3);
	patch_len(&s, at);
	CHECK(parse(&s, EHFRAME_DEBUG_FRAME, &g, &st) == 0);
	CHECK(st.cies == 1 && st.fdes == 1 && g.start == 0x400000 && g.end == 0x400040);
	CHECK(g.n == 2 && is_row(&g, 1, 0x400004, UNWIND_CFA_RSP, 32, 0));
	/* read as .eh_frame the same bytes make no sense: id ~0 is a CIE pointer */
	CHECK(parse(&s, EHFRAME_EH_FRAME, &g, &st) == 0 && g.n == 0);
	return TEST_OK;
}

/* 64-bit DWARF: length 0xffffffff then 8 bytes; .debug_frame ids are 8 bytes, .eh_frame's 4 */
static int test_dwarf64(void)
{
	struct ehframe_stats st;
	struct sec s = {};
	struct got g;
	size_t fde;

	u32(&s, 0xffffffff);
	u64(&s, 0);
	u64(&s, ~0ULL);
	u8(&s, 1);
	u8(&s, 0);
	uleb(&s, 1);
	sleb(&s, -8);
	u8(&s, 16);
	put(&s, std_init, sizeof(std_init));
	memcpy(s.b + 4, &(__u64){ s.n - 12 }, 8);
	fde = s.n;
	u32(&s, 0xffffffff);
	u64(&s, 0);
	u64(&s, 0);			/* the CIE at offset 0 */
	u64(&s, 0x500000);
	u64(&s, 0x10);
	put(&s, ROW(0x41, 0x0e, 16), 3);
	memcpy(s.b + fde + 4, &(__u64){ s.n - fde - 12 }, 8);
	CHECK(parse(&s, EHFRAME_DEBUG_FRAME, &g, &st) == 0);
	CHECK(st.fdes == 1 && g.start == 0x500000 && g.n == 2);
	/* .eh_frame: a 4-byte CIE id even in a 64-bit entry */
	memset(&s, 0, sizeof(s));
	u32(&s, 0xffffffff);
	u64(&s, 0);
	u32(&s, 0);
	u8(&s, 1);
	put(&s, "zR", 3);
	uleb(&s, 1);
	sleb(&s, -8);
	u8(&s, 16);
	uleb(&s, 1);
	u8(&s, 0x1b);
	put(&s, std_init, sizeof(std_init));
	memcpy(s.b + 4, &(__u64){ s.n - 12 }, 8);
	eh_fde(&s, 0, FN, FN_LEN, ROW(0), 1);
	CHECK(parse(&s, EHFRAME_EH_FRAME, &g, &st) == 0);
	CHECK(!st.bad_cies && !st.bad_fdes && g.n == 1);
	/* a CIE pointer to the middle of an entry (its id field) finds no CIE */
	eh_fde(&s, 12, FN + FN_LEN, FN_LEN, ROW(0), 1);
	CHECK(parse(&s, EHFRAME_EH_FRAME, &g, &st) == 0);
	CHECK(st.bad_fdes == 1 && g.n == 1);
	return TEST_OK;
}

/* zero lengths: skipped inside a section, the end of one found through .eh_frame_hdr */
static int test_zero_terminator(void)
{
	struct ehframe_section sec = { .vaddr = VADDR };
	struct cie_opts o = {};
	struct ehframe_stats st = {};
	struct sec s = {};
	struct got g = {};
	size_t cie = eh_cie(&s, &o);

	eh_fde(&s, cie, FN, FN_LEN, ROW(0), 1);
	u32(&s, 0);
	eh_fde(&s, cie, FN + FN_LEN, FN_LEN, ROW(0), 1);
	sec.data = s.b;
	sec.len = s.n;
	CHECK(ehframe__parse(&sec, &got_ops, &g, &st) == 0 && g.fdes == 2);
	memset(&g, 0, sizeof(g));
	sec.stop_at_zero = true;
	CHECK(ehframe__parse(&sec, &got_ops, &g, &st) == 0 && g.fdes == 1);
	return TEST_OK;
}

/* lengths and pointers that lead outside the section, or to the wrong kind of entry */
static int test_malformed_sections(void)
{
	struct cie_opts o = {}, badenc = { .aug_data = ROW(0x44), .aug_len = 1 };
	struct ehframe_stats st;
	struct sec s = {}, t;
	struct got g;
	size_t cie = eh_cie(&s, &o), fde;
	__u32 v;

	fde = s.n;
	eh_fde(&s, cie, FN, FN_LEN, ROW(0x41, 0x0e, 16), 3);
	t = s;
	/* every truncation: never a read past the end, at most the complete FDE */
	for (size_t n = 0; n <= s.n; n++) {
		t.n = n;
		CHECK(parse(&t, EHFRAME_EH_FRAME, &g, &st) == 0);
		CHECK(n == s.n ? g.fdes == 1 : g.fdes == 0);
		CHECK(n < 4 || n == s.n || (n >= fde && n < fde + 4) || st.truncated == 1);
	}
	/* the FDE's length past the end */
	t = s;
	v = 0x1000;
	memcpy(t.b + fde, &v, 4);
	CHECK(parse(&t, EHFRAME_EH_FRAME, &g, &st) == 0 && st.truncated == 1 && !g.fdes);
	/* reserved lengths 0xfffffff0.. */
	t = s;
	v = 0xfffffff0;
	memcpy(t.b + fde, &v, 4);
	CHECK(parse(&t, EHFRAME_EH_FRAME, &g, &st) == 0 && st.truncated == 1);
	/* a 64-bit length that claims more than there is */
	t = s;
	t.n = fde;
	u32(&t, 0xffffffff);
	u64(&t, ~0ULL - 4);
	CHECK(parse(&t, EHFRAME_EH_FRAME, &g, &st) == 0 && st.truncated == 1);
	/* a CIE pointer before the section's start, and one to an FDE */
	t = s;
	v = fde + 8;
	memcpy(t.b + fde + 4, &v, 4);
	CHECK(parse(&t, EHFRAME_EH_FRAME, &g, &st) == 0 && st.bad_fdes == 1 && !g.fdes);
	t = s;
	eh_fde(&t, fde, FN + FN_LEN, FN_LEN, ROW(0), 1);
	CHECK(parse(&t, EHFRAME_EH_FRAME, &g, &st) == 0 && st.bad_fdes == 1 && g.fdes == 1);
	/* a CIE whose FDE encoding is funcrel: no FDE of it can be read */
	t = (struct sec){};
	eh_fde(&t, eh_cie(&t, &badenc), FN, FN_LEN, ROW(0), 1);
	CHECK(parse(&t, EHFRAME_EH_FRAME, &g, &st) == 0 && st.bad_fdes == 1 && !g.fdes);
	/* a range that wraps the address space */
	t = s;
	v = 0xffffffff;
	memcpy(t.b + fde + 12, &v, 4);
	memcpy(t.b + fde + 8, &(__u32){ 0x7fffffff }, 4);
	CHECK(parse(&t, EHFRAME_EH_FRAME, &g, &st) == 0);
	/* an empty range is no FDE and no error */
	t = s;
	memcpy(t.b + fde + 12, &(__u32){ 0 }, 4);
	CHECK(parse(&t, EHFRAME_EH_FRAME, &g, &st) == 0 && !g.fdes && !st.bad_fdes);
	/* a CIE with no version it could have */
	t = s;
	t.b[cie + 8] = 2;
	CHECK(parse(&t, EHFRAME_EH_FRAME, &g, &st) == 0 && st.bad_cies == 1 && !g.fdes);
	/* an augmentation string without its NUL */
	t = (struct sec){};
	u32(&t, 6);
	u32(&t, 0);
	put(&t, "\1zR", 3);
	CHECK(parse(&t, EHFRAME_EH_FRAME, &g, &st) == 0 && st.bad_cies == 1);
	return TEST_OK;
}

static int test_eh_frame_hdr(void)
{
	struct sec s = {};
	__u64 eh;

	u8(&s, 1);
	u8(&s, DW_EH_PE_pcrel | DW_EH_PE_sdata4);
	u8(&s, DW_EH_PE_udata4);
	u8(&s, DW_EH_PE_datarel | DW_EH_PE_sdata4);
	u32(&s, 0x100);
	CHECK(ehframe__hdr_eh_frame(s.b, s.n, 0x7000, &eh) == 0 && eh == 0x7000 + 4 + 0x100);
	s.b[1] = DW_EH_PE_datarel | DW_EH_PE_sdata4;
	CHECK(ehframe__hdr_eh_frame(s.b, s.n, 0x7000, &eh) == 0 && eh == 0x7000 + 0x100);
	s.b[1] = DW_EH_PE_omit;
	CHECK(ehframe__hdr_eh_frame(s.b, s.n, 0x7000, &eh) == -ENOENT);
	s.b[1] = DW_EH_PE_udata4;
	CHECK(ehframe__hdr_eh_frame(s.b, 6, 0x7000, &eh) == -EINVAL);
	s.b[0] = 2;
	CHECK(ehframe__hdr_eh_frame(s.b, s.n, 0x7000, &eh) == -EINVAL);
	CHECK(ehframe__hdr_eh_frame(s.b, 2, 0x7000, &eh) == -EINVAL);
	return TEST_OK;
}

static const struct unwind_row *find(const struct unwind_table *t, __u64 pc)
{
	return unwind_table__find(t, pc);
}

static bool has(const struct unwind_table *t, __u64 pc, int type, int cfa_off)
{
	const struct unwind_row *r = find(t, pc);

	return r && r->cfa_type == type && (type != UNWIND_CFA_RSP || r->cfa_off == cfa_off);
}

/* the table: sort, gaps, merges, overlaps and .eh_frame's precedence over .debug_frame */
static int test_table(void)
{
	struct cie_opts o = {};
	struct sec eh = {}, dbg = {};
	struct unwind_table *t;
	size_t cie = eh_cie(&eh, &o), n;
	const struct unwind_row *r;

	/* out of order, a gap between 0x3000 and 0x3100, one FDE inside another */
	eh_fde(&eh, cie, 0x3100, 0x100, ROW(0x41, 0x0e, 24), 3);
	eh_fde(&eh, cie, 0x3000, 0x100, ROW(0x41, 0x0e, 16, 0x41, 0x0e, 16), 6);
	eh_fde(&eh, cie, 0x3010, 0x10, ROW(0x0e, 99), 2);
	/* .debug_frame: the same function as .eh_frame's first, and one of its own */
	u32(&dbg, 0);
	u32(&dbg, 0xffffffff);
	u8(&dbg, 1);
	u8(&dbg, 0);
	uleb(&dbg, 1);
	sleb(&dbg, -8);
	u8(&dbg, 16);
	put(&dbg, std_init, sizeof(std_init));
	patch_len(&dbg, 0);
	for (int i = 0; i < 2; i++) {
		size_t at = dbg.n;

		u32(&dbg, 0);
		u32(&dbg, 0);
		u64(&dbg, i ? 0x4000 : 0x2ff0);
		u64(&dbg, i ? 0x20 : 0x40);
		put(&dbg, ROW(0x0e, 64), 2);
		patch_len(&dbg, at);
	}
	t = unwind_table__from_sections(eh.b, eh.n, VADDR, dbg.b, dbg.n);
	CHECK(t);
	CHECK(!find(t, 0x2fef));
	CHECK(has(t, 0x2ff0, UNWIND_CFA_RSP, 64));	/* .debug_frame until .eh_frame starts */
	CHECK(has(t, 0x3000, UNWIND_CFA_RSP, 8));
	CHECK(has(t, 0x3001, UNWIND_CFA_RSP, 16));
	CHECK(has(t, 0x3015, UNWIND_CFA_RSP, 16));	/* the nested FDE lost */
	CHECK(has(t, 0x30ff, UNWIND_CFA_RSP, 16));
	CHECK(has(t, 0x3100, UNWIND_CFA_RSP, 8));
	CHECK(has(t, 0x3101, UNWIND_CFA_RSP, 24));
	CHECK(has(t, 0x3200, UNWIND_CFA_NONE, 0));	/* the gap */
	CHECK(has(t, 0x4000, UNWIND_CFA_RSP, 64));
	CHECK(has(t, 0x4020, UNWIND_CFA_NONE, 0));	/* after the last */
	CHECK(has(t, 1ULL << 40, UNWIND_CFA_NONE, 0));
	r = unwind_table__rows(t, &n);
	/* 0x2ff0 64, 0x3000 8, 0x3001 16, 0x3100 8, 0x3101 24, 0x3200 none, 0x4000 64, 0x4020 none */
	CHECK(n == 8 && r[2].pc == 0x3001 && r[5].pc == 0x3200);
	CHECK(unwind_table__stats(t)->fdes_overlapped == 2);
	unwind_table__free(t);
	/* .debug_frame alone, and an FDE past 4 GiB, which is dropped and counted */
	memset(&dbg, 0, sizeof(dbg));
	u32(&dbg, 0);
	u32(&dbg, 0xffffffff);
	u8(&dbg, 1);
	u8(&dbg, 0);
	uleb(&dbg, 1);
	sleb(&dbg, -8);
	u8(&dbg, 16);
	put(&dbg, std_init, sizeof(std_init));
	patch_len(&dbg, 0);
	n = dbg.n;
	u32(&dbg, 0);
	u32(&dbg, 0);
	u64(&dbg, 0xfffffff0);
	u64(&dbg, 0x20);
	patch_len(&dbg, n);
	t = unwind_table__from_sections(NULL, 0, 0, dbg.b, dbg.n);
	CHECK(t);
	unwind_table__rows(t, &n);
	CHECK(n == 0 && unwind_table__stats(t)->fdes_above_4g == 1);
	CHECK(!find(t, 0));
	unwind_table__free(t);
	return TEST_OK;
}

TEST_MAIN("ehframe", TEST(test_prologue), TEST(test_advance), TEST(test_set_loc),
	  TEST(test_def_cfa), TEST(test_cfa_expressions), TEST(test_rbp_rules), TEST(test_ra_rules),
	  TEST(test_remember_restore), TEST(test_bad_programs), TEST(test_pointer_encodings),
	  TEST(test_cie_augmentations), TEST(test_debug_frame), TEST(test_dwarf64),
	  TEST(test_zero_terminator), TEST(test_malformed_sections), TEST(test_eh_frame_hdr),
	  TEST(test_table))
