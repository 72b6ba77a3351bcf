/* v8.c -- V8 processes (Node.js): detection by v8dbg_* symbols, the BPF table, the code ranges kept up to date */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "lib/clock.h"
#include "lib/hashmap.h"
#include "lib/log.h"
#include "lib/proc_mem.h"
#include "symbolize/elf_find.h"
#include "symbolize/proc_maps.h"
#include "symbolize/procfs.h"
#include "v8_int.h"

#define RETRY_NS 1000000000ULL		/* a process without JIT code yet is looked at again each second */
#define RETRY_FOR_NS (60 * RETRY_NS)	/* ... for a minute */
#define REFRESH_NS (2 * RETRY_NS)	/* the code ranges of a known process are looked at again */
#define V8_12_POSITIONS 24		/* BytecodeArray::source_position_table from V8 12 (table) */
#define V8_12_FUNCTION_DATA 8		/* SharedFunctionInfo's trusted function data from V8 12 (table) */
#define V8_12_CODE_BYTECODE 8		/* Code's deoptimization or interpreter data from V8 12 (table) */
#define V8_10_CODE_BYTECODE 16		/* Code's deoptimization data in V8 10 (table) */

/* The one place an image's cache is found (rt_images__find) */
struct v8_pid *v8__find_image(struct v8_rt *r, const struct proc_image *img)
{
	return (struct v8_pid *)rt_images__find(&r->pids, img);
}

void v8__free_pid(void *rt, struct rt_image *h)
{
	struct v8_pid *p = (struct v8_pid *)h;
	struct v8_rt *r = rt;

	for (size_t i = 0; i < p->n_funcs; i++) {
		r->stats.func_bytes -= p->funcs[i].ok ? v8_func__bytes(&p->funcs[i]) : 0;
		v8_func__free(&p->funcs[i]);
	}
	for (size_t i = 0; i < p->n_scripts; i++) {
		r->stats.func_bytes -= sizeof(*p->scripts[i]) + strlen(p->scripts[i]->name) + 1 +
				       (size_t)p->scripts[i]->n_ends * 4;
		free(p->scripts[i]->name);
		free(p->scripts[i]->ends);
		free(p->scripts[i]);
	}
	free(p->scripts);
	free(p->funcs);
	hmap__free(p->index);
	free(p);
}

/*
 * The v8dbg_* symbols we read, each an int the binary defines (some names
 * changed between versions: the first found counts). Values are read from
 * the process, after its static initializers ran.
 */
enum v8_sym {
	S_FP_FUNCTION, S_FP_CONTEXT, S_FP_CONTEXT_OLD, S_FP_BC_ARRAY, S_FP_BC_OFFSET,
	S_JSF_SHARED, S_JSF_SHARED_T,
	S_SFI_NAME, S_SFI_NAME_T, S_SFI_NAME_T2,
	S_SFI_SCRIPT, S_SFI_SCRIPT_T, S_SFI_SCRIPT_T2, S_SFI_SCRIPT_T3,
	S_SFI_DATA, S_SFI_DATA_T,
	S_MAP_TYPE,
	S_TYPE_SFI, S_TYPE_BC, S_TYPE_SCRIPT, S_TYPE_SCOPE, S_TYPE_FIXED, S_TYPE_BYTE, S_TYPE_CODE,
	S_TYPE_INTERP_DATA, S_TYPE_TRUSTED_BYTE, S_FT_ENTRY, S_FT_CENTRY, S_FT_EXIT, S_FT_BEXIT,
	S_FIRST_NONSTRING, S_REPR_MASK, S_ENC_MASK, S_SEQ_TAG, S_CONS_TAG, S_SLICED_TAG, S_THIN_TAG,
	S_EXT_TAG, S_ONE_BYTE_TAG,
	S_STR_LEN, S_SEQ1, S_SEQ2, S_CONS1, S_CONS1_T, S_CONS2, S_CONS2_T, S_SLICED_PARENT,
	S_SLICED_PARENT_T, S_SLICED_OFF, S_THIN, S_THIN_T,
	S_SCRIPT_NAME, S_SCRIPT_NAME_T, S_SCRIPT_SOURCE, S_SCRIPT_SOURCE_T, S_SCRIPT_ENDS,
	S_SCRIPT_ENDS_T,
	S_FIXED_LEN, S_FIXED_DATA, S_BC_DATA, S_CODE_BC, S_CODE_BC_T,
	S_SI_FIRST_VARS, S_SI_NCTX,
	S_BLOB, S_BLOB_SIZE, S_BLOB_CUR, S_BLOB_CUR_SIZE,
	S_COUNT
};

