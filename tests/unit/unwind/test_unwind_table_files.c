/* test_unwind_table_files.c -- fixtures, libraries: frames, PLT, .debug_frame, no shdrs, errors */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "test_files.h"
#include "unwind_check.h"

/* the row a few bytes into NAME (after its prologue's first instruction) */
static const struct unwind_row *row_in(const struct unwind_table *t, const char *file,
				       const char *name, __u64 skip)
{
	__u64 addr = test__nm_addr(file, name);

	return addr ? unwind_table__find(t, addr + skip) : NULL;
}

/*
 * The largest rsp-based CFA offset in NAME's first 64 bytes, within the
 * function (its prologue, which the compiler may open with constants
 * loaded before the stack adjustment): the frame size.
 */
static int max_cfa_off(const struct unwind_table *t, const char *file, const char *name)
{
	__u64 size, addr = test__nm_sym(file, name, &size);
	int best = -1;

	for (__u64 pc = addr; addr && pc < addr + (size && size < 64 ? size : 64); pc++) {
		const struct unwind_row *r = unwind_table__find(t, pc);

		if (r && r->cfa_type == UNWIND_CFA_RSP && r->cfa_off > best)
			best = r->cfa_off;
	}
	return best;
}

static int check_deep_frames(const struct unwind_table *t, const char *file)
{
	/* frame sizes follow the arrays: 16, 200, 1000, 40, 4000 bytes (the leaf: red zone) */
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

/* the address of the first of NAMES that FILE defines, 0 if none */
static __u64 first_addr(const char *file, const char *const *names)
{
	__u64 addr = 0;

	for (; *names && !addr; names++)
		addr = test__nm_addr(file, *names);
	return addr;
}

/*
 * A Go binary's table: its signal restorer unwinds into the code the signal
 * struck, from a byte before it (where a caller's row is looked up); the
 * functions that call the vDSO on g0's stack are left to frame pointers; the
 * rows of sigpanic and asyncPreempt say their caller's pc is exact (Go's
 * injected calls), an ordinary function's do not.
 */
static int test_go_special_functions(void)
{
	static const char *const restorer[] = {
		"runtime.sigreturn__sigaction", "runtime.sigreturn.abi0", "runtime.sigreturn", NULL,
	};
	static const char *const now[] = { "time.now", "time.now.abi0", NULL };
	static const char *const nanotime[] = {
		"runtime.nanotime1.abi0", "runtime.nanotime1", NULL,
	};
	static const char *const sigpanic[] = { "runtime.sigpanic", NULL };
	static const char *const preempt[] = {
		"runtime.asyncPreempt.abi0", "runtime.asyncPreempt", NULL,
	};
	static const char *const leaf[] = { "main.hotLeaf", NULL };
	const char *f = FIXTURES_DIR "gofix";
	__u64 sig, t_now, t_nano, a_panic, a_preempt, a_leaf;
	const struct unwind_row *r;
	struct unwind_table *t;

	if (!have(f))
		SKIP("no Go toolchain: the Go fixture was not built");
	sig = first_addr(f, restorer);
	t_now = first_addr(f, now);
	t_nano = first_addr(f, nanotime);
	a_panic = first_addr(f, sigpanic);
	a_preempt = first_addr(f, preempt);
	a_leaf = first_addr(f, leaf);
	CHECK(sig && t_now && t_nano && a_panic && a_preempt && a_leaf);
	t = build_path(f);
	CHECK(t);
	CHECK((r = unwind_table__find(t, sig - 1)) && r->cfa_type == UNWIND_CFA_SIGNAL);
	CHECK((r = unwind_table__find(t, sig + 4)) && r->cfa_type == UNWIND_CFA_SIGNAL);
	CHECK((r = unwind_table__find(t, sig - 2)) && r->cfa_type != UNWIND_CFA_SIGNAL);
	/* past the prologue, where the stack switch has happened */
	CHECK((r = unwind_table__find(t, t_now + 40)) && r->cfa_type == UNWIND_CFA_NONE);
	CHECK((r = unwind_table__find(t, t_nano + 40)) && r->cfa_type == UNWIND_CFA_NONE);
	CHECK((r = unwind_table__find(t, a_panic)) && r->cfa_type == UNWIND_CFA_RSP_INJECTED);
	CHECK((r = unwind_table__find(t, a_panic + 20)) && r->cfa_type == UNWIND_CFA_RSP_INJECTED);
	CHECK((r = unwind_table__find(t, a_preempt + 8)) && r->cfa_type == UNWIND_CFA_RSP_INJECTED);
	CHECK((r = unwind_table__find(t, a_leaf)) && r->cfa_type == UNWIND_CFA_RSP);
	unwind_table__free(t);
	return TEST_OK;
}

TEST_MAIN("unwind_table_files", TEST(test_deep), TEST(test_no_section_headers),
	  TEST(test_debug_frame), TEST(test_plt), TEST(test_vaddr_delta), TEST(test_build_id),
	  TEST(test_errors), TEST(test_large_library), TEST(test_go_special_functions))
