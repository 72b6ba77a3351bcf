/* test_unwind_table.c -- tables of real files compared row by row with readelf -wF */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unwind_check.h"

/* one row of readelf's table: the rules as text, holding over [pc, end) */
struct rrow {
	__u64 pc, end;
	char cfa[32], rbp[32], ra[32];
	bool signal;
	bool skip;		/* its FDE overlaps another: which wins is ours to say */
};

struct rtab {
	struct rrow *r;
	size_t n, cap;
	__u64 (*fdes)[2];
	size_t nf, capf;
};

/* the last rules a CIE's own table shows: what an FDE printed without rows has */
struct rcie {
	unsigned long off;
	char cfa[32], rbp[32], ra[32];
	bool signal;
};
static void rtab_push(struct rtab *rt, const struct rrow *x)
{
	if (rt->n == rt->cap) {
		rt->cap = rt->cap ? 2 * rt->cap : 4096;
		rt->r = realloc(rt->r, rt->cap * sizeof(*rt->r));
		if (!rt->r)
			abort();
	}
	rt->r[rt->n++] = *x;
}

static void rtab_push_fde(struct rtab *rt, __u64 start, __u64 end)
{
	if (rt->nf == rt->capf) {
		rt->capf = rt->capf ? 2 * rt->capf : 1024;
		rt->fdes = realloc(rt->fdes, rt->capf * sizeof(*rt->fdes));
		if (!rt->fdes)
			abort();
	}
	rt->fdes[rt->nf][0] = start;
	rt->fdes[rt->nf][1] = end;
	rt->nf++;
}

/* the column named NAME of a row, "u" when the table has no such column */
static void column(char cols[][32], int ncols, char vals[][32], const char *name, char *out)
{
	strcpy(out, "u");
	for (int i = 0; i < ncols; i++)
		if (!strcmp(cols[i], name))
			strcpy(out, vals[i]);
}

/* readelf's words; "r9 (r9)" is one cell, so a word in parentheses is dropped */
static int split(char *line, char out[][32], int max)
{
	int n = 0;

	for (char *tok = strtok(line, " \t\n"); tok && n < max; tok = strtok(NULL, " \t\n"))
		if (tok[0] != '(')
			snprintf(out[n++], 32, "%s", tok);
	return n;
}

struct rparse {
	struct rtab *rt;
	struct rcie cies[4096];
	int ncies;
	struct rcie *cie;	/* of the CIE or FDE being read */
	bool in_fde, in_cie;
	size_t fde_first;
	__u64 fde_start, fde_end;
	char cols[64][32];
	int ncols;
};

/* an FDE printed without rows has its CIE's rules over its whole range */
static void close_fde(struct rparse *rp)
{
	struct rrow x = {};

	if (!rp->in_fde || rp->rt->n > rp->fde_first || !rp->cie)
		return;
	x.pc = rp->fde_start;
	x.end = rp->fde_end;
	x.signal = rp->cie->signal;
	strcpy(x.cfa, rp->cie->cfa);
	strcpy(x.rbp, rp->cie->rbp);
	strcpy(x.ra, rp->cie->ra);
	rtab_push(rp->rt, &x);
}

static void on_cie(struct rparse *rp, unsigned long off, const char *aug)
{
	close_fde(rp);
	rp->in_fde = false;
	rp->in_cie = rp->ncies < 4096;
	rp->cie = NULL;
	if (!rp->in_cie)
		return;
	rp->cie = &rp->cies[rp->ncies++];
	memset(rp->cie, 0, sizeof(*rp->cie));
	rp->cie->off = off;
	rp->cie->signal = strchr(aug, 'S') != NULL;
	strcpy(rp->cie->cfa, "u");
	strcpy(rp->cie->rbp, "u");
	strcpy(rp->cie->ra, "u");
}

