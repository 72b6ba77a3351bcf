/* gopcln_synth.h -- tiny synthetic Go binaries, one per pclntab format, for the unit test and the fuzz seeds */
#ifndef EBPFPROF_GOPCLN_SYNTH_H
#define EBPFPROF_GOPCLN_SYNTH_H

#include <stdbool.h>
#include <string.h>
#include <elf.h>
#include <linux/types.h>

static inline void put64(__u8 *p, __u64 v)
{
	for (int i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
}

/*
 * Synthetic tables for the formats no installed Go writes (1.2 - 1.17) and
 * for 1.18/1.20 without depending on what is installed: a tiny ELF file with
 * no section headers, a text segment, a read-only segment with the table and
 * the inline tree, and a data segment with moduledata. Two functions:
 * main.outer at 0x401000 (0x100 bytes; [0x20, 0x40) is main.inl inlined from
 * b.go:5, called at a.go:11) and main.leaf at 0x401100 (0x80 bytes, a.go:20).
 */
enum syn_ver { SYN_111, SYN_115, SYN_116, SYN_118, SYN_120 };

#define SYN_SIZE 0x15000
#define SYN_TEXT 0x401000ULL
#define SYN_TAB 0x500000ULL	/* file offset 0x2000 */
#define SYN_TREE 0x510000ULL	/* file offset 0x12000 */
#define SYN_MD 0x600000ULL	/* file offset 0x14000 */
#define SYN_GOFUNC (SYN_TREE - 0x100)

static inline void w16(__u8 *p, __u16 v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static inline void w32(__u8 *p, __u32 v)
{
	w16(p, v);
	w16(p + 2, v >> 16);
}

/* a pc-value table of N runs (value, length in bytes); returns its size */
static inline size_t pcvals(__u8 *p, const int *vals, const int *lens, int n)
{
	size_t k = 0;
	int prev = -1;

	for (int i = 0; i < n; i++) {
		int d = vals[i] - prev;
		__u32 uv = d < 0 ? (__u32)(-2 * d - 1) : (__u32)(2 * d);

		for (__u32 x = uv;; x >>= 7) {
			p[k++] = (x & 0x7f) | (x > 0x7f ? 0x80 : 0);
			if (x <= 0x7f)
				break;
		}
		for (__u32 x = lens[i];; x >>= 7) {
			p[k++] = (x & 0x7f) | (x > 0x7f ? 0x80 : 0);
			if (x <= 0x7f)
				break;
		}
		prev = vals[i];
	}
	p[k++] = 0;
	return k;
}

static inline void syn_phdr(__u8 *ph, __u32 flags, __u64 off, __u64 vaddr, __u64 size)
{
	w32(ph, PT_LOAD);
	w32(ph + 4, flags);
	put64(ph + 8, off);
	put64(ph + 16, vaddr);
	put64(ph + 24, vaddr);
	put64(ph + 32, size);
	put64(ph + 40, size);
	put64(ph + 48, 0x1000);
}

static inline void syn_elf(__u8 *img)
{
	static const __u8 ident[16] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };

	memcpy(img, ident, 16);
	w16(img + 16, 2);		/* ET_EXEC */
	w16(img + 18, 62);		/* EM_X86_64 */
	w32(img + 20, 1);
	put64(img + 24, SYN_TEXT);
	put64(img + 32, 64);		/* e_phoff */
	w16(img + 52, 64);		/* e_ehsize */
	w16(img + 54, 56);		/* e_phentsize */
	w16(img + 56, 3);
	syn_phdr(img + 64, 5, 0x1000, SYN_TEXT, 0x1000);		/* R X */
	syn_phdr(img + 120, 4, 0x2000, SYN_TAB, 0x12000);		/* R */
	syn_phdr(img + 176, 6, 0x14000, SYN_MD, 0x1000);		/* RW */
}

struct syn_func {
	__u64 entry;
	__u32 name, pcfile, pcln, pcinl;	/* name: offset of the name; pc*: table offsets */
};

/* writes one _func record at REC (offset in TAB) */
static inline void syn_record(enum syn_ver v, __u8 *tab, size_t rec, const struct syn_func *f)
{
	bool inl = f->pcinl;
	size_t first = v >= SYN_118 ? 4 : 8, p;
	int npc = inl ? (v <= SYN_111 ? 2 : 3) : 0;
	int nfd = inl ? (v == SYN_115 ? 5 : v == SYN_111 ? 3 : 4) : 0;
	int fd_inl = v == SYN_115 ? 4 : v == SYN_111 ? 2 : 3;

	if (v >= SYN_118)
		w32(tab + rec, f->entry - SYN_TEXT);
	else
		put64(tab + rec, f->entry);
	w32(tab + rec + first, f->name);
	w32(tab + rec + first + 16, f->pcfile);
	w32(tab + rec + first + 20, f->pcln);
	w32(tab + rec + first + 24, npc);
	if (v >= SYN_116)
		w32(tab + rec + first + 28, 0);	/* cuOffset */
	if (v == SYN_111)
		w32(tab + rec + first + 28, nfd);
	/* the byte-sized nfuncdata ends the fixed part */
	p = rec + (v == SYN_120 ? 44 : v == SYN_118 ? 40 : v == SYN_116 ? 44 : 40);
	if (v != SYN_111)
		tab[p - 1] = nfd;
	if (!inl)
		return;
	w32(tab + p + 4 * (npc - 1), f->pcinl);	/* PCDATA_InlTreeIndex is the last one */
	p += 4 * npc;
	if (v >= SYN_118) {
		for (int i = 0; i < nfd; i++)
			w32(tab + p + 4 * i, i == fd_inl ? SYN_TREE - SYN_GOFUNC : ~0u);
		return;
	}
	/* SYN_TAB is page aligned: pointers are aligned within the table */
	p = (p + 7) & ~(size_t)7;
	put64(tab + p + 8 * fd_inl, SYN_TREE);
}

static inline void syn_tree(enum syn_ver v, __u8 *tree, __u32 inl_name)
{
	if (v == SYN_120) {
		w32(tree + 4, inl_name);
		w32(tree + 8, 0x10);		/* parentPc */
		w32(tree + 12, 4);		/* startLine */
	} else if (v == SYN_111) {
		w32(tree, ~0u);			/* parent -1 */
		w32(tree + 4, 1);		/* global file 1: a.go */
		w32(tree + 8, 11);
		w32(tree + 12, inl_name);
	} else {
		w16(tree, 0xffff);		/* parent -1 */
		w32(tree + 4, 0);
		w32(tree + 8, 11);
		w32(tree + 12, inl_name);
		w32(tree + 16, 0x10);
	}
}

static inline void build_synth(enum syn_ver v, __u8 *img)
{
	static const char names[] = "\0main.outer\0main.leaf\0main.inl";
	static const char files[] = "a.go\0b.go";
	/* main.outer: a.go 10, 11, then b.go:5 inlined, then a.go:12; main.leaf: a.go:20 */
	static const int f_lens[] = { 0x20, 0x20, 0xc0 }, l_lens[] = { 0x10, 0x10, 0x20, 0xc0 };
	static const int ln0[] = { 10, 11, 5, 12 }, inl0[] = { -1, 0, -1 }, ln1[] = { 20 };
	bool v12 = v <= SYN_115;
	int fa = v12 ? 1 : 0, fb = v12 ? 2 : 1;	/* file numbers: global 1-based, or per CU */
	int fl0[] = { fa, fb, fa }, fl1[] = { fa }, len1[] = { 0x80 };
	__u8 *tab = img + 0x2000;
	size_t names_at = v12 ? 0x300 : 0x100, pct = v12 ? 0x500 : 0x400, ft = v12 ? 16 : 0x800;
	size_t k = 1, hdr_words = v == SYN_116 ? 7 : 8;
	__u32 nbase = v12 ? names_at : 0;
	struct syn_func f[2] = {
		{ .entry = SYN_TEXT, .name = nbase + 1 },
		{ .entry = SYN_TEXT + 0x100, .name = nbase + 12 },
	};
	__u32 magic = v12 ? 0xfffffffb : v == SYN_116 ? 0xfffffffa : v == SYN_118 ? 0xfffffff0 :
						      0xfffffff1;
	size_t pct_base = v12 ? 0 : pct;

	memset(img, 0, SYN_SIZE);
	syn_elf(img);
	/* pc-value tables; offset 0 means none, so they start one byte in */
	f[0].pcfile = pct + k - pct_base;
	k += pcvals(tab + pct + k, fl0, f_lens, 3);
	f[0].pcln = pct + k - pct_base;
	k += pcvals(tab + pct + k, ln0, l_lens, 4);
	f[0].pcinl = pct + k - pct_base;
	k += pcvals(tab + pct + k, inl0, f_lens, 3);
	f[1].pcfile = pct + k - pct_base;
	k += pcvals(tab + pct + k, fl1, len1, 1);
	f[1].pcln = pct + k - pct_base;
	k += pcvals(tab + pct + k, ln1, len1, 1);
	memcpy(tab + names_at, names, sizeof(names));
	w32(tab, magic);
	tab[6] = 1;
	tab[7] = 8;
	if (v12) {
		put64(tab + 8, 2);
		/* the file table's offset follows the nfunc pairs and the end pc */
		w32(tab + ft + 40, 0x400);
		memcpy(tab + 0x380, files, sizeof(files));
		w32(tab + 0x400, 3);
		w32(tab + 0x404, 0x380);
		w32(tab + 0x408, 0x385);
	} else {
		/* nfunc, nfiles, [textStart,] names, cutab, filetab, pctab, function table */
		__u64 w[8] = { 2, 2, SYN_TEXT, names_at, 0x200, 0x300, pct, ft };

		if (v == SYN_116)
			memmove(w + 2, w + 3, 5 * sizeof(w[0]));
		for (size_t i = 0; i < hdr_words; i++)
			put64(tab + 8 + 8 * i, w[i]);
		w32(tab + 0x200, 0);		/* CU files: a.go, b.go */
		w32(tab + 0x204, 5);
		memcpy(tab + 0x300, files, sizeof(files));
	}
	/* function table: (entry, record offset) pairs and the end, records after it */
	for (int i = 0; i <= 2; i++) {
		__u64 pc = SYN_TEXT + 0x100 * i - (i == 2 ? 0x80 : 0);
		/* from the table's start (1.2) or from the function table */
		size_t rec = 0x100 * (i + 1);

		if (v >= SYN_118) {
			w32(tab + ft + 8 * i, pc - SYN_TEXT);
			if (i < 2)
				w32(tab + ft + 8 * i + 4, rec);
		} else {
			put64(tab + ft + 16 * i, pc);
			if (i < 2)
				put64(tab + ft + 16 * i + 8, rec);
		}
		if (i < 2)
			syn_record(v, tab, (v12 ? 0 : ft) + rec, &f[i]);
	}
	syn_tree(v, img + 0x12000, nbase + 22);
	if (v >= SYN_118) {
		__u8 *md = img + 0x14000;
		int gofunc = v == SYN_120 ? 40 : 38;

		put64(md, SYN_TAB);
		put64(md + 8 * 1, SYN_TAB + names_at);
		put64(md + 8 * 4, SYN_TAB + 0x200);
		put64(md + 8 * 7, SYN_TAB + 0x300);
		put64(md + 8 * 10, SYN_TAB + pct);
		put64(md + 8 * 13, SYN_TAB + ft);
		put64(md + 8 * 16, SYN_TAB + ft);
		put64(md + 8 * 22, SYN_TEXT);
		put64(md + 8 * gofunc, SYN_GOFUNC);
	}
}

static inline __u64 get64(const __u8 *p)
{
	__u64 v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/*
 * What lld makes of a PIE without --apply-dynamic-relocs: ET_DYN, the words
 * holding addresses are 0 in the file, their values only in R_X86_64_RELATIVE
 * addends (textStart in the header, the moduledata pointers).
 */
static inline void syn_to_relocs(__u8 *img)
{
	static const int md_words[] = { 0, 1, 4, 7, 10, 13, 16, 22, 38 };
	__u64 words[10], n = 0;
	__u8 *dyn = img + 0x14800, *rela = img + 0x14900;

	w16(img + 16, 3);		/* ET_DYN */
	w16(img + 56, 4);
	w32(img + 232, 2);		/* PT_DYNAMIC */
	put64(img + 232 + 8, 0x14800);
	put64(img + 232 + 16, SYN_MD + 0x800);
	put64(img + 232 + 32, 0x40);
	words[n++] = SYN_TAB + 8 + 16;	/* pcHeader.textStart */
	for (size_t i = 0; i < sizeof(md_words) / sizeof(md_words[0]); i++)
		words[n++] = SYN_MD + 8 * md_words[i];
	for (__u64 i = 0; i < n; i++) {
		__u8 *word = img + (words[i] < SYN_MD ? words[i] - SYN_TAB + 0x2000 :
							words[i] - SYN_MD + 0x14000);

		put64(rela + 24 * i, words[i]);
		put64(rela + 24 * i + 8, 8);	/* R_X86_64_RELATIVE */
		put64(rela + 24 * i + 16, get64(word));
		put64(word, 0);
	}
	put64(dyn, 7);			/* DT_RELA */
	put64(dyn + 8, SYN_MD + 0x900);
	put64(dyn + 16, 8);		/* DT_RELASZ */
	put64(dyn + 24, 24 * n);
	put64(dyn + 32, 9);		/* DT_RELAENT */
	put64(dyn + 40, 24);
}

#endif /* EBPFPROF_GOPCLN_SYNTH_H */
