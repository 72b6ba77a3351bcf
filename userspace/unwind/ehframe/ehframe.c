/* ehframe.c -- walks the CIEs and FDEs of .eh_frame / .debug_frame, every size checked */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "ehframe.h"
#include "ehframe_int.h"

/*
 * Real CIEs hold a few bytes of initial instructions; every FDE runs them
 * again, so a bound on their length keeps the whole walk linear in the
 * section's size however a file makes its FDEs share CIEs.
 */
#define CIE_INSNS_MAX 256
#define CIE_CACHE 64

struct entry {
	size_t off;		/* of the length field */
	size_t id_off;		/* of the CIE id / CIE pointer */
	size_t body;		/* first byte after the id */
	size_t end;		/* first byte after the entry */
	__u64 id;
	bool is_cie;
};

struct cie_slot {
	size_t off;
	bool used;
	bool bad;
	struct cie cie;
};

struct walker {
	const struct ehframe_section *sec;
	const __u8 *p;
	struct cie_slot cache[CIE_CACHE];
	struct ehframe_stats *st;
};

static int read_fixed(struct cur *c, int size, bool is_signed, __u64 *v)
{
	union {
		__u16 u16;
		__u32 u32;
		__u64 u64;
	} x;

	if (cur_bytes(c, &x, size))
		return -EINVAL;
	if (size == 2)
		*v = is_signed ? (__u64)(__s64)(__s16)x.u16 : x.u16;
	else if (size == 4)
		*v = is_signed ? (__u64)(__s64)(__s32)x.u32 : x.u32;
	else
		*v = x.u64;
	return 0;
}

/* the value of a pointer's format (low nibble), without applying its base */
static int read_format(struct cur *c, __u8 fmt, __u64 *v)
{
	switch (fmt) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return read_fixed(c, 8, false, v);
	case DW_EH_PE_udata2:
		return read_fixed(c, 2, false, v);
	case DW_EH_PE_sdata2:
		return read_fixed(c, 2, true, v);
	case DW_EH_PE_udata4:
		return read_fixed(c, 4, false, v);
	case DW_EH_PE_sdata4:
		return read_fixed(c, 4, true, v);
	case DW_EH_PE_uleb128:
		return cur_uleb(c, v);
	case DW_EH_PE_sleb128:
		return cur_sleb(c, (__s64 *)v);
	default:
		return -EINVAL;
	}
}

/* DW_EH_PE_aligned: an absolute 8-byte pointer at the next multiple of 8 in memory */
static int read_aligned(struct cur *c, __u64 *v)
{
	__u64 at = c->vaddr + c->off;

	if (cur_skip(c, (8 - (at & 7)) & 7))
		return -EINVAL;
	return read_fixed(c, 8, false, v);
}

static int read_pointer(struct cur *c, __u8 enc, __u64 data_base, __u64 *val)
{
	__u64 base, raw;

	if (enc == DW_EH_PE_omit || (enc & DW_EH_PE_indirect))
		return -EINVAL;
	switch (enc & 0x70) {
	case 0:
		base = 0;
		break;
	case DW_EH_PE_pcrel:
		base = c->vaddr + c->off;
		break;
	case DW_EH_PE_datarel:
		if (!data_base)
			return -EINVAL;
		base = data_base;
		break;
	case DW_EH_PE_aligned:
		if (enc != DW_EH_PE_aligned)
			return -EINVAL;
		return read_aligned(c, val);
	default:		/* textrel, funcrel: no base known here */
		return -EINVAL;
	}
	if (read_format(c, enc & 0x0f, &raw))
		return -EINVAL;
	*val = base + raw;	/* wraps like the address arithmetic it models */
	return 0;
}

/* a pointer read only to be passed over (the personality routine), indirect or not */
static int skip_pointer(struct cur *c, __u8 enc)
{
	__u64 v;

	if (enc == DW_EH_PE_omit)
		return 0;
	if ((enc & 0x70) == DW_EH_PE_aligned)
		return read_aligned(c, &v);
	return read_format(c, enc & 0x0f, &v);
}

int ehframe__read_pointer(const void *buf, size_t len, size_t *off, __u8 enc, __u64 vaddr,
			  __u64 data_base, __u64 *val)
{
	struct cur c = { .p = buf, .len = len, .off = *off, .vaddr = vaddr };
	int err;

	if (*off > len)
		return -EINVAL;
	err = read_pointer(&c, enc, data_base, val);
	if (!err)
		*off = c.off;
	return err;
}