static const char *const sym_names[S_COUNT] = {
	[S_FP_FUNCTION] = "v8dbg_off_fp_function",
	[S_FP_CONTEXT] = "v8dbg_off_fp_context_or_frame_type",
	[S_FP_CONTEXT_OLD] = "v8dbg_off_fp_context",
	[S_FP_BC_ARRAY] = "v8dbg_off_fp_bytecode_array",
	[S_FP_BC_OFFSET] = "v8dbg_off_fp_bytecode_offset",
	[S_JSF_SHARED] = "v8dbg_class_JSFunction__shared__SharedFunctionInfo",
	[S_JSF_SHARED_T] = "v8dbg_class_JSFunction__shared__Tagged_SharedFunctionInfo_",
	[S_SFI_NAME] = "v8dbg_class_SharedFunctionInfo__name_or_scope_info__Object",
	[S_SFI_NAME_T] = "v8dbg_class_SharedFunctionInfo__name_or_scope_info__Tagged_Object_",
	[S_SFI_NAME_T2] = "v8dbg_class_SharedFunctionInfo__name_or_scope_info__Tagged_NameOrScopeInfoT_",
	[S_SFI_SCRIPT] = "v8dbg_class_SharedFunctionInfo__script_or_debug_info__HeapObject",
	[S_SFI_SCRIPT_T] = "v8dbg_class_SharedFunctionInfo__script_or_debug_info__Tagged_HeapObject_",
	[S_SFI_SCRIPT_T2] = "v8dbg_class_SharedFunctionInfo__script__Tagged_HeapObject_",
	[S_SFI_SCRIPT_T3] = "v8dbg_class_SharedFunctionInfo__script__Tagged_UnionOf_Script_Undefined__",
	[S_SFI_DATA] = "v8dbg_class_SharedFunctionInfo__function_data__Object",
	[S_SFI_DATA_T] = "v8dbg_class_SharedFunctionInfo__function_data__Tagged_Object_",
	[S_MAP_TYPE] = "v8dbg_class_Map__instance_type__uint16_t",
	[S_TYPE_SFI] = "v8dbg_type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE",
	[S_TYPE_BC] = "v8dbg_type_BytecodeArray__BYTECODE_ARRAY_TYPE",
	[S_TYPE_SCRIPT] = "v8dbg_type_Script__SCRIPT_TYPE",
	[S_TYPE_SCOPE] = "v8dbg_type_ScopeInfo__SCOPE_INFO_TYPE",
	[S_TYPE_FIXED] = "v8dbg_type_FixedArray__FIXED_ARRAY_TYPE",
	[S_TYPE_BYTE] = "v8dbg_type_ByteArray__BYTE_ARRAY_TYPE",
	[S_TYPE_CODE] = "v8dbg_type_Code__CODE_TYPE",
	[S_TYPE_INTERP_DATA] = "v8dbg_type_InterpreterData__INTERPRETER_DATA_TYPE",
	[S_TYPE_TRUSTED_BYTE] = "v8dbg_type_TrustedByteArray__TRUSTED_BYTE_ARRAY_TYPE",
	[S_FT_ENTRY] = "v8dbg_frametype_EntryFrame",
	[S_FT_CENTRY] = "v8dbg_frametype_ConstructEntryFrame",
	[S_FT_EXIT] = "v8dbg_frametype_ExitFrame",
	[S_FT_BEXIT] = "v8dbg_frametype_BuiltinExitFrame",
	[S_FIRST_NONSTRING] = "v8dbg_FirstNonstringType",
	[S_REPR_MASK] = "v8dbg_StringRepresentationMask",
	[S_ENC_MASK] = "v8dbg_StringEncodingMask",
	[S_SEQ_TAG] = "v8dbg_SeqStringTag",
	[S_CONS_TAG] = "v8dbg_ConsStringTag",
	[S_SLICED_TAG] = "v8dbg_SlicedStringTag",
	[S_THIN_TAG] = "v8dbg_ThinStringTag",
	[S_EXT_TAG] = "v8dbg_ExternalStringTag",
	[S_ONE_BYTE_TAG] = "v8dbg_OneByteStringTag",
	[S_STR_LEN] = "v8dbg_class_String__length__int32_t",
	[S_SEQ1] = "v8dbg_class_SeqOneByteString__chars__char",
	[S_SEQ2] = "v8dbg_class_SeqTwoByteString__chars__char",
	[S_CONS1] = "v8dbg_class_ConsString__first__String",
	[S_CONS1_T] = "v8dbg_class_ConsString__first__Tagged_String_",
	[S_CONS2] = "v8dbg_class_ConsString__second__String",
	[S_CONS2_T] = "v8dbg_class_ConsString__second__Tagged_String_",
	[S_SLICED_PARENT] = "v8dbg_class_SlicedString__parent__String",
	[S_SLICED_PARENT_T] = "v8dbg_class_SlicedString__parent__Tagged_String_",
	[S_SLICED_OFF] = "v8dbg_class_SlicedString__offset__SMI",
	[S_THIN] = "v8dbg_class_ThinString__actual__String",
	[S_THIN_T] = "v8dbg_class_ThinString__actual__Tagged_String_",
	[S_SCRIPT_NAME] = "v8dbg_class_Script__name__Object",
	[S_SCRIPT_NAME_T] = "v8dbg_class_Script__name__Tagged_Object_",
	[S_SCRIPT_SOURCE] = "v8dbg_class_Script__source__Object",
	[S_SCRIPT_SOURCE_T] = "v8dbg_class_Script__source__Tagged_Object_",
	[S_SCRIPT_ENDS] = "v8dbg_class_Script__line_ends__Object",
	[S_SCRIPT_ENDS_T] = "v8dbg_class_Script__line_ends__Tagged_Object_",
	[S_FIXED_LEN] = "v8dbg_class_FixedArrayBase__length__SMI",
	[S_FIXED_DATA] = "v8dbg_class_FixedArray__data__uintptr_t",
	[S_BC_DATA] = "v8dbg_class_BytecodeArray__data__uintptr_t",
	[S_CODE_BC] = "v8dbg_class_Code__bytecode_or_interpreter_data__HeapObject",
	[S_CODE_BC_T] = "v8dbg_class_Code__bytecode_or_interpreter_data__Tagged_HeapObject_",
	[S_SI_FIRST_VARS] = "v8dbg_scopeinfo_idx_first_vars",
	[S_SI_NCTX] = "v8dbg_scopeinfo_idx_ncontextlocals",
	[S_BLOB] = "v8_Default_embedded_blob_code_",
	[S_BLOB_SIZE] = "v8_Default_embedded_blob_code_size_",
	[S_BLOB_CUR] = "_ZN2v88internal12_GLOBAL__N_127current_embedded_blob_code_E",
	[S_BLOB_CUR_SIZE] = "_ZN2v88internal12_GLOBAL__N_132current_embedded_blob_code_size_E",
};

