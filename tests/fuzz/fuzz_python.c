/* fuzz_python.c -- libFuzzer target: CPython line tables, str objects and _Py_DebugOffsets, all read from a target's memory */
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "lib/utf8.h"
#include "runtimes/python/python_int.h"

/* a copy of the rest of the input in a block of its exact size, so ASan sees any over-read */
static uint8_t *rest(struct fuzz_in *in, size_t *len)
{
	uint8_t *p = malloc(in->n ? in->n : 1);

	if (!p)
		abort();
	memcpy(p, in->p, in->n);
	*len = in->n;
	in->n = 0;
	return p;
}

/* the line of an offset, every format: no read past the table, never a negative line */
static void lines(struct fuzz_in *in)
{
	enum py_lines_format fmt = 1 + fin_u8(in) % 3;
	int first = (int)(int32_t)fin_uint(in, 4);
	uint32_t offset = (uint32_t)fin_uint(in, 4);
	size_t len;
	uint8_t *tab = rest(in, &len);
	uint32_t line = py_lines__find(fmt, tab, len, first, offset);

	FUZZ_CHECK(line <= (uint32_t)INT32_MAX);
	free(tab);
}

/* a str object: valid UTF-8 that fits the buffer, or refused */
static void unicode(struct fuzz_in *in)
{
	struct py_layout l = { 0 };
	size_t out_size = 1 + fin_u8(in), len;
	uint8_t *buf;
	char *out;

	l.unicode_ascii_size = 40 + 8 * (fin_u8(in) % 2);	/* 3.12+ and older */
	l.unicode_compact_size = l.unicode_ascii_size + 16 + 8 * (fin_u8(in) % 2);
	buf = rest(in, &len);
	out = malloc(out_size);
	if (!out)
		abort();
	if (!py_unicode__utf8(buf, len, &l, out, out_size)) {
		FUZZ_CHECK(strlen(out) < out_size);
		FUZZ_CHECK(utf8__valid(out, strlen(out)));
	}
	free(out);
	free(buf);
}

/* _Py_DebugOffsets: a layout only for 3.13 with every offset in range, the code object's in its header */
static void debug_offsets(struct fuzz_in *in)
{
	struct py_layout l;
	size_t len;
	uint8_t *buf;

	buf = rest(in, &len);
	if (len >= 8 && buf[0] & 1)
		memcpy(buf, "xdebugpy", 8);	/* get past the cookie half of the time */
	if (!py_layout__from_debug_offsets(buf, len, &l)) {
		FUZZ_CHECK(l.version == 0x030d && l.bpf.kind == PY_FRAMES_OWNER);
		FUZZ_CHECK(l.bpf.ts_frame < PY_NO_OFFSET && l.bpf.fr_code < PY_NO_OFFSET &&
			   l.co_linetable < PY_NO_OFFSET && l.unicode_ascii_size < PY_NO_OFFSET);
		/* read_code reads these within the code object header it copied */
		FUZZ_CHECK(l.co_name <= CODE_HEADER_MAX - 8 && l.co_qualname <= CODE_HEADER_MAX - 8 &&
			   l.co_filename <= CODE_HEADER_MAX - 8 && l.co_linetable <= CODE_HEADER_MAX - 8 &&
			   l.bpf.co_firstlineno + PY_CODE_WORDS * 4 <= CODE_HEADER_MAX);
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };

	switch (fin_u8(&in) % 3) {
	case 0: lines(&in); break;
	case 1: unicode(&in); break;
	default: debug_offsets(&in); break;
	}
	return 0;
}
