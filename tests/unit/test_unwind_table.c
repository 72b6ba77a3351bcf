/* test_unwind_table.c -- unwind tables of real files cross-checked row by row against readelf --debug-dump=frames-interp */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "unwind_table.h"
#include "test.h"

#define FIX "build/fixtures/unwind/"
#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

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

static bool have(const char *path)
{
	return access(path, R_OK) == 0;
}

static struct unwind_table *build_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct unwind_table *t;
	int err;

	if (fd < 0)
		return NULL;
	t = unwind_table__build(fd);
	err = errno;
	close(fd);
	errno = err;
	return t;
}

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
 * alike. Each row holds up to the next row of its FDE or the FDE's end.
 */
static int read_readelf(const char *file, struct rtab *rt)
{
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
		return T(UNWIND_CFA_UNKNOWN);
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
static long crosscheck(const char *file)
{
	struct rtab rt = {};
	struct unwind_table *t;
	long checked = 0, bad = 0;
	int shown = 0;

	t = build_path(file);
	if (!t || read_readelf(file, &rt)) {
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

/* the structural promises of the header: sorted, strictly increasing, merged, ends with NONE */
static int check_shape(const struct unwind_table *t)
{
	size_t n;
	const struct unwind_row *r = unwind_table__rows(t, &n);

	CHECK(n > 0);
	CHECK(r[n - 1].cfa_type == UNWIND_CFA_NONE);
	for (size_t i = 1; i < n; i++) {
		CHECK(r[i - 1].pc < r[i].pc);
		CHECK(r[i - 1].cfa_type != r[i].cfa_type || r[i - 1].cfa_off != r[i].cfa_off ||
		      r[i - 1].rbp_off != r[i].rbp_off);
		CHECK(r[i].cfa_type <= UNWIND_CFA_UNKNOWN);
	}
	CHECK(unwind_table__find(t, r[0].pc) == &r[0]);
	CHECK(!r[0].pc || !unwind_table__find(t, r[0].pc - 1));
	CHECK(unwind_table__find(t, r[n - 1].pc + 100) == &r[n - 1]);
	CHECK(unwind_table__mem_size(t) >= n * sizeof(*r));
	return TEST_OK;
}

static int check_file(const char *file, long min_pcs)
{
	struct unwind_table *t = build_path(file);
	long n;

	CHECK(t);
	CHECK(check_shape(t) == TEST_OK);
	unwind_table__free(t);
	n = crosscheck(file);
	CHECK(n >= min_pcs);
	return TEST_OK;
}

static int test_libc(void)
{
	if (!have(LIBC))
		SKIP("no " LIBC);
	return check_file(LIBC, 20000);
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
		CHECK(check_file(libs[i], 100) == TEST_OK);
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
		if (check_file(path, 20) != TEST_OK) {
			fprintf(stderr, "  in %s\n", path);
			return TEST_FAIL;
		}
	}
	return TEST_OK;
}

/* address of NAME in FILE's symbol table, per nm(1); 0 when absent */
static __u64 nm_addr(const char *file, const char *name)
{
	char cmd[512], line[1024], sym[512], type;
	unsigned long long addr;
	__u64 found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm --defined-only %s 2>/dev/null", file);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %c %511s", &addr, &type, sym) == 3 && !strcmp(sym, name))
			found = addr;
	pclose(p);
	return found;
}

/* the row a few bytes into NAME (after its prologue's first instruction) */
static const struct unwind_row *row_in(const struct unwind_table *t, const char *file,
				       const char *name, __u64 skip)
{
	__u64 addr = nm_addr(file, name);

	return addr ? unwind_table__find(t, addr + skip) : NULL;
}

/* the largest rsp-based CFA offset in NAME's first 24 bytes, where its prologue is: the frame size */
static int max_cfa_off(const struct unwind_table *t, const char *file, const char *name)
{
	__u64 addr = nm_addr(file, name);
	int best = -1;

	for (__u64 pc = addr; addr && pc < addr + 24; pc++) {
		const struct unwind_row *r = unwind_table__find(t, pc);

		if (r && r->cfa_type == UNWIND_CFA_RSP && r->cfa_off > best)
			best = r->cfa_off;
	}
	return best;
}

