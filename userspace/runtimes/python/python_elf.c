/* python_elf.c -- finds the interpreter's symbols (_PyRuntime, the eval loop, Py_Version) in a mapped ELF file */
#include <errno.h>
#include "symbolize/elf_find.h"
#include "python_elf.h"

static const char *const wanted[PY_SYM_COUNT] = {
	[PY_SYM_RUNTIME] = "_PyRuntime",
	[PY_SYM_EVAL] = "_PyEval_EvalFrameDefault",
	[PY_SYM_EVAL_COLD] = "_PyEval_EvalFrameDefault.cold",
	[PY_SYM_VERSION] = "Py_Version",
};

int py_elf__read(int fd, __u64 map_off, struct py_elf *out)
{
	struct elf_found found[PY_SYM_COUNT];
	int err = elf_find__symbols(fd, map_off, wanted, PY_SYM_COUNT, found, &out->map_vaddr);

	for (int k = 0; k < PY_SYM_COUNT; k++) {
		out->sym[k].value = found[k].value;	/* zeroed where the file was no ELF */
		out->sym[k].size = found[k].size;
	}
	if (!err && (!out->sym[PY_SYM_RUNTIME].value || !out->sym[PY_SYM_EVAL].value))
		err = -ENOENT;
	return err;
}
