/* python_int.h -- shared by the files of runtimes/python/: layouts, line tables, strings of process memory */
#ifndef EBPFPROF_PYTHON_INT_H
#define EBPFPROF_PYTHON_INT_H

#include <stddef.h>
#include <linux/types.h>
#include "../../../include/python.h"

/* how a version maps instruction offsets to lines */
enum py_lines_format {
	PY_LINES_LNOTAB = 1,	/* 3.8-3.9 co_lnotab: (byte delta, line delta) pairs, offsets in bytes */
	PY_LINES_310 = 2,	/* 3.10 co_linetable: (byte delta, line delta) ranges, -128: no line */
	PY_LINES_311 = 3,	/* 3.11+ co_linetable: location entries in code units */
};

/* Everything version-specific: the BPF walk's offsets and the namer's. */
struct py_layout {
	__u32 version;		/* 0x0308 .. 0x030d */
	struct py_proc bpf;	/* offsets only; addresses are filled per process */
	__u16 co_name;
	__u16 co_qualname;	/* 0: none before 3.11 */
	__u16 co_filename;
	__u16 co_linetable;	/* co_lnotab before 3.10 */
	__u16 co_code_adaptive;	/* 0 before 3.11 */
	__u16 ts_interp;	/* PyThreadState.interp: the check of a layout against a process */
	__u16 unicode_ascii_size;	/* sizeof(PyASCIIObject): compact ASCII data follows */
	__u16 unicode_compact_size;	/* sizeof(PyCompactUnicodeObject): other compact data follows */
	__u32 lines;		/* enum py_lines_format */
};

/* The table's layout of version (PY_VERSION_HEX >> 16) for 3.8-3.12, or NULL. */
const struct py_layout *py_layout__table(__u32 version);

/*
 * Fills *out from the _Py_DebugOffsets at the start of _PyRuntime (3.13):
 * buf holds size bytes read there. -EINVAL: not the cookie or a layout we do
 * not know (a version after 3.13 is not guessed), -ERANGE: an offset too large.
 */
int py_layout__from_debug_offsets(const void *buf, size_t size, struct py_layout *out);

/* bytes of a code object we read: every field we use lies below (checked for 3.13's offsets) */
#define CODE_HEADER_MAX 512

/* bytes of _Py_DebugOffsets we read (up to its unicode_object part) */
#define PY_DEBUG_OFFSETS_SIZE (71 * 8)

/*
 * The line of the instruction at offset (bytes from the first instruction)
 * in a code object whose line table is tab[0, len) and first line first.
 * 0 when the table says no line or is malformed. Bounded by len.
 */
__u32 py_lines__find(enum py_lines_format fmt, const __u8 *tab, size_t len, int first,
		     __u32 offset);

/*
 * A str object read from a process (buf holds size bytes from its address) as
 * UTF-8 in out (NUL-terminated, cut at out_size). -EINVAL: not a compact
 * ready string or its length exceeds what was read.
 */
int py_unicode__utf8(const __u8 *buf, size_t size, const struct py_layout *l, char *out,
		     size_t out_size);

#endif /* EBPFPROF_PYTHON_INT_H */
