/* gopclntab_int.h -- internals of gopclntab*.c: the table's layout per Go release, its ELF file */
#ifndef EBPFPROF_GOPCLNTAB_INT_H
#define EBPFPROF_GOPCLNTAB_INT_H

#include <stdbool.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <linux/types.h>
#include "gopclntab.h"
#include "lib/hashmap.h"

/* pcHeader magics, one per table format */
#define PCLN_MAGIC_12 0xfffffffbu	/* Go 1.2 - 1.15 */
#define PCLN_MAGIC_116 0xfffffffau	/* Go 1.16 - 1.17 */
#define PCLN_MAGIC_118 0xfffffff0u	/* Go 1.18 - 1.19 */
#define PCLN_MAGIC_120 0xfffffff1u	/* Go 1.20 and later */

enum pcln_ver { PCLN_12 = 1, PCLN_116, PCLN_118, PCLN_120 };

enum inl_kind {
	INL_NONE,
	INL_OLD16,	/* Go 1.9 - 1.11: parent, file, line, func (int32 each) */
	INL_CALL20,	/* Go 1.12 - 1.19: parent int16, funcID, pad, file, line, func, ppc */
	INL_CALL16,	/* Go 1.20+: funcID, pad[3], nameOff, parentPc, startLine */
};

#define GOPCLN_LOADS_MAX 64

struct gopcln_load {
	__u64 offset, vaddr, filesz;
	__u32 flags;		/* PF_* */
};

/* one R_*_RELATIVE relocation: the word at off becomes addend + load bias */
struct gopcln_reloc {
	__u64 off, addend;
};

/* The ELF file while the table is being read; nothing of it outlives gopclntab__open(). */
struct gopcln_elf {
	int fd;
	void *elf;		/* libelf handle, for the section headers */
	__u64 file_size;
	__u64 dyn_off, dyn_size;	/* PT_DYNAMIC, clamped to the file */
	bool dyn;		/* ET_DYN: words may hold 0 with the value in a RELA relocation */
	bool elf64, elf_be;
	__u16 machine;
	struct gopcln_load loads[GOPCLN_LOADS_MAX];
	size_t n_loads;
	struct gopcln_reloc *relocs;	/* sorted by off, read on first need */
	size_t n_relocs;
	bool relocs_read;
	/*
	 * Buffers of a scan and of the inline trees' collection, owned here so
	 * that gopcln_elf_close() frees them even when a SIGBUS from the mapped
	 * table jumped over their owners' cleanup.
	 */
	__u8 *scan_buf;
	void *trees;
	__u8 *win;		/* read-ahead window of gopcln_elf_read_vaddr() */
	__u64 win_off;
	size_t win_len;
};

/* a scan callback may look this many bytes past the position it is called at */
#define GOPCLN_SCAN_PEEK 512

/*
 * Called by gopcln_elf_scan() at a match: P holds AVAIL bytes of the file
 * from VADDR on (at least GOPCLN_SCAN_PEEK unless the segment ends), REST is
 * what the segment has from VADDR. 0 goes on scanning; anything else stops
 * the scan and is returned.
 */
typedef int (*gopcln_scan_cb)(struct gopcln_elf *ef, const __u8 *p, size_t avail, __u64 vaddr,
			      __u64 rest, void *arg);

/* One function's inline tree, copied into gopclntab.inl_pool. */
struct inl_ref {
	__u32 func;		/* index into the function table */
	__u32 count;		/* entries */
	__u32 pool_off;
};

/* a string of the mapped table, copied where a truncated file cannot fault its readers */
struct pcln_kept {
	size_t off;		/* in data */
	char *str;
};

struct gopclntab {
	__u8 *data;		/* the table: mapped from the file, or a copy followed by one NUL */
	size_t size;		/* bytes of table in data, NUL not counted */
	void *map;		/* the file mapping data lies in (NULL: data is a copy) */
	size_t map_len;
	bool faulted;		/* the file shrank under the mapping: no more lookups */
	__u64 vaddr;		/* where data[0] is loaded, in the file's addresses */
	enum pcln_ver ver;
	bool be;		/* big-endian target */
	bool nfuncdata32;	/* Go 1.2 - 1.11: _func.nfuncdata is an int32, not a byte */
	__u8 quantum, ptr_size;
	__u32 nfunc;
	__u64 text_start;	/* Go 1.18+: entry offsets are relative to it */
	/* [start, end) of each region within data; Go 1.2 tables have one region for all */
	size_t names, names_end;
	size_t cutab, cutab_end;
	size_t filetab, filetab_end;
	size_t pctab, pctab_end;
	size_t functab;		/* nfunc (pc, funcoff) pairs and the end pc */
	size_t funcdata;	/* _func offsets are relative to this */
	__u32 nfiletab;		/* Go 1.2: entries of the file table */
	/* inline trees */
	enum inl_kind inl_kind;
	/* the release's PCDATA_InlTreeIndex and FUNCDATA_InlTree */
	__u8 pcdata_inl, funcdata_inl;
	struct inl_ref *inl;	/* sorted by func */
	size_t n_inl;
	__u8 *inl_pool;
	size_t inl_pool_size;
	/* strings lookups returned, copied out of the mapping; under lock */
	pthread_mutex_t lock;
	struct hmap *kept_index;	/* offset -> kept index + 1 */
	struct pcln_kept *kept;
	size_t n_kept, cap_kept, kept_bytes;
	char *copying;		/* a kept string being copied out of the mapping */
};

