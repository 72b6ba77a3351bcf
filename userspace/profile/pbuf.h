/* pbuf.h -- a minimal streaming protobuf encoder writing into a growable byte buffer */
#ifndef EBPFPROF_PBUF_H
#define EBPFPROF_PBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/*
 * The caller owns the struct (usually on its stack): pbuf__init() it, append
 * fields, hand data/len on, pbuf__reset() to reuse the memory and
 * pbuf__release() at the end. Errors are sticky: after the first failed
 * allocation every call is a no-op and pbuf__err() returns -ENOMEM, so an
 * encoder checks once per message rather than once per field.
 */
struct pbuf {
	unsigned char *data;
	size_t len;
	size_t cap;
	int err;
};

enum pbuf_wire {
	PBUF_VARINT = 0,
	PBUF_I64 = 1,
	PBUF_LEN = 2,
};

void pbuf__init(struct pbuf *b);
void pbuf__release(struct pbuf *b);
void pbuf__reset(struct pbuf *b);	/* len = 0, keeps the memory and the error */
int pbuf__err(const struct pbuf *b);	/* 0 or -ENOMEM */

void pbuf__append(struct pbuf *b, const void *data, size_t len);
void pbuf__varint(struct pbuf *b, __u64 v);
void pbuf__tag(struct pbuf *b, __u32 field, enum pbuf_wire wire);

/* Scalar fields; zero values are omitted, as proto3 does. */
void pbuf__uint64(struct pbuf *b, __u32 field, __u64 v);
void pbuf__int64(struct pbuf *b, __u32 field, __s64 v);
void pbuf__bool(struct pbuf *b, __u32 field, bool v);
void pbuf__fixed64(struct pbuf *b, __u32 field, __u64 v);

/* Length-delimited bytes or string; always written (repeated elements may be empty). */
void pbuf__bytes(struct pbuf *b, __u32 field, const void *data, size_t len);
void pbuf__string(struct pbuf *b, __u32 field, const char *s);

/* Packed repeated uint64 from __u32 values, and packed repeated int64; omitted when n == 0. */
void pbuf__packed_u32(struct pbuf *b, __u32 field, const __u32 *v, size_t n);
void pbuf__packed_int64(struct pbuf *b, __u32 field, const __s64 *v, size_t n);

/*
 * Embedded message: pbuf__begin() writes the tag and returns a mark to pass
 * to pbuf__end() once the message's fields are in; end inserts the length.
 */
size_t pbuf__begin(struct pbuf *b, __u32 field);
void pbuf__end(struct pbuf *b, size_t mark);

#endif /* EBPFPROF_PBUF_H */
