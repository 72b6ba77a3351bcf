/* test_static_tls.c -- unit tests for static_tls__exe_block: glibc's place for an executable's TLS block */
#include <errno.h>
#include "runtimes/static_tls.h"
#include "test.h"

static GElf_Phdr tls(__u64 vaddr, __u64 memsz, __u64 align)
{
	return (GElf_Phdr){ .p_type = PT_TLS, .p_vaddr = vaddr, .p_memsz = memsz, .p_align = align };
}

/* x86-64: the block ends at the thread pointer, its size rounded up to its alignment */
static int test_variant_2(void)
{
	GElf_Phdr t = tls(0x3fdd0, 0x30, 8);
	__s64 off;

	CHECK(static_tls__exe_block(&t, STATIC_TLS_VARIANT_2, &off) == 0 && off == -0x30);
	t = tls(0x3fdc0, 0x48, 64);
	CHECK(static_tls__exe_block(&t, STATIC_TLS_VARIANT_2, &off) == 0 && off == -0x80);
	/* a block that starts 8 bytes past its alignment starts so in memory too */
	t = tls(0x3fdc8, 0x20, 16);
	CHECK(static_tls__exe_block(&t, STATIC_TLS_VARIANT_2, &off) == 0 && off == -0x28);
	CHECK(((__u64)off & 15) == 8);
	return TEST_OK;
}

/* AArch64: the block starts after the 16-byte TCB, at the first place its alignment allows */
static int test_variant_1(void)
{
	GElf_Phdr t = tls(0x1fdd0, 0x30, 8);
	__s64 off;

	CHECK(static_tls__exe_block(&t, STATIC_TLS_VARIANT_1, &off) == 0 && off == 16);
	t = tls(0x1fdc0, 0x48, 64);
	CHECK(static_tls__exe_block(&t, STATIC_TLS_VARIANT_1, &off) == 0 && off == 64);
	t = tls(0x1fdc8, 0x20, 16);
	CHECK(static_tls__exe_block(&t, STATIC_TLS_VARIANT_1, &off) == 0 && off == 24);
	CHECK(((__u64)off & 15) == 8);
	return TEST_OK;
}

/* what a file may claim and we refuse: no block, a huge one, an alignment not a power of two */
static int test_refused(void)
{
	GElf_Phdr bad[] = { tls(0, 0, 8), tls(0, 1 << 20, 8), tls(0, 0x30, 24), tls(0, 0x30, 1 << 20) };
	__s64 off = 7;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(static_tls__exe_block(&bad[i], STATIC_TLS_VARIANT_1, &off) == -EINVAL);
		CHECK(static_tls__exe_block(&bad[i], STATIC_TLS_VARIANT_2, &off) == -EINVAL);
	}
	CHECK(off == 7);
	return TEST_OK;
}

TEST_MAIN("static_tls", { "variant_2", test_variant_2 }, { "variant_1", test_variant_1 },
	  { "refused", test_refused });
