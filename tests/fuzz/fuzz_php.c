/* fuzz_php.c -- libFuzzer target: the PHP version string of a binary, and zend_functions named from a target's memory */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "lib/utf8.h"
#include "runtimes/php/php_int.h"

#define BASE 0x100000ULL	/* where the input's memory sits in the fake process */

/* the input's rest as the process's memory, a block of its exact size: ASan sees over-reads */
struct mem {
	uint8_t *p;
	size_t n;
};

static int mem_read(void *ctx, __u64 addr, void *buf, size_t len)
{
	const struct mem *m = ctx;

	if (addr < BASE || addr - BASE > m->n || len > m->n - (addr - BASE))
		return -EFAULT;
	memcpy(buf, m->p + (addr - BASE), len);
	return 0;
}

static struct mem rest(struct fuzz_in *in)
{
	struct mem m = { malloc(in->n ? in->n : 1), in->n };

	if (!m.p)
		abort();
	memcpy(m.p, in->p, in->n);
	in->n = 0;
	return m;
}

/* a binary's bytes: a version of at most 999.99, or none, never a read past them */
static void version(struct fuzz_in *in)
{
	struct mem m = rest(in);
	__u32 v = php_version__parse((const char *)m.p, m.n);

	FUZZ_CHECK(v <= 99999);
	free(m.p);
}

/*
 * A zend_function somewhere in memory, with any tag: refused, or named with
 * valid UTF-8 strings of bounded length, a file exactly for user code.
 */
static void func(struct fuzz_in *in)
{
	const struct php_layout *l = php_layout__find(fin_u8(in) & 1 ? 802 : 804);
	__u64 at = BASE + fin_uint(in, 2);
	__u32 tag = (__u32)fin_uint(in, 4);
	struct mem m = rest(in);
	struct php_mem pm = { mem_read, &m, l };
	struct php_func_info f;

	if (!php_func__read(&pm, at, tag, &f)) {
		FUZZ_CHECK(f.name && utf8__valid(f.name, strlen(f.name)) && strlen(f.name) <= 2 * 3 * 512 + 2);
		FUZZ_CHECK(f.internal == !f.file);
		FUZZ_CHECK(!f.file || (utf8__valid(f.file, strlen(f.file)) && strlen(f.file) <= 3 * 512));
		php_func_info__free(&f);
	} else {
		FUZZ_CHECK(!f.name && !f.file);
	}
	free(m.p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };

	switch (fin_u8(&in) % 2) {
	case 0: version(&in); break;
	case 1: func(&in); break;
	}
	return 0;
}
