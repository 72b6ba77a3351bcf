/* elf_find.h -- named symbols of a mapped ELF file, for runtimes that find their interpreter by its symbols */
#ifndef EBPFPROF_ELF_FIND_H
#define EBPFPROF_ELF_FIND_H

#include <linux/types.h>

struct elf_found {
	__u64 value;		/* st_value; 0: absent (but a TLS variable's offset may be 0: see size) */
	__u64 size;		/* st_size; 0 when the symbol has none */
};

/*
 * Looks NAMES[0, n) up in the symbol tables (.symtab, .dynsym) of the ELF
 * file open at FD, the first definition of each, into OUT[0, n); and the
 * vaddr its file offset MAP_OFF has (a process's mapping bias is its start
 * less this). 0, or a negative errno (-ENOENT: MAP_OFF is in no PT_LOAD).
 */
int elf_find__symbols(int fd, __u64 map_off, const char *const *names, int n,
		      struct elf_found *out, __u64 *map_vaddr);

/* The vaddr of file offset OFF by the PT_LOAD that maps it: 0, or -ENOENT (-EINVAL: no headers). */
struct Elf;
int elf_find__offset_vaddr(struct Elf *elf, __u64 off, __u64 *vaddr);

/*
 * The same in .dynsym alone: the symbols a file exports, for an ABI that
 * asks for exported symbols. A large executable's .symtab is not read.
 */
int elf_find__exported(int fd, __u64 map_off, const char *const *names, int n,
		       struct elf_found *out, __u64 *map_vaddr);

#endif /* EBPFPROF_ELF_FIND_H */