static int check_deep_frames(const struct unwind_table *t, const char *file)
{
	/* frame sizes follow the arrays: 16, 200, 1000, 40, 4000 bytes (the leaf uses the red zone) */
	CHECK(max_cfa_off(t, file, "uw_chain_5") >= 3800);
	CHECK(max_cfa_off(t, file, "uw_chain_3") >= 1000);
	CHECK(max_cfa_off(t, file, "uw_chain_3") < 2000);
	CHECK(max_cfa_off(t, file, "uw_chain_2") >= 200);
	CHECK(max_cfa_off(t, file, "uw_chain_2") < 1000);
	CHECK(max_cfa_off(t, file, "uw_chain_4") >= 40);
	CHECK(max_cfa_off(t, file, "uw_chain_4") < 200);
	CHECK(max_cfa_off(t, file, "uw_chain_1") >= 16);
	CHECK(max_cfa_off(t, file, "uw_chain_1") < 200);
	return TEST_OK;
}

static int test_deep(void)
{
	const char *f = FIX "unwind_deep";
	const struct unwind_row *r;
	struct unwind_table *t;

	if (!have(f))
		SKIP("run make fixtures");
	t = build_path(f);
	CHECK(t);
	CHECK(check_deep_frames(t, f) == TEST_OK);
	/* _start's CIE says the return address is undefined: the outermost frame */
	r = row_in(t, f, "_start", 1);
	CHECK(r && r->cfa_type == UNWIND_CFA_END);
	/* the first instruction of a function: CFA = rsp + 8 */
	r = row_in(t, f, "uw_chain_5", 0);
	CHECK(r && r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 8 && r->rbp_off == 0);
	unwind_table__free(t);
	return TEST_OK;
}

static bool same_rows(const struct unwind_table *a, const struct unwind_table *b)
{
	size_t na, nb;
	const struct unwind_row *ra = unwind_table__rows(a, &na), *rb = unwind_table__rows(b, &nb);

	return na == nb && !memcmp(ra, rb, na * sizeof(*ra));
}

/* no section headers: .eh_frame through PT_GNU_EH_FRAME gives the same table */
static int test_no_section_headers(void)
{
	struct unwind_table *a, *b;

	if (!have(FIX "unwind_deep-noshdr"))
		SKIP("run make fixtures");
	a = build_path(FIX "unwind_deep");
	b = build_path(FIX "unwind_deep-noshdr");
	CHECK(a && b);
	CHECK(same_rows(a, b));
	CHECK(unwind_table__stats(b)->cfi.fdes == unwind_table__stats(a)->cfi.fdes);
	CHECK(!strcmp(unwind_table__build_id(a), unwind_table__build_id(b)));
	unwind_table__free(a);
	unwind_table__free(b);
	return TEST_OK;
}

/* our functions' CFI only in .debug_frame (compressed or not), the C runtime's in .eh_frame */
static int test_debug_frame(void)
{
	const char *f = FIX "unwind_debug_frame";
	struct unwind_table *t, *z;

	if (!have(FIX "unwind_debug_frame_z"))
		SKIP("run make fixtures");
	t = build_path(f);
	z = build_path(FIX "unwind_debug_frame_z");
	CHECK(t && z);
	CHECK(unwind_table__stats(t)->debug_frame_bytes > 0);
	CHECK(unwind_table__stats(t)->eh_frame_bytes > 0);
	CHECK(check_deep_frames(t, f) == TEST_OK);
	CHECK(same_rows(t, z));
	unwind_table__free(t);
	unwind_table__free(z);
	return TEST_OK;
}

/* libc's PLT carries binutils' expression: CFA = rsp + 8 + ((rip & 15) >= 11 ? 8 : 0) */
static int test_plt(void)
{
	const struct unwind_row *r;
	struct unwind_table *t;
	size_t n, plt = 0;

	if (!have(LIBC))
		SKIP("no " LIBC);
	t = build_path(LIBC);
	CHECK(t);
	r = unwind_table__rows(t, &n);
	for (size_t i = 0; i < n; i++)
		if (r[i].cfa_type == UNWIND_CFA_PLT) {
			CHECK(r[i].cfa_off == 8 && r[i].rbp_off == 11);
			plt++;
		}
	CHECK(plt >= 1);
	unwind_table__free(t);
	return TEST_OK;
}

/* every PT_LOAD that readelf -l lists maps its own page-aligned offset with delta vaddr - offset */
static int check_deltas(const char *file)
{
	char cmd[512], line[1024];
	unsigned long long off, vaddr;
	struct unwind_table *t = build_path(file);
	int loads = 0;
	__s64 delta;
	FILE *p;

	CHECK(t);
	snprintf(cmd, sizeof(cmd), "readelf -lW %s", file);
	p = popen(cmd, "r");
	CHECK(p);
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, " LOAD 0x%llx 0x%llx", &off, &vaddr) != 2 || !strstr(line, " E "))
			continue;
		CHECK(unwind_table__vaddr_delta(t, off & ~4095ULL, &delta) == 0);
		CHECK(delta == (__s64)(vaddr - off));
		loads++;
	}
	pclose(p);
	CHECK(loads >= 1);
	CHECK(unwind_table__vaddr_delta(t, 1ULL << 40, &delta) == -ENOENT);
	unwind_table__free(t);
	return TEST_OK;
}

