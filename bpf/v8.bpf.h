/* v8.bpf.h -- walks V8's frames (Node.js) by their frame pointers where the native walk reaches V8's code (include/v8.h) */
#ifndef EBPFPROF_V8_BPF_H
#define EBPFPROF_V8_BPF_H

#include "v8.h"
#include "walk.bpf.h"

#define V8_HEAP_TAG_MASK 3ULL		/* a tagged pointer's low bits */
#define V8_HEAP_TAG 1ULL
#define V8_SMI_SHIFT 32			/* a Smi's value on x86-64 without pointer compression */
#define V8_MAX_FRAME (1ULL << 20)	/* a frame larger than this is a broken chain */

/* pid -> its code ranges and offsets; a process not here has native frames only */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct v8_proc);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} v8_procs SEC(".maps");

static __always_inline bool v8_in(const struct v8_range *r, __u64 pc)
{
	return pc >= r->low && pc < r->high;
}

/* Whether pc is V8's generated code: builtins or the code range. */
static __always_inline bool v8_is_code(const struct v8_proc *v, __u64 pc)
{
	for (int i = 0; i < V8_MAX_RANGES; i++)
		if (i < v->n_ranges && v8_in(&v->range[i], pc))
			return true;
	return false;
}

/* The walk stops here: a marked frame says why, and the stack is truncated. Returns 1. */
static __always_inline int v8_stop(struct unwind_scratch *sc, __u64 why)
{
	walk_push_mark(sc, V8_TAG_LOST, why);
	sc->stack.flags |= USTACK_TRUNCATED;
	return 1;
}

/* the word of the frame window at rbp + off (off a multiple of 8 within the window) */
static __always_inline __u64 v8_slot(const __u64 *w, __s16 off)
{
	__u32 i = (__u32)(off + 8 * V8_FP_BELOW) >> 3;

	return w[i & 7];
}

/* the untagged object a tagged word points at, or 0 */
static __always_inline __u64 v8_object(__u64 tagged)
{
	return (tagged & V8_HEAP_TAG_MASK) == V8_HEAP_TAG ? tagged - V8_HEAP_TAG : 0;
}

/* the instance type of the object at OBJ (untagged), or 0 */
static __always_inline __u16 v8_type(const struct v8_proc *v, __u64 obj)
{
	__u64 map;
	__u16 type = 0;

	if (!obj || walk_read(&map, obj) || !v8_object(map))
		return 0;
	if (bpf_probe_read_user(&type, sizeof(type),
				(const void *)(v8_object(map) + v->map_instance_type)))
		return 0;
	return type;
}

/*
 * One frame whose pc is V8 code: all of it keeps rbp as the frame pointer,
 * and the frame's slots say what it is. Below rbp, a JavaScript frame has
 * its Context and JSFunction; any other frame a type marker (a Smi-tagged
 * int, not a pointer) where the Context would be. An interpreted frame runs
 * in the embedded builtins (the interpreter) and has its BytecodeArray and
 * bytecode offset below those. Records the frame (include/v8.h) and steps to
 * its caller. LEAF: pc is where the sample struck. A global function,
 * verified once on its own.
 */
