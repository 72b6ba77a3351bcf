/* test_gopclntab.c -- Go pclntab reader: Go fixtures built six ways, synthetic, corrupt tables */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <elf.h>
#include "symbolize/elf_syms.h"
#include "symbolize/go/gopclntab.h"
#include "test.h"
#include "test_files.h"
#include "gopcln_synth.h"

#define FIX FIXTURES_DIR
#define GO_SRC "tests/fixtures/go/gofix.go"
#define NHOT 3
/* bit-flip rounds; a by-hand run may ask for more with -DFUZZ_ITERS=N */
#ifndef FUZZ_ITERS
#define FUZZ_ITERS 100
#endif

static const char *const hot_names[NHOT] = { "main.hotLeaf", "main.hotCaller",
					     "main.(*worker).spin" };
static const char *const hot_marks[NHOT] = { "hotLeaf", "hotCaller", "spin" };

/* what a running fixture said, converted to ELF virtual addresses */
struct go_truth {
	__u64 hot[NHOT];
	__u64 inl_pc;		/* return address inside the inlined smallInlined */
};

static bool have(const char *path)
{
	return access(path, R_OK) == 0;
}

/* line of the "MARK:<mark>" comment in the fixture's source; 0 when absent */
static __u32 mark_line(const char *mark)
{
	char line[512], want[64];
	__u32 n = 0, found = 0;
	FILE *f = fopen(GO_SRC, "r");

	if (!f)
		return 0;
	snprintf(want, sizeof(want), "MARK:%s", mark);
	while (fgets(line, sizeof(line), f)) {
		char *m = strstr(line, want);

		n++;
		/* the whole marker: MARK:spin must not match MARK:spinner */
		if (m && !(m[strlen(want)] >= 'A' && m[strlen(want)] <= 'z'))
			found = n;
	}
	fclose(f);
	return found;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);

	return s && a >= b && !strcmp(s + a - b, suffix);
}

/* runtime address of PID -> ELF virtual address of PATH, through /proc/PID/maps and PT_LOAD */
static int runtime_to_vaddr(pid_t pid, const struct elf_syms *es, __u64 addr, __u64 *vaddr)
{
	char maps[64], line[1024];
	int err = -ENOENT;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, pgoff;

		if (sscanf(line, "%llx-%llx %*s %llx", &lo, &hi, &pgoff) != 3 || addr < lo ||
		    addr >= hi)
			continue;
		err = elf_syms__offset_to_vaddr(es, addr - lo + pgoff, vaddr);
		break;
	}
	fclose(f);
	return err;
}

/* runs the fixture, reads its addresses, converts them while it is still mapped */
static int run_fixture(const char *path, struct go_truth *tr)
{
	int to, status, err = -EINVAL, got = 0;
	__u64 rt[NHOT + 1] = {};
	struct elf_syms *es;
	char line[256];
	FILE *f = NULL;
	pid_t pid;

	es = elf_syms__load(path);
	pid = es ? test__spawn_piped((char *const[]){ (char *)path, NULL }, &to, &f) : -1;
	if (pid < 0) {
		elf_syms__free(es);
		return -EIO;
	}
	while (f && fgets(line, sizeof(line), f) && strncmp(line, "ready", 5)) {
		unsigned long long a;
		char name[128];

		if (sscanf(line, "%127s %llx", name, &a) != 2)
			continue;
		for (int i = 0; i < NHOT; i++)
			if (!strcmp(name, hot_names[i]))
				rt[i] = a, got |= 1 << i;
		if (!strcmp(name, "inlpc"))
			rt[NHOT] = a, got |= 1 << NHOT;
	}
	if (got == (1 << (NHOT + 1)) - 1) {
		err = 0;
		for (int i = 0; i < NHOT && !err; i++)
			err = runtime_to_vaddr(pid, es, rt[i], &tr->hot[i]);
		if (!err)
			err = runtime_to_vaddr(pid, es, rt[NHOT], &tr->inl_pc);
	}
	close(to);		/* EOF on its stdin: the fixture exits */
	if (f)
		fclose(f);
	waitpid(pid, &status, 0);
	elf_syms__free(es);
	return err;
}

