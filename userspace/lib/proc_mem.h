/* proc_mem.h -- bounded reads of another process's memory, for the runtimes and the symbolizer */
#ifndef EBPFPROF_PROC_MEM_H
#define EBPFPROF_PROC_MEM_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

/*
 * Reads up to LEN bytes at ADDR of PID (one process_vm_readv: no ptrace
 * stop, the caller needs CAP_SYS_PTRACE over it). Returns how many were
 * read, fewer where a fault stopped it, or -errno. Nothing read is trusted:
 * the caller bounds LEN and checks what it got.
 */
ssize_t proc_mem__read_some(__u32 pid, __u64 addr, void *buf, size_t len);

/* All LEN bytes, or an error: -EFAULT when fewer could be read. */
int proc_mem__read(__u32 pid, __u64 addr, void *buf, size_t len);

#endif /* EBPFPROF_PROC_MEM_H */
