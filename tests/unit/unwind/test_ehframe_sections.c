/* test_ehframe_sections.c -- hand-made CIEs and FDEs: encodings, formats, malformed sections */
#include "ehframe_build.h"
#include "unwind/unwind_table.h"
#include "test.h"

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
	static const __u8 huge[11] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					0x80, 0x80, 0x80, 0x80, 0x01 };
	static const __u8 over[10] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x03 };
	static const __u8 max[10] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	__u8 al[24] = {};
	size_t off;
	__u64 v;

	CHECK(!read_ptr(b, 16, DW_EH_PE_absptr, 0, 0, &v, &off) && v == 0x7ffffffffffffff0 &&
	      off == 8);
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

/* 64-bit DWARF: length 0xffffffff, then 8 bytes; .debug_frame ids 8 bytes, .eh_frame's 4 */
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
	/* 0x2ff0 64, 0x3000 8, 0x3001 16, 0x3100 8, 0x3101 24, 0x3200 -, 0x4000 64, 0x4020 - */
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

TEST_MAIN("ehframe_sections", TEST(test_pointer_encodings), TEST(test_cie_augmentations),
	  TEST(test_debug_frame), TEST(test_dwarf64), TEST(test_zero_terminator),
	  TEST(test_malformed_sections), TEST(test_eh_frame_hdr), TEST(test_table))