static struct gopclntab *open_path(const char *path)
{
	struct gopclntab *t;
	int fd = open(path, O_RDONLY), saved;

	if (fd < 0)
		return NULL;
	t = gopclntab__open(fd);
	saved = errno;
	close(fd);
	errno = saved;
	return t;
}

static int check_frame(const struct src_line *l, const char *fn, const char *mark)
{
	__u32 want = mark_line(mark);

	if (!l->function || strcmp(l->function, fn) || !ends_with(l->file, "/gofix.go") ||
	    l->line != want)
		fprintf(stderr, "  got %s %s:%u, want %s gofix.go:%u\n",
			l->function ? l->function : "(null)", l->file ? l->file : "(null)", l->line,
			fn, want);
	CHECK(l->function && !strcmp(l->function, fn));
	CHECK(ends_with(l->file, "/gofix.go"));
	CHECK(want && l->line == want);
	return TEST_OK;
}

/* the hot functions, the inlined frame and its caller, as the running fixture reported them */
static int check_build(const char *name)
{
	char path[256];
	struct src_line out[SRC_LINES_MAX];
	struct go_truth tr;
	struct gopclntab *t;
	int n;

	snprintf(path, sizeof(path), FIX "%s", name);
	if (!have(path))
		SKIP("run make fixtures (needs go)");
	CHECK(run_fixture(path, &tr) == 0);
	t = open_path(path);
	CHECK(t);
	CHECK(strcmp(gopclntab__go_version(t), "?"));
	CHECK(gopclntab__has_inline(t));
	for (int i = 0; i < NHOT; i++) {
		n = gopclntab__lookup(t, tr.hot[i], out, SRC_LINES_MAX);
		CHECK(n == 1);
		CHECK(check_frame(&out[0], hot_names[i], hot_marks[i]) == TEST_OK);
		/* a few bytes in is still the function */
		n = gopclntab__lookup(t, tr.hot[i] + 3, out, SRC_LINES_MAX);
		CHECK(n >= 1 && !strcmp(out[n - 1].function, hot_names[i]));
	}
	/* a return address: the call instruction is one byte before it */
	n = gopclntab__lookup(t, tr.inl_pc - 1, out, SRC_LINES_MAX);
	CHECK(n == 2);
	CHECK(check_frame(&out[0], "main.smallInlined", "inlCall") == TEST_OK);
	CHECK(check_frame(&out[1], "main.hotCaller", "inlSite") == TEST_OK);
	/* with room for one frame the physical function keeps its call-site line */
	n = gopclntab__lookup(t, tr.inl_pc - 1, out, 1);
	CHECK(n == 1);
	CHECK(check_frame(&out[0], "main.hotCaller", "inlSite") == TEST_OK);
	gopclntab__free(t);
	return TEST_OK;
}

static int test_plain(void)
{
	return check_build("gofix");
}

static int test_stripped(void)
{
	return check_build("gofix-stripped");
}

static int test_pie(void)
{
	return check_build("gofix-pie");
}

static int test_external_link(void)
{
	return check_build("gofix-ext");
}

static int test_no_section_headers(void)
{
	return check_build("gofix-noshdr");
}

static int test_pie_no_section_headers(void)
{
	return check_build("gofix-pie-noshdr");
}

