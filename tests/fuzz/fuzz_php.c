/* fuzz_php.c -- libFuzzer target: the PHP version string of a binary, and zend_functions named from a target's memory */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "lib/utf8.h"
#include "runtimes/php/php_int.h"

/* a binary's bytes: a version of at most 999.99, or none, never a read past them */
static void version(struct fuzz_in *in)
{
	struct fuzz_mem m = fuzz_mem_rest(in);
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
	__u64 at = FUZZ_MEM_BASE + fin_uint(in, 2);
	__u32 tag = (__u32)fin_uint(in, 4);
	struct fuzz_mem m = fuzz_mem_rest(in);
	struct php_mem pm = { fuzz_mem_read, &m, l };
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
