/* perl_names.c -- the perl layouts we know, and the parsers that name a sub from its CV, GV, stash and HEKs */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "lib/proc_mem.h"
#include "perl_int.h"

#define SVT_PVGV 9
#define SVT_PVHV 12

/*
 * Threaded (MULTIPLICITY) x86-64 builds, offsets from each version's
 * headers (tests/unit/runtimes/test_perl.c checks them against Debian's
 * 5.36 and 5.40). 5.36 and 5.40 lay out everything we read the same way;
 * other versions were not checked and stay native.
 */
#define PERL_LAYOUT_5_36_ON(v)                                                              \
	{                                                                                   \
		.version = (v),                                                            \
		.bpf = { .version = (v), .interp_curstackinfo = 224, .interp_curcop = 208,     \
			 .si_cxstack = 8, .si_prev = 16, .si_cxix = 32, .cx_size = 104,       \
			 .cx_type = 0, .cx_oldcop = 16, .cx_retop = 48, .cx_sub_cv = 72,       \
			 .cop_line = 36, .cop_file = 48, .xcv_start = 40, .sv_flags = 12,      \
			 .padlist_id = 16 },                                                   \
		.xcv_stash = 32, .xcv_gv = 56, .xcv_file = 64, .xcv_flags = 92,              \
		.cvf_named = 0x8000, .xgv_name = 32, .xgv_stash = 40, .xhv_aux = 32,         \
		.aux_name = 0, .aux_name_count = 28, .hek_len = 4, .hek_key = 8,             \
		.hv_has_aux = 0x02000000,                                                  \
	}

static const struct perl_layout layouts[] = {
	PERL_LAYOUT_5_36_ON(0x0524),	/* 5.36 (Debian 12) */
	PERL_LAYOUT_5_36_ON(0x0528),	/* 5.40 (Debian 13) */
};

const struct perl_layout *perl_layout__of(unsigned int version)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].version == (0x0500 | version))
			return &layouts[i];
	return NULL;
}

static int rd(const struct perl_mem *m, __u64 addr, void *buf, size_t len)
{
	if (!addr || addr >= PROC_MEM_USER_END)
		return -EINVAL;	/* NULL, or not a user address */
	return m->read(m->ctx, addr, buf, len);
}

static int rd64(const struct perl_mem *m, __u64 addr, __u64 *v)
{
	return rd(m, addr, v, sizeof(*v));
}

/* printable bytes only (UTF-8's high bytes kept): a name is never a control sequence */
static bool printable(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

/* The HEK at ADDR: its key (not NUL-terminated in memory), cut at size - 1. */
static int hek(const struct perl_mem *m, __u64 addr, char *out, size_t size)
{
	__s32 len;
	int err = rd(m, addr + m->l->hek_len, &len, sizeof(len));

	if (err)
		return err;
	if (len <= 0 || size < 2)
		return -EINVAL;	/* a negative length is a UTF-8 key in a shared HEK: no sub name */
	if ((size_t)len > size - 1)
		len = (__s32)(size - 1);
	err = rd(m, addr + m->l->hek_key, out, (size_t)len);
	if (err)
		return err;
	out[len] = 0;
	return printable(out, (size_t)len) ? 0 : -EINVAL;
}

/* The SV at SV's body and type byte */
static int sv_body(const struct perl_mem *m, __u64 sv, __u64 *body, __u32 *flags)
{
	__u64 head[2];
	int err = rd(m, sv, head, sizeof(head));

	if (err)
		return err;
	*body = head[0];
	*flags = (__u32)(head[1] >> 32);	/* sv_flags: the second word's upper half */
	return 0;
}

/* The name of stash HV ("" when it has none) */
static int stash_name(const struct perl_mem *m, __u64 hv, char *out, size_t size)
{
	__u64 body, name;
	__u32 flags;
	__s32 count;
	int err = sv_body(m, hv, &body, &flags);

	if (err)
		return err;
	if ((flags & 0xff) != SVT_PVHV || !(flags & m->l->hv_has_aux))
		return -EINVAL;
	body += m->l->xhv_aux;
	if ((err = rd64(m, body + m->l->aux_name, &name)) ||
	    (err = rd(m, body + m->l->aux_name_count, &count, sizeof(count))))
		return err;
	/* several names (a stash aliased): the first is its name */
	if (count && (err = rd64(m, name, &name)))
		return err;
	return hek(m, name, out, size);
}

/* Package and name of the sub whose CV body is BODY into pkg and sub */
static int sub_parts(const struct perl_mem *m, __u64 body, char *pkg, char *sub, size_t size)
{
	__u64 gv, gv_body, stash, name;
	__u32 cv_flags, flags;
	int err;

	if ((err = rd64(m, body + m->l->xcv_gv, &gv)) ||
	    (err = rd(m, body + m->l->xcv_flags, &cv_flags, sizeof(cv_flags))))
		return err;
	if (cv_flags & m->l->cvf_named) {
		/* a lexical sub: its own name's HEK, its stash in the CV */
		if ((err = hek(m, gv, sub, size)) || (err = rd64(m, body + m->l->xcv_stash, &stash)))
			return err;
		return stash_name(m, stash, pkg, size);
	}
	if ((err = sv_body(m, gv, &gv_body, &flags)))
		return err;
	if ((flags & 0xff) != SVT_PVGV)
		return -EINVAL;
	if ((err = rd64(m, gv_body + m->l->xgv_name, &name)) || (err = hek(m, name, sub, size)) ||
	    (err = rd64(m, gv_body + m->l->xgv_stash, &stash)))
		return err;
	return stash_name(m, stash, pkg, size);
}

int perl_mem__string(const struct perl_mem *m, __u64 addr, char *out, size_t size)
{
	int err;

	if (size < 2)
		return -EINVAL;
	memset(out, 0, size);
	/* a name near the end of a mapping: read shorter pieces until one fits */
	for (size_t len = size - 1; len; len /= 2) {
		err = rd(m, addr, out, len);
		if (!err)
			break;
		if (len == 1)
			return err;
	}
	out[size - 1] = 0;
	return printable(out, strlen(out)) && out[0] ? 0 : -EINVAL;
}

int perl_mem__sub(const struct perl_mem *m, __u64 cv, __u32 gen, char *name, size_t name_size,
		  char *file, size_t file_size)
{
	char pkg[PERL_NAME_MAX], sub[PERL_NAME_MAX];
	__u64 body, words[PERL_CV_WORDS], fp;
	__u32 flags, pad_id = 0;
	int err = sv_body(m, cv, &body, &flags);

	if (err)
		return err;
	if ((flags & 0xff) != PERL_SVt_PVCV)
		return -EINVAL;
	/* the words BPF read, in one read as BPF does, and the pad list's id */
	if ((err = rd(m, body + m->l->bpf.xcv_start, words, sizeof(words))) ||
	    (words[4] && (err = rd(m, words[4] + m->l->bpf.padlist_id, &pad_id, sizeof(pad_id)))))
		return err;
	if (perl_cv_gen(words, pad_id) != gen)
		return -ESTALE;	/* freed since the sample, another sub in its memory */
	if ((err = sub_parts(m, body, pkg, sub, sizeof(sub))))
		return err;
	snprintf(name, name_size, "%s::%s", pkg, sub);
	file[0] = 0;
	if (!rd64(m, body + m->l->xcv_file, &fp) && fp && perl_mem__string(m, fp, file, file_size))
		file[0] = 0;	/* no file: the name stands alone */
	return 0;
}
