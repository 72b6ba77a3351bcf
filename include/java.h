/* java.h -- what userspace tells the BPF HotSpot frame reader (bpf/java.bpf.h) about one JVM */
#ifndef EBPFPROF_JAVA_H
#define EBPFPROF_JAVA_H

#include "frametypes.h"

/* code heaps of a segmented code cache (non-nmethods, profiled, non-profiled) */
#define JAVA_MAX_HEAPS 4
/* hops through a code heap's segment map to a blob's start: 254 segments each */
#ifndef JAVA_SEGMAP_HOPS
#define JAVA_SEGMAP_HOPS 24
#endif

/*
 * One JVM: where its code cache, code heaps and interpreter are, and the
 * offsets the walk needs, from the JVM's own gHotSpotVMStructs tables. The
 * interpreter frame slots (fp-relative, in bytes) are the architecture's
 * HotSpot frame layout, which the tables do not export (frame_<arch>.hpp).
 */
struct java_heap {
	__u64 low;		/* CodeHeap::_memory._low_boundary: segment 0 */
	__u64 high;		/* _memory._high_boundary */
	__u64 segmap;		/* CodeHeap::_segmap._low_boundary: one byte per segment */
	__u32 log2_seg;		/* CodeHeap::_log2_segment_size */
	__u32 pad;
};

struct java_proc {
	__u64 code_low;		/* CodeCache::_low_bound: every heap is inside */
	__u64 code_high;
	__u64 interp_low;	/* the template interpreter's code (AbstractInterpreter::_code) */
	__u64 interp_high;
	struct java_heap heap[JAVA_MAX_HEAPS];
	__u32 n_heaps;
	__u16 block_header;	/* sizeof(HeapBlock): a blob starts after its block's header */
	__u16 cb_name;		/* CodeBlob::_name */
	__u16 cb_frame_size;	/* CodeBlob::_frame_size: words, return address included */
	__u16 cb_frame_complete; /* CodeBlob::_frame_complete_offset: from the code's start */
	__u16 cb_code;		/* CodeBlob::_code_begin (pointer) or _code_offset (int, from the blob) */
	__u16 cb_code_is_offset;
	__u16 nm_compile_id;	/* nmethod::_compile_id: the check against a reused nmethod address */
	__s16 if_method;	/* interpreter frame: Method* at fp + if_method */
	__s16 if_bcp;		/* bytecode pointer */
	__s16 if_sender_sp;	/* the caller's sp (before the interpreter extended it) */
	__u16 cb_frame_complete_size;	/* 2 (JDK 23+: int16_t) or 4 bytes */
	__u16 pad[3];
};

/*
 * A Java frame takes two slots of a walked user stack (tags in frametypes.h):
 * - INTERP: JAVA_TAG_INTERP | Method*, then the bytecode pointer;
 * - COMPILED: JAVA_TAG_COMPILED | nmethod, then compile_id << 32 | pc - nmethod;
 * - STUB: JAVA_TAG_STUB | CodeBlob (an adapter, a runtime stub), then pc - blob.
 * One slot: JAVA_TAG_LOST | enum java_lost_reason, where the walk stopped.
 * Methods and nmethods first seen are announced as JAVA_EVENT_METHOD and
 * JAVA_EVENT_NMETHOD.
 */
enum java_lost_reason {
	JAVA_LOST_NO_BLOB = 1,	/* a code cache PC no code blob holds (freed, or mid-install) */
	JAVA_LOST_READ = 2,	/* a frame could not be read */
	JAVA_LOST_FRAME = 3,	/* a frame's caller is not where it should be */
};

#endif /* EBPFPROF_JAVA_H */
