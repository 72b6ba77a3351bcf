/* test_unwind_vdso.c -- the vDSO's table from its image in memory, and AArch64's frameless leaves by their instructions */
#include <gelf.h>
#include <stdint.h>
#include <sys/auxv.h>
#include "test.h"
#include "unwind.h"
#include "unwind/unwind_table.h"

/* this process's vDSO: its base (AT_SYSINFO_EHDR) and length from /proc/self/maps */
static int own_vdso(const void **image, size_t *len)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR), start, end;
	char line[256];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	if (!f || !base)
		return found;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &start, &end) == 2 &&
			start == base;
	fclose(f);
	*image = (const void *)base;
	*len = found ? end - start : 0;
	return found;
}

/* the st_value of the dynamic symbol NAME in the image; 0 if none */
static __u64 symbol(const void *image, size_t len, const char *name)
{
	Elf *elf = elf_memory((char *)image, len);
	Elf_Scn *scn = NULL;
	__u64 value = 0;

	while (elf && !value && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < d->d_size / sh.sh_entsize; i++) {
			GElf_Sym s;

			if (gelf_getsym(d, (int)i, &s) &&
			    !strcmp(elf_strptr(elf, sh.sh_link, s.st_name), name))
				value = s.st_value;
		}
	}
	elf_end(elf);
	return value;
}

/*
 * x86-64's vDSO carries .eh_frame: its clock_gettime's first instruction
 * has the CFA 8 above rsp, its return address pushed by the call.
 */
static int test_own_vdso(void)
{
	const void *image;
	const struct unwind_row *r;
	struct unwind_table *t;
	size_t len, n;
	__u64 fn;

	elf_version(EV_CURRENT);
	if (!own_vdso(&image, &len))
		SKIP("no [vdso] at AT_SYSINFO_EHDR");
#if defined(__aarch64__)
	fn = symbol(image, len, "__kernel_clock_gettime");
#else
	fn = symbol(image, len, "__vdso_clock_gettime");
#endif
	CHECK(fn);
	t = unwind_table__from_image(image, len);
	CHECK(t);
	unwind_table__rows(t, &n);
	r = unwind_table__find(t, fn);
	fprintf(stderr, "  %zu rows from %zu bytes; at clock_gettime: type %d, cfa +%d\n", n, len,
		r ? r->cfa_type : -1, r ? r->cfa_off : 0);
	if (!r) {
		unwind_table__free(t);
		CHECK(r);
	}
#if defined(__aarch64__)
	CHECK(r->cfa_type == UNWIND_CFA_LR || r->cfa_type == UNWIND_CFA_RSP);
#else
	CHECK(r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 8);
#endif
	unwind_table__free(t);
	return TEST_OK;
}

/* a bad image: refused, never read past its length */
static int test_bad_image(void)
{
	static const unsigned char junk[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };

	elf_version(EV_CURRENT);
	CHECK(!unwind_table__from_image(junk, sizeof(junk)));
	CHECK(!unwind_table__from_image(junk, 4));
	return TEST_OK;
}

/*
 * Debian 13's arm64 kernel (6.12): __kernel_clock_gettime's first words
 * and its end (no frame: sp only read through "add x5, sp, x5" for the
 * counter's ordering), __kernel_getrandom's start (PAC and a frame
 * record), __kernel_rt_sigreturn.
 */
static const __u32 clock_gettime_words[] = {
	0x71003c1f, 0x540005e8, 0x52800022, 0x52811063, 0x1ac02042, 0x10fee664, 0x6a030043,
	0x54000640, 0xb9400086, 0x120000c3, 0x37000526, 0xd50339bf, 0xb9400482, 0x34000462,
	0xd5033fdf, 0xd53be042, 0xca020045, 0x8b2563e5, 0xf94000bf, 0x8b205085, 0xa940ac8c,
	0xa94228a5, 0x29432487, 0xeb02001f, 0xa9000025, 0x52800000, 0xd65f03c0, 0xd2800e28,
	0xd4000001, 0xd65f03c0,
};
static const __u32 getrandom_words[] = { 0xd503233f, 0xa9b87bfd, 0x910003fd, 0xa90153f3 };
/* Debian 12's arm64 kernel (6.1): a leaf that signs x30 in place and checks it before returning */
static const __u32 pac_leaf_words[] = { 0xd503233f, 0x71003c1f, 0xa9000026, 0xd50323bf, 0xd65f03c0 };
static const __u32 sigreturn_words[] = { 0xd2801168, 0xd4000001 };

static int test_a64_frameless(void)
{
	/* one instruction each, after an add that is fine alone */
	static const struct {
		__u32 w;
		bool frameless;
		const char *what;
	} one[] = {
		{ 0x91001020, true, "add x0, x1, #4" },
		{ 0xd10043ff, false, "sub sp, sp, #16" },
		{ 0x910003fd, false, "mov x29, sp" },
		{ 0xaa0103fe, false, "mov x30, x1" },
		{ 0xf94007e0, false, "ldr x0, [sp, #8]" },
		{ 0xa9bf7bfd, false, "stp x29, x30, [sp, #-16]!" },
		{ 0x94000010, false, "bl" },
		{ 0xd63f0020, false, "blr x1" },
		{ 0xeb02001f, true, "cmp x0, x2 (xzr, not sp)" },
		{ 0xf100001f, true, "cmp x0, #0" },
		{ 0x8b2563e5, true, "add x5, sp, x5 (sp read)" },
		{ 0xd65f03c0, true, "ret" },
	};

	CHECK(unwind_a64__frameless(clock_gettime_words, sizeof(clock_gettime_words)));
	CHECK(unwind_a64__frameless(pac_leaf_words, sizeof(pac_leaf_words)));
	CHECK(!unwind_a64__frameless(getrandom_words, sizeof(getrandom_words)));
	CHECK(!unwind_a64__frameless(sigreturn_words, sizeof(sigreturn_words)));
	CHECK(!unwind_a64__frameless(clock_gettime_words, 0));
	CHECK(!unwind_a64__frameless(clock_gettime_words, 6));	/* not whole instructions */
	for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
		__u32 w[2] = { 0x91001020, one[i].w };

		if (unwind_a64__frameless(w, sizeof(w)) != one[i].frameless) {
			fprintf(stderr, "  %s (%08x): frameless should be %d\n", one[i].what, one[i].w,
				one[i].frameless);
			return TEST_FAIL;
		}
	}
	return TEST_OK;
}

TEST_MAIN("unwind_vdso", TEST(test_own_vdso), TEST(test_bad_image), TEST(test_a64_frameless))
