/* java_stream.c -- HotSpot's compressed streams: UNSIGNED5 numbers, line number tables, scope descriptors */
#include <errno.h>
#include <stdint.h>
#include "java_int.h"

#define U5_H_BITS 6
#define U5_MAX_LENGTH 5

int jvm_u5__read(const __u8 *buf, size_t len, size_t *pos, bool x1, __u32 *out)
{
	/* 64 high bytes carry 6 bits each; a low byte (or the fifth) ends the number */
	const __u32 x = x1 ? 1 : 0, low = 256 - 64 - x;
	__u32 sum, b;
	int shift = U5_H_BITS;

	if (*pos >= len || buf[*pos] < x)
		return -EINVAL;
	sum = buf[(*pos)++] - x;
	if (sum < low) {
		*out = sum;
		return 0;
	}
	for (int i = 1; i < U5_MAX_LENGTH; i++) {
		if (*pos >= len || buf[*pos] < x)
			return -EINVAL;
		b = buf[(*pos)++];
		sum += (b - x) << shift;
		if (b < x + low || i == U5_MAX_LENGTH - 1)
			break;
		shift += U5_H_BITS;
	}
	*out = sum;
	return 0;
}

static int read_signed(const __u8 *buf, size_t len, size_t *pos, bool x1, __s32 *out)
{
	__u32 v;
	int err = jvm_u5__read(buf, len, pos, x1, &v);

	*out = (__s32)((v >> 1) ^ -(v & 1));
	return err;
}

/*
 * Pairs of (bci delta, line delta): one byte bci << 3 | line for small
 * non-negative ones, else 0xff and two signed numbers; 0 ends the table.
 * The line of bci is the one of the last pair at or before it.
 */
__u32 jvm_lines__find(const __u8 *tab, size_t len, bool x1, __u32 bci)
{
	__s64 cur_bci = 0, cur_line = 0, best = 0, best_bci = -1;
	__s32 d_bci, d_line;
	size_t pos = 0;

	while (pos < len && tab[pos]) {
		__u8 b = tab[pos++];

		if (b == 0xff) {
			if (read_signed(tab, len, &pos, x1, &d_bci) ||
			    read_signed(tab, len, &pos, x1, &d_line))
				break;
		} else {
			d_bci = b >> 3;
			d_line = b & 7;
		}
		cur_bci += d_bci;
		cur_line += d_line;
		/* a real table stays within u2 bytecode indices and int lines */
		if (cur_bci < 0 || cur_bci > 0xffff || cur_line < 0 || cur_line > INT32_MAX)
			break;
		if (cur_bci <= (__s64)bci && cur_bci >= best_bci) {
			best_bci = cur_bci;
			best = cur_line;
		}
	}
	return best > 0 ? (__u32)best : 0;
}

int jvm_scope__read(const __u8 *data, size_t len, __u32 off, bool x1, struct jvm_scope *out)
{
	size_t pos = off;
	__u32 sender, bci;

	if (off >= len || jvm_u5__read(data, len, &pos, x1, &sender) ||
	    jvm_u5__read(data, len, &pos, x1, &out->method_index) ||
	    jvm_u5__read(data, len, &pos, x1, &bci))
		return -EINVAL;
	out->sender = (__s32)sender;
	out->bci = (__s32)bci - 1;	/* stored plus one: InvocationEntryBci is -1 */
	return 0;
}
