/* regs.bpf.h -- the current task's user registers, saved at kernel entry, without bpf_task_pt_regs */
#ifndef EBPFPROF_REGS_BPF_H
#define EBPFPROF_REGS_BPF_H

#include "arch.bpf.h"

#ifndef EFAULT
#define EFAULT 14
#endif


/* What a user stack walk starts from. */
struct user_regs {
	__u64 ip;
	__u64 sp;
	__u64 bp;	/* the frame pointer: rbp, x29 */
};

/*
 * Where TASK's user registers were saved when it entered the kernel, as
 * task_pt_regs() finds them: the top of its kernel stack, read through
 * CO-RE (x86-64: right before 6.9's FRED padding; arm64 the same shape). bpf_task_pt_regs (5.15+) says
 * the same where it exists. An unchecked kernel address: read it with
 * probe reads. NULL for a task without a stack.
 */
static __always_inline struct pt_regs *task_user_regs_addr(struct task_struct *task)
{
	void *stack = BPF_CORE_READ(task, stack);

	return stack ? (struct pt_regs *)(stack + ARCH_THREAD_SIZE - bpf_core_type_size(struct pt_regs))
		     : NULL;
}

static __always_inline struct pt_regs *current_user_regs_addr(void)
{
	return task_user_regs_addr((struct task_struct *)bpf_get_current_task());
}

/*
 * Reads them into *out, by probe reads (kernels before 5.15 give no BTF
 * pointer to them). -EFAULT when what lies there is not a user frame: a
 * kernel thread, or a kernel built with a bigger stack (KASAN); the caller
 * counts it and takes no stack, rather than walk from garbage.
 */
static __always_inline int current_user_regs(struct user_regs *out)
{
	struct pt_regs *r = current_user_regs_addr();

	if (!ARCH_REGS_USER(r))
		return -EFAULT;
	out->ip = BPF_CORE_READ(r, ARCH_REG_PC);
	out->sp = BPF_CORE_READ(r, ARCH_REG_SP);
	out->bp = BPF_CORE_READ(r, ARCH_REG_FP);
	return 0;
}

#endif /* EBPFPROF_REGS_BPF_H */
