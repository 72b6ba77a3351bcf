/* pbread.h -- a bounded protobuf field reader over untrusted bytes: varints and fields of a slice */
#ifndef EBPFPROF_PBREAD_H
#define EBPFPROF_PBREAD_H

#include <linux/types.h>

/* a slice of the input; reads never go past end */
struct pb_span {
	const unsigned char *p;
	const unsigned char *end;
};

/* The varint at s->p, s advanced past it: 0, or -EBADMSG when it runs past end or 10 bytes. */
int pbread__varint(struct pb_span *s, __u64 *v);

/*
 * The next field of s: its number, wire type, and a varint's value or a
 * length-delimited field's bytes in *sub (and its length in *v). Fixed-size
 * fields are skipped (*v = 0), groups are refused: -EBADMSG.
 */
int pbread__field(struct pb_span *s, __u32 *num, int *wire, __u64 *v, struct pb_span *sub);

#endif /* EBPFPROF_PBREAD_H */
