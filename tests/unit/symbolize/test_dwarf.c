/* test_dwarf.c -- inline chains and lines of the -O2 -g fixture, split debug, no or corrupt DWARF */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <dwarf.h>
#include "symbolize/dwarf.h"
#include "symbolize/demangle.h"
#include "symbolize/elf_syms.h"
#include "test.h"

#define FIX FIXTURES_DIR
#define SRC "tests/fixtures/debug/inline_prog.c"
#define ASM_SRC "tests/fixtures/debug/asm_leaf.S"
#if defined(__x86_64__)
#define ASM_ARCH "X86_64"
#else
#define ASM_ARCH "AARCH64"
#endif

/* what the fixture prints about itself: ELF vaddrs */
struct fix_addrs {
	__u64 caller, plain, helper_pc, plain_pc, asm_leaf, asm_bare;
};

static bool have(const char *path)
{
	return access(path, R_OK) == 0;
}

/* the line of FILE holding MARKER, 0 when none does */
static __u32 file_marker_line(const char *file, const char *marker)
{
	char line[1024];
	__u32 n = 0, found = 0;
	FILE *f = fopen(file, "r");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, marker))
			found = n;
	}
	fclose(f);
	return found;
}

static __u32 marker_line(const char *marker)
{
	return file_marker_line(SRC, marker);
}

/* runs the fixture with stdin at EOF: it prints its addresses and exits */
static int fixture_addrs(struct fix_addrs *a)
{
	char name[64];
	unsigned long long v;
	int got = 0;
	FILE *p = popen(FIX "debug_inline </dev/null", "r");

	if (!p)
		return -errno;
	while (fscanf(p, "%63s %llx", name, &v) == 2) {
		if (!strcmp(name, "fixture_caller"))
			a->caller = v, got++;
		else if (!strcmp(name, "fixture_plain"))
			a->plain = v, got++;
		else if (!strcmp(name, "helper_pc"))
			a->helper_pc = v, got++;
		else if (!strcmp(name, "plain_pc"))
			a->plain_pc = v, got++;
		else if (!strcmp(name, "asm_leaf"))
			a->asm_leaf = v, got++;
		else if (!strcmp(name, "asm_bare"))
			a->asm_bare = v, got++;
	}
	pclose(p);
	return got == 6 ? 0 : -EINVAL;
}

static struct dwarf_info *open_path(const char *path)
{
	struct dwarf_info *d;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	d = dwarf_info__open(fd, SIZE_MAX);
	/* the object keeps nothing of the descriptor */
	close(fd);
	return d;
}