WALK_FN long v8_step(struct unwind_scratch *sc, const struct v8_proc *v, __u32 leaf)
{
	__u64 w[V8_FP_WORDS], pc, fp, ctx, sfi, nos = 0, off, ba, ra;
	bool builtin, top, first, is_bc;
	__u16 gen;

	if (!sc || !v)
		return 1;
	pc = sc->pc;
	fp = sc->bp;
	first = !sc->stack.n;	/* the registers are the sampled ones */
	builtin = v8_in(&v->builtins[0], pc) || v8_in(&v->builtins[1], pc);
	/*
	 * A builtin the sample struck is named by its symbol (its frame, if it
	 * built one, is at rbp); but the interpreter's handlers running a
	 * function are that function's frame: folded into it.
	 */
	top = leaf && builtin;
	sc->exact_pc = 0;
	if (!fp || fp < sc->sp || fp - sc->sp > V8_MAX_FRAME) {
		if (top)
			walk_push(sc, first ? pc : pc + 1);
		return v8_stop(sc, V8_LOST_FRAME);
	}
	if (bpf_probe_read_user(w, sizeof(w), (const void *)(fp - 8 * V8_FP_BELOW))) {
		if (top)
			walk_push(sc, first ? pc : pc + 1);
		return v8_stop(sc, V8_LOST_READ);
	}
	ctx = v8_slot(w, v->fp_context);
	if (!v8_object(ctx)) {
		/* a typed frame: entry, exit, stub, internal, construct... */
		if (builtin)
			walk_push(sc, top && !first ? pc + 1 : pc);
		else
			walk_push_frame(sc, V8_TAG_STUB, ctx >> 1, pc);
		goto step;
	}
	sfi = 0;
	if (walk_read(&sfi, v8_object(v8_slot(w, v->fp_function)) + v->jsfunction_shared) ||
	    v8_type(v, v8_object(sfi)) != v->type_sfi) {
		/* not a function frame as we know it: an address, for the symbolizer to try */
		walk_push(sc, top && !first ? pc + 1 : pc);
		goto step;
	}
	walk_read(&nos, v8_object(sfi) + v->sfi_name_or_scope_info);
	gen = v8_gen(nos, 0);
	/*
	 * Its script's id, read through nos's own slot: 5.10-5.16's stepped walk
	 * has no stack left for two more words. A failed read leaves 0, as
	 * userspace takes it (v8_gen is the name word's part xor the id's).
	 */
	if (v->script_id && !walk_read(&nos, v8_object(sfi) + v->sfi_script) && v8_object(nos)) {
		walk_read(&nos, v8_object(nos) + v->script_id);
		gen ^= v8_gen(0, nos);
	}
	rt_announce(sc, V8_EVENT_SFI, sfi & FRAME_ADDR_MASK, gen);
	off = v8_slot(w, v->fp_bytecode_offset);
	ba = v8_slot(w, v->fp_bytecode_array);
	is_bc = v8_type(v, v8_object(ba)) == v->type_bytecode_array;
	/*
	 * The bytecode it runs, for its source positions, tied to the function
	 * by gen: interpreted and baseline frames keep it in the same slot.
	 */
	if (is_bc)
		rt_announce(sc, V8_EVENT_BYTECODE, ba & FRAME_ADDR_MASK, (__u32)(sfi >> 3));
	if (builtin && !(off & 1) && is_bc) {
		off = (off >> V8_SMI_SHIFT) & V8_OFFSET_MASK;
		/*
		 * The interpreter keeps the current offset in a register
		 * (kInterpreterBytecodeOffsetRegister) and stores it
		 * in the frame only at calls: at the leaf the register is the
		 * truth if the sample struck a bytecode handler. Both go to
		 * userspace, which knows the bytecode's length to tell.
		 */
		if (first && sc->v8_offset < V8_OFFSET_MASK)
			off |= sc->v8_offset << V8_LEAF_SHIFT;
		walk_push_frame(sc, V8_TAG_INTERP, sfi, (__u64)gen << V8_GEN_SHIFT | off);
	} else {
		if (top)
			walk_push(sc, first ? pc : pc + 1);
		walk_push_frame(sc, V8_TAG_JIT, sfi, (__u64)gen << V8_GEN_SHIFT |
			(pc & V8_WHERE_MASK & ~V8_BASELINE) | (is_bc ? V8_BASELINE : 0));
	}
step:
	ra = w[(V8_FP_BELOW + 1) & 7];
	if (!ra)
		return 1;	/* the outermost frame */
	if (ra >= USER_ADDR_END)
		return v8_stop(sc, V8_LOST_FRAME);
	sc->pc = ra;
	sc->sp = fp + 16;
	sc->bp = w[V8_FP_BELOW & 7];
	return 0;
}

#ifdef EBPFPROF_STEPS_WALK
WALK_STEP_STEPS(v8_step, v8_procs)
#endif

#endif /* EBPFPROF_V8_BPF_H */
