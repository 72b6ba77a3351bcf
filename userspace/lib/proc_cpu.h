/* proc_cpu.h -- the CPU time another process has used, in one system call */
#ifndef EBPFPROF_PROC_CPU_H
#define EBPFPROF_PROC_CPU_H

#include <linux/types.h>

/*
 * The CPU time all threads of process PID (in our PID namespace) have used,
 * the exited ones' too, in ns, into *ns: 0, -ESRCH when the process is gone,
 * or another negative errno.
 */
int proc_cpu__ns(__u32 pid, __u64 *ns);

#endif /* EBPFPROF_PROC_CPU_H */
