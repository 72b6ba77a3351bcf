/* python_elf.c -- finds the interpreter's symbols (_PyRuntime, the eval loop, Py_Version) in a mapped ELF file */
#include <errno.h>
#include <gelf.h>
#include <string.h>
#include "symbolize/elf_syms.h"
#include "python_elf.h"

static const char *const wanted[PY_SYM_COUNT] = {
	[PY_SYM_RUNTIME] = "_PyRuntime",
	[PY_SYM_EVAL] = "_PyEval_EvalFrameDefault",
	[PY_SYM_EVAL_COLD] = "_PyEval_EvalFrameDefault.cold",
	[PY_SYM_VERSION] = "Py_Version",
};

static void scan_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct py_elf *out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	GElf_Sym sym;

	if (!data)
		return;
	for (size_t i = 0; i < n; i++) {
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym) || !sym.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || (name[0] != '_' && name[0] != 'P'))
			continue;
		for (int k = 0; k < PY_SYM_COUNT; k++) {
			if (out->sym[k].value || strcmp(name, wanted[k]))
				continue;
			out->sym[k].value = sym.st_value;
			out->sym[k].size = sym.st_size;
		}
	}
}

/* vaddr of file offset off by the PT_LOAD that maps it */
static int offset_vaddr(Elf *elf, __u64 off, __u64 *vaddr)
{
	size_t n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (off >= ph.p_offset && off < ph.p_offset + ph.p_filesz) {
			*vaddr = ph.p_vaddr + (off - ph.p_offset);
			return 0;
		}
	}
	return -ENOENT;
}

int py_elf__read(int fd, __u64 map_off, struct py_elf *out)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int err = 0;
	Elf *elf = elf_open_read(fd, &err);

	memset(out, 0, sizeof(*out));
	if (!elf)
		return err ? err : -EINVAL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM))
			scan_symtab(elf, scn, &sh, out);
	}
	err = offset_vaddr(elf, map_off, &out->map_vaddr);
	elf_end(elf);
	if (!err && (!out->sym[PY_SYM_RUNTIME].value || !out->sym[PY_SYM_EVAL].value))
		err = -ENOENT;
	return err;
}
