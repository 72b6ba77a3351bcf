/* elf_find.c -- named symbols of a mapped ELF file, and the vaddr its mapping starts at */
#include <errno.h>
#include <gelf.h>
#include <string.h>
#include "elf_syms.h"
#include "elf_find.h"

/*
 * The name at OFF of the string table STRS, or NULL. The table's bytes are
 * read once, not by a libelf call per symbol; it must end in a NUL, which
 * bounds every name in it.
 */
static const char *name_at(const Elf_Data *strs, __u64 off)
{
	const char *b = strs->d_buf;

	return off < strs->d_size ? b + off : NULL;
}

static void scan_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const char *const *names,
			int n, struct elf_found *out)
{
	Elf_Data *data = elf_getdata(scn, NULL), *strs;
	size_t count = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	GElf_Sym sym;

	strs = elf_getdata(elf_getscn(elf, sh->sh_link), NULL);
	if (!data || !strs || !strs->d_buf || !strs->d_size ||
	    ((const char *)strs->d_buf)[strs->d_size - 1])
		return;
	for (size_t i = 0; i < count; i++) {
		const char *name;

		/*
		 * An import is no definition, though a non-PIE executable gives one
		 * whose address is taken its PLT slot's value. A thread-local
		 * variable's value is its offset in the TLS block: 0 is one.
		 */
		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
		    (!sym.st_value && GELF_ST_TYPE(sym.st_info) != STT_TLS))
			continue;
		name = name_at(strs, sym.st_name);
		for (int k = 0; name && k < n; k++) {
			if (out[k].value || name[0] != names[k][0] || strcmp(name, names[k]))
				continue;
			out[k].value = sym.st_value;
			out[k].size = sym.st_size;
		}
	}
}

int elf_find__offset_vaddr(Elf *elf, __u64 off, __u64 *vaddr)
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

/* NAMES in the symbol tables of type TYPE (0: both), as elf_find__symbols() */
static int find(int fd, __u64 map_off, const char *const *names, int n, struct elf_found *out,
		__u64 *map_vaddr, __u32 type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int err = 0;
	Elf *elf = elf_open_read(fd, &err);

	memset(out, 0, sizeof(*out) * (size_t)n);
	if (!elf)
		return err ? err : -EINVAL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		if (!type || sh.sh_type == type)
			scan_symtab(elf, scn, &sh, names, n, out);
	}
	err = elf_find__offset_vaddr(elf, map_off, map_vaddr);
	elf_end(elf);
	return err;
}

int elf_find__symbols(int fd, __u64 map_off, const char *const *names, int n,
		      struct elf_found *out, __u64 *map_vaddr)
{
	return find(fd, map_off, names, n, out, map_vaddr, 0);
}

int elf_find__exported(int fd, __u64 map_off, const char *const *names, int n,
		       struct elf_found *out, __u64 *map_vaddr)
{
	return find(fd, map_off, names, n, out, map_vaddr, SHT_DYNSYM);
}
