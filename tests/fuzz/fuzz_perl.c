/* fuzz_perl.c -- libFuzzer target: Perl subs (CV, GV, stash, HEKs) and file names, all read from a target's memory */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "runtimes/perl/perl_int.h"

/* printable, NUL-terminated within its buffer */
static void check_str(const char *s, size_t size)
{
	size_t n = strnlen(s, size);

	FUZZ_CHECK(n < size);
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK((unsigned char)s[i] >= 0x20 && s[i] != 0x7f);
}

/* a sub: a name that fits, "Package::sub", and a file, or refused */
static void sub(struct fuzz_in *in)
{
	size_t name_size = 1 + fin_u8(in), file_size = 1 + fin_u8(in);
	__u64 cv = FUZZ_MEM_BASE + fin_uint(in, 2);
	__u32 gen = (__u32)fin_uint(in, 4);
	struct fuzz_mem m = fuzz_mem_rest(in);
	struct perl_mem pm = { fuzz_mem_read, &m, perl_layout__of(36) };
	char *name = malloc(name_size), *file = malloc(file_size);

	if (!name || !file)
		abort();
	if (!perl_mem__sub(&pm, cv, gen, name, name_size, file, file_size)) {
		check_str(name, name_size);
		check_str(file, file_size);
	}
	free(name);
	free(file);
	free(m.p);
}

/* a file name: printable, NUL-terminated, within the buffer, or refused */
static void string(struct fuzz_in *in)
{
	size_t size = 1 + fin_u8(in);
	__u64 addr = FUZZ_MEM_BASE + fin_uint(in, 2);
	struct fuzz_mem m = fuzz_mem_rest(in);
	struct perl_mem pm = { fuzz_mem_read, &m, perl_layout__of(40) };
	char *out = malloc(size);

	if (!out)
		abort();
	if (!perl_mem__string(&pm, addr, out, size)) {
		check_str(out, size);
		FUZZ_CHECK(out[0]);
	}
	free(out);
	free(m.p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };

	if (fin_u8(&in) % 2)
		sub(&in);
	else
		string(&in);
	return 0;
}
