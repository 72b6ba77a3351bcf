/* labels_elf.h -- what an executable says of its labels: its Go version, its custom-labels symbols, its TLS block */
#ifndef EBPFPROF_LABELS_ELF_H
#define EBPFPROF_LABELS_ELF_H

#include <stdbool.h>
#include <linux/types.h>

#define LABELS_GO_VERSION_MAX 64

struct labels_exe {
	int go;			/* 0: go_version read; -ENOENT: no .go.buildinfo; -EINVAL: unreadable */
	char go_version[LABELS_GO_VERSION_MAX];
	__u64 tls_block;	/* PT_TLS memsz rounded up to its alignment (x86-64: it ends at fsbase); 0: none */
	bool custom;		/* exports custom-labels' two symbols (ABI v0) */
	__u64 cl_version;	/* custom_labels_abi_version's vaddr (4 bytes) */
	__u64 cl_data;		/* custom_labels_thread_local_data's offset in the TLS block */
	__u64 map_vaddr;	/* the vaddr of the file offset the caller mapped */
};

/*
 * Reads the ELF file open at FD (mapped from file offset MAP_OFF) with
 * pread only: every size and offset it holds is untrusted and bounded.
 * 0, or -ENOENT: not an ELF file, or MAP_OFF in no PT_LOAD.
 */
int labels_elf__read(int fd, __u64 map_off, struct labels_exe *out);

#endif /* EBPFPROF_LABELS_ELF_H */