static int test_not_go(void)
{
	char tmp[] = "/tmp/test_gopclntab_XXXXXX";
	int fd;

	errno = 0;
	CHECK(!open_path("/bin/true") && errno == ENOENT);
	errno = 0;
	CHECK(!open_path(GO_SRC) && errno == ENOENT);
	if (have(FIX "libfixture.so")) {
		errno = 0;
		CHECK(!open_path(FIX "libfixture.so") && errno == ENOENT);
	}
	fd = mkstemp(tmp);
	CHECK(fd >= 0);
	unlink(tmp);
	errno = 0;
	CHECK(!gopclntab__open(fd) && errno == ENOENT);
	close(fd);
	errno = 0;
	CHECK(!gopclntab__open(-1));
	/* NULL-safe */
	gopclntab__free(NULL);
	CHECK(gopclntab__lookup(NULL, 0x401000, NULL, 4) == 0);
	CHECK(gopclntab__mem_size(NULL) == 0);
	return TEST_OK;
}

static int test_lookup_bounds(void)
{
	struct src_line out[SRC_LINES_MAX];
	struct gopclntab *t;
	struct go_truth tr;

	if (!have(FIX "gofix-stripped"))
		SKIP("run make fixtures (needs go)");
	CHECK(run_fixture(FIX "gofix-stripped", &tr) == 0);
	t = open_path(FIX "gofix-stripped");
	CHECK(t);
	CHECK(gopclntab__lookup(t, 0, out, SRC_LINES_MAX) == 0);
	CHECK(gopclntab__lookup(t, 0x1000, out, SRC_LINES_MAX) == 0);
	CHECK(gopclntab__lookup(t, ~0ULL, out, SRC_LINES_MAX) == 0);
	CHECK(gopclntab__lookup(t, tr.hot[0], out, 0) == 0);
	CHECK(gopclntab__lookup(t, tr.hot[0], NULL, 4) == 0);
	CHECK(gopclntab__func_count(t) > 100);
	CHECK(gopclntab__mem_size(t) > 0);
	gopclntab__free(t);
	return TEST_OK;
}

/* the pcHeader's file offset: first 1.16+ magic with a sane header */
static size_t find_header(const __u8 *buf, size_t len)
{
	for (size_t i = 0; i + 8 <= len; i += 4)
		if (buf[i + 1] == 0xff && buf[i + 2] == 0xff && buf[i + 3] == 0xff &&
		    (buf[i] & 0xf0) == 0xf0 && !buf[i + 4] && !buf[i + 5] && buf[i + 7] == 8)
			return i;
	return 0;
}