struct sym_vals {
	struct elf_found f[S_COUNT];
	__s32 v[S_COUNT];
	bool has[S_COUNT];
};

/* the first of A, B, C (enum v8_sym; -1: none) the binary has, into *out; false if none */
static bool pick(const struct sym_vals *s, int a, int b, int c, int d, __s32 *out)
{
	int k[4] = { a, b, c, d };

	for (int i = 0; i < 4; i++)
		if (k[i] >= 0 && s->has[k[i]]) {
			*out = s->v[k[i]];
			return true;
		}
	return false;
}

/* offsets and types fit their fields: a value out of range is a symbol we misread, not a layout */
static bool fits16(__s32 v)
{
	return v >= 0 && v < 0x8000;
}

/*
 * The layout from the symbols' values. Constants V8 does not export come
 * from a checked table: BytecodeArray's source position table sits after
 * its constant pool and handler table in the builds whose bytecodes start
 * at 54 (V8 10.x-11.x: Node 18, 20); InterpreterData's bytecode array is
 * its first field. Each is checked against an object's type before use.
 */
static int make_layout(const struct sym_vals *s, struct v8_layout *l)
{
	__s32 fpf, fpc, fpa, fpo, v[40];
	int n = 0;

	memset(l, 0, sizeof(*l));
	if (!pick(s, S_FP_FUNCTION, -1, -1, -1, &fpf) ||
	    !pick(s, S_FP_CONTEXT, S_FP_CONTEXT_OLD, -1, -1, &fpc) ||
	    !pick(s, S_FP_BC_ARRAY, -1, -1, -1, &fpa) || !pick(s, S_FP_BC_OFFSET, -1, -1, -1, &fpo))
		return -ENOTSUP;
	/* the frame window BPF reads: rbp - 8 * V8_FP_BELOW up to rbp */
	if (fpf % 8 || fpc % 8 || fpa % 8 || fpo % 8)
		return -ENOTSUP;
	for (int i = 0; i < 4; i++) {
		__s32 o = i == 0 ? fpf : i == 1 ? fpc : i == 2 ? fpa : fpo;

		if (o >= 0 || o < -8 * V8_FP_BELOW)
			return -ENOTSUP;
	}
	l->bpf.fp_function = (__s16)fpf;
	l->bpf.fp_context = (__s16)fpc;
	l->bpf.fp_bytecode_array = (__s16)fpa;
	l->bpf.fp_bytecode_offset = (__s16)fpo;
#define NEED(a, b, c, d) \
	(pick(s, a, b, c, d, &v[n]) && fits16(v[n]) ? (__u16)v[n++] : (n = -1000, 0))
	l->bpf.jsfunction_shared = NEED(S_JSF_SHARED, S_JSF_SHARED_T, -1, -1);
	l->bpf.sfi_name_or_scope_info = NEED(S_SFI_NAME, S_SFI_NAME_T, S_SFI_NAME_T2, -1);
	l->bpf.map_instance_type = NEED(S_MAP_TYPE, -1, -1, -1);
	l->bpf.type_sfi = NEED(S_TYPE_SFI, -1, -1, -1);
	l->bpf.type_bytecode_array = NEED(S_TYPE_BC, -1, -1, -1);
	l->sfi_script = NEED(S_SFI_SCRIPT, S_SFI_SCRIPT_T, S_SFI_SCRIPT_T2, S_SFI_SCRIPT_T3);
	l->script_name = NEED(S_SCRIPT_NAME, S_SCRIPT_NAME_T, -1, -1);
	l->script_source = NEED(S_SCRIPT_SOURCE, S_SCRIPT_SOURCE_T, -1, -1);
	l->script_line_ends = NEED(S_SCRIPT_ENDS, S_SCRIPT_ENDS_T, -1, -1);
	l->fixed_length = NEED(S_FIXED_LEN, -1, -1, -1);
	l->fixed_data = NEED(S_FIXED_DATA, -1, -1, -1);
	l->bytecode_data = NEED(S_BC_DATA, -1, -1, -1);
	l->string_length = NEED(S_STR_LEN, -1, -1, -1);
	l->seq_one_chars = NEED(S_SEQ1, -1, -1, -1);
	l->seq_two_chars = NEED(S_SEQ2, -1, -1, -1);
	l->cons_first = NEED(S_CONS1, S_CONS1_T, -1, -1);
	l->cons_second = NEED(S_CONS2, S_CONS2_T, -1, -1);
	l->sliced_parent = NEED(S_SLICED_PARENT, S_SLICED_PARENT_T, -1, -1);
	l->sliced_offset = NEED(S_SLICED_OFF, -1, -1, -1);
	l->thin_actual = NEED(S_THIN, S_THIN_T, -1, -1);
	l->scopeinfo_first_vars = NEED(S_SI_FIRST_VARS, -1, -1, -1);
	l->scopeinfo_ncontextlocals = NEED(S_SI_NCTX, -1, -1, -1);
	l->type_script = NEED(S_TYPE_SCRIPT, -1, -1, -1);
	l->type_scope_info = NEED(S_TYPE_SCOPE, -1, -1, -1);
	l->type_fixed_array = NEED(S_TYPE_FIXED, -1, -1, -1);
	l->type_byte_array = NEED(S_TYPE_BYTE, -1, -1, -1);
	l->first_nonstring_type = NEED(S_FIRST_NONSTRING, -1, -1, -1);
	l->str_repr_mask = NEED(S_REPR_MASK, -1, -1, -1);
	l->str_encoding_mask = NEED(S_ENC_MASK, -1, -1, -1);
	l->seq_tag = NEED(S_SEQ_TAG, -1, -1, -1);
	l->cons_tag = NEED(S_CONS_TAG, -1, -1, -1);
	l->sliced_tag = NEED(S_SLICED_TAG, -1, -1, -1);
	l->thin_tag = NEED(S_THIN_TAG, -1, -1, -1);
	l->one_byte_tag = NEED(S_ONE_BYTE_TAG, -1, -1, -1);
#undef NEED
	if (n < 0)
		return -ENOTSUP;
	/*
	 * Script::id, unexported, follows line_ends in every V8 from 10 to 14
	 * (table, checked in Node 18 to 26 and Debian's): part of a function's
	 * gen, so that BPF tells functions made anew at a freed one's address
	 */
	l->bpf.sfi_script = l->sfi_script;
	if (fits16(l->script_line_ends + 8))
		l->bpf.script_id = l->script_line_ends + 8;
	/* optional: baseline code's bytecode; without it such functions name without lines */
	if (pick(s, S_TYPE_CODE, -1, -1, -1, &v[0]) && fits16(v[0]) &&
	    pick(s, S_CODE_BC, S_CODE_BC_T, -1, -1, &v[1]) && fits16(v[1])) {
		l->type_code = (__u16)v[0];
		l->code_bytecode = (__u16)v[1];
	}
	/* optional: where older V8s keep a function's bytecode (newer ones: the frame says) */
	if (pick(s, S_SFI_DATA, S_SFI_DATA_T, -1, -1, &v[0]) && fits16(v[0]))
		l->sfi_function_data = (__u16)v[0];
	else if (l->bytecode_data == 64)
		l->sfi_function_data = V8_12_FUNCTION_DATA;
	/*
	 * Baseline code's bytecode, where no symbol says (table): Code's
	 * deoptimization data, at 16 in V8 10 (Node 18), its deoptimization
	 * or interpreter data at 8 from V8 12 (Node 22 on).
	 */
	if (!l->code_bytecode && (l->bytecode_data == 56 || l->bytecode_data == 64) &&
	    pick(s, S_TYPE_CODE, -1, -1, -1, &v[0]) && fits16(v[0])) {
		l->type_code = (__u16)v[0];
		l->code_bytecode = l->bytecode_data == 56 ? V8_10_CODE_BYTECODE : V8_12_CODE_BYTECODE;
	}
	for (int i = 0; i < 4; i++)
		if (pick(s, S_FT_ENTRY + i, -1, -1, -1, &v[0]) && v[0] > 0 && v[0] < 256)
			l->frame_types[i] = (__u8)v[0];
	if (pick(s, S_TYPE_INTERP_DATA, -1, -1, -1, &v[0]) && fits16(v[0])) {
		l->type_interp_data = (__u16)v[0];
		l->interp_data_bytecode = 8;
	}
	/*
	 * The source position table follows the constant pool and handler
	 * table in V8 10-11 (bytecodes at 54 or 56: Node 18, 20), a ByteArray;
	 * from V8 12 (bytecodes at 64: Node 22 on) it is the trusted object's
	 * first pointer after its length and wrapper, a TrustedByteArray.
	 */
	if (l->bytecode_data == 54 || l->bytecode_data == 56) {
		l->bytecode_positions = 32;
		l->type_positions = l->type_byte_array;
	} else if (l->bytecode_data == 64 && pick(s, S_TYPE_TRUSTED_BYTE, -1, -1, -1, &v[0]) &&
		   fits16(v[0])) {
		l->bytecode_positions = V8_12_POSITIONS;
		l->type_positions = (__u16)v[0];
	}
	return 0;
}

