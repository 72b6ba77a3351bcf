/* java.bpf.h -- walks HotSpot's frames when the native walk reaches the code cache (include/java.h) */
#ifndef EBPFPROF_JAVA_BPF_H
#define EBPFPROF_JAVA_BPF_H

#include "java.h"
#include "walk.bpf.h"

/* pid -> its JVM's code cache and offsets; a process not here has native frames only */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct java_proc);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} java_procs SEC(".maps");

/* The walk stops here: a marked frame says why, and the stack is truncated. Returns 1. */
static __always_inline int java_stop(struct unwind_scratch *sc, __u64 why)
{
	walk_push_mark(sc, JAVA_TAG_LOST, why);
	sc->stack.flags |= USTACK_TRUNCATED;
	return 1;
}

static __always_inline int java_read32(__s32 *dst, __u64 addr)
{
	return bpf_probe_read_user(dst, sizeof(*dst), (const void *)addr);
}

struct java_hops {
	__u64 segmap;
	__u64 seg;
	__u32 found;		/* reached a block's first segment */
	__u32 pad;
};

/* one hop back through a segment map: 0 marks a block's first segment */
static long java_hop(__u64 i, struct java_hops *h)
{
	__u8 b;

	if (bpf_probe_read_user(&b, 1, (const void *)(h->segmap + h->seg)))
		return 1;
	if (!b) {
		h->found = 1;
		return 1;
	}
	if (b == 0xff || b > h->seg)
		return 1;	/* a free segment, or a map that points before the heap */
	h->seg -= b;
	return 0;
}

/*
 * The CodeBlob holding pc, by its heap's segment map (HotSpot's
 * CodeHeap::find_start): a used segment's byte is the distance back toward
 * its block's first segment, whose byte is 0; 0xff marks a free segment.
 */
static __always_inline __u64 java_find_blob(const struct java_proc *j, __u64 pc)
{
	struct java_hops h = {};
	__u64 low = 0;
	__u32 log2 = 0;

	for (int i = 0; i < JAVA_MAX_HEAPS; i++) {
		if (i < j->n_heaps && pc >= j->heap[i].low && pc < j->heap[i].high) {
			low = j->heap[i].low;
			log2 = j->heap[i].log2_seg;
			h.segmap = j->heap[i].segmap;
			break;
		}
	}
	if (!low || log2 > 20)
		return 0;
	h.seg = (pc - low) >> log2;
#ifdef EBPFPROF_STEPS_WALK
	for (int i = 0; i <= JAVA_SEGMAP_HOPS; i++)
		if (java_hop(i, &h))
			break;
#else
	bpf_loop(JAVA_SEGMAP_HOPS + 1, java_hop, &h, 0);
#endif
	if (!h.found)
		return 0;	/* free, unreadable, or a blob larger than the hops reach */
	return low + (h.seg << log2) + j->block_header;
}

/*
 * An interpreted frame: rbp (x29) is its frame pointer, over the caller's fp
 * and return address as everywhere; the Method* and bcp are in its slots.
 */
static __always_inline long java_interp(struct unwind_scratch *sc, const struct java_proc *j,
					__u32 leaf)
{
	__u64 fp = sc->bp, method, bcp, sender, ra, bp;

	if (walk_read(&method, fp + j->if_method) || walk_read(&sender, fp + j->if_sender_sp) ||
	    walk_read(&ra, fp + 8) || walk_read(&bp, fp))
		goto lost;
	/* the leaf's bcp lives in a register (the slot is written at calls only) */
	if (leaf)
		bcp = sc->hs_bcp;
	else if (walk_read(&bcp, fp + j->if_bcp))
		goto lost;
	walk_push_frame(sc, JAVA_TAG_INTERP, method, bcp);
	rt_announce(sc, JAVA_EVENT_METHOD, method, 0);
	ra = ARCH_STRIP_RA(ra);
	/* the caller's frame lies above this one, on the same stack */
	if (fp < sc->sp || sender <= fp || sender - fp > (1 << 20) || !ra || ra >= USER_ADDR_END)
		goto broken;
	sc->pc = ra;
	sc->sp = sender;
	sc->bp = bp;
	return 0;
lost:
	return java_stop(sc, JAVA_LOST_READ);
broken:
	return java_stop(sc, JAVA_LOST_FRAME);
}

