/* v8_parse.c -- V8 objects read from process memory: strings, line ends, source positions, scope infos; every size checked */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lib/utf8.h"
#include "v8_int.h"

#define STRING_DEPTH 8			/* cons, thin and sliced strings followed this deep */
#define STRING_CHARS_MAX 1024		/* characters of a name read: longer ones are cut */
#define SOURCE_CHARS_MAX (4u << 20)	/* a script's source scanned for its lines, at most */
#define SOURCE_CHUNK 65536

static int rd(const struct v8_mem *m, __u64 addr, void *buf, size_t len)
{
	return m->read(m->ctx, addr, buf, len);
}

static int rd64(const struct v8_mem *m, __u64 addr, __u64 *v)
{
	return rd(m, addr, v, sizeof(*v));
}

int v8_mem__type(const struct v8_mem *m, __u64 obj)
{
	__u64 map;
	__u16 type;

	if (!v8_is_object(obj) || rd64(m, obj - 1, &map) || !v8_is_object(map) ||
	    rd(m, map - 1 + m->l->bpf.map_instance_type, &type, sizeof(type)))
		return -1;
	return type;
}

/* Appends CHARS[0, n) (one or two bytes each) to out as UTF-8, within its room. */
static size_t put_chars(char *out, size_t at, size_t out_size, const __u8 *chars, size_t n,
			bool two)
{
	for (size_t i = 0; i < n && at + 1 < out_size; i++) {
		__u32 c = two ? (__u32)chars[2 * i] | (__u32)chars[2 * i + 1] << 8 : chars[i];
		char enc[4];
		size_t k;

		if (!c)
			c = 0xfffd;	/* a NUL inside a name: the C string must not end there */
		if (c < 0x80) {
			enc[0] = (char)c;
			k = 1;
		} else if (c < 0x800) {
			enc[0] = (char)(0xc0 | c >> 6);
			enc[1] = (char)(0x80 | (c & 0x3f));
			k = 2;
		} else {
			if (c >= 0xd800 && c < 0xe000)
				c = 0xfffd;	/* a lone surrogate half: names are rarely outside the BMP */
			enc[0] = (char)(0xe0 | c >> 12);
			enc[1] = (char)(0x80 | ((c >> 6) & 0x3f));
			enc[2] = (char)(0x80 | (c & 0x3f));
			k = 3;
		}
		if (at + k >= out_size)
			break;
		memcpy(out + at, enc, k);
		at += k;
	}
	return at;
}

/*
 * Characters [from, from + len) of string OBJ appended to out at *at. A
 * cons string is its two halves in turn; a thin one its actual string; a
 * sliced one a range of its parent. Bounded by depth and out's room.
 */
static int string_part(const struct v8_mem *m, __u64 obj, __u32 from, __u32 len, char *out,
		       size_t *at, size_t out_size, int depth)
{
	const struct v8_layout *l = m->l;
	int type = v8_mem__type(m, obj), err;
	__s32 slen;
	__u64 a, b;
	__u8 buf[2 * STRING_CHARS_MAX];
	bool two;

	if (depth > STRING_DEPTH || type < 0 || type >= l->first_nonstring_type)
		return -EINVAL;
	if (rd(m, obj - 1 + l->string_length, &slen, sizeof(slen)) || slen < 0)
		return -EFAULT;
	if (from > (__u32)slen)
		return -EINVAL;
	if (len > (__u32)slen - from)
		len = (__u32)slen - from;
	two = (type & l->str_encoding_mask) != l->one_byte_tag;
	if ((type & l->str_repr_mask) == l->seq_tag) {
		if (len > STRING_CHARS_MAX)
			len = STRING_CHARS_MAX;
		a = obj - 1 + (two ? l->seq_two_chars : l->seq_one_chars) + (two ? 2ull : 1ull) * from;
		if (rd(m, a, buf, (two ? 2 : 1) * (size_t)len))
			return -EFAULT;
		*at = put_chars(out, *at, out_size, buf, len, two);
		return 0;
	}
	if ((type & l->str_repr_mask) == l->cons_tag) {
		__s32 first_len;

		if (rd64(m, obj - 1 + l->cons_first, &a) || rd64(m, obj - 1 + l->cons_second, &b) ||
		    rd(m, a - 1 + l->string_length, &first_len, sizeof(first_len)) || first_len < 0)
			return -EFAULT;
		if (from < (__u32)first_len) {
			__u32 n = (__u32)first_len - from < len ? (__u32)first_len - from : len;

			err = string_part(m, a, from, n, out, at, out_size, depth + 1);
			if (err || n == len)
				return err;
			return string_part(m, b, 0, len - n, out, at, out_size, depth + 1);
		}
		return string_part(m, b, from - (__u32)first_len, len, out, at, out_size, depth + 1);
	}
	if ((type & l->str_repr_mask) == l->thin_tag) {
		if (rd64(m, obj - 1 + l->thin_actual, &a))
			return -EFAULT;
		return string_part(m, a, from, len, out, at, out_size, depth + 1);
	}
	if ((type & l->str_repr_mask) == l->sliced_tag) {
		if (rd64(m, obj - 1 + l->sliced_parent, &a) || rd64(m, obj - 1 + l->sliced_offset, &b) ||
		    !v8_is_smi(b) || v8_smi(b) < 0 || v8_smi(b) > (1 << 30))
			return -EFAULT;
		return string_part(m, a, from + (__u32)v8_smi(b), len, out, at, out_size, depth + 1);
	}
	return -EINVAL;	/* external strings: their characters are outside the heap, not read */
}

