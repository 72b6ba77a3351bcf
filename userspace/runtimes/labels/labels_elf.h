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

/*
 * Reads the ELF file open at FD (mapped from file offset MAP_OFF) with
 * pread only: every size and offset it holds is untrusted and bounded.
 * 0, or -ENOENT: not an ELF file, or MAP_OFF in no PT_LOAD.
 */
int labels_elf__read(int fd, __u64 map_off, struct labels_exe *out);

#endif /* EBPFPROF_LABELS_ELF_H */
