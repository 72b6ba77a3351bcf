/* thread_local.c -- a thread-local's place from the thread pointer: an executable's block, or a library's GOT slot */
#include <errno.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lib/proc_mem.h"
#include "symbolize/elf_find.h"
#include "symbolize/procfs.h"
#include "static_tls.h"
#include "thread_local.h"

#define STATIC_MAX (16 << 20)	/* a static TLS offset beyond it is no offset we trust */

/* Defined thread-local NAME: its .dynsym index (0: in .symtab only) and entry; 0, or -ENOENT. */
static int tls_symbol(Elf *e, const char *name, unsigned int flags, size_t *index, GElf_Sym *sym)
{
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	const char *s;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize || (sh.sh_type != SHT_DYNSYM &&
		    (sh.sh_type != SHT_SYMTAB || !(flags & THREAD_LOCAL_SYMTAB))))
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 1; data && i < sh.sh_size / sh.sh_entsize; i++) {
			if (!gelf_getsym(data, (int)i, sym) || GELF_ST_TYPE(sym->st_info) != STT_TLS ||
			    sym->st_shndx == SHN_UNDEF)
				continue;
			s = elf_strptr(e, sh.sh_link, sym->st_name);
			if (s && !strcmp(s, name)) {
				*index = sh.sh_type == SHT_DYNSYM ? i : 0;
				return 0;
			}
		}
	}
	return -ENOENT;
}

/*
 * The library's relocation of a thread-local that the loader resolved into
 * its GOT: by symbol index (an exported, preemptible variable), or with no
 * symbol and the variable's offset as addend (a -Bsymbolic or hidden one).
 * TLSDESC and initial-exec slots are read; legacy general dynamic (a
 * DTPMOD64 pair for __tls_get_addr) would need the thread's DTV and the
 * module id: named, so the caller counts it, and not read.
 */
static void tls_reloc(Elf *e, size_t index, const GElf_Sym *sym, struct thread_local *out)
{
	GElf_Ehdr eh;
	bool a64 = gelf_getehdr(e, &eh) && eh.e_machine == EM_AARCH64;
	/* the three kinds' relocation types: x86-64's, or AArch64's */
	__u64 dtpmod = a64 ? R_AARCH64_TLS_DTPMOD : R_X86_64_DTPMOD64,
	      desc = a64 ? R_AARCH64_TLSDESC : R_X86_64_TLSDESC,
	      tpoff = a64 ? R_AARCH64_TLS_TPREL : R_X86_64_TPOFF64;
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	GElf_Shdr sh;
	GElf_Rela r;
	__u64 type;

	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			if (!gelf_getrela(data, (int)i, &r))
				break;
			if ((!index || GELF_R_SYM(r.r_info) != index) &&
			    (GELF_R_SYM(r.r_info) || (__u64)r.r_addend != sym->st_value))
				continue;
			type = GELF_R_TYPE(r.r_info);
			if (type == dtpmod)
				out->kind = THREAD_LOCAL_DYNAMIC;
			if (type != desc && type != tpoff)
				continue;
			out->kind = type == desc ? THREAD_LOCAL_DESC : THREAD_LOCAL_TPOFF;
			out->value = (__s64)r.r_offset;
			return;
		}
	}
}

int thread_local__exe_block(Elf *e, bool *interp, __s64 *base, __u64 *size)
{
	__u64 align;
	GElf_Phdr ph;
	size_t n;
	int err = -ENOENT;

	*interp = false;
	if (elf_getphdrnum(e, &n))
		return -ENOENT;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(e, (int)i, &ph))
			continue;
		*interp |= ph.p_type == PT_INTERP;
		/* a block static_tls refuses (no size, or too large to trust an offset into) is none */
		if (ph.p_type != PT_TLS || static_tls__exe_block(&ph, STATIC_TLS_HOST, base))
			continue;
		align = ph.p_align ? ph.p_align : 1;
		*size = (ph.p_memsz + align - 1) & ~(align - 1);
		err = 0;
	}
	return err;
}

int thread_local__elf(int fd, __u64 map_off, bool exe, const char *name, unsigned int flags,
		      struct thread_local *out)
{
	bool interp;
	__u64 block = 0;
	__s64 base = 0;
	size_t index;
	GElf_Sym sym;
	int err = 0, has_block;
	Elf *e;

	memset(out, 0, sizeof(*out));
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);	/* pread, not mmap: a truncated file cannot SIGBUS us */
	if (!e || elf_kind(e) != ELF_K_ELF || elf_find__offset_vaddr(e, map_off, &out->map_vaddr)) {
		err = -ENOENT;
		goto out;
	}
	has_block = !thread_local__exe_block(e, &interp, &base, &block);
	if (flags & THREAD_LOCAL_BY_INTERP)
		exe = interp;
	out->exe = exe;
	if (tls_symbol(e, name, flags, &index, &sym))
		goto out;
	if (!exe) {
		tls_reloc(e, index, &sym, out);
		goto out;
	}
	if (has_block && sym.st_value + 8 <= block) {
		out->kind = THREAD_LOCAL_STATIC;
		out->value = base + (__s64)sym.st_value;
	}
out:
	elf_end(e);
	return err;
}

/*
 * Why the GOT and not the loader's link_map: the slot is the ABI, the
 * link_map glibc's private layout. glibc resolves a library's TLSDESC pair
 * when it loads it; for a module in static TLS (every library loaded at
 * start, and a dlopen'd one that found room) the resolver is
 * _dl_tlsdesc_return and its argument the variable's offset from the
 * thread pointer, negative on x86-64 and small and positive on AArch64
 * (static_tls.h); for dynamic TLS it is _dl_tlsdesc_dynamic and its
 * argument a pointer to a heap record, an address. So the argument's range
 * tells them apart, with no symbol of ld.so (a lazy pair not resolved yet
 * has a pointer too, and is counted with them). An initial-exec slot holds
 * the offset itself.
 */
int thread_local__got(__u32 pid, const struct proc_map *m, const struct thread_local *t, __s64 *off)
{
	__u64 slot = m->start - t->map_vaddr + (__u64)t->value, words[2];
	int arg = t->kind == THREAD_LOCAL_DESC;	/* a TLSDESC pair is {resolver, argument} */

	if (proc_mem__read(pid, slot, words, (arg + 1) * sizeof(words[0])))
		return -EINVAL;
	*off = (__s64)words[arg];
	if (STATIC_TLS_HOST == STATIC_TLS_VARIANT_2)
		return *off < 0 && *off >= -STATIC_MAX ? 0 : -ENOSYS;
	return *off > 0 && *off <= STATIC_MAX ? 0 : -ENOSYS;
}

int thread_local__offset(const char *proc_root, __u32 pid, const struct proc_map *m, bool exe,
			 const char *name, unsigned int flags, __s64 *off)
{
	struct thread_local t;
	struct stat st;
	int fd, err = procfs__open_mapped(proc_root, pid, m, &fd, &st);

	if (err)
		return -ENOENT;
	err = thread_local__elf(fd, m->pgoff, exe, name, flags, &t);
	close(fd);
	if (err || t.kind == THREAD_LOCAL_NONE)
		return -ENOENT;
	if (t.kind == THREAD_LOCAL_STATIC) {
		*off = t.value;
		return 0;
	}
	return t.kind == THREAD_LOCAL_DYNAMIC ? -ENOSYS : thread_local__got(pid, m, &t, off);
}
