// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* regs_check.bpf.c -- test only: regs.bpf.h's registers against those sys_enter is handed */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "regs.bpf.h"

const volatile __u32 target_tid = 0;
const volatile long marker_nr = 0;	/* the syscall the test makes */

/* one syscall's findings, read by tests/unit/collect/test_regs.c */
__u64 entry_regs = 0;	/* what sys_enter was given: the registers saved at entry */
__u64 found_regs = 0;	/* what current_user_regs_addr computed */
__u64 ip = 0, sp = 0;		/* the user registers read there */
int err = 0;
__u32 seen = 0;

SEC("raw_tp/sys_enter")
int BPF_PROG(regs_check, struct pt_regs *entry, long nr)
{
	struct user_regs regs = {};

	if ((__u32)bpf_get_current_pid_tgid() != target_tid || nr != marker_nr)
		return 0;
	entry_regs = (__u64)entry;
	found_regs = (__u64)current_user_regs_addr();
	err = current_user_regs(&regs);
	ip = regs.ip;
	sp = regs.sp;
	seen++;
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
