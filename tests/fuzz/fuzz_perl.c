/* fuzz_perl.c -- libFuzzer target: Perl subs (CV, GV, stash, HEKs) and file names, all read from a target's memory */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "runtimes/perl/perl_int.h"

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
	__u64 cv = BASE + fin_uint(in, 2);
	__u32 gen = (__u32)fin_uint(in, 4);
	struct mem m = rest(in);
	struct perl_mem pm = { mem_read, &m, perl_layout__of(36) };
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
	__u64 addr = BASE + fin_uint(in, 2);
	struct mem m = rest(in);
	struct perl_mem pm = { mem_read, &m, perl_layout__of(40) };
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
