/* gopclntab.c -- Go's pc-line table: header and function table checks, pc-value tables, lookups */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "gopclntab_int.h"
#include "lib/array.h"
#include "lib/log.h"
#include "lib/sigbus.h"

/* a u32 varint has at most 5 bytes */
#define VARINT_MAX_BYTES 5

static size_t functab_field(const struct gopclntab *t)
{
	return t->ver >= PCLN_118 ? 4 : t->ptr_size;
}

/* size of the fixed part of a _func record, before its pcdata and funcdata arrays */
static size_t func_fixed_size(const struct gopclntab *t)
{
	switch (t->ver) {
	case PCLN_120:
		/* entryoff, 9 u32 (startLine added), funcID, flag, pad, nfuncdata */
		return 44;
	case PCLN_118:
		return 40;
	case PCLN_116:
		/* entry, 8 u32 (with cuOffset), funcID, flag, pad, nfuncdata */
		return t->ptr_size + 36;
	default:
		/* entry, 7 u32, then nfuncdata (an int32, or byte 3 of it) */
		return t->ptr_size + 32;
	}
}

/* the function table is checked sorted at open, so these reads cannot fail */
static __u64 functab_pc(const struct gopclntab *t, __u32 i)
{
	size_t f = functab_field(t);
	__u64 v = 0;

	pcln_word(t, t->functab + 2 * (size_t)i * f, f, &v);
	return t->ver >= PCLN_118 ? t->text_start + v : v;
}

int pcln_func(const struct gopclntab *t, __u32 idx, struct func_info *fi)
{
	size_t f = functab_field(t), first = t->ver >= PCLN_118 ? 4 : t->ptr_size;
	size_t fixed = func_fixed_size(t), fd_size = t->ver >= PCLN_118 ? 4 : t->ptr_size;
	__u64 funcoff, rec_entry;
	__u32 n32 = 0;

	if (idx >= t->nfunc ||
	    !pcln_word(t, t->functab + (2 * (size_t)idx + 1) * f, f, &funcoff) ||
	    funcoff > t->size - t->funcdata)
		return -EINVAL;
	fi->idx = idx;
	fi->entry = functab_pc(t, idx);
	fi->end = functab_pc(t, idx + 1);
	fi->rec = t->funcdata + funcoff;
	if (!pcln_in(t, fi->rec, fixed) || !pcln_word(t, fi->rec, first, &rec_entry))
		return -EINVAL;
	/* the record must agree with the table that led to it */
	if ((t->ver >= PCLN_118 ? t->text_start + rec_entry : rec_entry) != fi->entry)
		return -EINVAL;
	pcln_u32(t, fi->rec + first, &fi->nameoff);
	pcln_u32(t, fi->rec + first + 12, &fi->pcsp);
	pcln_u32(t, fi->rec + first + 16, &fi->pcfile);
	pcln_u32(t, fi->rec + first + 20, &fi->pcln);
	pcln_u32(t, fi->rec + first + 24, &fi->npcdata);
	fi->cu_off = ~0u;
	if (t->ver >= PCLN_116)
		pcln_u32(t, fi->rec + first + 28, &fi->cu_off);
	if (t->nfuncdata32) {
		pcln_u32(t, fi->rec + first + 28, &n32);
		fi->nfuncdata = n32 > 0xff ? 0 : n32;
	} else {
		fi->nfuncdata = t->data[fi->rec + fixed - 1];
	}
	fi->pcdata_arr = fi->rec + fixed;
	if (!pcln_in(t, fi->pcdata_arr, (size_t)fi->npcdata * 4))
		return -EINVAL;
	fi->funcdata_arr = fi->pcdata_arr + (size_t)fi->npcdata * 4;
	/* pointer-sized funcdata start at a pointer-aligned address */
	if (t->ver < PCLN_118 && t->ptr_size == 8 && ((t->vaddr + fi->funcdata_arr) & 4))
		fi->funcdata_arr += 4;
	if (!pcln_in(t, fi->funcdata_arr, (size_t)fi->nfuncdata * fd_size))
		fi->nfuncdata = 0;
	return 0;
}