/* the executable or library V8 is in: the node executable, or libnode.so */
static bool candidate(const struct proc_map *m)
{
	const char *base = strrchr(m->path, '/');

	if (!m->inode || !base)
		return false;
	base++;
	return !strcmp(base, "node") || !strncmp(base, "nodejs", 6) || !strncmp(base, "libnode.so", 10);
}

/* Reads the symbols' values from the process (ints, after its static initializers ran). */
static int read_syms(struct v8_rt *r, __u32 pid, const struct proc_map *m, struct sym_vals *s,
		     __u64 *bias)
{
	struct stat st;
	__u64 vaddr;

	int fd, err = procfs__open_mapped(r->o.proc_root, pid, m, &fd, &st);

	if (err)
		return err;
	err = elf_find__symbols(fd, m->pgoff, sym_names, S_COUNT, s->f, &vaddr);
	close(fd);
	if (err)
		return err;
	if (!s->f[S_FP_FUNCTION].value)
		return -ENOTSUP;	/* node without its post-mortem metadata: a V8 we cannot read */
	*bias = m->start - vaddr;
	for (int i = 0; i < S_COUNT; i++) {
		if (!s->f[i].value || i == S_BLOB || i == S_BLOB_CUR)
			continue;
		s->has[i] = !proc_mem__read(pid, s->f[i].value + *bias, &s->v[i], sizeof(s->v[i]));
	}
	return 0;
}

