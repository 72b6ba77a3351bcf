/* perl_elf.c -- where a perl executable keeps the thread's interpreter: PL_current_context in its static TLS block */
#include <errno.h>
#include <gelf.h>
#include <string.h>
#include "runtimes/static_tls.h"
#include "perl_int.h"

/* the STT_TLS symbol NAME's value in ELF's symbol tables: 0, or -ENOENT */
static int tls_symbol(Elf *elf, const char *name, __u64 *value)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t count;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		count = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < count; i++) {
			const char *s;

			if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_TLS)
				continue;
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (s && !strcmp(s, name)) {
				*value = sym.st_value;
				return 0;
			}
		}
	}
	return -ENOENT;
}

/*
 * The executable's own TLS block is placed from the thread pointer as glibc
 * places its first module (static_tls.h). A shared libperl's block is
 * placed at load time: not ours to know from the file.
 */
int perl_elf__tls_offset(int fd, __s32 *off)
{
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	GElf_Phdr ph, tls = { 0 };
	bool interp = false;
	__u64 value;
	__s64 block;
	size_t n = 0;
	int err = -ENOENT;

	if (!elf)
		return -EINVAL;
	if (elf_getphdrnum(elf, &n))
		n = 0;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph))
			continue;
		interp |= ph.p_type == PT_INTERP;
		if (ph.p_type == PT_TLS)
			tls = ph;
	}
	/* only the program's own block (it has an interpreter), of a sane size and alignment */
	if (!interp || tls.p_memsz > 4096 || static_tls__exe_block(&tls, STATIC_TLS_HOST, &block) ||
	    tls_symbol(elf, "PL_current_context", &value) || value + 8 > tls.p_memsz)
		goto out;
	*off = (__s32)(block + (__s64)value);
	err = 0;
out:
	elf_end(elf);
	return err;
}