/* a copy of BUF in a file opened for the reader; -1 on error */
static int temp_copy(const __u8 *buf, size_t len)
{
	char tmp[] = "/tmp/test_gopclntab_XXXXXX";
	int fd = mkstemp(tmp);

	if (fd < 0)
		return -1;
	unlink(tmp);
	if (write(fd, buf, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	return fd;
}

static volatile size_t sweep_sink;

/* every frame well formed: strings end, counts in range (valgrind/ASan see the reads) */
static int sweep(const struct gopclntab *t, __u64 lo, __u64 hi, __u64 step)
{
	struct src_line out[SRC_LINES_MAX];

	for (__u64 a = lo; a < hi; a += step) {
		int n = gopclntab__lookup(t, a, out, SRC_LINES_MAX);

		CHECK(n >= 0 && n <= SRC_LINES_MAX);
		for (int i = 0; i < n; i++) {
			CHECK(out[i].function);
			sweep_sink += strlen(out[i].function);
			sweep_sink += out[i].file ? strlen(out[i].file) : 0;
		}
	}
	return TEST_OK;
}

/* opened or refused with a reason, and never a crash */
static int open_corrupt(const __u8 *buf, size_t len, int *opened)
{
	struct gopclntab *t;
	int fd = temp_copy(buf, len);

	CHECK(fd >= 0);
	errno = 0;
	t = gopclntab__open(fd);
	close(fd);
	if (!t) {
		if (errno != ENOENT && errno != EINVAL && errno != EFBIG)
			fprintf(stderr, "  corrupt copy refused with %s\n", strerror(errno));
		CHECK(errno == ENOENT || errno == EINVAL || errno == EFBIG);
		return TEST_OK;
	}
	(*opened)++;
	/* the fixture's text and well past it, on a prime stride */
	CHECK(sweep(t, 0x400000, 0x490000, 97) == TEST_OK);
	gopclntab__free(t);
	return TEST_OK;
}

static int test_truncated(void)
{
	const char *files[] = { FIX "gofix", FIX "gofix-stripped", FIX "gofix-noshdr" };
	int opened = 0;

	if (!have(FIX "gofix-noshdr"))
		SKIP("run make fixtures (needs go)");
	for (size_t f = 0; f < 3; f++) {
		size_t len, hdr;
		__u8 *buf = test__slurp(files[f], &len);

		CHECK(buf && (hdr = find_header(buf, len)));
		/* cuts all over the file, and many inside the table */
		for (int i = 0; i <= 16; i++)
			CHECK(open_corrupt(buf, len * i / 16, &opened) == TEST_OK);
		for (size_t cut = hdr; cut < len && cut < hdr + 0x60000; cut += 0x3001)
			CHECK(open_corrupt(buf, cut, &opened) == TEST_OK);
		free(buf);
	}
	fprintf(stderr, "  truncated copies: %d opened\n", opened);
	return TEST_OK;
}

static int count_sp(void *ctx, __u64 start, __u64 end, __s32 sp_delta, const char *func)
{
	(*(size_t *)ctx)++;
	(void)start, (void)end, (void)sp_delta, (void)func;
	return 0;
}

/*
 * The table is mapped, not copied: a file shrunk under it (its owner may do
 * that to a library any time) makes lookups find nothing, never a crash, and
 * the names handed out before stay readable.
 */
static int test_shrunk_under_mapping(void)
{
	struct src_line out[SRC_LINES_MAX];
	size_t len, before = 0, after = 0;
	char name[256], file[256];
	struct gopclntab *t;
	struct go_truth tr;
	__u8 *buf;
	int fd, n;

	if (!have(FIX "gofix-stripped"))
		SKIP("run make fixtures (needs go)");
	CHECK(run_fixture(FIX "gofix-stripped", &tr) == 0);
	buf = test__slurp(FIX "gofix-stripped", &len);
	CHECK(buf);
	fd = temp_copy(buf, len);
	free(buf);
	CHECK(fd >= 0);
	t = gopclntab__open(fd);
	CHECK(t);
	/* held: a copy would be the table's size, the mapping is page cache */
	CHECK(gopclntab__mem_size(t) < len / 8);
	n = gopclntab__lookup(t, tr.hot[0], out, SRC_LINES_MAX);
	CHECK(n >= 1 && out[n - 1].function && out[n - 1].file);
	CHECK(gopclntab__for_each_sp(t, count_sp, &before) == 0 && before > 100);
	snprintf(name, sizeof(name), "%s", out[n - 1].function);
	snprintf(file, sizeof(file), "%s", out[n - 1].file);
	/* the data pages go with the cut; dropping them from the cache makes every read refault */
	CHECK(ftruncate(fd, 4096) == 0);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	CHECK(!strcmp(out[n - 1].function, name) && !strcmp(out[n - 1].file, file));
	CHECK(gopclntab__lookup(t, tr.hot[1], out, SRC_LINES_MAX) == 0);
	CHECK(gopclntab__lookup(t, tr.hot[0], out, SRC_LINES_MAX) == 0);
	CHECK(gopclntab__for_each_sp(t, count_sp, &after) == -EIO);
	fprintf(stderr, "  shrunk under the mapping: %s (%s) kept, later lookups 0, %zu runs before\n",
		name, file, before);
	gopclntab__free(t);
	close(fd);
	return TEST_OK;
}

static __u64 rng_state = 0x9e3779b97f4a7c15ULL;

/* xorshift64*: fixed seed, the same flips on every run */
static __u64 rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static int test_bit_flips(void)
{
	const char *files[] = { FIX "gofix-stripped", FIX "gofix-noshdr" };
	size_t len[2], hdr[2];
	__u8 *orig[2], *buf;
	int opened = 0;

	if (!have(FIX "gofix-noshdr"))
		SKIP("run make fixtures (needs go)");
	for (int f = 0; f < 2; f++) {
		orig[f] = test__slurp(files[f], &len[f]);
		CHECK(orig[f] && (hdr[f] = find_header(orig[f], len[f])));
	}
	buf = malloc(len[0] > len[1] ? len[0] : len[1]);
	CHECK(buf);
	for (int it = 0; it < FUZZ_ITERS; it++) {
		int f = it & 1, flips = 1 + rng() % 16;
		size_t span = len[f] - hdr[f];

		memcpy(buf, orig[f], len[f]);
		for (int k = 0; k < flips; k++) {
			/* half the flips hit the header and function table, where they hurt most */
			size_t at = hdr[f] + (rng() & 1 ? rng() % 0x400 : rng() % span);

			buf[at] ^= 1 << (rng() % 8);
		}
		CHECK(open_corrupt(buf, len[f], &opened) == TEST_OK);
	}
	fprintf(stderr, "  bit flips: %d of %d copies opened\n", opened, FUZZ_ITERS);
	free(buf);
	free(orig[0]);
	free(orig[1]);
	return TEST_OK;
}

/* header words: nfunc, nfiles, textStart, then the five region offsets */
static int test_absurd_header(void)
{
	static const struct {
		int word;
		__u64 val;
	} cases[] = {
		{ 0, 0 }, { 0, 0x7fffffffffffffffULL }, { 0, 0xffffffff }, { 0, 1ULL << 32 },
		{ 2, 0 }, { 3, 0 }, { 3, ~0ULL }, { 4, ~0ULL >> 1 }, { 5, 1 }, { 6, 0x10000000 },
		{ 7, ~0ULL }, { 7, 0x48 }, { 7, 0 },
	};
	const char *files[] = { FIX "gofix-stripped", FIX "gofix-noshdr" };
	int opened = 0;

	if (!have(FIX "gofix-noshdr"))
		SKIP("run make fixtures (needs go)");
	for (int f = 0; f < 2; f++) {
		size_t len, hdr;
		__u8 *buf = test__slurp(files[f], &len);

		CHECK(buf && (hdr = find_header(buf, len)));
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			__u8 saved[8];
			struct gopclntab *t;
			int fd;

			memcpy(saved, buf + hdr + 8 + 8 * cases[i].word, 8);
			put64(buf + hdr + 8 + 8 * cases[i].word, cases[i].val);
			fd = temp_copy(buf, len);
			CHECK(fd >= 0);
			errno = 0;
			t = gopclntab__open(fd);
			close(fd);
			/* with section headers the table is found by name, refused as malformed */
			if (!f && t)
				fprintf(stderr, "  word %d = %#llx was accepted\n", cases[i].word,
					(unsigned long long)cases[i].val);
			CHECK(t || errno == EINVAL || (f && errno == ENOENT));
			if (!f)
				CHECK(!t && errno == EINVAL);
			if (t) {
				opened++;
				CHECK(sweep(t, 0x400000, 0x490000, 61) == TEST_OK);
			}
			gopclntab__free(t);
			memcpy(buf + hdr + 8 + 8 * cases[i].word, saved, 8);
		}
		/* function table out of order: the binary search would be wrong */
		{
			size_t ft = hdr + ((size_t)buf[hdr + 64] | (size_t)buf[hdr + 65] << 8 |
					   (size_t)buf[hdr + 66] << 16);
			struct gopclntab *t;
			int fd;

			buf[ft + 8 * 10 + 3] = 0x7f;
			fd = temp_copy(buf, len);
			CHECK(fd >= 0);
			errno = 0;
			t = gopclntab__open(fd);
			close(fd);
			CHECK(!t && (errno == EINVAL || errno == ENOENT));
		}
		free(buf);
	}
	fprintf(stderr, "  absurd headers: %d accepted by the scan\n", opened);
	return TEST_OK;
}

static int check_syn_frame(const struct src_line *l, const char *fn, const char *file, __u32 line)
{
	if (!l->function || strcmp(l->function, fn) || !l->file || strcmp(l->file, file) ||
	    l->line != line)
		fprintf(stderr, "  got %s %s:%u, want %s %s:%u\n",
			l->function ? l->function : "(null)", l->file ? l->file : "(null)", l->line,
			fn, file, line);
	CHECK(l->function && !strcmp(l->function, fn));
	CHECK(l->file && !strcmp(l->file, file));
	CHECK(l->line == line);
	return TEST_OK;
}

static int check_synth(enum syn_ver v, const char *version, bool relocs)
{
	struct src_line out[SRC_LINES_MAX];
	__u8 *img = malloc(SYN_SIZE);
	struct gopclntab *t;
	int fd, n;

	CHECK(img);
	build_synth(v, img);
	if (relocs)
		syn_to_relocs(img);
	fd = temp_copy(img, SYN_SIZE);
	free(img);
	CHECK(fd >= 0);
	t = gopclntab__open(fd);
	if (!t)
		fprintf(stderr, "  %s: %s\n", version, strerror(errno));
	close(fd);
	CHECK(t);
	CHECK(!strcmp(gopclntab__go_version(t), version));
	CHECK(gopclntab__func_count(t) == 2);
	CHECK(gopclntab__has_inline(t));
	n = gopclntab__lookup(t, SYN_TEXT + 0x30, out, SRC_LINES_MAX);
	CHECK(n == 2);
	CHECK(check_syn_frame(&out[0], "main.inl", "b.go", 5) == TEST_OK);
	CHECK(check_syn_frame(&out[1], "main.outer", "a.go", 11) == TEST_OK);
	n = gopclntab__lookup(t, SYN_TEXT + 0x30, out, 1);
	CHECK(n == 1 && check_syn_frame(&out[0], "main.outer", "a.go", 11) == TEST_OK);
	n = gopclntab__lookup(t, SYN_TEXT + 5, out, SRC_LINES_MAX);
	CHECK(n == 1 && check_syn_frame(&out[0], "main.outer", "a.go", 10) == TEST_OK);
	n = gopclntab__lookup(t, SYN_TEXT + 0x50, out, SRC_LINES_MAX);
	CHECK(n == 1 && check_syn_frame(&out[0], "main.outer", "a.go", 12) == TEST_OK);
	n = gopclntab__lookup(t, SYN_TEXT + 0x17f, out, SRC_LINES_MAX);
	CHECK(n == 1 && check_syn_frame(&out[0], "main.leaf", "a.go", 20) == TEST_OK);
	CHECK(gopclntab__lookup(t, SYN_TEXT + 0x180, out, SRC_LINES_MAX) == 0);
	CHECK(gopclntab__lookup(t, SYN_TEXT - 1, out, SRC_LINES_MAX) == 0);
	gopclntab__free(t);
	return TEST_OK;
}

static int test_synthetic_go111(void)
{
	return check_synth(SYN_111, "1.2", false);
}

static int test_synthetic_go115(void)
{
	return check_synth(SYN_115, "1.2", false);
}

static int test_synthetic_go116(void)
{
	return check_synth(SYN_116, "1.16", false);
}

static int test_synthetic_go118(void)
{
	return check_synth(SYN_118, "1.18", false);
}

/* a PIE whose addresses live only in relocations */
static int test_synthetic_go118_relocs(void)
{
	return check_synth(SYN_118, "1.18", true);
}

static int test_synthetic_go120(void)
{
	return check_synth(SYN_120, "1.20+", false);
}

/* the table alone, from memory: the same answers without inline trees; what fuzz_gopclntab uses */
static int test_from_table(void)
{
	struct src_line out[SRC_LINES_MAX];
	__u8 *img = malloc(SYN_SIZE);
	struct gopclntab *t;

	CHECK(img);
	for (int v = SYN_111; v <= SYN_120; v++) {
		build_synth(v, img);
		t = gopclntab__from_table(img + 0x2000, 0x10000, SYN_TAB);
		CHECK(t && gopclntab__func_count(t) == 2 && !gopclntab__has_inline(t));
		/* the physical function, with the innermost inlined code's line */
		CHECK(gopclntab__lookup(t, SYN_TEXT + 0x30, out, SRC_LINES_MAX) == 1);
		CHECK(check_syn_frame(&out[0], "main.outer", "b.go", 5) == TEST_OK);
		CHECK(gopclntab__lookup(t, SYN_TEXT + 0x17f, out, SRC_LINES_MAX) == 1);
		CHECK(check_syn_frame(&out[0], "main.leaf", "a.go", 20) == TEST_OK);
		gopclntab__free(t);
	}
	errno = 0;
	CHECK(!gopclntab__from_table(img + 0x2000, 15, SYN_TAB) && errno == EINVAL);
	CHECK(!gopclntab__from_table(img, GOPCLNTAB_MAX + 1ULL, SYN_TAB) && errno == EFBIG);
	/* textStart only in a relocation: refused without the file */
	syn_to_relocs(img);
	CHECK(!gopclntab__from_table(img + 0x2000, 0x10000, SYN_TAB) && errno == EINVAL);
	free(img);
	return TEST_OK;
}

/* the older formats' code paths meet corrupt input too */
static int test_synthetic_bit_flips(void)
{
	__u8 *img = malloc(SYN_SIZE), *buf = malloc(SYN_SIZE);
	int opened = 0, total = 0;

	CHECK(img && buf);
	for (int v = SYN_111; v <= SYN_120; v++) {
		build_synth(v, img);
		for (int it = 0; it < FUZZ_ITERS / 2; it++, total++) {
			struct gopclntab *t;
			int fd, flips = 1 + rng() % 8;

			memcpy(buf, img, SYN_SIZE);
			for (int k = 0; k < flips; k++) {
				/* the table, the inline tree, moduledata */
				static const size_t at[] = { 0x2000, 0x12000, 0x14000 };
				size_t r = rng() % 8, off = at[r < 6 ? 0 : r - 5] + rng() % 0xb00;

				buf[off] ^= 1 << (rng() % 8);
			}
			fd = temp_copy(buf, SYN_SIZE);
			CHECK(fd >= 0);
			errno = 0;
			t = gopclntab__open(fd);
			close(fd);
			CHECK(t || errno == EINVAL || errno == ENOENT);
			if (t) {
				opened++;
				CHECK(sweep(t, SYN_TEXT - 0x10, SYN_TEXT + 0x200, 1) == TEST_OK);
			}
			gopclntab__free(t);
		}
	}
	fprintf(stderr, "  synthetic bit flips: %d of %d copies opened\n", opened, total);
	free(img);
	free(buf);
	return TEST_OK;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int test_speed_and_memory(void)
{
	struct src_line out[SRC_LINES_MAX];
	const char *path = FIX "gofix-stripped";
	long lookups = 0, hits = 0;
	struct gopclntab *t;
	struct stat st;
	double t0, dt;

	if (!have(path))
		SKIP("run make fixtures (needs go)");
	t0 = now();
	t = open_path(path);
	dt = now() - t0;
	CHECK(t && !stat(path, &st));
	fprintf(stderr, "  open: %.1f ms, %zu functions, %zu bytes held for a %lld-byte file\n",
		dt * 1e3, gopclntab__func_count(t), gopclntab__mem_size(t), (long long)st.st_size);
	t0 = now();
	do {
		for (__u64 a = 0x401000; a < 0x485000; a += 13, lookups++)
			hits += gopclntab__lookup(t, a, out, SRC_LINES_MAX) > 0;
	} while ((dt = now() - t0) < 0.3);
	fprintf(stderr, "  lookups: %.0f/s (%ld of %ld resolved)\n", lookups / dt, hits, lookups);
	CHECK(hits > lookups / 2);
	gopclntab__free(t);
	return TEST_OK;
}

/*
 * The fixtures come from the installed Go (1.19: the 1.18 table format). Go
 * binaries of newer releases that happen to be installed, with a symbol
 * table to compare against, check the 1.20+ format for real.
 */
static int check_against_nm(const char *path, int *checked)
{
	char cmd[512], line[1024], name[512], type;
	struct src_line out[SRC_LINES_MAX];
	unsigned long long addr;
	struct gopclntab *t;
	int bad = 0, n;
	FILE *p;

	t = open_path(path);
	CHECK(t);
	snprintf(cmd, sizeof(cmd), "nm --defined-only %s 2>/dev/null", path);
	p = popen(cmd, "r");
	CHECK(p);
	/* every 7th Go text symbol: runtime.*, main.*, package paths */
	for (int i = 0; fgets(line, sizeof(line), p);) {
		int at = 0;

		/* names of generic instantiations hold spaces: the name is the rest of the line */
		if (sscanf(line, "%llx %c %n", &addr, &type, &at) != 2 || !at ||
		    (type != 'T' && type != 't'))
			continue;
		snprintf(name, sizeof(name), "%s", line + at);
		name[strcspn(name, "\n")] = '\0';
		if (!strchr(name, '.') || i++ % 7)
			continue;
		n = gopclntab__lookup(t, addr, out, SRC_LINES_MAX);
		if (!n)
			continue;	/* C code linked in by cgo */
		(*checked)++;
		if (strcmp(out[n - 1].function, name) &&
		    (strncmp(out[n - 1].function, name, strlen(out[n - 1].function)) ||
		     strcmp(name + strlen(out[n - 1].function), ".abi0")))
			if (bad++ < 5)
				fprintf(stderr, "  %s: %#llx is %s, pclntab says %s\n", path, addr,
					name, out[n - 1].function);
	}
	pclose(p);
	fprintf(stderr, "  %s: Go %s table, %d symbols checked, %d differ\n", path,
		gopclntab__go_version(t), *checked, bad);
	gopclntab__free(t);
	/* generic instantiations may be named differently ([...] vs the type) */
	CHECK(bad * 100 <= *checked);
	return TEST_OK;
}

static int test_installed_go_binaries(void)
{
	static const char *const candidates[] = { "/usr/local/bin/docker", "/usr/bin/docker",
						  "/usr/local/bin/terraform", "/usr/bin/kubectl" };
	int found = 0;

	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]) && !found; i++) {
		struct gopclntab *t = have(candidates[i]) ? open_path(candidates[i]) : NULL;
		bool newer = t && !strcmp(gopclntab__go_version(t), "1.20+");
		int checked = 0;

		gopclntab__free(t);
		if (!newer)
			continue;
		CHECK(check_against_nm(candidates[i], &checked) == TEST_OK);
		found = checked > 0;
	}
	if (!found)
		SKIP("no installed Go 1.20+ binary with a symbol table");
	return TEST_OK;
}

TEST_MAIN("gopclntab", TEST(test_plain), TEST(test_stripped), TEST(test_pie),
	  TEST(test_external_link), TEST(test_no_section_headers),
	  TEST(test_pie_no_section_headers), TEST(test_not_go), TEST(test_lookup_bounds),
	  TEST(test_truncated), TEST(test_shrunk_under_mapping), TEST(test_bit_flips), TEST(test_absurd_header),
	  TEST(test_synthetic_go111), TEST(test_synthetic_go115), TEST(test_synthetic_go116),
	  TEST(test_synthetic_go118), TEST(test_synthetic_go118_relocs),
	  TEST(test_synthetic_go120), TEST(test_from_table), TEST(test_synthetic_bit_flips),
	  TEST(test_speed_and_memory),
	  TEST(test_installed_go_binaries))