static int copy_path(const char *from, const char *to)
{
	unsigned char buf[65536];
	int in = open(from, O_RDONLY), out, err = 0;
	ssize_t n;

	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		close(in);
		return -errno;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			err = -EIO;
	close(in);
	close(out);
	return n < 0 ? -EIO : err;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static bool frame_is(const struct src_line *l, const char *function, __u32 line)
{
	bool ok = l->function && !strcmp(l->function, function) &&
		  ends_with(l->file, "inline_prog.c") && l->line == line;

	if (!ok)
		fprintf(stderr, "  frame %s %s:%u, want %s inline_prog.c:%u\n",
			l->function ? l->function : "(null)", l->file ? l->file : "(null)", l->line,
			function, line);
	return ok;
}

/* the checks every file with the fixture's DWARF must pass */
static int check_fixture_dwarf(const char *path)
{
	__u32 helper_line = marker_line("MARK_HELPER_CALL"),
	      caller_line = marker_line("MARK_CALLER_CALL"),
	      plain_line = marker_line("MARK_PLAIN_CALL");
	struct src_line out[SRC_LINES_MAX];
	struct fix_addrs a = { 0 };
	struct dwarf_info *d;
	int n;

	CHECK(helper_line && caller_line && plain_line);
	CHECK(fixture_addrs(&a) == 0);
	d = open_path(path);
	CHECK(d);

	/* the call inside the inlined helper: callee first, then where it was inlined */
	n = dwarf_info__lookup(d, a.helper_pc, out, SRC_LINES_MAX);
	CHECK(n == 2);
	CHECK(frame_is(&out[0], "fixture_helper", helper_line));
	CHECK(frame_is(&out[1], "fixture_caller", caller_line));

	/* only room for one: the innermost */
	n = dwarf_info__lookup(d, a.helper_pc, out, 1);
	CHECK(n == 1);
	CHECK(frame_is(&out[0], "fixture_helper", helper_line));

	/* a function with nothing inlined at that point */
	n = dwarf_info__lookup(d, a.plain_pc, out, SRC_LINES_MAX);
	CHECK(n == 1);
	CHECK(frame_is(&out[0], "fixture_plain", plain_line));

	/* its first instruction belongs to its declaration's lines */
	n = dwarf_info__lookup(d, a.plain, out, SRC_LINES_MAX);
	CHECK(n == 1);
	CHECK(out[0].function && !strcmp(out[0].function, "fixture_plain"));
	CHECK(out[0].line > 0 && out[0].line <= plain_line && out[0].line + 3 >= plain_line);

	/* assembly: gas names a function typed @function (2.36 on), and lines only for a label */
	n = dwarf_info__lookup(d, a.asm_leaf, out, SRC_LINES_MAX);
	CHECK(n == 1);
	CHECK(!out[0].function || !strcmp(out[0].function, "fixture_asm_leaf"));
	CHECK(ends_with(out[0].file, "asm_leaf.S"));
	CHECK(out[0].line == file_marker_line(ASM_SRC, "MARK_ASM_LEAF_" ASM_ARCH));
	n = dwarf_info__lookup(d, a.asm_bare, out, SRC_LINES_MAX);
	CHECK(n == 1);
	CHECK(!out[0].function);	/* callers take the symbol table's name */
	CHECK(ends_with(out[0].file, "asm_leaf.S"));
	CHECK(out[0].line == file_marker_line(ASM_SRC, "MARK_ASM_BARE_" ASM_ARCH));

	/* outside every unit */
	CHECK(dwarf_info__lookup(d, 0, out, SRC_LINES_MAX) == 0);
	CHECK(dwarf_info__lookup(d, ~0ULL, out, SRC_LINES_MAX) == 0);
	CHECK(dwarf_info__mem_size(d) > 1000);
	dwarf_info__free(d);
	return TEST_OK;
}

static int test_inline_frames(void)
{
	if (!have(FIX "debug_inline"))
		SKIP("run make fixtures");
	return check_fixture_dwarf(FIX "debug_inline");
}

static int test_separate_debug_file(void)
{
	if (!have(FIX "debug_inline.debug"))
		SKIP("run make fixtures");
	return check_fixture_dwarf(FIX "debug_inline.debug");
}

static int test_no_dwarf(void)
{
	static const char *const paths[] = { FIX "debug_inline_stripped", FIX "debug_inline_mini",
					      FIX "libfixture-stripped.so" };
	struct stat st;
	int fd;

	if (!have(FIX "debug_inline_stripped"))
		SKIP("run make fixtures");
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (!have(paths[i]))
			continue;
		errno = 0;
		CHECK(!open_path(paths[i]));
		CHECK(errno == ENOENT);
	}
	/* not ELF at all */
	errno = 0;
	CHECK(!open_path(SRC));
	CHECK(errno == EINVAL);
	/* not a regular file */
	fd = open("/dev/null", O_RDONLY);
	CHECK(fd >= 0 && !fstat(fd, &st));
	errno = 0;
	CHECK(!dwarf_info__open(fd, SIZE_MAX));
	CHECK(errno == EINVAL);
	close(fd);
	dwarf_info__free(NULL);
	CHECK(dwarf_info__mem_size(NULL) == 0);
	return TEST_OK;
}

