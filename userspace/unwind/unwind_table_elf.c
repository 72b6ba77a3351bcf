/* unwind_table_elf.c -- finds a file's .eh_frame (section or PT_GNU_EH_FRAME) and .debug_frame */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include "unwind_table_int.h"

#ifndef SHF_COMPRESSED
#define SHF_COMPRESSED (1 << 11)
#endif

struct sections {
	Elf_Scn *eh_frame;
	Elf_Scn *debug_frame;
	bool has_shdrs;
	bool go;		/* .gopclntab or .go.buildinfo: a Go binary */
};

/* rows are the rules of the machine the walk runs on (UNWIND_MACHINE): another's files are not ours */
static int check_ehdr(Elf *elf)
{
	const char *ident;
	GElf_Ehdr eh;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	ident = elf_getident(elf, NULL);
	if (!ident || ident[EI_CLASS] != ELFCLASS64 || ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != UNWIND_MACHINE || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		return -ENOEXEC;
	return 0;
}

int unwind_table__read_loads(Elf *elf, struct unwind_table *t)
{
	size_t nph;

	if (elf_getphdrnum(elf, &nph))
		return -EINVAL;
	for (size_t i = 0; i < nph && t->n_loads < UNWIND_LOADS_MAX; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		t->loads[t->n_loads++] = (struct unwind_load){
			.offset = ph.p_offset, .vaddr = ph.p_vaddr, .filesz = ph.p_filesz,
			.exec = ph.p_flags & PF_X,
		};
	}
	return 0;
}

static void find_sections(Elf *elf, struct sections *s)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		s->has_shdrs = true;
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!s->eh_frame && !strcmp(name, ".eh_frame"))
			s->eh_frame = scn;
		else if (!s->debug_frame && !strcmp(name, ".debug_frame"))
			s->debug_frame = scn;
		else if (!strcmp(name, ".gopclntab") || !strcmp(name, ".go.buildinfo"))
			s->go = true;
	}
}

/* the section's bytes; NULL for SHT_NOBITS (a debug file's copy), unreadable or too big */
static Elf_Data *section_data(Elf_Scn *scn)
{
	GElf_Shdr sh;
	GElf_Chdr ch;

	if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size)
		return NULL;
	if (!(sh.sh_flags & SHF_COMPRESSED))
		return elf_rawdata(scn, NULL);
	/* inflate only what claims a sane size: a tiny file can claim gigabytes */
	if (!gelf_getchdr(scn, &ch) || ch.ch_size > UNWIND_DEBUG_FRAME_MAX ||
	    elf_compress(scn, 0, 0) < 0)
		return NULL;
	return elf_getdata(scn, NULL);
}

static int add_section(struct builder *b, Elf_Scn *scn, enum ehframe_format format,
		       size_t *bytes)
{
	struct ehframe_section sec = { .format = format, .aarch64 = UNWIND_AARCH64 };
	Elf_Data *d = section_data(scn);
	GElf_Shdr sh;

	if (!d || !d->d_buf || !d->d_size || !gelf_getshdr(scn, &sh))
		return -ENOENT;
	sec.data = d->d_buf;
	sec.len = d->d_size;
	/* .debug_frame holds absolute addresses: only .eh_frame is position-relative */
	sec.vaddr = format == EHFRAME_EH_FRAME ? sh.sh_addr : 0;
	*bytes = d->d_size;
	return builder__add(b, &sec, format == EHFRAME_EH_FRAME ? 0 : 1);
}

/*
 * Without section headers: PT_GNU_EH_FRAME is .eh_frame_hdr, which names
 * where .eh_frame starts but not its size, so the parse runs to the end of
 * the PT_LOAD segment holding it and stops at the zero terminator.
 */