static void on_fde(struct rparse *rp, unsigned long cie_off, __u64 start, __u64 end)
{
	close_fde(rp);
	rp->cie = NULL;
	for (int i = 0; i < rp->ncies; i++)
		if (rp->cies[i].off == cie_off)
			rp->cie = &rp->cies[i];
	rp->in_fde = rp->cie != NULL;
	rp->in_cie = false;
	rp->fde_start = start;
	rp->fde_end = end;
	rp->fde_first = rp->rt->n;
	rtab_push_fde(rp->rt, start, end);
}

static void on_row(struct rparse *rp, __u64 pc, char vals[][32])
{
	struct rtab *rt = rp->rt;
	struct rrow x = {};

	if (rp->in_cie && rp->cie) {
		snprintf(rp->cie->cfa, 32, "%s", vals[1]);
		column(rp->cols, rp->ncols, vals, "rbp", rp->cie->rbp);
		column(rp->cols, rp->ncols, vals, "ra", rp->cie->ra);
		return;
	}
	if (!rp->in_fde)
		return;
	x.pc = pc;
	x.end = rp->fde_end;
	x.signal = rp->cie->signal;
	snprintf(x.cfa, 32, "%s", vals[1]);
	column(rp->cols, rp->ncols, vals, "rbp", x.rbp);
	column(rp->cols, rp->ncols, vals, "ra", x.ra);
	if (rt->n > rp->fde_first)
		rt->r[rt->n - 1].end = pc;
	rtab_push(rt, &x);
}

/*
 * Reads readelf -wF's tables for FILE into RT, .eh_frame and .debug_frame
 * alike unless EH_ONLY. Each row holds up to the next row of its FDE or the
 * FDE's end.
 */
static int read_readelf(const char *file, bool eh_only, struct rtab *rt)
{
	bool skip = false;

	char cmd[512], line[4096], copy[4096], vals[64][32], aug[64];
	struct rparse *rp = calloc(1, sizeof(*rp));
	unsigned long off;
	unsigned long long a, b;
	FILE *p;
	int n;

	if (!rp)
		return -ENOMEM;
	rp->rt = rt;
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp %s 2>/dev/null", file);
	p = popen(cmd, "r");
	if (!p) {
		free(rp);
		return -errno;
	}
	while (fgets(line, sizeof(line), p)) {
		if (!strncmp(line, "Contents of the ", 16))
			skip = eh_only && strstr(line, ".debug_frame");
		if (skip)
			continue;
		if (sscanf(line, "%lx %*x %*x CIE", &off) == 1 && strstr(line, " CIE")) {
			if (sscanf(line, "%*x %*x %*x CIE \"%63[^\"]\"", aug) != 1)
				aug[0] = '\0';
			on_cie(rp, off, aug);
			continue;
		}
		if (sscanf(line, "%*x %*x %*x FDE cie=%lx pc=%llx..%llx", &off, &a, &b) == 3) {
			on_fde(rp, off, a, b);
			continue;
		}
		strcpy(copy, line);
		n = split(copy, vals, 64);
		if (n >= 2 && !strcmp(vals[0], "LOC") && !strcmp(vals[1], "CFA")) {
			rp->ncols = n;
			memcpy(rp->cols, vals, sizeof(rp->cols));
			continue;
		}
		if (n >= 2 && n == rp->ncols && strlen(vals[0]) == 16 &&
		    sscanf(vals[0], "%llx", &a) == 1)
			on_row(rp, a, vals);
	}
	close_fde(rp);
	pclose(p);
	free(rp);
	return 0;
}

