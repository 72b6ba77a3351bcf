/* ehframe_build.h -- hand-written .eh_frame / .debug_frame bytes; the rows the parser makes */
#ifndef EBPFPROF_TEST_EHFRAME_BUILD_H
#define EBPFPROF_TEST_EHFRAME_BUILD_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unwind/ehframe/ehframe.h"

#define VADDR 0x1000		/* where the test .eh_frame is "loaded" */
#define FN 0x2000		/* the function the FDE covers: [FN, FN + FN_LEN) */
#define FN_LEN 0x100

/* a section being written: little-endian fields and LEB128 as the formats have them */
struct sec {
	__u8 b[2048];
	size_t n;
};

static inline void put(struct sec *s, const void *p, size_t n)
{
	if (s->n + n > sizeof(s->b))
		abort();
	memcpy(s->b + s->n, p, n);
	s->n += n;
}

static inline void u8(struct sec *s, __u8 v)
{
	put(s, &v, 1);
}

static inline void u32(struct sec *s, __u32 v)
{
	put(s, &v, 4);
}

static inline void u64(struct sec *s, __u64 v)
{
	put(s, &v, 8);
}

static inline void uleb(struct sec *s, __u64 v)
{
	do {
		u8(s, (v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

static inline void sleb(struct sec *s, __s64 v)
{
	bool more = true;

	while (more) {
		__u8 b = v & 0x7f;

		v >>= 7;
		more = !((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40)));
		u8(s, b | (more ? 0x80 : 0));
	}
}

static inline void patch_len(struct sec *s, size_t at)
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
static inline size_t eh_cie(struct sec *s, const struct cie_opts *o)
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
static inline void eh_fde(struct sec *s, size_t cie, __u32 start, __u32 len, const __u8 *insns,
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

static inline int got_fde(void *ctx, __u64 start, __u64 end)
{
	struct got *g = ctx;

	g->fdes++;
	g->start = start;
	g->end = end;
	return 0;
}

static inline int got_row(void *ctx, __u64 pc, const struct unwind_row *row)
{
	struct got *g = ctx;

	if (g->n >= 64)
		return -E2BIG;
	g->pc[g->n] = pc;
	g->r[g->n++] = *row;
	return 0;
}

static const struct ehframe_ops got_ops = { .fde = got_fde, .row = got_row };

static inline int parse(const struct sec *s, enum ehframe_format format, struct got *g,
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
static inline int run_insns(const __u8 *insns, size_t n, struct got *g, struct ehframe_stats *st)
{
	struct sec s = {};
	struct cie_opts o = {};
	size_t cie = eh_cie(&s, &o);

	eh_fde(&s, cie, FN, FN_LEN, insns, n);
	return parse(&s, EHFRAME_EH_FRAME, g, st);
}

static inline bool is_row(const struct got *g, int i, __u64 pc, int type, int cfa_off, int rbp_off)
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
static inline bool one_row(const __u8 *insns, size_t n, int type, int cfa_off, int rbp_off)
{
	struct ehframe_stats st;
	struct got g;

	return !run_insns(insns, n, &g, &st) && g.n == 1 &&
	       is_row(&g, 0, FN, type, cfa_off, rbp_off);
}

#define ROW(...) ((const __u8[]){ __VA_ARGS__ })
#define ONE(type, cfa, rbp, ...) \
	one_row(ROW(__VA_ARGS__), sizeof(ROW(__VA_ARGS__)), type, cfa, rbp)

#endif /* EBPFPROF_TEST_EHFRAME_BUILD_H */
