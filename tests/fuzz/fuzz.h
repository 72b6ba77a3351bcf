/* fuzz.h -- helpers shared by the libFuzzer targets: a cursor over the input and a checked assertion */
#ifndef EBPFPROF_FUZZ_H
#define EBPFPROF_FUZZ_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

/*
 * An oracle that fails aborts, so libFuzzer keeps the input like any other
 * crash. Not assert(): the targets must check with NDEBUG too. The message
 * goes where sanitizer reports go, which -close_fd_mask=2 leaves open.
 */
void __sanitizer_report_error_summary(const char *error_summary);

#define FUZZ_CHECK(cond)                                                                \
	do {                                                                            \
		if (!(cond)) {                                                          \
			__sanitizer_report_error_summary(__FILE__ ":" FUZZ_STR(__LINE__) \
							 ": fuzz check failed: " #cond); \
			abort();                                                        \
		}                                                                       \
	} while (0)
#define FUZZ_STR(x) FUZZ_STR2(x)
#define FUZZ_STR2(x) #x

/* Reads the input front to back; past its end every read is zero. */
struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t fin_u8(struct fuzz_in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

/* Up to `bytes` little-endian bytes (1..8). */
static inline uint64_t fin_uint(struct fuzz_in *in, int bytes)
{
	uint64_t v = 0;

	for (int i = 0; i < bytes; i++)
		v |= (uint64_t)fin_u8(in) << (8 * i);
	return v;
}

/*
 * A string for an API that takes C strings: a length byte (0xff: a 16-bit
 * length follows), then that many bytes (fewer at the end of the input), cut
 * at an embedded NUL and at max. The copy lives in a heap block of its exact
 * size, so ASan sees any over-read.
 */
static inline char *fin_str(struct fuzz_in *in, size_t max)
{
	size_t len = fin_u8(in), n;
	char *s;

	if (len == 0xff)
		len = fin_uint(in, 2);

	if (len > max)
		len = max;
	if (len > in->n)
		len = in->n;
	n = strnlen((const char *)in->p, len);
	s = malloc(n + 1);
	if (!s)
		abort();
	memcpy(s, in->p, n);
	s[n] = '\0';
	in->p += len;
	in->n -= len;
	return s;
}

/* where the input's memory sits in the fake process of a runtime's namer */
#define FUZZ_MEM_BASE 0x100000ULL

/* the input's rest as the process's memory, a block of its exact size: ASan sees over-reads */
struct fuzz_mem {
	uint8_t *p;
	size_t n;
};

/* a proc_mem-style reader over a struct fuzz_mem at FUZZ_MEM_BASE: -EFAULT outside it */
static inline int fuzz_mem_read(void *ctx, __u64 addr, void *buf, size_t len)
{
	const struct fuzz_mem *m = ctx;

	if (addr < FUZZ_MEM_BASE || addr - FUZZ_MEM_BASE > m->n ||
	    len > m->n - (addr - FUZZ_MEM_BASE))
		return -EFAULT;
	memcpy(buf, m->p + (addr - FUZZ_MEM_BASE), len);
	return 0;
}

/* takes the rest of the input as memory (malloc'ed: free m.p) */
static inline struct fuzz_mem fuzz_mem_rest(struct fuzz_in *in)
{
	struct fuzz_mem m = { malloc(in->n ? in->n : 1), in->n };

	if (!m.p)
		abort();
	memcpy(m.p, in->p, in->n);
	in->n = 0;
	return m;
}

#endif /* EBPFPROF_FUZZ_H */
