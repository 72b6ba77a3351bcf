/* python_elf.h -- the interpreter's symbols in a mapped ELF file (libpython3.X.so or a static python) */
#ifndef EBPFPROF_PYTHON_ELF_H
#define EBPFPROF_PYTHON_ELF_H

#include <linux/types.h>

enum py_sym { PY_SYM_RUNTIME, PY_SYM_EVAL, PY_SYM_EVAL_COLD, PY_SYM_VERSION, PY_SYM_COUNT };

struct py_elf {
	struct { __u64 value, size; } sym[PY_SYM_COUNT];	/* 0: absent */
	__u64 map_vaddr;	/* vaddr of the file offset the caller mapped */
};

/*
 * Reads the symbols of the ELF file open at fd, and the vaddr its offset
 * map_off has. -ENOENT: no _PyRuntime or no eval loop (not a Python).
 */
int py_elf__read(int fd, __u64 map_off, struct py_elf *out);

#endif /* EBPFPROF_PYTHON_ELF_H */
