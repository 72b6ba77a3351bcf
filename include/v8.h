/* v8.h -- what userspace tells the BPF V8 frame reader (bpf/v8.bpf.h) about one Node.js process */
#ifndef EBPFPROF_V8_H
#define EBPFPROF_V8_H

#include "frametypes.h"

/*
 * Address ranges of V8's generated code: the builtins embedded in the
 * binary, their copy in the code range (short builtin calls), and the code
 * range where JIT code lives. A pc in one of them is walked by V8's frame
 * layout, not by CFI: all of it keeps rbp as the frame pointer.
 */
#define V8_MAX_RANGES 8

/* a frame's fixed slots are read as one window of words, fp - 8 * V8_FP_BELOW up */
#define V8_FP_BELOW 6
#define V8_FP_WORDS (V8_FP_BELOW + 2)	/* and the saved rbp, the return address */

struct v8_range {
	__u64 low;
	__u64 high;
};

/*
 * One process: its code ranges and the offsets the walk needs, from the
 * binary's own v8dbg_* symbols (offsets of tagged objects are from the
 * object's untagged address).
 */
struct v8_proc {
	struct v8_range range[V8_MAX_RANGES];
	struct v8_range builtins[2];	/* the embedded blob and its copy: where the interpreter runs */
	__u32 n_ranges;
	__s16 fp_function;	/* v8dbg_off_fp_function: the JSFunction, rbp-relative */
	__s16 fp_context;	/* v8dbg_off_fp_context_or_frame_type: a Context, or a type marker */
	__s16 fp_bytecode_array;	/* v8dbg_off_fp_bytecode_array */
	__s16 fp_bytecode_offset;	/* v8dbg_off_fp_bytecode_offset: a Smi */
	__u16 jsfunction_shared;	/* JSFunction::shared */
	__u16 sfi_name_or_scope_info;	/* SharedFunctionInfo::name_or_scope_info: the gen */
	__u16 map_instance_type;	/* Map::instance_type (u16); HeapObject::map is at 0 */
	__u16 type_sfi;			/* SHARED_FUNCTION_INFO_TYPE */
	__u16 type_bytecode_array;	/* BYTECODE_ARRAY_TYPE */
	__u16 sfi_script;		/* SharedFunctionInfo::script_or_debug_info */
	__u16 script_id;		/* Script::id (a Smi, unique per script); 0: not read */
	__u16 pad;
};

/*
 * A function's gen, from its name_or_scope_info word and its script's id
 * word (0 if unread). The name word alone repeats: a function made anew
 * (new Function, eval) after a collection lands where a freed one was, its
 * name and ScopeInfo at the same addresses too, as the heap replays the
 * same allocations; its script's id is new.
 */
static inline __u16 v8_gen(__u64 name_or_scope_info, __u64 script_id)
{
	return (__u16)((name_or_scope_info >> 3) ^ ((script_id >> 32) * 40503));
}

/*
 * A V8 frame takes two slots of a walked user stack (tags in frametypes.h);
 * gen (v8_gen) is 16 bits of the SharedFunctionInfo's name_or_scope_info
 * word and its script's id, so a function the GC moved, or one made, onto a
 * freed one's address is not named as it:
 * - INTERP: V8_TAG_INTERP | SharedFunctionInfo (tagged), then gen << 48 |
 *   r9 << 24 | the frame's bytecode offset slot, both as V8 keeps them
 *   (from the BytecodeArray's tagged address, its header included); r9 is
 *   the interpreter's offset register at a leaf frame, else 0;
 * - JIT: V8_TAG_JIT | SharedFunctionInfo, then gen << 48 | pc (baseline,
 *   Maglev and TurboFan code, and JavaScript builtins), V8_BASELINE set in
 *   the pc's unused bit 47 when the frame keeps a BytecodeArray as
 *   interpreted and baseline (Sparkplug) frames do, and optimised ones not;
 * - STUB: V8_TAG_STUB | frame type (v8dbg_frametype_*), then pc: an entry,
 *   exit, stub or internal frame of JIT code (those of embedded builtins are
 *   left as addresses, which the symbolizer names Builtins_*).
 * One slot: V8_TAG_LOST | enum v8_lost_reason, where the walk stopped.
 * A SharedFunctionInfo first seen is announced as V8_EVENT_SFI with its gen,
 * the BytecodeArray of an interpreted frame as V8_EVENT_BYTECODE with the
 * low 32 bits of its SharedFunctionInfo >> 3 (newer V8s do not say where a
 * function's bytecode is: the frame does).
 */
enum v8_lost_reason {
	V8_LOST_READ = 1,	/* a frame could not be read */
	V8_LOST_FRAME = 2,	/* a frame's caller is not where it should be */
};

#define V8_GEN_SHIFT 48
#define V8_BASELINE (1ULL << 47)	/* a JIT frame with a BytecodeArray: Sparkplug code */
#define V8_LEAF_SHIFT 24
#define V8_OFFSET_MASK ((1ULL << V8_LEAF_SHIFT) - 1)
#define V8_WHERE_MASK ((1ULL << V8_GEN_SHIFT) - 1)

#endif /* EBPFPROF_V8_H */