int v8_mem__string(const struct v8_mem *m, __u64 obj, char *out, size_t out_size)
{
	size_t at = 0;
	int err;

	if (!out_size)
		return -EINVAL;
	out[0] = 0;
	err = string_part(m, obj, 0, STRING_CHARS_MAX, out, &at, out_size, 0);
	out[at] = 0;
	return err ? err : (int)at;
}

/* the positions of '\n' in CHARS[0, n) (one or two bytes each), from BASE on */
static int scan_lines(const __u8 *chars, size_t n, bool two, __u32 base, __u32 **ends, __u32 *cnt,
		      size_t *cap, __u32 max)
{
	for (size_t i = 0; i < n; i++) {
		__u32 c = two ? (__u32)chars[2 * i] | (__u32)chars[2 * i + 1] << 8 : chars[i];

		if (c != '\n')
			continue;
		if (*cnt >= max)
			return -E2BIG;
		if (*cnt == *cap) {
			size_t nc = *cap ? *cap * 2 : 256;
			__u32 *p = realloc(*ends, nc * sizeof(**ends));

			if (!p)
				return -ENOMEM;
			*ends = p;
			*cap = nc;
		}
		(*ends)[(*cnt)++] = base + (__u32)i;
	}
	return 0;
}

/* line ends from the source string: a sequential one (V8 flattens sources it compiles) */
static int lines_from_source(const struct v8_mem *m, __u64 src, __u32 **ends, __u32 *n, __u32 max)
{
	const struct v8_layout *l = m->l;
	int type = v8_mem__type(m, src), err = 0;
	__u8 *buf;
	size_t cap = 0;
	__s32 len;
	bool two;

	if (type < 0 || type >= l->first_nonstring_type)
		return -EINVAL;
	if ((type & l->str_repr_mask) == l->thin_tag) {
		__u64 a;

		if (rd64(m, src - 1 + l->thin_actual, &a))
			return -EFAULT;
		src = a;
		type = v8_mem__type(m, src);
		if (type < 0 || type >= l->first_nonstring_type)
			return -EINVAL;
	}
	if ((type & l->str_repr_mask) != l->seq_tag)
		return -EINVAL;
	if (rd(m, src - 1 + l->string_length, &len, sizeof(len)) || len < 0 ||
	    (__u32)len > SOURCE_CHARS_MAX)
		return -EFBIG;
	two = (type & l->str_encoding_mask) != l->one_byte_tag;
	buf = malloc(SOURCE_CHUNK);
	if (!buf)
		return -ENOMEM;
	*ends = NULL;
	*n = 0;
	for (__u32 at = 0; at < (__u32)len && !err;) {
		__u32 k = (__u32)len - at, per = two ? SOURCE_CHUNK / 2 : SOURCE_CHUNK;
		__u64 a = src - 1 + (two ? l->seq_two_chars : l->seq_one_chars) + (two ? 2ull : 1ull) * at;

		if (k > per)
			k = per;
		err = rd(m, a, buf, (two ? 2 : 1) * (size_t)k);
		if (!err)
			err = scan_lines(buf, k, two, at, ends, n, &cap, max);
		at += k;
	}
	free(buf);
	if (err) {
		free(*ends);
		*ends = NULL;
		*n = 0;
	}
	return err;
}

