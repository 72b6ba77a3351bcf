/* python_layout.c -- CPython 3.8-3.12 struct offsets (from each version's headers), 3.13 from _Py_DebugOffsets */
#include <errno.h>
#include <string.h>
#include "python_int.h"

/*
 * Measured with offsetof() against the headers of each release
 * (Include/internal, Py_BUILD_CORE); tests/unit/runtimes/test_python.c (layout_headers)
 * measures them again against the headers installed on the machine. They are
 * stable within a minor release; the process check in python.c (tstate->interp
 * points back at the interpreter) refuses a build that moved them.
 */
#define BPF_OBJ(rt, ih, tsid, fr, lasti)                                              \
	{ .kind = PY_FRAMES_OBJECT, .rt_interp_head = rt, .interp_tstate_head = ih,   \
	  .ts_next = 8, .ts_thread_id = tsid, .ts_frame = fr,                         \
	  .cframe_frame = PY_NO_OFFSET, .fr_code = 32, .fr_previous = 24,             \
	  .fr_instr = lasti, .fr_entry = 0, .co_firstlineno = 40, .co_name = 112,     \
	  .str_hash = STR_HASH }

/*
 * co_version sits 6 ints after co_firstlineno in 3.12 and 3.13 (the
 * _PyCode_DEF run co_firstlineno, co_nlocalsplus, co_framesize, co_nlocals,
 * co_ncellvars, co_nfreevars, co_version); _Py_DebugOffsets of 3.13 does not
 * give it. The unit test measures it against the installed headers.
 */
#define CO_VERSION_WORD 6
/* PyASCIIObject.hash, after ob_refcnt, ob_type and length, in every version we read */
#define STR_HASH 24

static const struct py_layout table[] = {
	{ .version = 0x0308, .bpf = BPF_OBJ(32, 8, 176, 24, 104),
	  .co_name = 112, .co_filename = 104, .co_linetable = 120, .ts_interp = 16,
	  .unicode_ascii_size = 48, .unicode_compact_size = 72, .lines = PY_LINES_LNOTAB },
	{ .version = 0x0309, .bpf = BPF_OBJ(32, 8, 176, 24, 104),
	  .co_name = 112, .co_filename = 104, .co_linetable = 120, .ts_interp = 16,
	  .unicode_ascii_size = 48, .unicode_compact_size = 72, .lines = PY_LINES_LNOTAB },
	{ .version = 0x030a, .bpf = BPF_OBJ(32, 8, 176, 24, 96),
	  .co_name = 112, .co_filename = 104, .co_linetable = 120, .ts_interp = 16,
	  .unicode_ascii_size = 48, .unicode_compact_size = 72, .lines = PY_LINES_310 },
	{ .version = 0x030b,
	  .bpf = { .kind = PY_FRAMES_ENTRY, .rt_interp_head = 40, .interp_tstate_head = 16,
		   .ts_next = 8, .ts_thread_id = 152, .ts_frame = 56, .cframe_frame = 8,
		   .fr_code = 32, .fr_previous = 48, .fr_instr = 56, .fr_entry = 68,
		   .co_firstlineno = 72, .co_name = 120, .str_hash = STR_HASH },
	  .co_name = 120, .co_qualname = 128, .co_filename = 112, .co_linetable = 136,
	  .co_code_adaptive = 184, .ts_interp = 16,
	  .unicode_ascii_size = 48, .unicode_compact_size = 72, .lines = PY_LINES_311 },
	{ .version = 0x030c,
	  .bpf = { .kind = PY_FRAMES_OWNER, .rt_interp_head = 40, .interp_tstate_head = 72,
		   .ts_next = 8, .ts_thread_id = 136, .ts_frame = 56, .cframe_frame = 0,
		   .fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_entry = 70,
		   .co_firstlineno = 68, .co_version_word = CO_VERSION_WORD,
		   .co_name = PY_NO_OFFSET, .str_hash = STR_HASH },
	  .co_name = 120, .co_qualname = 128, .co_filename = 112, .co_linetable = 136,
	  .co_code_adaptive = 192, .ts_interp = 16,
	  .unicode_ascii_size = 40, .unicode_compact_size = 56, .lines = PY_LINES_311 },
};

const struct py_layout *py_layout__table(__u32 version)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].version == version)
			return &table[i];
	return NULL;
}

