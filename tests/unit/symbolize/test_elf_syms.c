/* test_elf_syms.c -- symbols of the ELF fixtures (PIE, shared, static, stripped), build IDs, bad files */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "symbolize/elf_syms.h"
#include "test.h"
#include "test_files.h"

#define FIX FIXTURES_DIR

static bool have(const char *path)
{
	return access(path, R_OK) == 0;
}

/* FILE's build ID as readelf -n prints it */
static int readelf_build_id(const char *file, char *out, size_t size)
{
	char cmd[512], line[1024];
	int err = -ENOENT;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -n %s 2>/dev/null", file);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p)) {
		char *s = strstr(line, "Build ID: ");

		if (s && sscanf(s + 10, "%255s", out) == 1 && strlen(out) < size)
			err = 0;
	}
	pclose(p);
	return err;
}

/* NAME's address (from nm) and a few bytes in resolve to NAME */
static int check_named(const struct elf_syms *es, const char *file, const char *name)
{
	__u64 addr = test__nm_addr(file, name), off = ~0ULL;
	const char *got;

	CHECK(addr);
	got = elf_syms__lookup(es, addr, &off);
	if (!got || strcmp(got, name))
		fprintf(stderr, "  %s: %s at %#llx resolved to %s\n", file, name,
			(unsigned long long)addr, got ? got : "(null)");
	CHECK(got && !strcmp(got, name) && off == 0);
	got = elf_syms__lookup(es, addr + 2, &off);
	CHECK(got && !strcmp(got, name) && off == 2);
	return TEST_OK;
}

static int check_build_id(const struct elf_syms *es, const char *file)
{
	char want[256];

	CHECK(readelf_build_id(file, want, sizeof(want)) == 0);
	CHECK(!strcmp(elf_syms__build_id(es), want));
	return TEST_OK;
}

static int test_pie(void)
{
	const char *f = FIX "fixture_pie";
	struct elf_syms *es;
	__u64 leaf = test__nm_addr(f, "fixture_main_leaf"), vaddr;

	if (!have(f))
		SKIP("run make fixtures");
	es = elf_syms__load(f);
	CHECK(es);
	CHECK(check_named(es, f, "fixture_main_leaf") == TEST_OK);
	CHECK(check_named(es, f, "fixture_main_caller") == TEST_OK);
	CHECK(check_named(es, f, "main") == TEST_OK);
	CHECK(check_build_id(es, f) == TEST_OK);
	/* sizeless _init ends with .init: the PLT right after it is not _init */
	CHECK(check_named(es, f, "_init") == TEST_OK);
	CHECK(!elf_syms__lookup(es, test__nm_addr(f, "_init") + 0x30, NULL));
	/* small PIEs are linked with file offset == vaddr for text */
	CHECK(elf_syms__offset_to_vaddr(es, leaf, &vaddr) == 0 && vaddr == leaf);
	CHECK(elf_syms__offset_to_vaddr(es, 1ULL << 40, &vaddr) == -ENOENT);
	elf_syms__free(es);
	return TEST_OK;
}

static int test_shared(void)
{
	const char *f = FIX "libfixture.so";
	struct elf_syms *es;

	if (!have(f))
		SKIP("run make fixtures");
	es = elf_syms__load(f);
	CHECK(es);
	CHECK(check_named(es, f, "fixture_lib_alpha") == TEST_OK);
	CHECK(check_named(es, f, "fixture_lib_beta") == TEST_OK);
	CHECK(check_named(es, f, "fixture_lib_hidden") == TEST_OK);
	CHECK(check_build_id(es, f) == TEST_OK);
	CHECK(elf_syms__count(es) >= 4);
	CHECK(elf_syms__mem_size(es) > elf_syms__count(es) * 16);
	elf_syms__free(es);
	return TEST_OK;
}

static int test_stripped(void)
{
	const char *f = FIX "libfixture-stripped.so";
	__u64 hidden = test__nm_addr(FIX "libfixture.so", "fixture_lib_hidden"), off;
	struct elf_syms *es;
	const char *got;

	if (!have(f))
		SKIP("run make fixtures");
	CHECK(hidden);
	es = elf_syms__load(f);
	CHECK(es);
	/* nm of a stripped file has nothing to say: use the original's addresses */
	CHECK(check_named(es, FIX "libfixture.so", "fixture_lib_alpha") == TEST_OK);
	CHECK(check_named(es, FIX "libfixture.so", "fixture_lib_beta") == TEST_OK);
	/* only .symtab named it; the sized symbol before it must not swallow it */
	got = elf_syms__lookup(es, hidden + 1, &off);
	CHECK(!got || strcmp(got, "fixture_lib_hidden"));
	CHECK(check_build_id(es, f) == TEST_OK);
	elf_syms__free(es);
	return TEST_OK;
}

