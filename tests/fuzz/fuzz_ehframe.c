/* fuzz_ehframe.c -- libFuzzer target: CFI section bytes through the table builder and the parser */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "unwind/ehframe/ehframe.h"
#include "unwind/unwind_table.h"
#include "fuzz.h"

/*
 * Input: flags (bit 0: the bytes after .eh_frame are a .debug_frame; bit 1:
 * parse .eh_frame as found through .eh_frame_hdr, up to a zero terminator),
 * the .eh_frame address (4 bytes), its length (2 bytes), then the sections.
 * Each goes into a heap block of its exact size, so ASan sees any over-read.
 */
struct counted {
	size_t fdes;
	__u64 last_pc, end;
	bool first;		/* no row of the current FDE yet */
};

static int on_fde(void *ctx, __u64 start, __u64 end)
{
	struct counted *c = ctx;

	FUZZ_CHECK(start < end);
	c->fdes++;
	c->first = true;
	c->end = end;
	return c->fdes & 7 ? 0 : 1;	/* skipping some FDEs must be harmless too */
}

static int on_row(void *ctx, __u64 pc, const struct unwind_row *row)
{
	struct counted *c = ctx;

	FUZZ_CHECK(pc < c->end && (c->first || pc > c->last_pc));
	FUZZ_CHECK(row->cfa_type <= UNWIND_CFA_SIGNAL);
	c->last_pc = pc;
	c->first = false;
	return 0;
}

static void check_table(const struct unwind_table *t)
{
	const struct unwind_row *r;
	size_t n;

	r = unwind_table__rows(t, &n);
	FUZZ_CHECK(n <= UNWIND_TABLE_ROWS_MAX);
	FUZZ_CHECK(!n || r[n - 1].cfa_type == UNWIND_CFA_NONE);
	for (size_t i = 0; i < n; i++) {
		FUZZ_CHECK(r[i].cfa_type <= UNWIND_CFA_SIGNAL);
		FUZZ_CHECK(!i || r[i - 1].pc < r[i].pc);
		FUZZ_CHECK(!i || r[i - 1].cfa_type != r[i].cfa_type ||
			   r[i - 1].cfa_off != r[i].cfa_off || r[i - 1].rbp_off != r[i].rbp_off);
		FUZZ_CHECK(unwind_table__find(t, r[i].pc) == &r[i]);
	}
	FUZZ_CHECK(unwind_table__mem_size(t) >= n * sizeof(*r));
}

static void *dup(const uint8_t *p, size_t n)
{
	void *b = malloc(n ? n : 1);

	if (!b)
		abort();
	memcpy(b, p, n);
	return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct ehframe_ops ops = { .fde = on_fde, .row = on_row };
	struct fuzz_in in = { data, size };
	__u8 flags = fin_u8(&in);
	__u64 vaddr = fin_uint(&in, 4), eh_len = fin_uint(&in, 2);
	struct ehframe_section sec = { .vaddr = vaddr };
	struct ehframe_stats st = {};
	struct counted c = {};
	struct unwind_table *t;
	void *eh, *dbg = NULL;
	size_t dbg_len = 0;

	if (eh_len > in.n || !(flags & 1))
		eh_len = in.n;
	eh = dup(in.p, eh_len);
	if (flags & 1) {
		dbg_len = in.n - eh_len;
		dbg = dup(in.p + eh_len, dbg_len);
	}
	t = unwind_table__from_sections(eh, eh_len, vaddr, dbg, dbg_len);
	if (t) {
		check_table(t);
		unwind_table__free(t);
	} else {
		FUZZ_CHECK(errno == ENOENT || errno == ENOMEM || errno == E2BIG);
	}
	sec.data = eh;
	sec.len = eh_len;
	sec.stop_at_zero = flags & 2;
	sec.aarch64 = flags & 4;	/* AArch64's rules over the same bytes */
	FUZZ_CHECK(ehframe__parse(&sec, &ops, &c, &st) == 0);
	FUZZ_CHECK(st.truncated <= 1 && st.fdes == c.fdes);
	free(eh);
	free(dbg);
	return 0;
}