/*
 * One frame whose pc is in the code cache: records it (include/java.h) and
 * steps to its caller. Compiled code and stubs have a fixed frame size, the
 * caller's fp and return address at its top on both architectures; a blob of
 * size 0 (the call stub) keeps rbp (x29) as its frame pointer. A global
 * function, verified once on its own rather than at its call site inside
 * the walk: that keeps the load time of the whole program down.
 */
WALK_FN long java_step(struct unwind_scratch *sc, const struct java_proc *j, __u32 leaf)
{
	__u64 pc, blob, name_p, name = 0, code, cfa, ra, bp;
	__s32 fs, fco, off, id = 0;
	bool nm, early;

	if (!sc || !j)
		return 1;
	pc = sc->pc;
	bp = sc->bp;
	sc->exact_pc = 0;
	if (pc >= j->interp_low && pc < j->interp_high)
		return java_interp(sc, j, leaf);
	blob = java_find_blob(j, pc);
	if (!blob)
		return java_stop(sc, JAVA_LOST_NO_BLOB);
	if (walk_read(&name_p, blob + j->cb_name) || java_read32(&fs, blob + j->cb_frame_size) ||
	    java_read32(&fco, blob + j->cb_frame_complete) || walk_read(&name, name_p))
		goto lost;
	if (j->cb_frame_complete_size == 2)
		fco = (__s16)fco;
	if (j->cb_code_is_offset) {
		if (java_read32(&off, blob + j->cb_code))
			goto lost;
		code = blob + off;
	} else if (walk_read(&code, blob + j->cb_code)) {
		goto lost;
	}
	nm = name == 0x646f6874656d6eULL;	/* "nmethod\0", little-endian */
	if (nm && java_read32(&id, blob + j->nm_compile_id))
		goto lost;
	walk_push_frame(sc, nm ? JAVA_TAG_COMPILED : JAVA_TAG_STUB, blob,
			(nm ? (__u64)(__u32)id << 32 : 0) | (__u32)(pc - blob));
	if (nm)
		rt_announce(sc, JAVA_EVENT_NMETHOD, blob, (__u32)id);
	early = leaf && fco > 0 && pc < code + fco;
	if (early) {
		/*
		 * The prologue has not built the frame: x86-64's call left the
		 * return address on top, AArch64's is still in x30
		 */
		cfa = ARCH_FRAME_RECORD_RA ? sc->sp : sc->sp + 8;
	} else if (fs > 0 && fs < (1 << 17)) {
		cfa = sc->sp + (__u64)fs * 8;
		if (walk_read(&bp, cfa - 16))
			goto lost;
	} else {
		if (!bp || bp < sc->sp)
			goto broken;
		cfa = bp + 16;
		if (walk_read(&bp, cfa - 16))
			goto lost;
	}
	if (ARCH_FRAME_RECORD_RA && early)
		ra = sc->lr;
	else if (walk_read(&ra, cfa - 8))
		goto lost;
	ra = ARCH_STRIP_RA(ra);
	if (!ra || ra >= USER_ADDR_END)
		goto broken;
	sc->pc = ra;
	sc->sp = cfa;
	sc->bp = bp;
	return 0;
lost:
	return java_stop(sc, JAVA_LOST_READ);
broken:
	return java_stop(sc, JAVA_LOST_FRAME);
}

#ifdef EBPFPROF_STEPS_WALK
WALK_STEP_STEPS(java_step, java_procs)
#endif

#endif /* EBPFPROF_JAVA_BPF_H */