/* u64 indexes into _Py_DebugOffsets of 3.13 (Include/internal/pycore_runtime.h) */
enum {
	DO_VERSION = 1,
	DO_RT_INTERP_HEAD = 5,
	DO_INTERP_THREADS_HEAD = 9,
	DO_TS_NEXT = 21, DO_TS_INTERP = 22, DO_TS_CURRENT_FRAME = 23, DO_TS_THREAD_ID = 24,
	DO_FR_PREVIOUS = 29, DO_FR_EXECUTABLE = 30, DO_FR_INSTR_PTR = 31, DO_FR_OWNER = 33,
	DO_CO_FILENAME = 35, DO_CO_NAME = 36, DO_CO_QUALNAME = 37, DO_CO_LINETABLE = 38,
	DO_CO_FIRSTLINENO = 39, DO_CO_CODE_ADAPTIVE = 43,
	DO_UNICODE_ASCII_SIZE = 70,
	DO_COUNT = 71,
};

/* every offset we use must fit the u16 fields (PY_NO_OFFSET is "none") */
static int take(const __u64 *d, int i, __u16 *out)
{
	if (d[i] >= PY_NO_OFFSET)
		return -ERANGE;
	*out = (__u16)d[i];
	return 0;
}

int py_layout__from_debug_offsets(const void *buf, size_t size, struct py_layout *out)
{
	__u64 d[DO_COUNT];
	struct py_layout l = { .lines = PY_LINES_311 };
	int err = 0;

	if (size < sizeof(d) || memcmp(buf, "xdebugpy", 8))
		return -EINVAL;
	memcpy(d, buf, sizeof(d));
	/* this struct's layout is 3.13's; 3.14 changed it: refuse what we have not read */
	if ((d[DO_VERSION] >> 16) != 0x030d)
		return -EINVAL;
	l.version = 0x030d;
	l.bpf.kind = PY_FRAMES_OWNER;
	l.bpf.cframe_frame = PY_NO_OFFSET;
	err = take(d, DO_RT_INTERP_HEAD, &l.bpf.rt_interp_head) ?:
	      take(d, DO_INTERP_THREADS_HEAD, &l.bpf.interp_tstate_head) ?:
	      take(d, DO_TS_NEXT, &l.bpf.ts_next) ?: take(d, DO_TS_INTERP, &l.ts_interp) ?:
	      take(d, DO_TS_CURRENT_FRAME, &l.bpf.ts_frame) ?:
	      take(d, DO_TS_THREAD_ID, &l.bpf.ts_thread_id) ?:
	      take(d, DO_FR_PREVIOUS, &l.bpf.fr_previous) ?:
	      take(d, DO_FR_EXECUTABLE, &l.bpf.fr_code) ?:
	      take(d, DO_FR_INSTR_PTR, &l.bpf.fr_instr) ?: take(d, DO_FR_OWNER, &l.bpf.fr_entry) ?:
	      take(d, DO_CO_FILENAME, &l.co_filename) ?: take(d, DO_CO_NAME, &l.co_name) ?:
	      take(d, DO_CO_QUALNAME, &l.co_qualname) ?:
	      take(d, DO_CO_LINETABLE, &l.co_linetable) ?:
	      take(d, DO_CO_FIRSTLINENO, &l.bpf.co_firstlineno) ?:
	      take(d, DO_CO_CODE_ADAPTIVE, &l.co_code_adaptive) ?:
	      take(d, DO_UNICODE_ASCII_SIZE, &l.unicode_ascii_size);
	if (err)
		return err;
	/* the process wrote these: each field must lie in the code object header read */
	if (l.co_filename > CODE_HEADER_MAX - 8 || l.co_name > CODE_HEADER_MAX - 8 ||
	    l.co_qualname > CODE_HEADER_MAX - 8 || l.co_linetable > CODE_HEADER_MAX - 8 ||
	    l.bpf.co_firstlineno > CODE_HEADER_MAX - PY_CODE_WORDS * 4)
		return -ERANGE;
	l.bpf.co_version_word = CO_VERSION_WORD;
	l.bpf.co_name = PY_NO_OFFSET;	/* the version tells reused code apart */
	l.bpf.str_hash = STR_HASH;
	/* PyCompactUnicodeObject adds utf8_length and utf8 to PyASCIIObject (3.12+) */
	l.unicode_compact_size = l.unicode_ascii_size + 16;
	*out = l;
	return 0;
}
