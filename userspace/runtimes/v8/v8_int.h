/* v8_int.h -- shared by the files of runtimes/v8/: the layout read from v8dbg_* symbols, and the parsers of V8 objects */
#ifndef EBPFPROF_V8_INT_H
#define EBPFPROF_V8_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "../../../include/v8.h"
#include "v8_runtime.h"
#include "runtimes/rt_images.h"

/* What the namer needs of one V8 build, from its v8dbg_* symbols (a few from a checked table). */
struct v8_layout {
	struct v8_proc bpf;		/* offsets only; ranges are filled per process */
	__u16 sfi_script;		/* SharedFunctionInfo::script_or_debug_info */
	__u16 sfi_function_data;	/* SharedFunctionInfo::function_data */
	__u16 script_name;		/* Script::name */
	__u16 script_source;		/* Script::source */
	__u16 script_line_ends;		/* Script::line_ends: a FixedArray of Smis, or undefined until asked */
	__u16 fixed_length;		/* FixedArrayBase::length (a Smi) */
	__u16 fixed_data;		/* FixedArray's first element */
	__u16 bytecode_data;		/* BytecodeArray's first bytecode: the frame's offsets count from here - 1 */
	__u16 bytecode_positions;	/* BytecodeArray::source_position_table (table: no v8dbg symbol) */
	__u16 type_positions;		/* its type: ByteArray, or TrustedByteArray from V8 12 */
	__u16 code_bytecode;		/* Code::bytecode_or_interpreter_data (baseline code's bytecode) */
	__u16 interp_data_bytecode;	/* InterpreterData::bytecode_array (table) */
	__u16 string_length;		/* String::length (int32) */
	__u16 seq_one_chars, seq_two_chars;
	__u16 cons_first, cons_second;
	__u16 sliced_parent, sliced_offset;
	__u16 thin_actual;
	__u16 scopeinfo_first_vars;	/* v8dbg_scopeinfo_idx_first_vars: slots after the map */
	__u16 scopeinfo_ncontextlocals;
	__u16 type_script, type_scope_info, type_fixed_array, type_byte_array, type_code;
	__u16 type_interp_data;
	__u16 first_nonstring_type;
	__u16 str_repr_mask, str_encoding_mask;
	__u16 seq_tag, cons_tag, sliced_tag, thin_tag, external_tag, one_byte_tag;
	__u8 frame_types[4];		/* v8dbg_frametype_: Entry, ConstructEntry, Exit, BuiltinExit */
};

/* a Smi's value on x86-64 without pointer compression */
static inline __s64 v8_smi(__u64 w)
{
	return (__s64)w >> 32;
}

static inline bool v8_is_smi(__u64 w)
{
	return !(w & 1);
}

static inline bool v8_is_object(__u64 w)
{
	return (w & 3) == 1;
}

/*
 * Reads LEN bytes at ADDR of the process for the parsers: 0 or a negative
 * errno. A callback, so the fuzz targets and tests feed memory of their own.
 */
typedef int (*v8_read_fn)(void *ctx, __u64 addr, void *buf, size_t len);

struct v8_mem {
	v8_read_fn read;
	void *ctx;
	const struct v8_layout *l;
};

/* the instance type of the tagged object OBJ, or -1 */
int v8_mem__type(const struct v8_mem *m, __u64 obj);

/*
 * The V8 string OBJ (tagged) as UTF-8 into out (NUL-terminated, at most
 * out_size - 1 bytes; a longer string is cut). Sequential one-byte and
 * two-byte, cons, thin and sliced strings, at most a few levels deep.
 * Returns the bytes written, or a negative errno (-EINVAL: not a string or
 * one we do not read, as external strings).
 */
int v8_mem__string(const struct v8_mem *m, __u64 obj, char *out, size_t out_size);

/*
 * The line ends of a script's source: *ends (malloc'ed, at most max) the
 * position of each '\n', from its line_ends FixedArray or, when V8 has not
 * made it, from the source string itself. 0 or a negative errno.
 */
