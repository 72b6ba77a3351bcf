/* test_user_regs.c -- bpf/regs.bpf.h finds a task's user registers where the kernel saved them */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include "test.h"
#include "regs_check.skel.h"

#define MB (1ull << 20)
/* where user space ends: 47-bit addresses on x86-64, 48-bit on Debian's arm64 kernels */
#if defined(__aarch64__)
#define USER_ADDR_END (1ull << 48)
#else
#define USER_ADDR_END (1ull << 47)
#endif

/*
 * One getppid() of ours, traced at sys_enter: the tracepoint is handed the
 * registers the entry code saved, the place the header must compute from
 * the task's kernel stack; the registers read there are ours: our stack,
 * an address in user space.
 */
static int test_user_regs(void)
{
	struct regs_check_bpf *skel = regs_check_bpf__open();
	volatile int here = 0;	/* on our stack, near the syscall's sp */
	__u64 sp_here = (__u64)(uintptr_t)&here, sp, dist;
	int ret = TEST_FAIL;

	if (!skel)
		SKIP("cannot open the BPF object (not root?)");
	skel->rodata->target_tid = syscall(SYS_gettid);
	skel->rodata->marker_nr = SYS_getppid;
	if (regs_check_bpf__load(skel) || regs_check_bpf__attach(skel)) {
		regs_check_bpf__destroy(skel);
		SKIP("cannot load or attach the BPF check (not root?)");
	}
	syscall(SYS_getppid);
	sp = skel->bss->sp;
	dist = sp > sp_here ? sp - sp_here : sp_here - sp;
	printf("  saved at entry %#llx, found %#llx; ip %#llx, sp %#llx (%llu bytes from a local), "
	       "err %d\n",
	       (unsigned long long)skel->bss->entry_regs, (unsigned long long)skel->bss->found_regs,
	       (unsigned long long)skel->bss->ip, (unsigned long long)sp,
	       (unsigned long long)dist, skel->bss->err);
	if (skel->bss->seen != 1 || skel->bss->entry_regs != skel->bss->found_regs ||
	    skel->bss->err != 0)
		goto out;
	if (!skel->bss->ip || skel->bss->ip >= USER_ADDR_END || dist > MB)
		goto out;
	ret = TEST_OK;
out:
	regs_check_bpf__destroy(skel);
	return ret;
}

TEST_MAIN("user_regs", TEST(test_user_regs))
