/* goheap_find.c -- where a Go binary keeps runtime.mbuckets and MemProfileRate, stripped or not */
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "goheap_find.h"
#include "symbolize/elf_syms.h"
#include "symbolize/go/gopclntab.h"

#define BUILDINFO_SCAN (64u << 10)	/* the start of the data segment, where Go puts it */
#define CODE_SCAN 512			/* the loads sought are near each function's start */

/* the section NAME's [addr, addr + size) and file offset; false when absent */
static bool section(Elf *e, const char *name, GElf_Shdr *out)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(e, &shstrndx))
		return false;
	while ((scn = elf_nextscn(e, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, out))
			continue;
		n = elf_strptr(e, shstrndx, out->sh_name);
		if (n && !strcmp(n, name))
			return true;
	}
	return false;
}

static void read_segments(Elf *e, struct goheap_layout *l)
{
	size_t n = 0;
	GElf_Phdr ph;

	elf_getphdrnum(e, &n);
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (!l->first_load_set || ph.p_vaddr < l->first_load) {
			l->first_load = ph.p_vaddr & ~(__u64)0xfff;
			l->first_load_set = true;
		}
		if ((ph.p_flags & PF_W) && l->n_rw < GOHEAP_RW_MAX)
			l->rw[l->n_rw++] = (struct goheap_range){ ph.p_vaddr, ph.p_vaddr + ph.p_memsz,
								  ph.p_offset };
		if ((ph.p_flags & PF_X) && l->n_x < GOHEAP_RW_MAX)
			l->x[l->n_x++] = (struct goheap_range){ ph.p_vaddr, ph.p_vaddr + ph.p_filesz,
								ph.p_offset };
	}
}

static int read_version(int fd, Elf *e, struct goheap_layout *l)
{
	size_t len = BUILDINFO_SCAN;
	__u8 *buf = malloc(len);
	GElf_Shdr sh;
	__u64 off;
	ssize_t got;
	int err = -ENOENT;

	if (!buf)
		return -ENOMEM;
	off = section(e, ".go.buildinfo", &sh) ? sh.sh_offset : l->n_rw ? l->rw[0].off : 0;
	got = pread(fd, buf, len, off);
	if (got > 0)
		err = goheap_buildinfo_version(buf, got, l->version, sizeof(l->version));
	free(buf);
	return err;
}

/* runtime.mbuckets and runtime.MemProfileRate in .symtab, when it was kept */
static void from_symtab(Elf *e, struct goheap_layout *l)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			const char *n;

			if (!gelf_getsym(d, i, &sym) || !sym.st_value)
				continue;
			n = elf_strptr(e, sh.sh_link, sym.st_name);
			if (n && !strcmp(n, "runtime.mbuckets"))
				l->mbuckets = sym.st_value;
			else if (n && !strcmp(n, "runtime.MemProfileRate"))
				l->rate = sym.st_value, l->rate_sym = true;
		}
	}
}

bool goheap_layout__writable(const struct goheap_layout *l, __u64 vaddr)
{
	for (int i = 0; i < l->n_rw; i++)
		if (vaddr >= l->rw[i].start && vaddr + 8 <= l->rw[i].end)
			return true;
	return false;
}

/* the RIP-relative load targets of function NAME's first bytes, read from the file */
static int func_loads(int fd, const struct gopclntab *t, const struct goheap_layout *l,
		      const char *name, __u64 *out, int max)
{
	__u64 entry, end;
	__u8 code[CODE_SCAN];
	size_t len;

	if (gopclntab__find_func(t, name, &entry, &end))
		return 0;
	len = end - entry < CODE_SCAN ? end - entry : CODE_SCAN;
	for (int i = 0; i < l->n_x; i++) {
		const struct goheap_range *r = &l->x[i];

		if (entry < r->start || entry + len > r->end)
			continue;
		if (pread(fd, code, len, r->off + (entry - r->start)) != (ssize_t)len)
			return 0;
		return goheap_rip_loads(code, len, entry, out, max);
	}
	return 0;
}

/* whether VADDR lies in a section the linker keeps for data without pointers */
static bool in_noptr(Elf *e, __u64 vaddr)
{
	static const char *const names[] = { ".noptrdata", ".noptrbss" };
	GElf_Shdr sh;

	for (int i = 0; i < 2; i++)
		if (section(e, names[i], &sh) && vaddr >= sh.sh_addr &&
		    vaddr + 8 <= sh.sh_addr + sh.sh_size)
			return true;
	return false;
}

/*
 * A stripped binary: .gopclntab still locates runtime functions, and those
 * load the variables RIP-relatively. mProf_FlushLocked's only global is
 * mbuckets. profilealloc reads mcache0 (for the P-less case) and then
 * MemProfileRate, both in sections without GC pointers (.noptrdata, or
 * .noptrbss as the rate is set by an initializer; mcache0 points outside
 * the GC heap): the rate is the last of them. The process checks mbuckets'
 * candidate before use (goheap.c).
 */
static void from_code(int fd, Elf *e, struct goheap_layout *l)
{
	struct gopclntab *t = gopclntab__open(fd);
	__u64 cand[16];
	int n;

	if (!t)
		return;
	n = func_loads(fd, t, l, "runtime.mProf_FlushLocked", cand, 16);
	for (int i = 0; i < n && !l->mbuckets; i++)
		if (goheap_layout__writable(l, cand[i]))
			l->mbuckets = cand[i];
	l->mbuckets_from_code = l->mbuckets != 0;
	n = func_loads(fd, t, l, "runtime.profilealloc", cand, 16);
	for (int i = 0; i < n && !l->rate_sym; i++)
		if (in_noptr(e, cand[i]))
			l->rate = cand[i];
	gopclntab__free(t);
}

int goheap_layout__find(int fd, struct goheap_layout *l)
{
	int err = 0;
	GElf_Ehdr eh;
	Elf *e;

	memset(l, 0, sizeof(*l));
	e = elf_open_read(fd, &err);
	if (!e)
		return err == -ENOENT ? -ENOENT : err;
	if (!gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64 || eh.e_ident[EI_CLASS] != ELFCLASS64) {
		err = -ENOENT;	/* x86-64 only: the code scan decodes its instructions */
		goto out;
	}
	l->pie = eh.e_type == ET_DYN;
	read_segments(e, l);
	err = read_version(fd, e, l);
	if (err)
		goto out;
	if (!goheap_version_known(l->version)) {
		err = -ENOTSUP;
		goto out;
	}
	from_symtab(e, l);
	if (!l->mbuckets || !l->rate)
		from_code(fd, e, l);
	err = l->mbuckets ? 0 : -ESRCH;
out:
	elf_end(e);
	return err;
}
