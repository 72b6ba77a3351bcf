/* pbread.c -- a bounded protobuf field reader over untrusted bytes: every length checked against the slice */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include "pbread.h"

int pbread__varint(struct pb_span *s, __u64 *v)
{
	__u64 out = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		if (s->p >= s->end)
			return -EBADMSG;
		out |= (__u64)(*s->p & 0x7f) << shift;
		if (!(*s->p++ & 0x80)) {
			*v = out;
			return 0;
		}
	}
	return -EBADMSG;
}

int pbread__field(struct pb_span *s, __u32 *num, int *wire, __u64 *v, struct pb_span *sub)
{
	__u64 tag;

	if (pbread__varint(s, &tag) || (tag >> 3) == 0 || (tag >> 3) > UINT32_MAX)
		return -EBADMSG;
	*num = tag >> 3;
	*wire = tag & 7;
	switch (*wire) {
	case 0:
		return pbread__varint(s, v);
	case 1:
	case 5: {
		size_t n = *wire == 1 ? 8 : 4;

		if ((size_t)(s->end - s->p) < n)
			return -EBADMSG;
		s->p += n;
		*v = 0;
		return 0;
	}
	case 2:
		if (pbread__varint(s, v) || *v > (__u64)(s->end - s->p))
			return -EBADMSG;
		sub->p = s->p;
		sub->end = s->p + *v;
		s->p += *v;
		return 0;
	default:
		return -EBADMSG;
	}
}
