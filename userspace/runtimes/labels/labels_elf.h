/* labels_elf.h -- what an executable says of its labels: its Go version, its custom-labels symbols, its TLS block */
#ifndef EBPFPROF_LABELS_ELF_H
#define EBPFPROF_LABELS_ELF_H

#include <stdbool.h>
#include <linux/types.h>

#define LABELS_GO_VERSION_MAX 64
#define LABELS_CL_V0 1		/* custom_labels_thread_local_data: the table (ABI v0) */
#define LABELS_CL_V1 2		/* custom_labels_current_set: a pointer to the table (ABI v1) */

struct labels_exe {
	int go;			/* 0: go_version read; -ENOENT: no .go.buildinfo; -EINVAL: unreadable */
	char go_version[LABELS_GO_VERSION_MAX];
	__u64 tls_block;	/* PT_TLS memsz rounded up to its alignment; 0: none */
	__s64 tls_base;		/* the block's offset from the thread pointer (static_tls.h) */
	bool custom;		/* exports custom_labels_abi_version: a custom-labels publisher */
	__u64 cl_version;	/* custom_labels_abi_version's vaddr (4 bytes) */
	__u32 cl_tables;	/* LABELS_CL_V0, LABELS_CL_V1: which thread-locals it has in its block */
	__u64 cl_data;		/* custom_labels_thread_local_data's offset in the TLS block (v0) */
	__u64 cl_set;		/* custom_labels_current_set's offset in the TLS block (v1) */
	__u64 map_vaddr;	/* the vaddr of the file offset the caller mapped */
};

/* Where a file's thread-local variable (otel_thread_ctx_v1, custom labels' table) is, as the file says. */
enum labels_tls_kind {
	LABELS_TLS_NONE = 0,	/* no such thread-local symbol defined in .dynsym */
	LABELS_TLS_STATIC,	/* in the executable's block: value is its offset from the thread pointer */
	LABELS_TLS_DESC,	/* a TLSDESC pair in the GOT at vaddr value: resolved statically, its argument is the offset */
	LABELS_TLS_TPOFF,	/* an initial-exec GOT slot at vaddr value: it holds the offset */
	LABELS_TLS_DYNAMIC,	/* reached through __tls_get_addr only (legacy general dynamic): not read */
};

struct labels_tls {
	enum labels_tls_kind kind;
	__s64 value;
	__u64 map_vaddr;	/* the vaddr of the file offset the caller mapped */
};

/*
 * Where the thread-local NAME that .dynsym defines is in the ELF file open
 * at FD (mapped from file offset MAP_OFF): EXE for the executable (its own
 * TLS block), else a library (a slot of its GOT the loader filled). 0, or
 * -ENOENT: not an ELF file, or MAP_OFF in no PT_LOAD.
 */
int labels_elf__tls(int fd, __u64 map_off, bool exe, const char *name, struct labels_tls *out);

/*
 * Reads the ELF file open at FD (mapped from file offset MAP_OFF) with
 * pread only: every size and offset it holds is untrusted and bounded.
 * 0, or -ENOENT: not an ELF file, or MAP_OFF in no PT_LOAD.
 */
int labels_elf__read(int fd, __u64 map_off, struct labels_exe *out);

#endif /* EBPFPROF_LABELS_ELF_H */
