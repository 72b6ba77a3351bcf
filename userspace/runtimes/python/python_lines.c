/* python_lines.c -- CPython line tables (co_lnotab, 3.10 and 3.11+ co_linetable) and str objects, read from untrusted bytes */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include "python_int.h"

/*
 * Lines are summed in 64 bits: co_firstlineno and the deltas come from the
 * target, and a line past INT32_MAX (or below 1) is no line.
 */
static __u32 line_of(__s64 line)
{
	return line > 0 && line <= INT32_MAX ? (__u32)line : 0;
}

/* 3.8-3.9: line advances by signed deltas until the byte offset passes ours */
static __u32 find_lnotab(const __u8 *tab, size_t len, __s64 line, __u32 offset)
{
	__u64 addr = 0;

	for (size_t i = 0; i + 1 < len; i += 2) {
		addr += tab[i];
		if (addr > offset)
			break;
		line += (__s8)tab[i + 1];
	}
	return line_of(line);
}

/* 3.10: each pair ends a range of bytes; -128 says the range has no line */
static __u32 find_310(const __u8 *tab, size_t len, __s64 line, __u32 offset)
{
	__u64 start, end = 0;

	for (size_t i = 0; i + 1 < len; i += 2) {
		start = end;
		end += tab[i];
		if ((__s8)tab[i + 1] != -128)
			line += (__s8)tab[i + 1];
		if (start <= offset && offset < end)
			return (__s8)tab[i + 1] == -128 ? 0 : line_of(line);
	}
	return 0;
}

/* 3.11+ varints: 6 bits a byte, low bits first, 0x40 says more follow */
static int varint(const __u8 *tab, size_t len, size_t *pos, __u32 *out)
{
	__u32 v = 0;

	for (int shift = 0; shift < 32; shift += 6) {
		if (*pos >= len)
			return -1;
		v |= (__u32)(tab[*pos] & 63) << shift;
		if (!(tab[(*pos)++] & 64)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

static int svarint(const __u8 *tab, size_t len, size_t *pos, int *out)
{
	__u32 v;

	if (varint(tab, len, pos, &v))
		return -1;
	*out = v & 1 ? -(int)(v >> 1) : (int)(v >> 1);
	return 0;
}

/*
 * 3.11+ location table: entries of 1 + (first byte & 7) code units; the
 * first byte's bits 3-6 say the form (Objects/locations.md).
 */
static __u32 find_311(const __u8 *tab, size_t len, __s64 line, __u32 offset)
{
	__u64 end = 0, unit = offset / 2;
	size_t pos = 0;

	while (pos < len) {
		__u8 b = tab[pos++];
		int code = (b >> 3) & 15, delta = 0, has_line = 1;
		__u64 start = end;
		__u32 skip;

		if (!(b & 0x80))
			return 0;	/* not at an entry's first byte: malformed */
		end += (b & 7) + 1;
		if (code == 15) {
			has_line = 0;
		} else if (code == 14) {
			if (svarint(tab, len, &pos, &delta) || varint(tab, len, &pos, &skip) ||
			    varint(tab, len, &pos, &skip) || varint(tab, len, &pos, &skip))
				return 0;
		} else if (code == 13) {
			if (svarint(tab, len, &pos, &delta))
				return 0;
		} else if (code >= 10) {
			delta = code - 10;
			pos += 2;
		} else {
			pos += 1;
		}
		line += delta;
		if (start <= unit && unit < end)
			return has_line ? line_of(line) : 0;
	}
	return 0;
}

__u32 py_lines__find(enum py_lines_format fmt, const __u8 *tab, size_t len, int first,
		     __u32 offset)
{
	if (!tab)
		return 0;
	switch (fmt) {
	case PY_LINES_LNOTAB:
		return find_lnotab(tab, len, first, offset);
	case PY_LINES_310:
		return find_310(tab, len, first, offset);
	case PY_LINES_311:
		return find_311(tab, len, first, offset);
	}
	return 0;
}

/* one code point as UTF-8; surrogates and out-of-range values become U+FFFD */
static size_t put_utf8(char *out, __u32 c)
{
	if (c >= 0x110000 || (c >= 0xd800 && c < 0xe000))
		c = 0xfffd;
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 63));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | (c >> 6 & 63));
		out[2] = (char)(0x80 | (c & 63));
		return 3;
	}
	out[0] = (char)(0xf0 | c >> 18);
	out[1] = (char)(0x80 | (c >> 12 & 63));
	out[2] = (char)(0x80 | (c >> 6 & 63));
	out[3] = (char)(0x80 | (c & 63));
	return 4;
}

/*
 * PyASCIIObject: refcnt, type, length (16), hash, then the state bit field
 * at 32: interned 2 bits, kind 3, compact 1, ascii 1. Data follows the ASCII
 * header when ascii is set, the compact header otherwise.
 */
int py_unicode__utf8(const __u8 *buf, size_t size, const struct py_layout *l, char *out,
		     size_t out_size)
{
	__u64 length;
	__u32 state, kind, hdr;
	size_t o = 0;

	if (!out_size || size < 36)
		return -EINVAL;
	memcpy(&length, buf + 16, 8);
	memcpy(&state, buf + 32, 4);
	kind = state >> 2 & 7;
	if (!(state >> 5 & 1) || (kind != 1 && kind != 2 && kind != 4))
		return -EINVAL;	/* not compact: a legacy string we do not read */
	hdr = state >> 6 & 1 ? l->unicode_ascii_size : l->unicode_compact_size;
	if (hdr > size || length > (size - hdr) / kind)
		return -EINVAL;
	for (__u64 i = 0; i < length; i++) {
		const __u8 *p = buf + hdr + i * kind;
		__u32 c = kind == 1 ? p[0] : kind == 2 ? (__u32)(p[0] | p[1] << 8)
				    : (__u32)(p[0] | p[1] << 8 | p[2] << 16 | (__u32)p[3] << 24);

		if (o + 4 >= out_size)
			break;
		o += put_utf8(out + o, c);
	}
	out[o] = 0;
	return 0;
}