/* What lookups need of one _func record, every offset already checked against the table. */
struct func_info {
	__u32 idx;
	size_t rec;		/* offset of the record in data */
	__u64 entry, end;	/* [entry, end): the function's code */
	__u32 nameoff, pcsp, pcfile, pcln, npcdata, cu_off;
	__u8 nfuncdata;
	size_t pcdata_arr;	/* offset of the pcdata offsets array */
	size_t funcdata_arr;	/* offset of the funcdata: u32 offsets (1.18+) or pointers */
};

/* bounded loads: false when [off, off + n) is not inside the table */
static inline bool pcln_in(const struct gopclntab *t, size_t off, size_t n)
{
	return off <= t->size && n <= t->size - off;
}

static inline __u32 ld32(const __u8 *p, bool be)
{
	return be ? (__u32)p[0] << 24 | (__u32)p[1] << 16 | (__u32)p[2] << 8 | p[3] :
		    (__u32)p[3] << 24 | (__u32)p[2] << 16 | (__u32)p[1] << 8 | p[0];
}

static inline __u64 ld64(const __u8 *p, bool be)
{
	__u64 hi = ld32(p + (be ? 0 : 4), be), lo = ld32(p + (be ? 4 : 0), be);

	return hi << 32 | lo;
}

static inline bool pcln_u32(const struct gopclntab *t, size_t off, __u32 *v)
{
	if (!pcln_in(t, off, 4))
		return false;
	*v = ld32(t->data + off, t->be);
	return true;
}

static inline bool pcln_word(const struct gopclntab *t, size_t off, size_t size, __u64 *v)
{
	if (!pcln_in(t, off, size))
		return false;
	*v = size == 8 ? ld64(t->data + off, t->be) : ld32(t->data + off, t->be);
	return true;
}

/* gopclntab.c */
int pcln_func(const struct gopclntab *t, __u32 idx, struct func_info *fi);
__s32 pcln_pcvalue(const struct gopclntab *t, __u32 off, __u64 entry, __u64 pc);
bool pcln_pcvalue_max(const struct gopclntab *t, __u32 off, __u64 entry, __s32 *max);
const char *pcln_name(const struct gopclntab *t, __s64 nameoff);
const char *pcln_file(const struct gopclntab *t, const struct func_info *fi, __u64 pc);
const char *pcln_file_index(const struct gopclntab *t, __s64 fno);
__u32 pcln_line(const struct gopclntab *t, const struct func_info *fi, __u64 pc);

/* gopclntab_elf.c */
int gopcln_elf_open(struct gopcln_elf *ef, int fd);
void gopcln_elf_close(struct gopcln_elf *ef);
int gopcln_elf_read(const struct gopcln_elf *ef, __u64 off, void *buf, size_t len);
int gopcln_elf_vaddr_span(const struct gopcln_elf *ef, __u64 vaddr, __u64 *off, __u64 *avail);
int gopcln_elf_read_vaddr(struct gopcln_elf *ef, __u64 vaddr, void *buf, size_t len);
int gopcln_elf_word(struct gopcln_elf *ef, __u64 vaddr, size_t size, bool be, __u64 *v);
__u64 gopcln_elf_reloc_addend(struct gopcln_elf *ef, __u64 vaddr);
int gopcln_elf_relocs_to(struct gopcln_elf *ef, __u64 addend, __u64 *offs, size_t max);
int gopcln_elf_scan(struct gopcln_elf *ef, const __u8 (*pats)[4], int npats, size_t align,
		    bool writable_first, gopcln_scan_cb cb, void *arg);
int gopcln_find(struct gopcln_elf *ef, struct gopclntab *t);

/* gopclntab_inline.c */
int gopcln_inline_locate(struct gopclntab *t, struct gopcln_elf *ef);
int gopcln_inline_expand(const struct gopclntab *t, const struct func_info *fi, __u64 pc,
			 struct src_line *out, int max);

/* gopclntab.c: checks the header and function table of t->data; 0 or -EINVAL */
int pcln_parse(struct gopclntab *t, struct gopcln_elf *ef);
/* whether AVAIL bytes at P start a pcHeader whose tables fit in REST bytes */
bool pcln_header_plausible(const __u8 *p, size_t avail, __u64 rest);
/* where the last _func record ends (Go 1.16+), or t->size */
size_t pcln_table_end(const struct gopclntab *t);

#endif /* EBPFPROF_GOPCLNTAB_INT_H */
