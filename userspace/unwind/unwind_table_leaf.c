/* unwind_table_leaf.c -- rows for code without CFI whose instructions show a frameless AArch64 leaf (the arm64 vDSO) */
#include <errno.h>
#include <gelf.h>
#include <string.h>
#include "unwind_table_int.h"

#define LEAF_BYTES_MAX (16u << 10)	/* a function longer than this is not looked at */

/*
 * AArch64 encodings: the signal trampoline the BPF walk knows by its words.
 * PACIASP and AUTIASP (6.1's vDSO opens and closes its leaves with them)
 * sign and check x30 in place: a leaf still, its return address stripped of
 * the signature by the walk.
 */
#define A64_MOV_X8_RT_SIGRETURN 0xd2801168u	/* mov x8, #139 */
#define A64_SVC_0 0xd4000001u
#define A64_SP 31
#define A64_FP 29
#define A64_LR 30

static bool is_frame_reg(__u32 r)
{
	return r == A64_FP || r == A64_LR;
}

/* Rd of a data-processing instruction names sp (not xzr): ADD, SUB and the logical ops but ANDS */
static bool writes_sp(__u32 w)
{
	bool s = w & (1u << 29);

	if ((w & 0x1f) != A64_SP)
		return false;
	if (((w >> 23) & 0x3e) == 0x22)
		return !s;	/* add, sub (immediate; with tags too) */
	if (((w >> 23) & 0x3f) == 0x24)
		return ((w >> 29) & 3) != 3;	/* and, orr, eor (immediate) */
	if (((w >> 21) & 0xff) == 0x59)
		return !s;	/* add, sub (extended register) */
	return false;
}

/* an instruction that calls, moves sp, touches the stack, or writes x29 or x30 */
static bool leaves_frame(__u32 w)
{
	__u32 rd = w & 0x1f, rn = (w >> 5) & 0x1f, rt2 = (w >> 10) & 0x1f;

	if ((w & 0xfc000000u) == 0x94000000u || (w & 0xfffffc1fu) == 0xd63f0000u)
		return true;	/* bl, blr: x30 overwritten */
	if ((w & 0x0a000000u) == 0x08000000u)	/* loads and stores */
		return rn == A64_SP || is_frame_reg(rd) || is_frame_reg(rt2);
	if ((w & 0x1c000000u) == 0x10000000u || (w & 0x0e000000u) == 0x0a000000u)
		return writes_sp(w) || is_frame_reg(rd);	/* data processing */
	return false;
}

static __u32 word(const unsigned char *code, size_t i)
{
	__u32 w;

	memcpy(&w, code + 4 * i, sizeof(w));	/* AArch64 code is little-endian, as its hosts are */
	return w;
}

bool unwind_a64__frameless(const void *code, size_t len)
{
	size_t n = len / 4;

	if (!n || len % 4)
		return false;
	/* the signal trampoline stays without a row: the walk reads its frame instead */
	if (n >= 2 && word(code, 0) == A64_MOV_X8_RT_SIGRETURN && word(code, 1) == A64_SVC_0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (leaves_frame(word(code, i)))
			return false;
	return true;
}

/* the file bytes of [vaddr, vaddr + size), through the PT_LOAD holding them; NULL if none does */
static Elf_Data *code_of(Elf *elf, const struct unwind_table *t, __u64 vaddr, __u64 size)
{
	for (size_t i = 0; i < t->n_loads; i++) {
		const struct unwind_load *l = &t->loads[i];

		if (!l->exec || vaddr < l->vaddr || vaddr - l->vaddr > l->filesz ||
		    size > l->filesz - (vaddr - l->vaddr))
			continue;
		/* libelf checks the chunk against the image's size */
		return elf_getdata_rawchunk(elf, l->offset + (vaddr - l->vaddr), size, ELF_T_BYTE);
	}
	return NULL;
}

static Elf_Scn *symbols_of(Elf *elf, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, sh) && (sh->sh_type == SHT_DYNSYM || sh->sh_type == SHT_SYMTAB))
			return scn;
	return NULL;
}

int builder__add_leaves(struct builder *b, Elf *elf, const struct unwind_table *t)
{
	/* CFA = sp, the return address in x30, x29 the caller's */
	static const struct unwind_row leaf = { .cfa_type = UNWIND_CFA_LR };
	Elf_Scn *scn;
	Elf_Data *syms;
	GElf_Shdr sh;
	int err, found = 0;

	if (!(scn = symbols_of(elf, &sh)) || !(syms = elf_getdata(scn, NULL)) || !sh.sh_entsize)
		return -ENOENT;
	for (size_t i = 0; i < syms->d_size / sh.sh_entsize; i++) {
		GElf_Sym s;
		Elf_Data *d;

		if (!gelf_getsym(syms, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
		    !s.st_size || s.st_size > LEAF_BYTES_MAX || s.st_size % 4 ||
		    s.st_value + s.st_size > UINT32_MAX)
			continue;
		d = code_of(elf, t, s.st_value, s.st_size);
		if (!d || !d->d_buf || d->d_size != s.st_size)
			continue;
		if (!unwind_a64__frameless(d->d_buf, d->d_size))
			continue;
		err = builder__add_range(b, s.st_value, s.st_value + s.st_size, &leaf);
		if (err)
			return err;
		found++;
	}
	return found ? 0 : -ENOENT;
}