static int test_static(void)
{
	const char *f = FIX "fixture_static";
	__u64 leaf = test__nm_addr(f, "fixture_main_leaf"), ifunc = test__nm_addr(f, "__libc_memmove");
	struct elf_syms *es;
	const char *got;
	__u64 vaddr, off;

	if (!have(f))
		SKIP("no static fixture (glibc's libc.a missing)");
	es = elf_syms__load(f);
	CHECK(es);
	CHECK(check_named(es, f, "fixture_main_leaf") == TEST_OK);
	CHECK(check_named(es, f, "main") == TEST_OK);
	CHECK(check_build_id(es, f) == TEST_OK);
	/* non-PIE: text at 0x401000 sits at file offset 0x1000 */
	CHECK(leaf > 0x400000);
	CHECK(elf_syms__offset_to_vaddr(es, leaf - 0x400000, &vaddr) == 0 && vaddr == leaf);
	/* STT_GNU_IFUNC symbols are kept (the resolver, possibly under an alias) */
	CHECK(ifunc);
	got = elf_syms__lookup(es, ifunc, &off);
	CHECK(got && off == 0);
	elf_syms__free(es);
	return TEST_OK;
}

static int test_notes(void)
{
	/* namesz 4 "GNU", descsz 4, type 3 */
	static const unsigned char note4[] = { 4, 0, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0,
					       0xde, 0xad, 0xbe, 0xef };
	/* another note first (namesz 5 pads to 8), then the build ID */
	static const unsigned char two[] = { 5, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 'X', 'e', 'n', 0,
					     0, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0,
					     'G', 'N', 'U', 0, 0xab, 0xcd };
	/* namesz claims far more than there is */
	static const unsigned char huge[] = { 0xff, 0xff, 0xff, 0xff, 4, 0, 0, 0, 3, 0, 0, 0, 'G' };
	char hex[ELF_BUILD_ID_HEX_SIZE];

	CHECK(elf_parse_build_id_notes(note4, sizeof(note4), 4, hex, sizeof(hex)) == 0);
	CHECK(!strcmp(hex, "deadbeef"));
	CHECK(elf_parse_build_id_notes(two, sizeof(two), 4, hex, sizeof(hex)) == 0);
	CHECK(!strcmp(hex, "abcd"));
	CHECK(elf_parse_build_id_notes(note4, sizeof(note4) - 1, 4, hex, sizeof(hex)) == -EINVAL);
	CHECK(elf_parse_build_id_notes(huge, sizeof(huge), 4, hex, sizeof(hex)) == -EINVAL);
	CHECK(elf_parse_build_id_notes(note4, 11, 4, hex, sizeof(hex)) == -ENOENT);
	CHECK(elf_parse_build_id_notes(note4, sizeof(note4), 4, hex, 8) == -EINVAL);
	for (size_t i = 0; i < sizeof(two); i++)	/* every prefix stays in bounds */
		elf_parse_build_id_notes(two, i, 4, hex, sizeof(hex));
	return TEST_OK;
}

/* --- corrupt files --- */

/* writes BUF to a temporary file and reads it back as ELF; returns the result */
static struct elf_syms *load_bytes(const void *buf, size_t len)
{
	char path[] = "/tmp/ebpfprof-elf-XXXXXX";
	struct elf_syms *es;
	int fd = mkstemp(path);

	if (fd < 0)
		return NULL;
	if (write(fd, buf, len) != (ssize_t)len) {
		close(fd);
		unlink(path);
		return NULL;
	}
	unlink(path);
	es = elf_syms__read_fd(fd);
	close(fd);
	return es;
}

static Elf64_Shdr *find_shdr(char *buf, size_t len, __u32 type)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;

	if (len < sizeof(*eh) || eh->e_shoff + (__u64)eh->e_shnum * sizeof(Elf64_Shdr) > len)
		return NULL;
	for (int i = 0; i < eh->e_shnum; i++) {
		Elf64_Shdr *sh = (Elf64_Shdr *)(buf + eh->e_shoff) + i;

		if (sh->sh_type == type)
			return sh;
	}
	return NULL;
}

