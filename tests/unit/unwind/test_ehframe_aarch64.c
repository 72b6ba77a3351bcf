/* test_ehframe_aarch64.c -- AArch64 CFA programs as GCC writes them, turned into AArch64 rows */
#include "ehframe_build.h"
#include "test.h"

/* AArch64's CIE as GCC writes it: code alignment 4, return address x30, CFA = sp + 0 */
static const __u8 a64_init[] = { 0x0c, 31, 0 };

/* one FDE over [FN, FN + FN_LEN) with INSNS, parsed by AARCH64's rules or x86-64's */
static int run_a64(const __u8 *insns, size_t n, bool aarch64, struct got *g,
		   struct ehframe_stats *st)
{
	struct cie_opts o = { .code_align = 4, .ra = 30, .init = a64_init,
			      .init_len = sizeof(a64_init) };
	struct sec s = {};
	size_t cie = eh_cie(&s, &o);
	struct ehframe_section sec;

	eh_fde(&s, cie, FN, FN_LEN, insns, n);
	sec = (struct ehframe_section){ .data = s.b, .len = s.n, .vaddr = VADDR, .aarch64 = aarch64 };
	memset(g, 0, sizeof(*g));
	memset(st, 0, sizeof(*st));
	return ehframe__parse(&sec, &got_ops, g, st);
}

/*
 * paciasp; stp x29, x30, [sp, -32]!; mov x29, sp; ...; ldp x29, x30, [sp], 32;
 * autiasp; ret: a frame record, the CFA moved to x29, then back to a leaf's rule
 */
static int test_frame_record(void)
{
	static const __u8 p[] = {
		0x41, 0x2d,			/* +4: negate_ra_state (paciasp) */
		0x41, 0x0e, 32, 0x9d, 4, 0x9e, 3,	/* +4: cfa sp+32; x29 at cfa-32, x30 at cfa-24 */
		0x41, 0x0d, 29,			/* +4: cfa x29+32 */
		0x48, 0xde, 0xdd, 0x0c, 31, 0,	/* +32: restore x30, x29; cfa sp+0 */
	};
	struct ehframe_stats st;
	struct got g;

	CHECK(run_a64(p, sizeof(p), true, &g, &st) == 0 && !st.bad_programs);
	CHECK(g.n == 5);
	CHECK(is_row(&g, 0, FN, UNWIND_CFA_LR, 0, 0));
	CHECK(is_row(&g, 1, FN + 4, UNWIND_CFA_LR, 0, 0));	/* signed: the same rule */
	CHECK(is_row(&g, 2, FN + 8, UNWIND_CFA_RSP, 32, -4));
	CHECK(is_row(&g, 3, FN + 12, UNWIND_CFA_RBP, 32, -4));
	CHECK(is_row(&g, 4, FN + 44, UNWIND_CFA_LR, 0, 0));
	/* x86-64's rules: SPARC's window save is not one of them, and the CIE's RA is not rip */
	CHECK(run_a64(p, sizeof(p), false, &g, &st) == 0);
	CHECK(g.n >= 1 && g.r[0].cfa_type == UNWIND_CFA_UNKNOWN);
	return TEST_OK;
}

/*
 * -fomit-frame-pointer: str x30, [sp, -16]! saves x30 alone, x29 stays the
 * caller's; in a 4 KiB frame GCC saves it at the bottom (sub sp, sp, #4032;
 * stp x19, x30, [sp]), 4024 bytes under the CFA but a word above sp
 */
static int test_lr_alone(void)
{
	static const __u8 p[] = { 0x41, 0x0e, 16, 0x9e, 2 };	/* +4: cfa sp+16; x30 at cfa-16 */
	/* +8: cfa sp+4032; +12: x19 at cfa-4032, x30 at cfa-4024 */
	static const __u8 big[] = { 0x42, 0x0e, 0xc0, 0x1f, 0x43, 0x93, 0xf8, 3, 0x9e, 0xf7, 3 };
	struct ehframe_stats st;
	struct got g;

	CHECK(run_a64(p, sizeof(p), true, &g, &st) == 0 && g.n == 2);
	CHECK(is_row(&g, 0, FN, UNWIND_CFA_LR, 0, 0));
	CHECK(is_row(&g, 1, FN + 4, UNWIND_CFA_RA_SAVED, 16, 0));
	CHECK(run_a64(big, sizeof(big), true, &g, &st) == 0 && g.n == 3 && !st.bad_programs);
	CHECK(is_row(&g, 1, FN + 8, UNWIND_CFA_LR, 4032, 0));	/* x30 not saved yet */
	CHECK(is_row(&g, 2, FN + 20, UNWIND_CFA_RA_SAVED, 4032, 1));
	return TEST_OK;
}

/* what the rows cannot say is UNKNOWN: x29 and x30 saved apart, the CFA from another register */
static int test_unknown(void)
{
	static const __u8 apart[] = { 0x41, 0x0e, 48, 0x9d, 6, 0x9e, 2 };
	static const __u8 other_reg[] = { 0x41, 0x0c, 19, 16, 0x9d, 2, 0x9e, 1 };
	static const __u8 undef[] = { 0x41, 0x07, 30 };
	struct ehframe_stats st;
	struct got g;

	CHECK(run_a64(apart, sizeof(apart), true, &g, &st) == 0 && g.n == 2);
	CHECK(is_row(&g, 1, FN + 4, UNWIND_CFA_UNKNOWN, 0, 0));
	CHECK(run_a64(other_reg, sizeof(other_reg), true, &g, &st) == 0 && g.n == 2);
	CHECK(is_row(&g, 1, FN + 4, UNWIND_CFA_UNKNOWN, 0, 0));
	/* x30 undefined: the outermost frame (_start, a thread's start) */
	CHECK(run_a64(undef, sizeof(undef), true, &g, &st) == 0 && g.n == 2);
	CHECK(is_row(&g, 1, FN + 4, UNWIND_CFA_END, 0, 0));
	return TEST_OK;
}

TEST_MAIN("ehframe_aarch64", TEST(test_frame_record), TEST(test_lr_alone), TEST(test_unknown))
