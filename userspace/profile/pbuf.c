/* pbuf.c -- a minimal streaming protobuf encoder writing into a growable byte buffer */

/*
 * Why not protobuf-c: we only ever write one message (profile.proto), and a
 * generated library would want the whole profile built a second time as its
 * own structs before packing it. Encoding field by field from our tables and
 * handing the bytes to the compressor as they come keeps memory at one copy;
 * `go tool pprof` serves as the independent decoder in the tests.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "pbuf.h"

#define VARINT_MAX 10

void pbuf__init(struct pbuf *b)
{
	memset(b, 0, sizeof(*b));
}

void pbuf__release(struct pbuf *b)
{
	free(b->data);
	pbuf__init(b);
}

void pbuf__reset(struct pbuf *b)
{
	b->len = 0;
}

int pbuf__err(const struct pbuf *b)
{
	return b->err;
}

/* Makes room for extra more bytes; false (and the sticky error) when it cannot. */
static bool room(struct pbuf *b, size_t extra)
{
	size_t cap;
	void *tmp;

	if (b->err)
		return false;
	if (extra <= b->cap - b->len)
		return true;
	if (extra > SIZE_MAX / 2 - b->len) {
		b->err = -ENOMEM;
		return false;
	}
	cap = b->cap < 256 ? 256 : b->cap * 2;
	if (cap < b->len + extra)
		cap = b->len + extra;
	tmp = realloc(b->data, cap);
	if (!tmp) {
		b->err = -ENOMEM;
		return false;
	}
	b->data = tmp;
	b->cap = cap;
	return true;
}

static size_t varint_size(__u64 v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Encodes v at out, which has room for VARINT_MAX bytes; returns the bytes used. */
static size_t put_varint(unsigned char *out, __u64 v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (unsigned char)v;
	return n;
}

void pbuf__append(struct pbuf *b, const void *data, size_t len)
{
	if (!len || !room(b, len))
		return;
	memcpy(b->data + b->len, data, len);
	b->len += len;
}

void pbuf__varint(struct pbuf *b, __u64 v)
{
	if (room(b, VARINT_MAX))
		b->len += put_varint(b->data + b->len, v);
}

void pbuf__tag(struct pbuf *b, __u32 field, enum pbuf_wire wire)
{
	pbuf__varint(b, (__u64)field << 3 | wire);
}

void pbuf__uint64(struct pbuf *b, __u32 field, __u64 v)
{
	if (!v)
		return;
	pbuf__tag(b, field, PBUF_VARINT);
	pbuf__varint(b, v);
}

void pbuf__int64(struct pbuf *b, __u32 field, __s64 v)
{
	/* int64 (not sint64): negatives are their two's complement, 10 bytes */
	pbuf__uint64(b, field, (__u64)v);
}

void pbuf__bool(struct pbuf *b, __u32 field, bool v)
{
	pbuf__uint64(b, field, v);
}

void pbuf__fixed64(struct pbuf *b, __u32 field, __u64 v)
{
	unsigned char le[8];

	if (!v)
		return;
	for (int i = 0; i < 8; i++)
		le[i] = v >> (8 * i);
	pbuf__tag(b, field, PBUF_I64);
	pbuf__append(b, le, sizeof(le));
}

void pbuf__bytes(struct pbuf *b, __u32 field, const void *data, size_t len)
{
	pbuf__tag(b, field, PBUF_LEN);
	pbuf__varint(b, len);
	pbuf__append(b, data, len);
}

void pbuf__string(struct pbuf *b, __u32 field, const char *s)
{
	pbuf__bytes(b, field, s, strlen(s));
}

void pbuf__packed_u32(struct pbuf *b, __u32 field, const __u32 *v, size_t n)
{
	size_t len = 0;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		len += varint_size(v[i]);
	pbuf__tag(b, field, PBUF_LEN);
	pbuf__varint(b, len);
	if (!room(b, len))
		return;
	for (size_t i = 0; i < n; i++)
		b->len += put_varint(b->data + b->len, v[i]);
}

void pbuf__packed_int64(struct pbuf *b, __u32 field, const __s64 *v, size_t n)
{
	size_t len = 0;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		len += varint_size((__u64)v[i]);
	pbuf__tag(b, field, PBUF_LEN);
	pbuf__varint(b, len);
	if (!room(b, len))
		return;
	for (size_t i = 0; i < n; i++)
		b->len += put_varint(b->data + b->len, (__u64)v[i]);
}

size_t pbuf__begin(struct pbuf *b, __u32 field)
{
	pbuf__tag(b, field, PBUF_LEN);
	return b->len;
}

void pbuf__end(struct pbuf *b, size_t mark)
{
	unsigned char tmp[VARINT_MAX];
	size_t len, n;

	if (b->err)
		return;
	/* the length goes in front of the body, which is shifted up to make room */
	len = b->len - mark;
	n = put_varint(tmp, len);
	if (!room(b, n))
		return;
	memmove(b->data + mark + n, b->data + mark, len);
	memcpy(b->data + mark, tmp, n);
	b->len += n;
}