static int test_corrupt(void)
{
	static const char *const files[] = { FIX "libfixture.so", FIX "fixture_static" };
	struct elf_syms *es;
	size_t len;
	char *buf;

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		size_t cuts[] = { 0, 1, 16, 63, 64, 200, 0, 0, 0 };
		Elf64_Shdr *sh;

		if (!have(files[f]))
			continue;
		buf = test__slurp(files[f], &len);
		CHECK(buf);
		cuts[6] = len / 2;
		cuts[7] = len - 100;
		cuts[8] = len - 1;
		for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
			elf_syms__free(load_bytes(buf, cuts[i]));

		/* a .symtab claiming to be larger than the file */
		sh = find_shdr(buf, len, SHT_SYMTAB);
		CHECK(sh);
		sh->sh_size = (__u64)len * 16;
		es = load_bytes(buf, len);
		if (f == 1) {
			CHECK(!es);	/* static: no .dynsym to fall back on */
		} else {
			/* shared: .dynsym still names the exported functions */
			CHECK(es);
			CHECK(check_named(es, files[f], "fixture_lib_alpha") == TEST_OK);
		}
		elf_syms__free(es);
		sh->sh_size = ~0ULL / 2;
		elf_syms__free(load_bytes(buf, len));
		sh->sh_offset = ~0ULL - 16;
		elf_syms__free(load_bytes(buf, len));

		/* a string table link out of range */
		sh->sh_link = 0xffff;
		elf_syms__free(load_bytes(buf, len));

		/* section headers past the end */
		((Elf64_Ehdr *)buf)->e_shoff = len * 2;
		elf_syms__free(load_bytes(buf, len));
		free(buf);
	}

	/* random bytes, and random bytes behind a valid ELF header */
	srand(1);
	buf = malloc(65536);
	CHECK(buf);
	for (int round = 0; round < 20; round++) {
		for (size_t i = 0; i < 65536; i++)
			buf[i] = rand();
		if (round & 1)
			memcpy(buf, "\177ELF\2\1\1\0\0\0\0\0\0\0\0\0\3\0\76\0", 20);
		elf_syms__free(load_bytes(buf, 4096 + round * 3000));
	}
	free(buf);

	/* not ELF at all, and not a regular file */
	errno = 0;
	CHECK(!load_bytes("hello, world\n", 13) && errno == ENOEXEC);
	CHECK(!elf_syms__load("/nonexistent") && errno == ENOENT);
	CHECK(!elf_syms__load("/tmp") && errno);
	elf_syms__free(NULL);
	return TEST_OK;
}

/* flips random bytes of the library: every variant loads or fails, none crashes */
static int test_bit_flips(void)
{
	const char *f = FIX "libfixture.so";
	size_t len;
	char *orig, *buf;

	if (!have(f))
		SKIP("run make fixtures");
	orig = test__slurp(f, &len);
	buf = malloc(len);
	CHECK(orig && buf);
	srand(2);
	for (int round = 0; round < 100; round++) {
		memcpy(buf, orig, len);
		for (int k = 0; k < 1 + round % 20; k++)
			buf[rand() % len] ^= 1 << (rand() % 8);
		struct elf_syms *es = load_bytes(buf, len);

		if (es) {
			__u64 off, vaddr;

			elf_syms__lookup(es, 0x1137, &off);
			elf_syms__offset_to_vaddr(es, 0x1137, &vaddr);
		}
		elf_syms__free(es);
	}
	free(buf);
	free(orig);
	return TEST_OK;
}

/* a large table in no address order (the radix-sort path): every symbol still resolves */
static int test_many(void)
{
	const char *f = FIX "libmany.so";
	char line[256], name[128], type;
	unsigned long long addr;
	struct elf_syms *es;
	int n = 0, bad = 0;
	FILE *p;

	if (!have(f))
		SKIP("run make fixtures");
	es = elf_syms__load(f);
	CHECK(es);
	CHECK(elf_syms__count(es) == 20000);
	p = popen("nm --defined-only " FIX "libmany.so", "r");
	CHECK(p);
	while (fgets(line, sizeof(line), p)) {
		const char *got;
		__u64 off;

		if (sscanf(line, "%llx %c %127s", &addr, &type, name) != 3 || type != 'T')
			continue;
		n++;
		got = elf_syms__lookup(es, addr + 1, &off);
		bad += !got || strcmp(got, name) || off != 1;
	}
	pclose(p);
	elf_syms__free(es);
	CHECK(n == 20000 && bad == 0);
	return TEST_OK;
}

/*
 * A large table's names stay in the file: its memory is its symbols, not
 * their names, until names are looked up; a name read once is kept, so a
 * file truncated afterwards still names it, and a name not read yet then is
 * NULL, not garbage. Past the descriptor cap, names are copied as before.
 */
