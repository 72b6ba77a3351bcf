/* unwind.h -- CFI unwind rows and per-process mapping tables shared by the BPF unwinder and userspace */
#ifndef EBPFPROF_UNWIND_H
#define EBPFPROF_UNWIND_H

#include "frametypes.h"
#include "profile.h"

/*
 * How to find the canonical frame address (CFA: the caller's rsp) at a PC,
 * derived from .eh_frame / .debug_frame. On x86-64 the return address is
 * always at CFA - 8; the caller's rbp, when the function saved it, at
 * CFA + 8 * rbp_off.
 */
enum unwind_cfa {
	UNWIND_CFA_NONE = 0,	/* no CFI covers this PC: unwind it with frame pointers */
	UNWIND_CFA_RSP = 1,	/* CFA = rsp + cfa_off */
	UNWIND_CFA_RBP = 2,	/* CFA = rbp + cfa_off */
	/*
	 * The PLT expression GCC and binutils emit for lazy-binding stubs:
	 * CFA = rsp + cfa_off + ((rip & 15) >= rbp_off ? 8 : 0); rbp_off holds
	 * the threshold (10 or 11), rbp is never saved in a PLT stub.
	 */
	UNWIND_CFA_PLT = 3,
	/*
	 * CFA = *(rbp + cfa_off): GCC's stack-realigning (DRAP) prologue. The
	 * caller's rbp is then at *rbp, not CFA-relative: rbp_off is 0 and unused.
	 */
	UNWIND_CFA_RBP_DEREF = 4,
	UNWIND_CFA_END = 5,	/* return address undefined: the outermost frame (_start, thread start) */
	UNWIND_CFA_UNKNOWN = 6,	/* CFI we cannot follow: the stack is truncated here */
	/*
	 * A signal trampoline (__restore_rt: its CIE says "S"): rsp points at
	 * the kernel's rt_sigframe ucontext, whose uc_mcontext holds the
	 * interrupted code's registers. x86-64 Linux layout.
	 */
	UNWIND_CFA_SIGNAL = 7,
	/*
	 * CFA = rsp + cfa_off, as UNWIND_CFA_RSP, in a function a runtime
	 * calls by pushing the interrupted pc as if it were a return address
	 * (Go's sigpanic and asyncPreempt): the caller's pc is the instruction
	 * itself, named and unwound there, not at the call before it.
	 */
	UNWIND_CFA_RSP_INJECTED = 8,
	/*
	 * AArch64 (the rows of an AArch64 file): RSP and RBP mean sp and x29,
	 * and the return address (x30) is saved right above x29, at CFA + 8 *
	 * rbp_off + 8, as a frame record's pair is; rbp_off is then never 0.
	 * Two more rules: CFA = sp + cfa_off with the return address still in
	 * x30 (a leaf, or a prologue before it saves x30), x29 as rbp_off says;
	 * and CFA = sp + cfa_off with x30 saved alone at sp + 8 * rbp_off (from
	 * sp: GCC saves it at the bottom of frames kilobytes big), x29 unchanged
	 * (-fomit-frame-pointer code).
	 */
	UNWIND_CFA_LR = 9,
	UNWIND_CFA_RA_SAVED = 10,
	/*
	 * AArch64: CFA = x29 + 8 * cfa_off (in words: up to 256 KiB), the
	 * frame record at x29 (the caller's x29 at x29, the return address
	 * above it): Go's frames too big for rbp_off to reach their record
	 * from the CFA.
	 */
	UNWIND_CFA_FP_RECORD = 11,
	UNWIND_CFA_MAX = UNWIND_CFA_FP_RECORD,
};

/*
 * One row, 8 bytes: it holds from pc up to the next row's pc. pc is an ELF
 * virtual address of the file (st_value space), so one table serves every
 * process that maps the file, wherever it is loaded.
 */