int ehframe__hdr_eh_frame(const void *hdr, size_t len, __u64 vaddr, __u64 *eh_frame)
{
	struct cur c = { .p = hdr, .len = len, .vaddr = vaddr };
	__u8 version, ptr_enc, count_enc, table_enc;

	if (cur_u8(&c, &version) || cur_u8(&c, &ptr_enc) || cur_u8(&c, &count_enc) ||
	    cur_u8(&c, &table_enc) || version != 1)
		return -EINVAL;
	if (ptr_enc == DW_EH_PE_omit)
		return -ENOENT;
	/* datarel in .eh_frame_hdr counts from the header's start */
	return read_pointer(&c, ptr_enc, vaddr, eh_frame) ? -EINVAL : 0;
}

/* 0 and the entry at OFF, 1 for a zero terminator, -EINVAL when it runs past the end */
static int read_entry(const struct walker *w, size_t off, struct entry *e)
{
	struct cur c = { .p = w->p, .len = w->sec->len, .off = off };
	bool eh = w->sec->format == EHFRAME_EH_FRAME, dwarf64 = false;
	__u32 len32;
	__u64 len, id;

	if (read_fixed(&c, 4, false, &len))
		return -EINVAL;
	len32 = len;
	if (!len32)
		return 1;
	if (len32 == 0xffffffff) {
		if (read_fixed(&c, 8, false, &len))
			return -EINVAL;
		dwarf64 = true;
	} else if (len32 >= 0xfffffff0) {
		return -EINVAL;	/* reserved lengths */
	}
	if (len > c.len - c.off)
		return -EINVAL;
	e->off = off;
	e->end = c.off + len;
	e->id_off = c.off;
	c.len = e->end;
	/* .eh_frame keeps a 4-byte CIE pointer even in 64-bit entries */
	if (read_fixed(&c, dwarf64 && !eh ? 8 : 4, false, &id))
		return -EINVAL;
	e->id = id;
	e->body = c.off;
	if (eh)
		e->is_cie = id == 0;
	else
		e->is_cie = dwarf64 ? id == ~0ULL : id == 0xffffffff;
	return 0;
}

/* the "z" augmentation data: which pointer encodings the FDEs use, and flags */
static int parse_aug_data(struct cur *c, const char *aug, struct cie *cie)
{
	__u64 aug_len;
	size_t aug_end;
	__u8 enc;

	if (cur_uleb(c, &aug_len) || aug_len > c->len - c->off)
		return -EINVAL;
	aug_end = c->off + aug_len;
	cie->aug_z = true;
	for (const char *a = aug + 1; *a; a++) {
		struct cur d = *c;

		d.len = aug_end;
		if (*a == 'R') {
			if (cur_u8(&d, &cie->fde_enc))
				return -EINVAL;
		} else if (*a == 'L') {
			if (cur_u8(&d, &enc))
				return -EINVAL;
		} else if (*a == 'P') {
			if (cur_u8(&d, &enc) || skip_pointer(&d, enc))
				return -EINVAL;
		} else if (*a == 'S') {
			cie->signal = true;
		} else if (*a != 'B' && *a != 'G') {
			break;	/* unknown: the length says where its data ends */
		}
		c->off = d.off;
	}
	c->off = aug_end;
	return 0;
}

static int parse_cie(const struct walker *w, const struct entry *e, struct cie *cie)
{
	struct cur c = { .p = w->p, .len = e->end, .off = e->body, .vaddr = w->sec->vaddr };
	bool eh = w->sec->format == EHFRAME_EH_FRAME;
	const char *aug, *nul;
	__u8 version, ra8, seg_size;

	memset(cie, 0, sizeof(*cie));
	cie->addr_size = 8;
	cie->aarch64 = w->sec->aarch64;
	if (cur_u8(&c, &version) || (version != 1 && version != 3 && version != 4))
		return -EINVAL;
	aug = (const char *)c.p + c.off;
	nul = memchr(aug, '\0', c.len - c.off);
	if (!nul)
		return -EINVAL;
	c.off += nul - aug + 1;
	if (version == 4 && (cur_u8(&c, &cie->addr_size) || cur_u8(&c, &seg_size) || seg_size ||
			     (cie->addr_size != 4 && cie->addr_size != 8)))
		return -EINVAL;
	if (cur_uleb(&c, &cie->code_align) || cur_sleb(&c, &cie->data_align))
		return -EINVAL;
	if (version == 1) {
		if (cur_u8(&c, &ra8))
			return -EINVAL;
		cie->ra_reg = ra8;
	} else if (cur_uleb(&c, &cie->ra_reg)) {
		return -EINVAL;
	}
	if (eh)
		cie->fde_enc = DW_EH_PE_absptr;
	else
		cie->fde_enc = cie->addr_size == 4 ? DW_EH_PE_udata4 : DW_EH_PE_udata8;
	if (aug[0] == 'z') {
		if (parse_aug_data(&c, aug, cie))
			return -EINVAL;
	} else if (aug[0]) {
		return -EINVAL;	/* "eh" and others: the layout that follows is unknown */
	}
	cie->insns = c.p + c.off;
	cie->insns_len = c.len - c.off;
	cie->insns_vaddr = c.vaddr + c.off;
	return cie->insns_len > CIE_INSNS_MAX ? -EINVAL : 0;
}

