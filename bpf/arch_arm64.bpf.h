/* arch_arm64.bpf.h -- AArch64's user registers, signal frame and thread pointer, for the shared walkers */
#ifndef EBPFPROF_ARCH_ARM64_BPF_H
#define EBPFPROF_ARCH_ARM64_BPF_H

/*
 * The kernel stack (THREAD_SIZE): 16 KiB with 4 KiB pages and KASAN off,
 * Debian's arm64 kernels (arch/arm64/include/asm/memory.h). task_pt_regs()
 * is its top minus one struct pt_regs, no padding: the same shape as x86-64.
 */
#define ARCH_THREAD_SIZE (16u << 10)

/* struct pt_regs' fields the walk starts from: pc, sp, x29 (the frame record) */
#define ARCH_REG_PC pc
#define ARCH_REG_SP sp
#define ARCH_REG_FP regs[29]

/*
 * The perf_event context is struct user_pt_regs (regs[31], sp, pc,
 * pstate): pstate is word 33. User mode is EL0: mode bits [3:0] zero, as
 * the kernel's user_mode() tests (AArch32 user mode too).
 */
#define ARCH_CTX_MODE_OFF (33 * 8)
#define ARCH_CTX_USER(word) (((word) & 0xf) == 0)

#define ARCH_REGS_USER(r) ((BPF_CORE_READ(r, pstate) & 0xf) == 0)

/*
 * The interrupted registers in the rt_sigframe at sp when a handler returns
 * to __kernel_rt_sigreturn (arch/arm64/kernel/signal.c): siginfo (128
 * bytes), then the ucontext whose uc_mcontext (struct sigcontext:
 * fault_address, regs[31], sp, pc) is at 176 in it, 16-byte aligned.
 */
#define ARCH_SIG_REGS_OFF (128 + 176 + 8)
#define ARCH_SIG_FP_OFF (ARCH_SIG_REGS_OFF + 29 * 8)
#define ARCH_SIG_SP_OFF (ARCH_SIG_REGS_OFF + 31 * 8)
#define ARCH_SIG_PC_OFF (ARCH_SIG_REGS_OFF + 32 * 8)
#define ARCH_SIG_LR_OFF (ARCH_SIG_REGS_OFF + 30 * 8)

/*
 * __kernel_rt_sigreturn, the vDSO's trampoline a handler returns into:
 * mov x8, #139 (rt_sigreturn); svc #0, read as one little-endian word.
 */
#define ARCH_SIGRETURN_INSNS 0xd4000001d2801168ULL

/* x30 is saved beside x29 (a frame record) or stays in its register: include/unwind.h's AArch64 rows */
#define ARCH_FRAME_RECORD_RA 1

/*
 * The span of struct pt_regs the steps walk copies: x29, x30, sp and pc,
 * words 29 to 32 of the UAPI user_pt_regs that begins it (the whole struct,
 * 336 bytes, is bigger than the walk's copy of the stack).
 */
#define ARCH_REGS_COPY_OFF (29 * 8)
#define ARCH_REGS_COPY_LEN (4 * 8)

/*
 * The registers runtimes' interpreters keep their state in: HotSpot's rbcp
 * is x22 (register_aarch64.hpp), V8's kInterpreterBytecodeOffsetRegister
 * x19 (register-arm64.h), the Zend VM's global registers x27 and x28
 * (zend_execute.c). The link register too: a leaf's caller until it saves x30.
 */
#define ARCH_RUNTIME_REGS(sc, regs)			\
	do {						\
		(sc)->hs_bcp = (regs)->regs[22];	\
		(sc)->v8_offset = (regs)->regs[19];	\
		(sc)->zend_ex = (regs)->regs[27];	\
		(sc)->zend_opline = (regs)->regs[28];	\
		(sc)->lr = (regs)->regs[30];		\
	} while (0)

/* user space ends below this: Debian's kernels have 48-bit virtual addresses (4 KiB pages) */
#define ARCH_USER_ADDR_END (1ULL << 48)
/*
 * A return address signed by pointer authentication (-mbranch-protection)
 * carries its code in the bits above the address: kept to the VA bits, as
 * the kernel's ptrauth_strip_user_insn_pac() does for its own user walk.
 */
#define ARCH_STRIP_RA(ra) ((ra) & (ARCH_USER_ADDR_END - 1))

/* the thread pointer (TLS): tpidr_el0, saved in TASK's thread.uw.tp_value */
#define ARCH_THREAD_POINTER thread.uw.tp_value

#endif /* EBPFPROF_ARCH_ARM64_BPF_H */