static bool read_varint(const __u8 *d, size_t *p, size_t end, __u32 *v)
{
	__u32 x = 0;

	for (int i = 0; i < VARINT_MAX_BYTES && *p < end; i++) {
		__u8 b = d[(*p)++];

		x |= (__u32)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

/*
 * One (value delta, pc delta) step of a pc-value table: a zigzag varint
 * value delta then a varint pc delta in quanta; a zero value delta ends the
 * table, except as the very first step.
 */
static bool pcvalue_step(const struct gopclntab *t, size_t *p, size_t end, __u64 *pc, __u32 *val,
			 bool first)
{
	__u32 uv, pcd;

	if (!read_varint(t->data, p, end, &uv) || (uv == 0 && !first))
		return false;
	if (!read_varint(t->data, p, end, &pcd))
		return false;
	/* unsigned arithmetic: a corrupt table wraps instead of overflowing a signed int */
	*val += (uv & 1) ? ~(uv >> 1) : uv >> 1;
	*pc += (__u64)pcd * t->quantum;
	return true;
}

static bool pcvalue_start(const struct gopclntab *t, __u32 off, size_t *p, size_t *end)
{
	size_t base = t->ver == PCLN_12 ? 0 : t->pctab;

	*end = t->ver == PCLN_12 ? t->size : t->pctab_end;
	if (!off || off >= *end - base)
		return false;
	*p = base + off;
	return true;
}

__s32 pcln_pcvalue(const struct gopclntab *t, __u32 off, __u64 entry, __u64 pc)
{
	__u64 cur = entry;
	__u32 val = ~0u;	/* -1 */
	size_t p, end;

	if (!pcvalue_start(t, off, &p, &end))
		return -1;
	/* every step consumes at least two bytes, so this ends with the table */
	for (bool first = true; pcvalue_step(t, &p, end, &cur, &val, first); first = false)
		if (pc < cur)
			return (__s32)val;
	return -1;
}

bool pcln_pcvalue_max(const struct gopclntab *t, __u32 off, __u64 entry, __s32 *max)
{
	__u64 cur = entry;
	__u32 val = ~0u;
	bool any = false;
	size_t p, end;

	if (!pcvalue_start(t, off, &p, &end))
		return false;
	*max = -1;
	for (bool first = true; pcvalue_step(t, &p, end, &cur, &val, first); first = false) {
		if ((__s32)val > *max)
			*max = val;
		any = true;
	}
	return any;
}

/* One function's SP-delta runs, clipped to its code; 0 or fn's non-zero return. */
static int func_sp_runs(const struct gopclntab *t, const struct func_info *fi, const char *name,
			gopclntab_sp_fn fn, void *ctx)
{
	__u64 cur = fi->entry, prev;
	__u32 val = ~0u;
	size_t p, end;
	int ret = 0;

	if (!pcvalue_start(t, fi->pcsp, &p, &end))
		return 0;	/* no table: no rows, frame pointers there */
	for (bool first = true; !ret && cur < fi->end; first = false) {
		prev = cur;
		if (!pcvalue_step(t, &p, end, &cur, &val, first))
			break;
		if (cur > fi->end)
			cur = fi->end;
		/* a negative or absurd delta is a corrupt table: stop this function there */
		if ((__s32)val < 0 || (__s32)val > GOPCLNTAB_SP_DELTA_MAX)
			break;
		if (cur > prev)
			ret = fn(ctx, prev, cur, (__s32)val, name);
	}
	return ret;
}

int gopclntab__for_each_sp(const struct gopclntab *t, gopclntab_sp_fn fn, void *ctx)
{
	struct func_info fi;
	sigjmp_buf env;
	int ret = 0;

	if (!t || t->faulted)
		return t ? -EIO : 0;
	sigbus__arm(&env);
	if (sigsetjmp(env, 0)) {
		((struct gopclntab *)t)->faulted = true;
		p_warn("a Go binary's file shrank under its mapped table: its unwind rows stop there");
		return -EIO;
	}
	for (__u32 i = 0; !ret && i < t->nfunc; i++) {
		if (pcln_func(t, i, &fi) || fi.end <= fi.entry)
			continue;
		ret = func_sp_runs(t, &fi, pcln_name(t, fi.nameoff), fn, ctx);
	}
	sigbus__disarm();
	return ret;
}

int gopclntab__find_func(const struct gopclntab *t, const char *name, __u64 *entry, __u64 *end)
{
	struct func_info fi;
	sigjmp_buf env;
	volatile int ret = -ENOENT;	/* kept across the jump */

	if (!t || t->faulted)
		return t ? -EIO : -ENOENT;
	sigbus__arm(&env);
	if (sigsetjmp(env, 0)) {
		((struct gopclntab *)t)->faulted = true;
		return -EIO;
	}
	for (__u32 i = 0; i < t->nfunc; i++) {
		const char *fn;

		if (pcln_func(t, i, &fi) || fi.end <= fi.entry)
			continue;
		fn = pcln_name(t, fi.nameoff);
		if (fn && !strcmp(fn, name)) {
			*entry = fi.entry;
			*end = fi.end;
			ret = 0;
			break;
		}
	}
	sigbus__disarm();
	return ret;
}

/* a NUL-terminated string starting at OFF inside [base, end), or NULL */
static const char *table_string(const struct gopclntab *t, size_t base, size_t end, __s64 off)
{
	const char *s;

	if (off < 0 || (__u64)off >= end - base)
		return NULL;
	s = (const char *)t->data + base + off;
	return memchr(s, '\0', end - base - off) ? s : NULL;
}

const char *pcln_name(const struct gopclntab *t, __s64 nameoff)
{
	if (t->ver == PCLN_12)
		return table_string(t, 0, t->size, nameoff);
	return table_string(t, t->names, t->names_end, nameoff);
}

/* Go 1.2 - 1.15: the global file table, entries 1..nfiletab-1 */
const char *pcln_file_index(const struct gopclntab *t, __s64 fno)
{
	__u32 off;

	if (t->ver != PCLN_12 || fno <= 0 || fno >= t->nfiletab ||
	    !pcln_u32(t, t->filetab + 4 * (size_t)fno, &off))
		return NULL;
	return table_string(t, 0, t->size, off);
}

const char *pcln_file(const struct gopclntab *t, const struct func_info *fi, __u64 pc)
{
	__s32 fno = pcln_pcvalue(t, fi->pcfile, fi->entry, pc);
	__u64 idx;
	__u32 off;

	if (t->ver == PCLN_12)
		return pcln_file_index(t, fno);
	/* Go 1.16+: the number is an index into the function's compilation unit's files */
	if (fno < 0 || fi->cu_off == ~0u)
		return NULL;
	idx = (__u64)fi->cu_off + (__u64)fno;
	if (idx >= (t->cutab_end - t->cutab) / 4 || !pcln_u32(t, t->cutab + 4 * idx, &off) ||
	    off == ~0u)
		return NULL;
	return table_string(t, t->filetab, t->filetab_end, off);
}

__u32 pcln_line(const struct gopclntab *t, const struct func_info *fi, __u64 pc)
{
	__s32 line = pcln_pcvalue(t, fi->pcln, fi->entry, pc);

	return line < 0 ? 0 : line;
}

static bool quantum_ok(__u8 q)
{
	return q == 1 || q == 2 || q == 4;
}

/* the magic, pad, quantum and pointer size of a pcHeader at D (at least 8 bytes) */
static int header_version(const __u8 *d, bool *be)
{
	static const __u32 magics[] = { PCLN_MAGIC_12, PCLN_MAGIC_116, PCLN_MAGIC_118,
					PCLN_MAGIC_120 };

	if (d[4] || d[5] || !quantum_ok(d[6]) || (d[7] != 4 && d[7] != 8))
		return 0;
	for (int i = 0; i < 4; i++) {
		if (ld32(d, false) == magics[i]) {
			*be = false;
			return PCLN_12 + i;
		}
		if (ld32(d, true) == magics[i]) {
			*be = true;
			return PCLN_12 + i;
		}
	}
	return 0;
}

static int parse_regions(struct gopclntab *t, const __u64 *w, size_t hdr)
{
	__u64 off[5];

	if (t->ver == PCLN_12) {
		/* one region: every offset is relative to the table's start */
		t->names_end = t->cutab_end = t->filetab_end = t->pctab_end = t->size;
		t->functab = hdr;
		t->funcdata = 0;
		return 0;
	}
	/* funcname, cu, filetab, pctab and function table offsets, in the linker's order */
	memcpy(off, w + (t->ver == PCLN_116 ? 2 : 3), sizeof(off));
	if (off[0] < hdr)
		return -EINVAL;
	for (int i = 1; i < 5; i++)
		if (off[i] < off[i - 1])
			return -EINVAL;
	if (off[4] > t->size)
		return -EINVAL;
	t->names = off[0];
	t->names_end = t->cutab = off[1];
	t->cutab_end = t->filetab = off[2];
	t->filetab_end = t->pctab = off[3];
	t->pctab_end = t->functab = t->funcdata = off[4];
	return 0;
}

/* Go 1.2: the word after the function table is the offset of the file table */
static int parse_filetab12(struct gopclntab *t)
{
	size_t f = functab_field(t), at = t->functab + (2 * (size_t)t->nfunc + 1) * f;
	__u32 off, n;

	if (!pcln_u32(t, at, &off) || !pcln_u32(t, off, &n) || !pcln_in(t, off, (size_t)n * 4))
		return -EINVAL;
	t->filetab = off;
	t->nfiletab = n;
	return 0;
}

/* entries sorted by pc (the binary search relies on it), records inside the table */
static int check_functab(struct gopclntab *t)
{
	size_t f = functab_field(t);
	__u64 prev = 0, pc = 0, funcoff = 0;

	for (__u32 i = 0; i <= t->nfunc; i++) {
		pcln_word(t, t->functab + 2 * (size_t)i * f, f, &pc);
		if (pc < prev)
			return -EINVAL;
		prev = pc;
		if (i == t->nfunc)
			break;
		pcln_word(t, t->functab + (2 * (size_t)i + 1) * f, f, &funcoff);
		if (funcoff >= t->size - t->funcdata)
			return -EINVAL;
	}
	/* an unrelocated table (zero pcs, system-linked PIE) cannot be used */
	if (t->ver < PCLN_118 && !functab_pc(t, 0))
		return -EINVAL;
	return 0;
}

/* Go 1.2 - 1.11 keep _func.nfuncdata as an int32; 1.12+ as the last byte of that word */
static void detect_nfuncdata32(struct gopclntab *t)
{
	size_t at = t->ptr_size + 28;

	if (t->ver != PCLN_12)
		return;
	/* in the byte layout [funcID, 0, 0, nfuncdata] the int32's high byte is set somewhere */
	t->nfuncdata32 = true;
	for (__u32 i = 0; i < t->nfunc; i++) {
		__u64 funcoff;

		if (!pcln_word(t, t->functab + (2 * (size_t)i + 1) * t->ptr_size, t->ptr_size,
			       &funcoff) ||
		    !pcln_in(t, funcoff, at + 4))
			continue;
		if (t->data[funcoff + at + (t->be ? 0 : 3)]) {
			t->nfuncdata32 = false;
			return;
		}
	}
}

int pcln_parse(struct gopclntab *t, struct gopcln_elf *ef)
{
	size_t nwords, hdr, f;
	__u64 w[8] = {};
	int ver, err;

	if (t->size < 16 || !(ver = header_version(t->data, &t->be)))
		return -EINVAL;
	t->ver = ver;
	t->quantum = t->data[6];
	t->ptr_size = t->data[7];
	nwords = ver == PCLN_12 ? 1 : ver == PCLN_116 ? 7 : 8;
	hdr = 8 + nwords * t->ptr_size;
	for (size_t i = 0; i < nwords; i++)
		if (!pcln_word(t, 8 + i * t->ptr_size, t->ptr_size, &w[i]))
			return -EINVAL;
	f = functab_field(t);
	err = parse_regions(t, w, hdr);
	if (err)
		return err;
	/* nfunc pairs and the end pc must fit: no size from the header is trusted */
	if (!w[0] || w[0] > (t->size - t->functab) / (2 * f) ||
	    (2 * w[0] + 1) * f > t->size - t->functab)
		return -EINVAL;
	t->nfunc = w[0];
	if (ver == PCLN_12 && parse_filetab12(t))
		return -EINVAL;
	if (ver >= PCLN_118) {
		t->text_start = w[2];
		/* a system linker may leave the word 0 and put the value in a relocation */
		if (!t->text_start && ef)
			t->text_start = gopcln_elf_reloc_addend(ef, t->vaddr + 8 + 2 * t->ptr_size);
		if (!t->text_start)
			return -EINVAL;
	}
	err = check_functab(t);
	if (err)
		return err;
	detect_nfuncdata32(t);
	return 0;
}

bool pcln_header_plausible(const __u8 *p, size_t avail, __u64 rest)
{
	size_t ps, nwords, hdr, f;
	__u64 w[8], functab;
	int ver;
	bool be;

	if (avail < 16 || rest < 16 || !(ver = header_version(p, &be)))
		return false;
	ps = p[7];
	nwords = ver == PCLN_12 ? 1 : ver == PCLN_116 ? 7 : 8;
	hdr = 8 + nwords * ps;
	if (avail < hdr || rest < hdr)
		return false;
	for (size_t i = 0; i < nwords; i++)
		w[i] = ps == 8 ? ld64(p + 8 + i * ps, be) : ld32(p + 8 + i * ps, be);
	f = ver >= PCLN_118 ? 4 : ps;
	functab = hdr;
	if (ver != PCLN_12) {
		const __u64 *off = w + (ver == PCLN_116 ? 2 : 3);

		if (off[0] < hdr)
			return false;
		for (int i = 1; i < 5; i++)
			if (off[i] < off[i - 1])
				return false;
		if (off[4] > rest)
			return false;
		functab = off[4];
	}
	return w[0] && w[0] <= (rest - functab) / (2 * f) && (2 * w[0] + 1) * f <= rest - functab;
}

size_t pcln_table_end(const struct gopclntab *t)
{
	size_t f = functab_field(t), end = t->functab + (2 * (size_t)t->nfunc + 1) * f;
	__u64 funcoff = 0, max_off = 0;
	struct func_info fi;
	__u32 max_i = 0;

	/* Go 1.2 tables interleave records and pc-value tables: keep them whole */
	if (t->ver == PCLN_12)
		return t->size;
	/* the linker writes the records in function order after the function table */
	for (__u32 i = 0; i < t->nfunc; i++) {
		pcln_word(t, t->functab + (2 * (size_t)i + 1) * f, f, &funcoff);
		if (funcoff >= max_off) {
			max_off = funcoff;
			max_i = i;
		}
	}
	if (pcln_func(t, max_i, &fi))
		return t->size;
	funcoff = fi.funcdata_arr + (size_t)fi.nfuncdata * (t->ver >= PCLN_118 ? 4 : t->ptr_size);
	end = funcoff > end ? funcoff : end;
	return end < t->size ? end : t->size;
}

/* find largest entry pc <= vaddr, below the end pc */
static int find_func(const struct gopclntab *t, __u64 vaddr)
{
	__u32 lo = 0, hi = t->nfunc;

	if (vaddr < functab_pc(t, 0) || vaddr >= functab_pc(t, t->nfunc))
		return -1;
	/* invariant: pc(lo - 1) <= vaddr < pc(hi) */
	while (lo < hi) {
		__u32 mid = lo + (hi - lo) / 2;

		if (functab_pc(t, mid) <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int)lo - 1;
}

static int lookup(const struct gopclntab *t, __u64 vaddr, struct src_line *out, int max)
{
	struct func_info fi;
	const char *name;
	int idx, n;

	idx = find_func(t, vaddr);
	if (idx < 0 || pcln_func(t, idx, &fi) || vaddr < fi.entry || vaddr >= fi.end)
		return 0;
	if (t->inl_kind != INL_NONE) {
		n = gopcln_inline_expand(t, &fi, vaddr, out, max);
		if (n > 0)
			return n;
	}
	name = pcln_name(t, fi.nameoff);
	if (!name)
		return 0;
	out[0].function = name;
	out[0].file = pcln_file(t, &fi, vaddr);
	out[0].line = pcln_line(t, &fi, vaddr);
	return 1;
}

static int kept_eq(__u32 id, const void *key, const void *ctx)
{
	const struct gopclntab *t = ctx;

	return t->kept[id - 1].off == *(const size_t *)key;
}

/*
 * The copy of the mapped table's string S (read under the caller's guard),
 * made once: what lookups hand out must outlive a truncation of the file.
 * NULL when out of memory. Called with t->lock held.
 */
static const char *keep(struct gopclntab *t, const char *s)
{
	size_t off = (const __u8 *)s - t->data;
	__u64 h = hash_u64(off, 0);
	__u32 id;
	char *copy;
	size_t len;

	if ((const __u8 *)s < t->data || off >= t->size)
		return s;	/* not the table's */
	id = hmap__find(t->kept_index, h, kept_eq, &off, t);
	if (id)
		return t->kept[id - 1].str;
	if (ARRAY_RESERVE(t->kept, t->cap_kept, t->n_kept + 1))
		return NULL;
	len = strlen(s);
	copy = malloc(len + 1);
	if (!copy)
		return NULL;
	/* a fault in the copy jumps past this function: the caller frees it then */
	t->copying = copy;
	memcpy(copy, s, len + 1);
	t->copying = NULL;
	if (hmap__insert(t->kept_index, h, t->n_kept + 1)) {
		free(copy);
		return NULL;
	}
	t->kept[t->n_kept++] = (struct pcln_kept){ .off = off, .str = copy };
	t->kept_bytes += len + 1 + sizeof(struct pcln_kept) + 16;
	return copy;
}

/* a lookup in a mapped table: guarded, and its strings copied before the guard ends */
static int lookup_mapped(struct gopclntab *t, __u64 vaddr, struct src_line *out, int max)
{
	sigjmp_buf env;
	int n;

	pthread_mutex_lock(&t->lock);
	if (t->faulted || (!t->kept_index && !(t->kept_index = hmap__new()))) {
		pthread_mutex_unlock(&t->lock);
		return 0;
	}
	sigbus__arm(&env);
	if (sigsetjmp(env, 0)) {
		/* the file shrank under the mapping: no name from it again, said once */
		t->faulted = true;
		p_warn("a Go binary's file shrank under its mapped table: its frames stay unnamed from now on");
		free(t->copying);
		t->copying = NULL;
		pthread_mutex_unlock(&t->lock);
		return 0;
	}
	n = lookup(t, vaddr, out, max);
	for (int i = 0; i < n; i++) {
		out[i].function = out[i].function ? keep(t, out[i].function) : NULL;
		out[i].file = out[i].file ? keep(t, out[i].file) : NULL;
	}
	sigbus__disarm();
	pthread_mutex_unlock(&t->lock);
	/* the physical function (last) has a name or there is no frame */
	return n > 0 && out[n - 1].function ? n : 0;
}

int gopclntab__lookup(const struct gopclntab *t, __u64 vaddr, struct src_line *out, int max)
{
	if (!t || !out || max <= 0)
		return 0;
	if (t->map)
		return lookup_mapped((struct gopclntab *)t, vaddr, out, max);
	return lookup(t, vaddr, out, max);
}

/* finds and checks the table, and its inline trees; -EIO when the file shrank under the mapping */
static int read_guarded(struct gopcln_elf *ef, struct gopclntab *t)
{
	sigjmp_buf env;
	int err;

	sigbus__arm(&env);
	/* what the jump skips leaks: a scratch list, once per file truncated while it is read */
	if (sigsetjmp(env, 0))
		return -EIO;
	err = gopcln_find(ef, t);
	/* without inline trees lookups still work: only running out of memory fails */
	if (!err)
		err = gopcln_inline_locate(t, ef);
	sigbus__disarm();
	return err;
}

struct gopclntab *gopclntab__open(int fd)
{
	struct gopcln_elf ef;
	struct gopclntab *t;
	int err;

	t = calloc(1, sizeof(*t));
	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&t->lock, NULL);
	/* ef is cleared first thing, so it can be closed whatever failed */
	err = gopcln_elf_open(&ef, fd);
	if (!err)
		err = read_guarded(&ef, t);
	gopcln_elf_close(&ef);
	if (err) {
		gopclntab__free(t);
		errno = -err;
		return NULL;
	}
	/* the checks read much of the table: its pages go back to the page cache until looked up */
	if (t->map)
		madvise(t->map, t->map_len, MADV_DONTNEED);
	return t;
}

struct gopclntab *gopclntab__from_table(const void *data, size_t size, __u64 vaddr)
{
	struct gopclntab *t;
	int err;

	if (size > GOPCLNTAB_MAX) {
		errno = EFBIG;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	/* one NUL after the table, as load_table() leaves it: every string read ends */
	if (!t || !(t->data = malloc(size + 1))) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&t->lock, NULL);
	memcpy(t->data, data, size);
	t->data[size] = '\0';
	t->size = size;
	t->vaddr = vaddr;
	err = pcln_parse(t, NULL);
	if (err) {
		gopclntab__free(t);
		errno = -err;
		return NULL;
	}
	return t;
}

void gopclntab__free(struct gopclntab *t)
{
	if (!t)
		return;
	if (t->map)
		munmap(t->map, t->map_len);
	else
		free(t->data);
	free(t->inl);
	free(t->inl_pool);
	for (size_t i = 0; i < t->n_kept; i++)
		free(t->kept[i].str);
	free(t->kept);
	hmap__free(t->kept_index);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

void gopclntab__release_pages(struct gopclntab *t)
{
	/* a private read-only file mapping: its pages stay in the page cache, only our hold goes */
	if (t && t->map)
		madvise(t->map, t->map_len, MADV_DONTNEED);
}

/* a mapped table is page cache, not ours: only the strings copied out of it count */
size_t gopclntab__mem_size(const struct gopclntab *t)
{
	size_t n;

	if (!t)
		return 0;
	pthread_mutex_lock((pthread_mutex_t *)&t->lock);
	n = sizeof(*t) + (t->map ? t->kept_bytes : t->size + 1) +
	    t->n_inl * sizeof(*t->inl) + t->inl_pool_size;
	pthread_mutex_unlock((pthread_mutex_t *)&t->lock);
	return n;
}

const char *gopclntab__go_version(const struct gopclntab *t)
{
	static const char *const names[] = { "?", "1.2", "1.16", "1.18", "1.20+" };

	return t && t->ver >= PCLN_12 && t->ver <= PCLN_120 ? names[t->ver] : names[0];
}

size_t gopclntab__func_count(const struct gopclntab *t)
{
	return t ? t->nfunc : 0;
}

int gopclntab__has_inline(const struct gopclntab *t)
{
	return t && t->inl_kind != INL_NONE && t->n_inl;
}