static int test_vaddr_delta(void)
{
	if (!have(FIX "libuwlib.so") || !have(LIBC))
		SKIP("run make fixtures");
	CHECK(check_deltas(LIBC) == TEST_OK);
	CHECK(check_deltas(FIX "libuwlib.so") == TEST_OK);
	CHECK(check_deltas(FIX "unwind_pie_lib") == TEST_OK);
	return TEST_OK;
}

static int test_build_id(void)
{
	char cmd[512], line[1024], want[256] = "";
	struct unwind_table *t;
	FILE *p;

	if (!have(LIBC))
		SKIP("no " LIBC);
	snprintf(cmd, sizeof(cmd), "readelf -n %s", LIBC);
	p = popen(cmd, "r");
	CHECK(p);
	while (fgets(line, sizeof(line), p))
		if (strstr(line, "Build ID: "))
			sscanf(strstr(line, "Build ID: ") + 10, "%255s", want);
	pclose(p);
	t = build_path(LIBC);
	CHECK(t && want[0]);
	CHECK(!strcmp(unwind_table__build_id(t), want));
	unwind_table__free(t);
	return TEST_OK;
}

static int test_errors(void)
{
	char tmp[] = "/tmp/ebpfprof-unwind-XXXXXX", cmd[512];
	struct unwind_table *t;
	int fd;

	errno = 0;
	CHECK(!build_path("/dev/null") && errno == EINVAL);
	CHECK(!build_path("tests/run.sh") && errno == ENOEXEC);
	CHECK(!build_path("/nonexistent/file") && errno == ENOENT);
	CHECK(!unwind_table__from_sections(NULL, 0, 0, NULL, 0) && errno == ENOENT);
	unwind_table__free(NULL);
	if (!have(FIX "unwind_qsort"))
		SKIP("run make fixtures");
	/* a program without any CFI */
	fd = mkstemp(tmp);
	CHECK(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "objcopy --remove-section .eh_frame --remove-section .eh_frame_hdr %s %s",
		 FIX "unwind_qsort", tmp);
	CHECK(system(cmd) == 0);
	t = build_path(tmp);
	unlink(tmp);
	CHECK(!t && errno == ENOENT);
	return TEST_OK;
}

static double ms_since(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1e3 + (b.tv_nsec - a->tv_nsec) / 1e6;
}

/* a very large library: well under a second, 8 bytes a row, transient memory reported */
static int test_large_library(void)
{
	static const char *const libs[] = {
		"/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1",
		"/usr/lib/llvm-15/lib/libLLVM-15.so.1",
		"/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
	};
	const struct unwind_table_stats *st;
	struct unwind_table *t = NULL;
	struct timespec t0;
	double ms;
	size_t n;

	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]) && !t; i++) {
		if (!have(libs[i]))
			continue;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		t = build_path(libs[i]);
		ms = ms_since(&t0);
		CHECK(t);
	}
	if (!t)
		SKIP("no libLLVM installed");
	unwind_table__rows(t, &n);
	st = unwind_table__stats(t);
	printf("  libLLVM: %zu rows in %.0f ms, %zu transient bytes\n", n, ms, st->peak_bytes);
	CHECK(n > 100000);
	/* generous for a loaded machine; the benchmark reports the real figure */
	CHECK(ms < 3000);
	CHECK(unwind_table__mem_size(t) < n * sizeof(struct unwind_row) + 8192);
	CHECK(st->peak_bytes < 8 * st->eh_frame_bytes + 64 * n);
	CHECK(check_shape(t) == TEST_OK);
	CHECK(!st->cfi.bad_cies && !st->cfi.bad_fdes && !st->cfi.truncated);
	unwind_table__free(t);
	return TEST_OK;
}

TEST_MAIN("unwind_table", TEST(test_libc), TEST(test_more_libraries), TEST(test_fixtures),
	  TEST(test_deep), TEST(test_no_section_headers), TEST(test_debug_frame), TEST(test_plt),
	  TEST(test_vaddr_delta), TEST(test_build_id), TEST(test_errors), TEST(test_large_library))