static int add_eh_frame_by_hdr(Elf *elf, struct builder *b, size_t *bytes)
{
	struct ehframe_section sec = { .stop_at_zero = true, .aarch64 = UNWIND_AARCH64 };
	GElf_Phdr ph, hdr = {};
	__u64 eh_vaddr;
	Elf_Data *d;
	size_t nph;

	if (elf_getphdrnum(elf, &nph))
		return -ENOENT;
	for (size_t i = 0; i < nph; i++)
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_GNU_EH_FRAME)
			hdr = ph;
	if (hdr.p_type != PT_GNU_EH_FRAME || !hdr.p_filesz)
		return -ENOENT;
	d = elf_getdata_rawchunk(elf, hdr.p_offset, hdr.p_filesz, ELF_T_BYTE);
	if (!d || !d->d_buf || ehframe__hdr_eh_frame(d->d_buf, d->d_size, hdr.p_vaddr, &eh_vaddr))
		return -ENOENT;
	for (size_t i = 0; i < nph; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || eh_vaddr < ph.p_vaddr ||
		    eh_vaddr - ph.p_vaddr >= ph.p_filesz)
			continue;
		/* libelf checks the chunk against the file's size */
		d = elf_getdata_rawchunk(elf, ph.p_offset + (eh_vaddr - ph.p_vaddr),
					 ph.p_filesz - (eh_vaddr - ph.p_vaddr), ELF_T_BYTE);
		if (!d || !d->d_buf)
			return -ENOENT;
		sec.data = d->d_buf;
		sec.len = d->d_size;
		sec.vaddr = eh_vaddr;
		*bytes = d->d_size;
		return builder__add(b, &sec, 0);
	}
	return -ENOENT;
}

/* FD: the file, for Go's tables; -1 for an image in memory, which has none read */
static int build(Elf *elf, int fd, struct unwind_table *t)
{
	struct unwind_table_stats *st = &t->stats;
	struct sections s = {};
	struct builder b = { .stats = st };
	int err, found = 0;

	err = check_ehdr(elf) ?: unwind_table__read_loads(elf, t);
	if (err)
		return err;
	find_sections(elf, &s);
	/*
	 * A Go binary's table comes from .eh_frame (its cgo C code) and from
	 * .gopclntab's pcsp tables (its Go code: what Go's runtime unwinds
	 * with, in stripped binaries too, right through assembly that uses rbp
	 * as a plain register). Go's .debug_frame says nothing of rbp and is
	 * wrong across the stack switches of cgo calls and systemstack.
	 */
	if (s.go && fd >= 0) {
		s.debug_frame = NULL;
		err = builder__add_go(&b, fd, 2, &st->go_funcs);
		found += !err;
		if (err == -ENOMEM || err == -E2BIG)
			goto out;	/* else an unreadable table: frame pointers for Go code */
	}
	if (s.eh_frame)
		err = add_section(&b, s.eh_frame, EHFRAME_EH_FRAME, &st->eh_frame_bytes);
	else
		err = add_eh_frame_by_hdr(elf, &b, &st->eh_frame_bytes);
	found += !err;
	if (err && err != -ENOENT)
		goto out;
	if (s.debug_frame) {
		err = add_section(&b, s.debug_frame, EHFRAME_DEBUG_FRAME, &st->debug_frame_bytes);
		found += !err;
		if (err && err != -ENOENT)
			goto out;
	}
	err = found ? builder__finish(&b, t, st->eh_frame_bytes + st->debug_frame_bytes) : -ENOENT;
out:
	builder__release(&b);
	return err;
}

struct unwind_table *unwind_table__build(int fd)
{
	struct unwind_table *t = NULL;
	int err;
	Elf *elf;

	elf = elf_open_read(fd, &err);
	if (!elf)
		goto out_err;
	t = calloc(1, sizeof(*t));
	if (!t) {
		err = -ENOMEM;
		goto out_end;
	}
	err = build(elf, fd, t);
	if (err)
		goto out_end;
	if (elf_read_build_id(fd, t->build_id, sizeof(t->build_id)))
		t->build_id[0] = '\0';
out_end:
	elf_end(elf);
out_err:
	if (!err)
		return t;
	unwind_table__free(t);
	errno = -err;
	return NULL;
}

/* AArch64 code without CFI: rows for its frameless leaves */
static int build_leaves(Elf *elf, struct unwind_table *t)
{
	struct builder b = { .stats = &t->stats };
	int err = builder__add_leaves(&b, elf, t);

	if (!err)
		err = builder__finish(&b, t, 0);
	builder__release(&b);
	return err;
}

struct unwind_table *unwind_table__from_image(const void *image, size_t len)
{
	struct unwind_table *t = NULL;
	int err = -ENOMEM;
	/* libelf reads the bytes where they are (ELF_C_READ_MMAP semantics): none is written */
	Elf *elf = elf_memory((char *)image, len);

	if (!elf) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		goto out_end;
	err = build(elf, -1, t);
	if (err == -ENOENT && UNWIND_AARCH64 && t->n_loads)
		err = build_leaves(elf, t);
out_end:
	elf_end(elf);
	if (!err)
		return t;
	unwind_table__free(t);
	errno = -err;
	return NULL;
}