static void add_range(struct v8_proc *p, __u64 lo, __u64 hi)
{
	for (__u32 i = 0; i < p->n_ranges; i++)
		if (lo >= p->range[i].low && hi <= p->range[i].high)
			return;	/* inside one we have */
	if (lo < hi && p->n_ranges < V8_MAX_RANGES)
		p->range[p->n_ranges++] = (struct v8_range){ lo, hi };
}

/*
 * The code range: V8 reserves it at start and commits JIT code inside as
 * anonymous executable pages, with the builtins' copy mapped in. The run
 * of back-to-back anonymous or V8-file mappings around an anonymous
 * executable one holds it; nothing runs code there but V8. False: none yet.
 */
static bool code_ranges(const struct proc_map *maps, size_t n, const char *file, struct v8_proc *p)
{
	bool found = false;

	for (size_t i = 0; i < n; i++) {
		size_t a = i, b = i;

		if (maps[i].perms[2] != 'x' || maps[i].inode || maps[i].path[0])
			continue;
		while (a > 0 && maps[a - 1].end == maps[a].start &&
		       ((!maps[a - 1].inode && !maps[a - 1].path[0]) || !strcmp(maps[a - 1].path, file)))
			a--;
		while (b + 1 < n && maps[b + 1].start == maps[b].end &&
		       ((!maps[b + 1].inode && !maps[b + 1].path[0]) || !strcmp(maps[b + 1].path, file)))
			b++;
		add_range(p, maps[a].start, maps[b].end);
		found = true;
		i = b;
	}
	return found;
}