/* the C++ fixture: functions are named by their linkage names, which demangle */
static int test_cxx_linkage_name(void)
{
	char line[512], sym[256], type;
	unsigned long long addr = 0, v;
	struct src_line out[SRC_LINES_MAX];
	struct dwarf_info *d;
	char *short_name;
	FILE *p;
	int n;

	if (!have(FIX "debug_stack"))
		SKIP("run make fixtures");
	p = popen("nm --defined-only " FIX "debug_stack", "r");
	CHECK(p);
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %c %255s", &v, &type, sym) == 3 &&
		    !strcmp(sym, "_ZN5fixns3runEi"))
			addr = v;
	pclose(p);
	CHECK(addr);
	d = open_path(FIX "debug_stack");
	CHECK(d);
	n = dwarf_info__lookup(d, addr, out, SRC_LINES_MAX);
	CHECK(n >= 1);
	CHECK(out[n - 1].function && !strcmp(out[n - 1].function, "_ZN5fixns3runEi"));
	CHECK(ends_with(out[n - 1].file, "stack.cpp") && out[n - 1].line > 0);
	short_name = demangle(out[n - 1].function, DEMANGLE_SHORT);
	CHECK(short_name && !strcmp(short_name, "fixns::run"));
	free(short_name);
	dwarf_info__free(d);
	return TEST_OK;
}

