/* ruby.h -- what userspace tells the BPF Ruby frame reader (bpf/ruby.bpf.h) about one CRuby process */
#ifndef EBPFPROF_RUBY_H
#define EBPFPROF_RUBY_H

#include "frametypes.h"

/*
 * Words above a YJIT frame's sp searched for the return address into
 * vm_exec: its entry's pushes (4), and in a branch stub's call into the
 * compiler the stack temps and return register it saves (up to 7 more).
 */
#define RB_JIT_SCAN 16

/* control frames one vm_exec call may run before the rest is marked lost */
#ifndef RB_MAX_RUN
#define RB_MAX_RUN 48
#endif
/* environment hops from a block's frame to its method's, for the method entry */
#define RB_MAX_EP_HOPS 4

/*
 * glibc's thread control block on x86-64: the DTV pointer at fsbase + 8,
 * each module's entry 16 bytes ({ block address, to_free }) at dtv + 16 * id.
 */
#define RB_TCB_DTV 8
#define RB_DTV_STRIDE 16

/* rb_control_frame_t's environment: ep[0] flags, ep[-1] the previous ep or block, ep[-2] me or cref */
#define RB_FRAME_MAGIC_MASK 0x7fff0001u
#define RB_FRAME_MAGIC_DUMMY 0x79990001u	/* a thread's first frame, no code */
#define RB_FRAME_FLAG_FINISH 0x0020u		/* the frame a vm_exec call began with */
#define RB_FRAME_FLAG_CFRAME 0x0080u		/* a C function's (cfunc, ifunc) */
#define RB_ENV_FLAG_LOCAL 0x0002u		/* a method's own environment */

/*
 * One CRuby process: where vm_exec is, where the thread's execution
 * context is found, and the offsets the walk needs (from our table, checked
 * against the process). Addresses are the process's.
 */
struct rb_proc {
	__u64 exec_start;	/* vm_exec (rb_vm_exec): [start, end) */
	__u64 exec_end;
	__u64 tls_module;	/* ruby_current_ec's TLS module id (its DTV index); 0: in the executable */
	__u64 tls_offset;	/* its offset in that module's block; module 0: from the thread pointer */
	__u64 jit_start;	/* YJIT's code region: [start, end), [0, 0) without YJIT */
	__u64 jit_end;
	__u64 text_start;	/* the executable mapping holding vm_exec: YJIT's code is entered from it */
	__u64 text_end;
	__u32 version;		/* major << 16 | minor << 8 | teeny */
	__u16 ec_vm_stack;	/* rb_execution_context_t.vm_stack */
	__u16 ec_vm_stack_size;	/* .vm_stack_size, in VALUEs */
	__u16 ec_cfp;		/* .cfp: the innermost control frame */
	__u16 cfp_size;		/* sizeof(rb_control_frame_t): the caller's is the next one up */
	__u16 cfp_pc;
	__u16 cfp_iseq;
	__u16 cfp_ep;
	__u16 me_called_id;	/* rb_method_entry_t.called_id: the ID its method was called by */
	__u16 pad[2];
};

/*
 * A Ruby frame takes two slots (tags in frametypes.h):
 * - RB_TAG_ISEQ | rb_obj_slot(iseq, gen), then rb_iseq_where(): its method
 *   entry (whose class names it; a block's is its method's) and the low
 *   RB_PC_BITS of its pc (the iseq's own start gives the rest: userspace
 *   refuses iseqs of more code);
 * - RB_TAG_CFUNC | rb_obj_slot(method entry, gen), then 0: a C function
 *   called as a method.
 * gen is the low RB_GEN_BITS of the serial of the method entry's called_id:
 * code made by eval and collected leaves its iseq's and method entry's
 * addresses to the next one, and symbols are numbered in order, so a
 * method of another name made since (up to 4,095 names later; 2,047 on
 * AArch64) is told apart. One slot, RB_TAG_LOST | enum rb_lost_reason, where Ruby frames
 * could not be read; one, RB_TAG_JIT, for a pc in YJIT's code: the control
 * frames it runs are the vm_exec call's that entered it, walked there. Each iseq and method entry is announced when first
 * seen (RB_EVENT_ISEQ with rb_iseq_gen(), RB_EVENT_CME with gen), so
 * userspace reads it while it lives.
 */
/*
 * User addresses: 47 bits on x86-64; 48 on AArch64, whose heap and
 * mappings lie above 2^47, so a bit of the pc and of gen make room there.
 */
#if defined(__aarch64__) || defined(__TARGET_ARCH_arm64)
#define RB_ADDR_BITS 48
#else
#define RB_ADDR_BITS 47
#endif
#define RB_PC_BITS (67 - RB_ADDR_BITS)	/* with the method entry shifted by 3, one word */
#define RB_PC_MASK ((1u << RB_PC_BITS) - 1)
#define RB_GEN_BITS (59 - RB_ADDR_BITS)	/* with the object shifted by 3, the 56 bits under the tag */
#define RB_GEN_MASK ((1u << RB_GEN_BITS) - 1)
#define RB_OBJ_BITS (RB_ADDR_BITS - 3)	/* an 8-byte aligned user address, shifted by 3 */
#define RB_OBJ_MASK ((1ULL << RB_ADDR_BITS) - 1)

static inline __u64 rb_obj_slot(__u64 obj, __u32 gen)
{
	return (__u64)(gen & RB_GEN_MASK) << RB_OBJ_BITS | (obj & RB_OBJ_MASK) >> 3;
}

static inline __u64 rb_slot_obj(__u64 slot)
{
	return (slot & ((1ULL << RB_OBJ_BITS) - 1)) << 3;
}

static inline __u32 rb_slot_gen(__u64 slot)
{
	return (__u32)(slot >> RB_OBJ_BITS) & RB_GEN_MASK;
}

static inline __u64 rb_iseq_where(__u64 me, __u64 pc)
{
	return (me >> 3) << RB_PC_BITS | (pc & RB_PC_MASK);
}

static inline __u64 rb_where_me(__u64 where)
{
	return (where >> RB_PC_BITS) << 3;
}

/*
 * A called_id's gen: its symbol's serial (IDs above the operators keep 4
 * scope bits below it; 3.4's last operator, 0xaa, is never a method's)
 */
static inline __u32 rb_gen(__u64 called_id)
{
	return (__u32)(called_id > 0xa9 ? called_id >> 4 : called_id) & RB_GEN_MASK;
}

/* An iseq's announcement's gen: 20 bits of its method entry, and the entry's gen */
static inline __u32 rb_iseq_gen(__u64 me, __u32 gen)
{
	return (__u32)((me >> 3) & 0xfffff) | (gen & RB_GEN_MASK) << 20;
}

enum rb_lost_reason {
	RB_LOST_NO_EC = 1,	/* the thread's execution context could not be read */
	RB_LOST_READ = 2,	/* a control frame could not be read */
	RB_LOST_RUN = 3,	/* more than RB_MAX_RUN frames in one vm_exec call */
	RB_LOST_JIT = 4,	/* YJIT code whose return into vm_exec was not found */
	RB_LOST_REASONS
};

#endif /* EBPFPROF_RUBY_H */