/* whether an executable mapping holds addr */
static bool executable(const struct proc_map *maps, size_t n, __u64 addr)
{
	for (size_t i = 0; i < n; i++)
		if (addr >= maps[i].start && addr < maps[i].end)
			return maps[i].perms[2] == 'x';
	return false;
}

static int probe(struct v8_rt *r, __u32 pid, struct v8_layout *l, struct v8_proc *proc)
{
	struct proc_map *maps = NULL;
	struct sym_vals *s = calloc(1, sizeof(*s));
	__u64 bias = 0, cur = 0;
	size_t n = 0, i;
	int err = s ? runtime__read_maps(r->o.proc_root, pid, &maps, &n) : -ENOMEM;

	if (err)
		goto out;
	for (i = 0; i < n && !candidate(&maps[i]); i++)
		;
	if (i == n) {
		err = -ENOENT;
		goto out;
	}
#if !defined(__x86_64__)
	/* a frame's word keeps its pc in 47 bits (include/v8.h): AArch64's reach bit 47 */
	err = -ENOTSUP;
	goto out;
#endif
	/* the file's first mapping: elf_find__symbols maps its offset to a vaddr */
	while (i > 0 && !strcmp(maps[i - 1].path, maps[i].path))
		i--;
	err = read_syms(r, pid, &maps[i], s, &bias);
	if (err)
		goto out;
	err = make_layout(s, l);
	if (err)
		goto out;
	*proc = l->bpf;
	proc->n_ranges = 0;
	/* the blob's code, or (Node 18) a pointer to it: code only if an executable mapping holds it */
	if (s->f[S_BLOB].value && s->has[S_BLOB_SIZE] && s->v[S_BLOB_SIZE] > 0) {
		__u64 blob = s->f[S_BLOB].value + bias;

		if (!executable(maps, n, blob) &&
		    (proc_mem__read(pid, blob, &blob, sizeof(blob)) || !executable(maps, n, blob)))
			blob = 0;
		proc->builtins[0].low = blob;
		proc->builtins[0].high = blob ? blob + (__u32)s->v[S_BLOB_SIZE] : 0;
		add_range(proc, proc->builtins[0].low, proc->builtins[0].high);
	}
	/*
	 * The builtins' copy in the code range, where they run when V8 made
	 * one: the file mapped again at the blob's offset (V8 12 on keeps the
	 * original's address in its own pointer).
	 */
	for (size_t k = 0; proc->builtins[0].low && k < n; k++) {
		__u64 off = proc->builtins[0].low - maps[i].start + maps[i].pgoff;

		if (maps[k].start != maps[i].start && maps[k].pgoff == (off & ~0xfffULL) &&
		    !strcmp(maps[k].path, maps[i].path) &&
		    maps[k].start != (proc->builtins[0].low & ~0xfffULL)) {
			proc->builtins[1].low = maps[k].start + (off & 0xfff);
			proc->builtins[1].high = proc->builtins[1].low + (__u32)s->v[S_BLOB_SIZE];
			add_range(proc, proc->builtins[1].low, proc->builtins[1].high);
		}
	}
	if (!proc->builtins[1].low && s->f[S_BLOB_CUR].value && s->has[S_BLOB_CUR_SIZE] &&
	    s->v[S_BLOB_CUR_SIZE] > 0 &&
	    !proc_mem__read(pid, s->f[S_BLOB_CUR].value + bias, &cur, sizeof(cur)) && cur) {
		proc->builtins[1].low = cur;
		proc->builtins[1].high = cur + (__u32)s->v[S_BLOB_CUR_SIZE];
		add_range(proc, proc->builtins[1].low, proc->builtins[1].high);
	}
	if (!proc->builtins[0].low) {
		err = -ENOTSUP;	/* no builtins' range: the interpreter's frames could not be told */
		goto out;
	}
	err = code_ranges(maps, n, maps[i].path, proc) ? 0 : -EAGAIN;
out:
	proc_maps__free(maps);
	free(s);
	return err;
}