static int cmp_fde(const void *a, const void *b)
{
	const __u64 *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* rows of FDEs that overlap another are not compared: the winner is a policy */
static void mark_overlaps(struct rtab *rt)
{
	__u64 (*f)[2] = malloc(rt->nf * sizeof(*f) + 1);
	size_t nover = 0;
	__u64 (*over)[2] = malloc(rt->nf * sizeof(*over) + 1);

	if (!f || !over)
		abort();
	memcpy(f, rt->fdes, rt->nf * sizeof(*f));
	qsort(f, rt->nf, sizeof(*f), cmp_fde);
	for (size_t i = 1; i < rt->nf; i++) {
		if (f[i][0] < f[i - 1][1] && f[i][0] < f[i][1]) {
			over[nover][0] = f[i][0];
			over[nover][1] = f[i - 1][1] > f[i][1] ? f[i - 1][1] : f[i][1];
			nover++;
		}
	}
	for (size_t i = 0; i < rt->n; i++)
		for (size_t j = 0; j < nover; j++)
			if (rt->r[i].pc < over[j][1] && rt->r[i].end > over[j][0] - 64)
				rt->r[i].skip = true;
	free(f);
	free(over);
}

/* "c-16" -> -16; false for every other rule */
static bool cfa_rel(const char *s, long *off)
{
	char *end;

	if (s[0] != 'c' || (s[1] != '-' && s[1] != '+'))
		return false;
	*off = strtol(s + 1, &end, 10);
	return !*end;
}

#define T(x) (1u << (x))

/* what the row for readelf's rules must be: allowed types, and offsets when exact */
static unsigned expect(const struct rrow *x, long *cfa_off, long *rbp_off)
{
	long ra, m;
	char *end;

	*cfa_off = *rbp_off = 0;
	if (x->signal)
		return T(UNWIND_CFA_SIGNAL);
	if (!strcmp(x->ra, "u"))
		return T(UNWIND_CFA_END);
	if (!cfa_rel(x->ra, &ra) || ra != -8)
		return T(UNWIND_CFA_UNKNOWN);
	if (!strcmp(x->cfa, "exp"))
		return T(UNWIND_CFA_PLT) | T(UNWIND_CFA_RBP_DEREF) | T(UNWIND_CFA_UNKNOWN);
	if (strncmp(x->cfa, "rsp+", 4) && strncmp(x->cfa, "rbp+", 4))
		return T(UNWIND_CFA_UNKNOWN);
	*cfa_off = strtol(x->cfa + 4, &end, 10);
	if (*end || *cfa_off > INT16_MAX)
		return T(UNWIND_CFA_UNKNOWN);
	if (cfa_rel(x->rbp, &m)) {
		if (!m || m % 8 || m / 8 < -128 || m / 8 > 127)
			return T(UNWIND_CFA_UNKNOWN);
		*rbp_off = m / 8;
	} else if (strcmp(x->rbp, "u") && strcmp(x->rbp, "s")) {
		return T(UNWIND_CFA_UNKNOWN);
	}
	return T(x->cfa[1] == 's' ? UNWIND_CFA_RSP : UNWIND_CFA_RBP);
}

static const char *type_name(int t)
{
	static const char *names[] = { "none", "rsp", "rbp", "plt", "rbp_deref", "end", "unknown" };

	return t >= 0 && t <= 6 ? names[t] : "?";
}

/* the table's row at PC against readelf's X; prints the first few differences */
static bool same_as_readelf(const struct unwind_table *t, const struct rrow *x, __u64 pc,
			    int *shown)
{
	const struct unwind_row *r = unwind_table__find(t, pc);
	long cfa_off, rbp_off;
	unsigned ok = expect(x, &cfa_off, &rbp_off);
	bool exact = ok == T(UNWIND_CFA_RSP) || ok == T(UNWIND_CFA_RBP);

	if (r && (ok & T(r->cfa_type)) &&
	    (!exact || (r->cfa_off == cfa_off && r->rbp_off == rbp_off)))
		return true;
	if ((*shown)++ < 8)
		fprintf(stderr, "  pc %#llx: readelf cfa=%s rbp=%s ra=%s%s, table %s %d rbp %d\n",
			(unsigned long long)pc, x->cfa, x->rbp, x->ra, x->signal ? " (S)" : "",
			r ? type_name(r->cfa_type) : "(no row)", r ? r->cfa_off : 0,
			r ? r->rbp_off : 0);
	return false;
}

/*
 * Builds FILE's table and compares it with readelf at the first and the last
 * byte of every row of every FDE that overlaps no other, and checks that the
 * bytes right after an FDE that no other FDE follows have no CFI. Returns the
 * number of PCs compared, or -1 after printing the differences.
 */
static long crosscheck(const char *file, bool eh_only)
{
	struct rtab rt = {};
	struct unwind_table *t;
	long checked = 0, bad = 0;
	int shown = 0;

	t = build_path(file);
	if (!t || read_readelf(file, eh_only, &rt)) {
		fprintf(stderr, "  %s: build or readelf failed: %s\n", file, strerror(errno));
		return -1;
	}
	mark_overlaps(&rt);
	for (size_t i = 0; i < rt.n; i++) {
		const struct rrow *x = &rt.r[i];

		if (x->skip || x->end <= x->pc || x->end > 0xffffffffULL)
			continue;
		bad += !same_as_readelf(t, x, x->pc, &shown);
		bad += !same_as_readelf(t, x, x->end - 1, &shown);
		checked += 2;
	}
	qsort(rt.fdes, rt.nf, sizeof(*rt.fdes), cmp_fde);
	for (size_t i = 0; i + 1 < rt.nf; i++) {
		const struct unwind_row *r;

		if (rt.fdes[i + 1][0] <= rt.fdes[i][1] || (i && rt.fdes[i - 1][1] > rt.fdes[i][1]))
			continue;
		r = unwind_table__find(t, rt.fdes[i][1]);
		checked++;
		if (!r || r->cfa_type != UNWIND_CFA_NONE) {
			bad++;
			if (shown++ < 8)
				fprintf(stderr, "  pc %#llx: after an FDE, no NONE row\n",
					(unsigned long long)rt.fdes[i][1]);
		}
	}
	if (bad)
		fprintf(stderr, "  %s: %ld of %ld pcs differ from readelf\n", file, bad, checked);
	unwind_table__free(t);
	free(rt.r);
	free(rt.fdes);
	return bad ? -1 : checked;
}

static int check_file(const char *file, long min_pcs, bool eh_only)
{
	struct unwind_table *t = build_path(file);
	long n;

	CHECK(t);
	CHECK(check_shape(t) == TEST_OK);
	unwind_table__free(t);
	n = crosscheck(file, eh_only);
	CHECK(n >= min_pcs);
	return TEST_OK;
}

static int test_libc(void)
{
	if (!have(LIBC))
		SKIP("no " LIBC);
	return check_file(LIBC, 20000, false);
}

static int test_more_libraries(void)
{
	static const char *const libs[] = {
		"/lib64/ld-linux-x86-64.so.2",
		"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
		"/usr/lib/x86_64-linux-gnu/libelf.so.1",
		"/usr/lib/x86_64-linux-gnu/libz.so.1",
		"build/ebpfprof",
	};
	int done = 0;

	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		if (!have(libs[i]))
			continue;
		CHECK(check_file(libs[i], 100, false) == TEST_OK);
		done++;
	}
	if (!done)
		SKIP("none of the libraries is installed");
	return TEST_OK;
}

static int test_fixtures(void)
{
	static const char *const fix[] = {
		"unwind_deep", "unwind_qsort", "unwind_cxx", "unwind_pie_lib", "libuwlib.so",
		"unwind_debug_frame", "unwind_debug_frame_z", "unwind_cgo",
	};

	if (!have(FIX "unwind_deep"))
		SKIP("run make fixtures");
	for (size_t i = 0; i < sizeof(fix) / sizeof(fix[0]); i++) {
		char path[256];

		snprintf(path, sizeof(path), FIX "%s", fix[i]);
		if (!have(path))
			continue;	/* unwind_cgo: only where go is installed */
		/* a Go binary's table is its .eh_frame alone (see unwind_table_elf.c) */
		if (check_file(path, 20, !strcmp(fix[i], "unwind_cgo")) != TEST_OK) {
			fprintf(stderr, "  in %s\n", path);
			return TEST_FAIL;
		}
	}
	return TEST_OK;
}

TEST_MAIN("unwind_table", TEST(test_libc), TEST(test_more_libraries), TEST(test_fixtures))