struct unwind_row {
	__u32 pc;
	__u8 cfa_type;		/* enum unwind_cfa */
	__s8 rbp_off;		/* caller's rbp saved at CFA + 8 * rbp_off; 0: rbp unchanged */
	__s16 cfa_off;
};

/* Executable mappings kept per process (the rest unwind with frame pointers). */
#ifndef UNWIND_MAX_MAPPINGS
#define UNWIND_MAX_MAPPINGS 256
#endif

/*
 * A row search first narrows to one page of code: pages[page_start + i] is
 * the index (within the table) of the first row with pc >= base_pc + i *
 * UNWIND_PAGE_SIZE, for i in [0, n_pages]; so the row covering an address in
 * page i is among rows[pages[i] - 1, pages[i + 1]), a few dozen at most,
 * instead of a search over the whole file's rows (cold cache lines each).
 */
#define UNWIND_PAGE_SHIFT 12
#define UNWIND_PAGE_SIZE (1u << UNWIND_PAGE_SHIFT)

/*
 * One executable mapping of a process. A PC in [start, end) is at file
 * vaddr pc - bias; its rows are rows[table_start, table_start + table_len) of
 * the shared row array (table_len 0: no CFI, frame pointers only), its page
 * index pages[page_start, page_start + n_pages + 1).
 */
struct unwind_mapping {
	__u64 start;
	__u64 end;
	__u64 bias;
	__u32 table_start;
	__u32 table_len;
	__u32 page_start;
	__u32 n_pages;
	__u32 base_pc;		/* page-aligned pc of the table's first row */
	__u32 pad;
};

/*
 * Value of the per-process map: mappings sorted by start, not overlapping.
 * gen is new at every write of any process's value (never 0): BPF's cache
 * of rows found trusts an entry only under the gen it was found with.
 * announced: userspace was told of the process (its symbols, labels), so
 * BPF need not announce its samples; 0 for tables loaded ahead of that.
 * start and exec: the process image the tables are of (struct proc_image);
 * BPF walks no other with them (a recycled pid, an exec userspace raced).
 */
struct unwind_proc {
	__u32 n;
	__u32 gen;
	__u32 announced;
	__u32 exec;		/* PROC_EXEC_ANY: read before any announcement, valid until an exec drops them */
	__u64 start;
	struct unwind_mapping m[UNWIND_MAX_MAPPINGS];
};

/* Deepest user stack the BPF unwinder walks (one bpf_loop, no tail calls needed). */
#ifndef UNWIND_MAX_DEPTH
#define UNWIND_MAX_DEPTH 256
#endif

/*
 * Frames per call of the steps build's walk function (bpf/unwind.bpf.h):
 * the verifier checks the step this many times; each call looks the walk's
 * tables up again.
 */
#ifndef UNWIND_STEPS_PER_CALL
#define UNWIND_STEPS_PER_CALL 4
#endif

/* user_stack.flags */
#define USTACK_TRUNCATED 1	/* the walk stopped before the outermost frame */
/*
 * It stopped at a frame whose CFI says it is the outermost (the return
 * address undefined: _start, a thread's start): whole whatever its frames
 * are named, a stripped libc's thread start too
 */
#define USTACK_OUTERMOST 2

/*
 * A user stack the BPF unwinder walked, leaf first, stored under a 64-bit
 * hash of its frames (sample_key.user_hash). Every slot but the leaf is one
 * past an address inside the frame's instruction: a return address, or the
 * pc + 1 of code a signal or an injected call (UNWIND_CFA_RSP_INJECTED)
 * struck, and of the signal trampoline itself.
 */
struct user_stack {
	__u32 n;
	__u32 flags;
	__u64 ips[UNWIND_MAX_DEPTH];
};

/* unwinding methods (--unwind) */
enum unwind_mode { UNWIND_MODE_FP = 0, UNWIND_MODE_CFI = 1 };

#endif /* EBPFPROF_UNWIND_H */
