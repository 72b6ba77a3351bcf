/* test_ehframe.c -- the CFA interpreter on hand-made programs: every opcode, every row rule */
#include "ehframe_build.h"
#include "test.h"

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
	/* advance_loc1 0x10, loc2 0x20, loc4 0x30, MIPS loc8 0x8, each then a def_cfa_offset */
	static const __u8 p[] = { 0x02, 0x10, 0x0e, 16, 0x03, 0x20, 0, 0x0e, 24,
				  0x04, 0x30, 0, 0, 0, 0x0e, 32,
				  0x1d, 8, 0, 0, 0, 0, 0, 0, 0, 0x0e, 40,
				  0x00, 0x2e, 0x10 };	/* nop, GNU_args_size */
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

/* an FDE whose program is set_loc TARGET (pcrel sdata4, like the FDE); def_cfa_offset 48 */
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
	CHECK(ONE(UNWIND_CFA_RSP, 8, 3, 0x2f, 6, 3));			/* negative_offset_ext */
	CHECK(ONE(UNWIND_CFA_RSP, 8, 0, 0x86, 2, 0xc6));		/* offset, restore */
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
	CHECK(ONE(UNWIND_CFA_RSP, 8, 0, 0x90, 2, 0xd0));		/* back to the CIE's */
	/* a signal frame CIE: its registers come from the kernel's signal frame */
	eh_fde(&s, eh_cie(&s, &o), FN, FN_LEN, ROW(0), 1);
	CHECK(parse(&s, EHFRAME_EH_FRAME, &g, &st) == 0);
	CHECK(g.n == 1 && g.r[0].cfa_type == UNWIND_CFA_SIGNAL);
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

TEST_MAIN("ehframe", TEST(test_prologue), TEST(test_advance), TEST(test_set_loc),
	  TEST(test_def_cfa), TEST(test_cfa_expressions), TEST(test_rbp_rules), TEST(test_ra_rules),
	  TEST(test_remember_restore), TEST(test_bad_programs))