static int test_names_in_file(void)
{
	const char *f = FIX "libmany.so";
	char tmp[] = "/tmp/ebpfprof-elfsyms-XXXXXX", cmd[512];
	const char *name = "many_100";
	struct elf_syms *in_mem, *in_file, *capped;
	size_t mem_bytes, file_bytes;
	int n_other = 0;
	__u64 addr, off;
	const char *got;
	int fd;

	if (!have(f))
		SKIP("run make fixtures");
	addr = test__nm_addr(f, name);
	CHECK(addr);
	elf_syms__names_in_file((size_t)-1, 64);
	in_mem = elf_syms__load(f);
	elf_syms__names_in_file(0, 64);
	in_file = elf_syms__load(f);
	CHECK(in_mem && in_file);
	mem_bytes = elf_syms__mem_size(in_mem);
	file_bytes = elf_syms__mem_size(in_file);
	fprintf(stderr, "  %zu symbols: %zu bytes with names copied, %zu kept in the file\n",
		elf_syms__count(in_file), mem_bytes, file_bytes);
	/* 20000 names of 7 bytes and more: at least 140 KB less */
	CHECK(file_bytes + 140000 <= mem_bytes);
	got = elf_syms__lookup(in_file, addr + 1, &off);
	CHECK(got && !strcmp(got, name) && off == 1);
	CHECK(elf_syms__lookup(in_file, addr, NULL) == got);	/* kept: the same string */
	CHECK(elf_syms__mem_size(in_file) > file_bytes);
	elf_syms__free(in_file);

	/* one descriptor allowed: the second table copies its names */
	elf_syms__names_in_file(0, 1);
	in_file = elf_syms__load(f);
	capped = elf_syms__load(f);
	CHECK(in_file && capped);
	CHECK(elf_syms__mem_size(capped) == mem_bytes);
	elf_syms__free(capped);
	elf_syms__free(in_file);

	fd = mkstemp(tmp);
	CHECK(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp %s %s", f, tmp);
	CHECK(system(cmd) == 0);
	in_file = elf_syms__load(tmp);
	CHECK(in_file);
	CHECK(elf_syms__lookup(in_file, addr, NULL));	/* read before the truncation */
	CHECK(truncate(tmp, 4096) == 0);
	got = elf_syms__lookup(in_file, addr, NULL);
	CHECK(got && !strcmp(got, name));
	/* every other name is past the new end now: unnamed, never another's name or garbage */
	for (__u64 a = addr + 1; a < addr + 65536; a += 16) {
		const char *want = elf_syms__lookup(in_mem, a, NULL);

		if (!want || !strcmp(want, name))
			continue;
		n_other++;
		CHECK(!elf_syms__lookup(in_file, a, NULL));
	}
	CHECK(n_other > 100);
	elf_syms__free(in_file);
	unlink(tmp);
	elf_syms__names_in_file(64 * 1024, 64);
	elf_syms__free(in_mem);
	return TEST_OK;
}

/* a library of ~100 MB must load well under a second */
static int test_large_library(void)
{
	static const char *const candidates[] = {
		"/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1",
		"/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
		"/usr/lib/aarch64-linux-gnu/libLLVM-15.so.1",
	};
	struct timespec a, b;
	struct elf_syms *es = NULL;
	const char *f = NULL;
	double secs;

	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]) && !f; i++)
		if (have(candidates[i]))
			f = candidates[i];
	if (!f)
		SKIP("no libLLVM on this machine");
	if (getenv("RUNNING_ON_VALGRIND") || getenv("LD_PRELOAD"))
		SKIP("timing is meaningless under instrumentation");
	clock_gettime(CLOCK_MONOTONIC, &a);
	es = elf_syms__load(f);
	clock_gettime(CLOCK_MONOTONIC, &b);
	CHECK(es);
	secs = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	fprintf(stderr, "  %s: %zu symbols, %zu KiB, %.3f s\n", f, elf_syms__count(es),
		elf_syms__mem_size(es) / 1024, secs);
	CHECK(elf_syms__count(es) > 1000);
	CHECK(secs < 1.0);
	elf_syms__free(es);
	return TEST_OK;
}

TEST_MAIN("elf_syms", TEST(test_pie), TEST(test_shared), TEST(test_stripped), TEST(test_static),
	  TEST(test_notes), TEST(test_corrupt), TEST(test_bit_flips), TEST(test_many),
	  TEST(test_large_library), TEST(test_names_in_file))
