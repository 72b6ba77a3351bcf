/* thread_local.h -- where a thread-local variable of a process's executable or library lies from its thread pointer */
#ifndef EBPFPROF_THREAD_LOCAL_H
#define EBPFPROF_THREAD_LOCAL_H

#include <gelf.h>
#include <stdbool.h>
#include <linux/types.h>
#include "symbolize/proc_maps.h"

/* Where a file's thread-local variable is, as the file says. */
enum thread_local_kind {
	THREAD_LOCAL_NONE = 0,	/* no such thread-local symbol defined */
	THREAD_LOCAL_STATIC,	/* in the executable's block: value is its offset from the thread pointer */
	THREAD_LOCAL_DESC,	/* a TLSDESC pair in the GOT at vaddr value: its argument is the offset */
	THREAD_LOCAL_TPOFF,	/* an initial-exec GOT slot at vaddr value: it holds the offset */
	THREAD_LOCAL_DYNAMIC,	/* reached through __tls_get_addr only (legacy general dynamic): not read */
};

struct thread_local {
	enum thread_local_kind kind;
	__s64 value;
	__u64 map_vaddr;	/* the vaddr of the file offset the caller mapped */
	bool exe;		/* read as an executable (its own block), not a library */
};

/* .symtab too, not .dynsym alone: a program's own thread-locals need not be exported */
#define THREAD_LOCAL_SYMTAB 1u
/* an executable if the file has an interpreter (PT_INTERP), else a library, whatever EXE says */
#define THREAD_LOCAL_BY_INTERP 2u

/*
 * The executable's own TLS block (PT_TLS) in E: its offset from the thread
 * pointer and its size as the loader lays it out (memsz rounded up to its
 * alignment), and whether E has an interpreter. 0, or -ENOENT: no block
 * static_tls would trust an offset into.
 */
int thread_local__exe_block(Elf *e, bool *interp, __s64 *base, __u64 *size);

/*
 * Where thread-local NAME is in the ELF file open at FD (mapped from file
 * offset MAP_OFF): EXE for the executable (its own TLS block), else a
 * library (a slot of its GOT the loader filled). The file is read with
 * pread only and every size in it bounded. 0, or -ENOENT: not an ELF file,
 * or MAP_OFF in no PT_LOAD.
 */
int thread_local__elf(int fd, __u64 map_off, bool exe, const char *name, unsigned int flags,
		      struct thread_local *out);

/*
 * The thread-pointer offset the loader of PID wrote in the GOT slot of T
 * (from thread_local__elf) in the library mapped at M: 0, -ENOSYS (in
 * dynamic TLS: not read), or -EINVAL (unreadable).
 */
int thread_local__got(__u32 pid, const struct proc_map *m, const struct thread_local *t,
		      __s64 *off);

/*
 * The thread-pointer offset of thread-local NAME in the file mapped at M
 * of PID (under PROC_ROOT), as thread_local__elf and thread_local__got
 * find it: 0, -ENOENT (not there), -ENOSYS (in dynamic TLS, not read), or
 * -EINVAL (unreadable).
 */
int thread_local__offset(const char *proc_root, __u32 pid, const struct proc_map *m, bool exe,
			 const char *name, unsigned int flags, __s64 *off);

#endif /* EBPFPROF_THREAD_LOCAL_H */