int v8_mem__line_ends(const struct v8_mem *m, __u64 script, __u32 **ends, __u32 *n, __u32 max);

/*
 * The source position for bytecode OFFSET in a source position table
 * TAB[0, len) (VLQ pairs of code offset and position deltas; a negative code
 * delta marks an expression, not a statement): the last entry at or before
 * offset. -1 when the table has none or is malformed. Bounded by len.
 */
__s64 v8_positions__find(const __u8 *tab, size_t len, __u32 offset);

/* The 1-based line holding source position POS by line ends ENDS[0, n); 0 when pos < 0. */
__u32 v8_lines__find(const __u32 *ends, __u32 n, __s64 pos);

/*
 * Where names may start in a ScopeInfo whose words after the map are W[0, n)
 * as read: past its context locals (their names and infos). The function's
 * name, or its inferred one ("Module._compile"), is the first string from
 * there on. The index, or -ENOENT.
 */
int v8_scope_info__names(const struct v8_layout *l, const __u64 *w, size_t n);

/* ---- the runtime's state, shared by v8.c (detection), v8_names.c and v8_ops.c ---- */

struct hmap;

/* One script (a file) of a process: its name and where its lines end. */
struct v8_script {
	__u64 addr;
	char *name;
	__u32 *ends;
	__u32 n_ends;
	bool lines_ok;
};

/* One function (a SharedFunctionInfo) as read from the process. */
struct v8_func {
	__u64 addr;		/* tagged */
	__u16 gen;		/* with addr, the key: see include/v8.h */
	bool ok;
	char *name;		/* "name" or "(anonymous)" */
	struct v8_script *script;	/* borrowed from the process's scripts; NULL if none */
	__u8 *positions;	/* the bytecode's source position table */
	__u32 n_positions;
	__u32 bytecode_len;
	__s64 first_pos;	/* the position of its first statement, for frames without an offset */
};

struct v8_pid {
	RT_IMAGE_HEAD;		/* img, superseded, dead: rt_images.h */
	bool waiting;		/* its JIT code range not found yet: looked at again */
	bool unknown;		/* a V8 we cannot read: counted once, native frames only */
	__u64 refreshed_ns;	/* its code ranges last looked at */
	__u64 found_ns;
	struct v8_layout layout;
	struct v8_proc proc;	/* as BPF has it */
	struct hmap *index;	/* (addr, gen) -> funcs[] id + 1 */
	struct v8_func *funcs;
	size_t n_funcs, cap_funcs;
	struct v8_script **scripts;
	size_t n_scripts, cap_scripts;
};

struct v8_rt {
	struct runtime_opts o;
	struct rt_images pids;
	__u64 next_retry_ns;
	struct v8_stats stats;
};

/* The one place an image's cache is found (rt_images__find); NULL if none. */
struct v8_pid *v8__find_image(struct v8_rt *r, const struct proc_image *img);
/* Frees state H of runtime RT (an rt_image_fn), counting out what its functions and scripts held */
void v8__free_pid(void *rt, struct rt_image *h);

/* detection (v8.c): runtime_ops.add_image, retry and sweep, the ops themselves (RT: a struct v8_rt) */
int v8__add_image(void *rt, const struct proc_image *img);
void v8__retry(void *rt);
void v8__sweep(void *rt);

/* names (v8_names.c): runtime_ops.event, frame and mark; a cached function's memory */
void v8__event(void *rt, const struct rt_event *e);
int v8__frame(void *rt, const struct proc_image *img, __u64 a, __u64 b, struct src_line *out, int max,
	      __u64 *loc);
const char *v8__mark(void *rt, __u64 slot);
size_t v8_func__bytes(const struct v8_func *f);
void v8_func__free(struct v8_func *f);

#endif /* EBPFPROF_V8_INT_H */