static struct v8_pid *new_pid(struct v8_rt *r, const struct proc_image *img)
{
	struct v8_pid *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->index = hmap__new();
	if (!p->index || rt_images__add(&r->pids, &p->head, img)) {
		hmap__free(p->index);
		free(p);
		return NULL;
	}
	return p;
}

static void drop_pid(struct v8_rt *r, struct v8_pid *p)
{
	rt_images__remove(&r->pids, &p->head);
	v8__free_pid(r, &p->head);
}

int v8__add_image(void *rt, const struct proc_image *img)
{
	struct v8_rt *r = rt;
	__u32 pid = img->pid;
	struct v8_pid *p = (struct v8_pid *)rt_images__current(&r->pids, pid);
	struct v8_layout l = { 0 };	/* set by probe, unless it refuses */
	struct v8_proc proc;
	int err = probe(r, pid, &l, &proc);
	bool said = false, counted = runtime__counted(p ? &p->img : NULL, p && !p->unknown, img);

	if (err == -ESRCH)
		return err;	/* gone: what it held names its samples (runtime__read_maps) */
	if (p && !proc_image__eq(&p->img, img)) {
		/* the same process told unknown before (found running, or before its exec): once */
		said = p->unknown && runtime__same_process(&p->img, img);
		/* an exec, a recycled pid: its names stay for its own samples until the second sweep */
		p->superseded = true;
		bpf_map_delete_elem(r->o.procs_fd, &pid);
		p = NULL;
	}
	if (err && err != -EAGAIN) {
		if (p && err != -ENOTSUP) {
			bpf_map_delete_elem(r->o.procs_fd, &pid);
			drop_pid(r, p);	/* the same image, its V8 unreadable now */
		}
		if (err == -ENOTSUP && !p && (p = new_pid(r, img))) {
			p->unknown = true;
			if (said)
				return err;
			r->stats.unknown_versions++;
			p_info("pid %u: a V8 whose v8dbg_* symbols we cannot use: native frames only", pid);
		}
		return err;
	}
	if (p && p->unknown) {
		drop_pid(r, p);	/* the same image, its V8 readable now */
		p = NULL;
	}
	if (p && !p->dead && !memcmp(&p->proc, &proc, sizeof(proc)) && !p->waiting)
		return 0;	/* known already: a re-read found the same */
	if (p && memcmp(&p->layout, &l, sizeof(l))) {
		drop_pid(r, p);	/* the same image, another layout: what it read is replaced */
		p = NULL;
	}
	if (!p) {
		p = new_pid(r, img);
		if (!p)
			return -ENOMEM;
		p->found_ns = (__u64)clock_ns(CLOCK_MONOTONIC);
		r->stats.procs += !counted;
	}
	p->dead = false;
	p->layout = l;
	p->proc = proc;
	/* no JIT code yet (a process just started): its builtins now, the code range later */
	p->waiting = err == -EAGAIN &&
		     (__u64)clock_ns(CLOCK_MONOTONIC) - p->found_ns < RETRY_FOR_NS;
	err = runtime__set_table(r->o.pids_fd, r->o.procs_fd, UNWIND_RT_V8, pid, &proc);
	if (!err)
		p_debug("pid %u: V8, %u code ranges, its JavaScript frames walked in BPF", pid,
			proc.n_ranges);
	return err;
}

