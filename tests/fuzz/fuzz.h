/* fuzz.h -- helpers shared by the libFuzzer targets: a cursor over the input and a checked assertion */
#ifndef EBPFPROF_FUZZ_H
#define EBPFPROF_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

#endif /* EBPFPROF_FUZZ_H */
