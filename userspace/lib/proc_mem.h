/* proc_mem.h -- bounded reads of another process's memory, for the runtimes and the symbolizer */
#ifndef EBPFPROF_PROC_MEM_H
#define EBPFPROF_PROC_MEM_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

/*
 * Where user addresses end on the architecture we are built for: a pointer
 * read from a target at or past it is no user address ([vsyscall] lies
 * above on x86-64).
 */
#if defined(__aarch64__)
#define PROC_MEM_USER_END (1ULL << 48)		/* Debian's arm64 kernels: 48-bit user addresses */
#else
#define PROC_MEM_USER_END 0x800000000000ULL	/* x86-64: 47 bits (4-level paging) */
#endif

/*
 * Reads up to LEN bytes at ADDR of PID (one process_vm_readv: no ptrace
 * stop, the caller needs CAP_SYS_PTRACE over it). Returns how many were
 * read, fewer where a fault stopped it, or -errno. Nothing read is trusted:
 * the caller bounds LEN and checks what it got.
 */
ssize_t proc_mem__read_some(__u32 pid, __u64 addr, void *buf, size_t len);

/* All LEN bytes, or an error: -EFAULT when fewer could be read. */
int proc_mem__read(__u32 pid, __u64 addr, void *buf, size_t len);

/* All LEN bytes (1 to MAX) in a new buffer the caller frees; NULL when too many or unread. */
void *proc_mem__copy(__u32 pid, __u64 addr, size_t len, size_t max);

#endif /* EBPFPROF_PROC_MEM_H */