/*
 * V8 maps new JIT code as it goes, outside the ranges first seen where it
 * has no code range reserved (Node 18): the builtins stay, the code range
 * is found again from the maps, and BPF told when it changed.
 */
static void refresh_ranges(struct v8_rt *r, struct v8_pid *p)
{
	struct v8_proc proc = p->proc;
	struct proc_map *maps = NULL;
	size_t n = 0, i;
	const char *file = NULL;

	if (proc_maps__read(r->o.proc_root, p->img.pid, &maps, &n))
		return;
	for (i = 0; i < n && !file; i++)
		if (candidate(&maps[i]))
			file = maps[i].path;
	proc.n_ranges = 0;
	for (int k = 0; k < 2; k++)
		if (proc.builtins[k].low)
			add_range(&proc, proc.builtins[k].low, proc.builtins[k].high);
	if (file && code_ranges(maps, n, file, &proc) && memcmp(&proc, &p->proc, sizeof(proc)) &&
	    !bpf_map_update_elem(r->o.procs_fd, &p->img.pid, &proc, BPF_ANY)) {
		p->proc = proc;
		r->stats.code_range_updates++;
	}
	proc_maps__free(maps);
}

void v8__retry(void *rt)
{
	struct v8_rt *r = rt;
	__u64 now = (__u64)clock_ns(CLOCK_MONOTONIC);

	if (now < r->next_retry_ns)
		return;
	r->next_retry_ns = now + RETRY_NS;
	for (size_t i = 0; i < r->pids.n; i++) {
		struct v8_pid *p = (struct v8_pid *)r->pids.all[i];
		struct proc_image img = p->img;	/* add_image may free p */

		if (p->dead || p->unknown || p->superseded)
			continue;
		if (p->waiting) {
			r->stats.code_range_waits++;
			v8__add_image(r, &img);
		} else if (now - p->refreshed_ns >= REFRESH_NS) {
			p->refreshed_ns = now;
			refresh_ranges(r, p);
		}
	}
}

/* An image ended at two sweeps in a row: its names go, with its BPF table if still its own. */
void v8__sweep(void *rt)
{
	struct v8_rt *r = rt;

	rt_images__sweep(&r->pids, r->o.proc_root, r->o.procs_fd, v8__free_pid, r);
}