/* the CIE at OFF, parsed once and cached; NULL when it is not a valid CIE */
static const struct cie *get_cie(struct walker *w, size_t off, bool count)
{
	struct cie_slot *s = &w->cache[((__u64)off * 0x9e3779b97f4a7c15ULL) >> 58];
	struct entry e;

	if (s->used && s->off == off)
		return s->bad ? NULL : &s->cie;
	s->used = true;
	s->off = off;
	s->bad = read_entry(w, off, &e) || !e.is_cie || parse_cie(w, &e, &s->cie);
	if (count && s->bad)
		w->st->bad_cies++;
	return s->bad ? NULL : &s->cie;
}

/* 0 with the FDE decoded, 1 when it is empty, -EINVAL when malformed */
static int parse_fde(struct walker *w, const struct entry *e, struct ehframe_fde *fde)
{
	struct cur c = { .p = w->p, .len = e->end, .off = e->body, .vaddr = w->sec->vaddr };
	__u64 range, aug_len;
	size_t cie_off;

	if (w->sec->format == EHFRAME_EH_FRAME) {
		if (e->id > e->id_off)
			return -EINVAL;
		cie_off = e->id_off - e->id;
	} else {
		if (e->id >= w->sec->len)
			return -EINVAL;
		cie_off = e->id;
	}
	fde->cie = get_cie(w, cie_off, false);
	if (!fde->cie)
		return -EINVAL;
	if (read_pointer(&c, fde->cie->fde_enc, 0, &fde->start) ||
	    read_format(&c, fde->cie->fde_enc & 0x0f, &range))
		return -EINVAL;
	if (fde->cie->aug_z && (cur_uleb(&c, &aug_len) || cur_skip(&c, aug_len)))
		return -EINVAL;
	if (fde->start + range < fde->start)
		return -EINVAL;
	fde->end = fde->start + range;
	fde->insns = c.p + c.off;
	fde->insns_len = c.len - c.off;
	fde->insns_vaddr = c.vaddr + c.off;
	return range ? 0 : 1;
}

static int walk_fde(struct walker *w, const struct entry *e, const struct ehframe_ops *ops,
		    void *ctx)
{
	struct ehframe_fde fde;
	int err = parse_fde(w, e, &fde);

	if (err < 0)
		w->st->bad_fdes++;
	if (err)
		return 0;
	w->st->fdes++;
	err = ops->fde(ctx, fde.start, fde.end);
	if (err)
		return err < 0 ? err : 0;
	err = ehframe_run_fde(&fde, ops, ctx);
	if (err > 0)
		w->st->bad_programs++;
	return err < 0 ? err : 0;
}

int ehframe__parse(const struct ehframe_section *sec, const struct ehframe_ops *ops, void *ctx,
		   struct ehframe_stats *st)
{
	struct walker walker = { .sec = sec, .p = sec->data, .st = st }, *w = &walker;
	size_t off = 0;
	int err = 0;

	/* every entry is at least 4 bytes long, so the loop ends */
	while (sec->len - off >= 4) {
		struct entry e;
		int r = read_entry(w, off, &e);

		if (r == 1) {
			if (sec->stop_at_zero)
				break;
			off += 4;
			continue;
		}
		if (r) {
			st->truncated++;
			break;
		}
		if (e.is_cie) {
			st->cies++;
			get_cie(w, off, true);
		} else {
			err = walk_fde(w, &e, ops, ctx);
			if (err)
				break;
		}
		off = e.end;
	}
	return err;
}