/* a budget below the debug sections' size refuses the file before libdw reads it */
static int test_budget(void)
{
	struct dwarf_info *d;
	size_t bytes;
	int fd;

	if (!have(FIX "debug_stack"))
		SKIP("run make fixtures");
	d = open_path(FIX "debug_stack");
	CHECK(d);
	bytes = dwarf_info__mem_size(d);
	dwarf_info__free(d);
	fd = open(FIX "debug_stack", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	errno = 0;
	d = dwarf_info__open(fd, 100);
	CHECK(!d && errno == E2BIG);
	/* the sections' size is what counts: a budget of the whole object admits it */
	d = dwarf_info__open(fd, bytes);
	close(fd);
	CHECK(d);
	dwarf_info__free(d);
	fprintf(stderr, "  debug_stack: %zu bytes held; refused under a 100-byte budget\n", bytes);
	return TEST_OK;
}

static int open_fd(const char *path)
{
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* DWARF shrunk by dwz: answers in full once its supplementary file is attached */
static int test_dwz_alt(void)
{
	__u32 helper_line = marker_line("MARK_HELPER_CALL"),
	      caller_line = marker_line("MARK_CALLER_CALL");
	char common_id[ELF_BUILD_ID_HEX_SIZE];
	struct src_line out[SRC_LINES_MAX];
	struct fix_addrs a = { 0 };
	const char *path, *bid = NULL;
	struct dwarf_info *d;
	int fd, n;

	if (!have(FIX "dwz/.stamp"))
		SKIP("dwz is not installed (apt-get install dwz, then make fixtures)");
	CHECK(fixture_addrs(&a) == 0);
	fd = open_fd(FIX "dwz/common.debug");
	CHECK(fd >= 0 && elf_read_build_id(fd, common_id, sizeof(common_id)) == 0);
	close(fd);
	d = open_path(FIX "dwz/debug_inline.debug");
	CHECK(d);
	path = dwarf_info__altlink(d, &bid);
	CHECK(path && !strcmp(path, "ebpfprof-fixture-alt.debug"));
	CHECK(bid && !strcmp(bid, common_id));
	/* without it: whatever comes, no crash */
	n = dwarf_info__lookup(d, a.helper_pc, out, SRC_LINES_MAX);
	CHECK(n >= 0);
	/* only the file with the recorded build ID is taken */
	fd = open_fd(FIX "debug_inline.debug");
	CHECK(dwarf_info__set_alt(d, fd) == -EBADMSG);
	close(fd);
	fd = open_fd(FIX "dwz/common.debug");
	CHECK(dwarf_info__set_alt(d, fd) == 0);
	CHECK(dwarf_info__set_alt(d, fd) == -EEXIST);
	close(fd);
	n = dwarf_info__lookup(d, a.helper_pc, out, SRC_LINES_MAX);
	CHECK(n == 2);
	CHECK(frame_is(&out[0], "fixture_helper", helper_line));
	CHECK(frame_is(&out[1], "fixture_caller", caller_line));
	dwarf_info__free(d);

	/* a file that needs no supplement takes none */
	d = open_path(FIX "debug_inline.debug");
	CHECK(d && !dwarf_info__altlink(d, NULL));
	fd = open_fd(FIX "dwz/common.debug");
	CHECK(dwarf_info__set_alt(d, fd) == -EINVAL);
	close(fd);
	dwarf_info__free(d);
	return TEST_OK;
}

static void on_alarm(int sig)
{
	static const char msg[] = "  blocked: libdw opened a FIFO the file named\n";

	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(2);
}

/* libdw never looks for the supplementary file itself: a FIFO by that name would block it */
static int test_dwz_alt_not_searched(void)
{
	char dir[] = "/tmp/ebpfprof-dwz-XXXXXX", path[64], fifo[64];
	struct src_line out[SRC_LINES_MAX];
	struct fix_addrs a = { 0 };
	struct dwarf_info *d = NULL;
	int ok = TEST_FAIL;

	if (!have(FIX "dwz/.stamp"))
		SKIP("dwz is not installed (apt-get install dwz, then make fixtures)");
	CHECK(fixture_addrs(&a) == 0);
	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/debug_inline.debug", dir);
	snprintf(fifo, sizeof(fifo), "%s/ebpfprof-fixture-alt.debug", dir);
	if (copy_path(FIX "dwz/debug_inline.debug", path) || mkfifo(fifo, 0600))
		goto out;
	signal(SIGALRM, on_alarm);
	alarm(30);
	d = open_path(path);
	if (d) {
		dwarf_info__lookup(d, a.helper_pc, out, SRC_LINES_MAX);
		dwarf_info__lookup(d, a.caller, out, SRC_LINES_MAX);
		ok = TEST_OK;
	}
	alarm(0);
	dwarf_info__free(d);
out:
	unlink(fifo);
	unlink(path);
	rmdir(dir);
	return ok;
}

/* split DWARF is not read, and its .dwo files (FIFOs here) are never opened */
static int test_split_dwarf_not_opened(void)
{
	struct src_line out[SRC_LINES_MAX];
	struct fix_addrs a = { 0 };
	struct dwarf_info *d;

	if (!have(FIX "split-fifo/debug_split"))
		SKIP("run make fixtures");
	CHECK(fixture_addrs(&a) == 0);
	signal(SIGALRM, on_alarm);
	alarm(30);
	d = open_path(FIX "split-fifo/debug_split");
	CHECK(d);
	CHECK(dwarf_info__lookup(d, a.helper_pc, out, SRC_LINES_MAX) == 0);
	alarm(0);
	dwarf_info__free(d);
	return TEST_OK;
}

/* file offset and size of section NAME, through libelf */
static int section_range(const char *path, const char *name, off_t *off, size_t *size)
{
	int fd = open(path, O_RDONLY), err = -ENOENT;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	Elf *elf;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && !elf_getshdrstrndx(elf, &shstrndx)) {
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *s;

			if (gelf_getshdr(scn, &sh) && (s = elf_strptr(elf, shstrndx, sh.sh_name)) &&
			    !strcmp(s, name)) {
				*off = sh.sh_offset;
				*size = sh.sh_size;
				err = 0;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return err;
}

static int read_all(const char *path, unsigned char **buf, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st))
		return -errno;
	*buf = malloc(st.st_size);
	*len = st.st_size;
	if (!*buf || read(fd, *buf, *len) != (ssize_t)*len) {
		free(*buf);
		*buf = NULL;
		close(fd);
		return -EIO;
	}
	close(fd);
	return 0;
}

/* opens the bytes BUF[0..LEN) through a temporary file and looks up ADDRS; must not crash */
static int probe(const unsigned char *buf, size_t len, const __u64 *addrs, int n_addrs)
{
	char path[] = "/tmp/ebpfprof-dwarf-XXXXXX";
	struct src_line out[SRC_LINES_MAX];
	struct dwarf_info *d;
	int fd = mkstemp(path), n = 0;

	if (fd < 0)
		return -errno;
	unlink(path);
	if (write(fd, buf, len) != (ssize_t)len) {
		close(fd);
		return -EIO;
	}
	d = dwarf_info__open(fd, SIZE_MAX);
	close(fd);
	for (int i = 0; d && i < n_addrs; i++) {
		int k = dwarf_info__lookup(d, addrs[i], out, SRC_LINES_MAX);

		/* whatever came out must be readable */
		for (int j = 0; j < k; j++)
			n += (out[j].function ? strlen(out[j].function) : 0) +
			     (out[j].file ? strlen(out[j].file) : 0) > 0;
	}
	dwarf_info__free(d);
	return n;
}

/* bit flips in the DWARF sections and truncations: answers may be wrong, never a crash */
static int test_corrupt_dwarf(void)
{
	static const char *const sections[] = { ".debug_info", ".debug_abbrev", ".debug_line",
						 ".debug_str", ".debug_rnglists", ".debug_aranges",
						 ".debug_line_str" };
	const char *path = FIX "debug_inline.debug";
	struct fix_addrs a = { 0 };
	unsigned char *orig = NULL, *buf;
	size_t len = 0;
	__u64 addrs[4];
	int runs = 0;

	if (!have(path))
		SKIP("run make fixtures");
	CHECK(fixture_addrs(&a) == 0);
	addrs[0] = a.caller, addrs[1] = a.plain, addrs[2] = a.helper_pc, addrs[3] = a.asm_leaf;
	CHECK(read_all(path, &orig, &len) == 0);
	buf = malloc(len);
	CHECK(buf);
	srand(42);
	for (size_t s = 0; s < sizeof(sections) / sizeof(sections[0]); s++) {
		off_t off = 0;
		size_t size = 0;

		if (section_range(path, sections[s], &off, &size) || !size ||
		    (size_t)off + size > len)
			continue;
		for (int iter = 0; iter < 60; iter++) {
			int flips = 1 + rand() % 8;

			memcpy(buf, orig, len);
			for (int f = 0; f < flips; f++)
				buf[off + rand() % size] ^= 1u << (rand() % 8);
			CHECK(probe(buf, len, addrs, 4) >= 0);
			runs++;
		}
	}
	/* anywhere: headers, section table, notes */
	for (int iter = 0; iter < 100; iter++) {
		memcpy(buf, orig, len);
		for (int f = 0; f < 4; f++)
			buf[rand() % len] ^= 1u << (rand() % 8);
		CHECK(probe(buf, len, addrs, 4) >= 0);
		runs++;
	}
	/* cut short at many points */
	for (size_t cut = 0; cut < len; cut += len / 50 + 1) {
		CHECK(probe(orig, cut, addrs, 4) >= 0);
		runs++;
	}
	free(buf);
	free(orig);
	CHECK(runs > 300);
	return TEST_OK;
}

TEST_MAIN("dwarf", TEST(test_inline_frames), TEST(test_separate_debug_file), TEST(test_no_dwarf),
	  TEST(test_cxx_linkage_name), TEST(test_dwz_alt), TEST(test_dwz_alt_not_searched),
	  TEST(test_split_dwarf_not_opened), TEST(test_corrupt_dwarf), TEST(test_budget))
