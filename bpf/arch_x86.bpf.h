/* arch_x86.bpf.h -- x86-64's user registers, signal frame and thread pointer, for the shared walkers */
#ifndef EBPFPROF_ARCH_X86_BPF_H
#define EBPFPROF_ARCH_X86_BPF_H

/*
 * The kernel stack (THREAD_SIZE): 16 KiB, 32 KiB with KASAN, which
 * distribution kernels leave off. The user registers sit at its top, with
 * no padding on 64-bit (TOP_OF_KERNEL_STACK_PADDING is 0 there).
 */
#define ARCH_THREAD_SIZE (16u << 10)

/* struct pt_regs' fields the walk starts from, by name: CO-RE reads and plain loads alike */
#define ARCH_REG_PC ip
#define ARCH_REG_SP sp
#define ARCH_REG_FP bp

/*
 * The perf_event context (the UAPI struct pt_regs): cs is word 17 (ip is
 * 16), by offset, not by CO-RE: newer kernels declare cs a u16 in a union
 * (FRED), 5.10 a whole word, and libbpf refuses a load whose size the
 * relocation would change. A whole word, too: the context allows no
 * narrower load of a register.
 */
#define ARCH_CTX_MODE_OFF (17 * 8)
#define ARCH_CTX_USER(word) (((word) & 3) == 3)

/* saved registers R (kernel memory) are a user mode frame: the RPL of cs is 3 */
#define ARCH_REGS_USER(r) ((BPF_CORE_READ(r, cs) & 3) == 3)

/* the interrupted registers in the ucontext at a signal trampoline's rsp (uc_mcontext at 40) */
#define ARCH_SIG_FP_OFF (40 + 10 * 8)
#define ARCH_SIG_SP_OFF (40 + 15 * 8)
#define ARCH_SIG_PC_OFF (40 + 16 * 8)

/* the span of struct pt_regs the steps walk copies: all of it */
#define ARCH_REGS_COPY_OFF 0
#define ARCH_REGS_COPY_LEN bpf_core_type_size(struct pt_regs)

/*
 * The registers runtimes' interpreters keep their state in, into the walk's
 * scratch: HotSpot's rbcp is r13 (register_x86.hpp), V8's
 * kInterpreterBytecodeOffsetRegister r9 (register-x64.h), the Zend VM's
 * global registers r14 and r15 (zend_execute.c).
 */
#define ARCH_RUNTIME_REGS(sc, regs)			\
	do {						\
		(sc)->hs_bcp = (regs)->r13;		\
		(sc)->v8_offset = (regs)->r9;		\
		(sc)->zend_ex = (regs)->r14;		\
		(sc)->zend_opline = (regs)->r15;	\
		(sc)->lr = 0;				\
	} while (0)

/* glibc's __restore_rt has CFI: no signal trampoline is recognized by its code */
#define ARCH_SIGRETURN_INSNS 0

/* the return address is under the CFA, where the call pushed it; not in a frame record's pair */
#define ARCH_FRAME_RECORD_RA 0
#define ARCH_SIG_LR_OFF 0

#define ARCH_USER_ADDR_END 0x800000000000ULL	/* user space ends below this (47 bits) */
#define ARCH_STRIP_RA(ra) (ra)	/* a return address as the stack holds it is the address */

/* the thread pointer (TLS): fsbase; TASK's thread.fsbase */
#define ARCH_THREAD_POINTER thread.fsbase

#endif /* EBPFPROF_ARCH_X86_BPF_H */