int v8_mem__line_ends(const struct v8_mem *m, __u64 script, __u32 **ends, __u32 *n, __u32 max)
{
	const struct v8_layout *l = m->l;
	__u64 arr, len, *w;
	int err = 0;

	*ends = NULL;
	*n = 0;
	if (rd64(m, script - 1 + l->script_line_ends, &arr))
		return -EFAULT;
	if (v8_mem__type(m, arr) != l->type_fixed_array) {
		__u64 src;

		if (rd64(m, script - 1 + l->script_source, &src))
			return -EFAULT;
		return lines_from_source(m, src, ends, n, max);
	}
	if (rd64(m, arr - 1 + l->fixed_length, &len) || !v8_is_smi(len) || v8_smi(len) < 0 ||
	    v8_smi(len) > max)
		return -EFBIG;
	if (!v8_smi(len))
		return 0;
	w = malloc((size_t)v8_smi(len) * 8);
	*ends = malloc((size_t)v8_smi(len) * sizeof(**ends));
	if (!w || !*ends) {
		err = -ENOMEM;
		goto out;
	}
	err = rd(m, arr - 1 + l->fixed_data, w, (size_t)v8_smi(len) * 8);
	for (__s64 i = 0; !err && i < v8_smi(len); i++) {
		if (!v8_is_smi(w[i]) || v8_smi(w[i]) < 0 || (i && v8_smi(w[i]) < (*ends)[i - 1]))
			err = -EINVAL;	/* not line ends: increasing positions */
		else
			(*ends)[i] = (__u32)v8_smi(w[i]);
	}
	if (!err)
		*n = (__u32)v8_smi(len);
out:
	free(w);
	if (err) {
		free(*ends);
		*ends = NULL;
	}
	return err;
}

/* one VLQ (7 bits a byte, low first, the top bit says more follow), zigzag signed */
static int vlq(const __u8 *tab, size_t len, size_t *at, __s64 *v)
{
	__u64 u = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		__u8 b;

		if (*at >= len)
			return -1;
		b = tab[(*at)++];
		u |= (__u64)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = (__s64)(u >> 1) ^ -(__s64)(u & 1);
			return 0;
		}
	}
	return -1;
}

__s64 v8_positions__find(const __u8 *tab, size_t len, __u32 offset)
{
	__s64 code = -1, pos = 0, found = -1, dc, dp;
	size_t at = 0;

	while (at < len) {
		if (vlq(tab, len, &at, &dc) || vlq(tab, len, &at, &dp))
			return -1;
		/* offsets and positions are ints in V8: a larger delta is not a table */
		if (dc > INT32_MAX || dc < -(__s64)INT32_MAX || dp > INT32_MAX || dp < -(__s64)INT32_MAX)
			return -1;
		/* an expression's delta is stored as -delta - 1 */
		code += dc >= 0 ? dc : -dc - 1;
		pos += dp;
		if (code > (__s64)offset)
			break;
		found = pos;
	}
	if (found < 0)
		return -1;
	/* a SourcePosition: bit 0 says external, the script offset is the next 30 bits */
	if (found & 1)
		return -1;
	return (found >> 1) & ((1 << 30) - 1);
}

__u32 v8_lines__find(const __u32 *ends, __u32 n, __s64 pos)
{
	__u32 lo = 0, hi = n;

	if (pos < 0)
		return 0;
	/* the first line end at or after pos: its index is the line, 0-based */
	while (lo < hi) {
		__u32 mid = lo + (hi - lo) / 2;

		if (ends[mid] < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo + 1;
}

int v8_scope_info__names(const struct v8_layout *l, const __u64 *w, size_t n)
{
	size_t i = l->scopeinfo_first_vars;
	__s64 locals;

	if (l->scopeinfo_ncontextlocals >= n || !v8_is_smi(w[l->scopeinfo_ncontextlocals]))
		return -ENOENT;
	locals = v8_smi(w[l->scopeinfo_ncontextlocals]);
	/* past 75 names V8 keeps them in a table of their own; only a few words are read anyway */
	if (locals < 0 || locals > 64)
		return -ENOENT;
	i += 2 * (size_t)locals;
	return i < n ? (int)i : -ENOENT;
}
