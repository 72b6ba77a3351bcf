/* ruby_parse.c -- CRuby's layouts, and bounded parsers of its objects: strings, arrays, symbols, classes, iseqs */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/proc_mem.h"
#include "ruby_int.h"

/*
 * Offsets from each version's own headers (offsetof on vm_core.h, iseq.h,
 * method.h, internal/class.h of 3.1.2, 3.3.8 and 3.4.10); the parts they
 * share are the RB_* constants of ruby_int.h. 3.4 keeps 3.3's structs up to
 * every field read here (its iseq body grows past local_iseq only) and
 * moves FL_SINGLETON. 3.2 is not here: a class's path is an ivar found
 * through its object shape, not a field. tests/unit/runtimes/test_ruby.c
 * checks them against a live interpreter of each.
 */
static const struct rb_layout layouts[] = {
	{ .version = 0x030100, .cfp_size = 64, .body_insns_info = 120, .body_local_iseq = 176,
	  .str_embed = 16, .str_len_in_flags = true, .ary_embed_len_bits = 2,
	  .class_ext_ptr = true, .class_ext = 24, .ext_iv_tbl = 8, .fl_singleton = 1u << 12 },
	{ .version = 0x030300, .cfp_size = 56, .body_insns_info = 112, .body_local_iseq = 168,
	  .str_embed = 24, .ary_embed_len_bits = 7,
	  .class_ext = 32, .ext_classpath = 120, .ext_attached = 96, .fl_singleton = 1u << 12 },
	{ .version = 0x030400, .cfp_size = 56, .body_insns_info = 112, .body_local_iseq = 168,
	  .str_embed = 24, .ary_embed_len_bits = 7,
	  .class_ext = 32, .ext_classpath = 120, .ext_attached = 96, .fl_singleton = 1u << 13 },
};

const struct rb_layout *rb_layout__find(__u32 version)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].version == (version & ~0xffu))
			return &layouts[i];
	return NULL;
}

static int rd(const struct rb_mem *m, __u64 addr, void *buf, size_t len)
{
	if (!addr || addr >= PROC_MEM_USER_END)
		return -EFAULT;
	return m->read(m->ctx, addr, buf, len);
}

static int rd64(const struct rb_mem *m, __u64 addr, __u64 *v)
{
	return rd(m, addr, v, sizeof(*v));
}

/* A heap object's type, checked: VALUEs that are immediates (Fixnum, nil, Symbol) are not objects. */
static int obj_flags(const struct rb_mem *m, __u64 obj, __u64 *flags)
{
	if (!obj || (obj & 7))
		return -EINVAL;
	return rd64(m, obj, flags);
}

int rb_mem__string(const struct rb_mem *m, __u64 obj, char *out, size_t out_size)
{
	__u64 w[4], len, ptr;
	int err;

	if (out_size < 1)
		return -EINVAL;
	if ((err = obj_flags(m, obj, &w[0])) || (err = rd(m, obj, w, sizeof(w))))
		return err;
	if ((w[0] & RB_T_MASK) != RB_T_STRING)
		return -EINVAL;
	if (w[0] & RB_FL_EMBED) {		/* RSTRING_NOEMBED: on the heap */
		len = w[2];
		ptr = w[3];
	} else {
		len = m->l->str_len_in_flags ? (w[0] >> (RB_FL_USHIFT + 2)) & 0x1f : w[2];
		ptr = obj + m->l->str_embed;
	}
	if (len >= out_size)
		len = out_size - 1;
	if (len && (err = rd(m, ptr, out, len)))
		return err;
	out[len] = 0;
	if (strlen(out) != len)
		return -EINVAL;	/* a NUL inside: not a name or a path */
	return (int)len;
}

int rb_mem__array_entry(const struct rb_mem *m, __u64 ary, __u64 i, __u64 *out)
{
	__u64 w[5], len, ptr;
	int err;

	if ((err = obj_flags(m, ary, &w[0])) || (err = rd(m, ary, w, sizeof(w))))
		return err;
	if ((w[0] & RB_T_MASK) != RB_T_ARRAY)
		return -EINVAL;
	if (w[0] & RB_FL_EMBED) {
		len = (w[0] >> (RB_FL_USHIFT + 3)) & ((1u << m->l->ary_embed_len_bits) - 1);
		ptr = ary + 16;
	} else {
		len = w[2];
		ptr = w[4];
	}
	if (i >= len)
		return -ERANGE;
	return rd64(m, ptr + 8 * i, out);
}

int rb_mem__id_name(const struct rb_mem *m, __u64 id, char *out, size_t out_size)
{
	__u64 serial = id > RB_LAST_OP_ID ? id >> 4 : id, ids, ary, str;
	__u32 last;
	int err;

	if (!m->symbols)
		return -ENOENT;
	if ((err = rd(m, m->symbols, &last, sizeof(last))) || (err = rd64(m, m->symbols + 16, &ids)))
		return err;
	if (!serial || serial > last)
		return -ENOENT;
	if ((err = rb_mem__array_entry(m, ids, serial / RB_ID_ENTRY_UNIT, &ary)) ||
	    (err = rb_mem__array_entry(m, ary, (serial % RB_ID_ENTRY_UNIT) * 2, &str)))
		return err;
	return rb_mem__string(m, str, out, out_size);
}

/* 3.1: the ivar named NAME of a class, from its st_table of ivars (bounded: 64 entries) */
static int class_ivar(const struct rb_mem *m, __u64 klass, const char *name, __u64 *val)
{
	__u64 ext, tbl, t[7], e[3];
	char key[32];
	int err;

	if ((err = rd64(m, klass + m->l->class_ext, &ext)) ||
	    (err = rd64(m, ext + m->l->ext_iv_tbl, &tbl)) || (err = rd(m, tbl, t, sizeof(t))))
		return err;
	/* entries_start, entries_bound, entries */
	for (__u64 i = t[4]; i < t[5] && i < t[4] + 64; i++) {
		if (rd(m, t[6] + 24 * i, e, sizeof(e)))
			return -EFAULT;
		if (e[0] == ~0ULL)
			continue;	/* a deleted entry */
		if (rb_mem__id_name(m, e[1], key, sizeof(key)) > 0 && !strcmp(key, name)) {
			*val = e[2];
			return 0;
		}
	}
	return -ENOENT;
}

static int plain_class_path(const struct rb_mem *m, __u64 klass, char *out, size_t out_size)
{
	__u64 path, ext = klass + m->l->class_ext;
	int err;

	if (m->l->class_ext_ptr)
		err = class_ivar(m, klass, "__classpath__", &path);
	else
		err = rd64(m, ext + m->l->ext_classpath, &path);
	if (err)
		return err;
	return path ? rb_mem__string(m, path, out, out_size) : -ENOENT;
}

int rb_mem__class_path(const struct rb_mem *m, __u64 klass, char *out, size_t out_size,
		       bool *singleton)
{
	__u64 flags, obj;
	int err;

	if ((err = obj_flags(m, klass, &flags)))
		return err;
	if ((flags & RB_T_MASK) != RB_T_CLASS && (flags & RB_T_MASK) != RB_T_MODULE)
		return -EINVAL;
	*singleton = flags & m->l->fl_singleton;
	if (!*singleton)
		return plain_class_path(m, klass, out, out_size);
	/* def self.x: the singleton class's object, a class or module itself, names it */
	if (m->l->class_ext_ptr)
		err = class_ivar(m, klass, "__attached__", &obj);
	else
		err = rd64(m, klass + m->l->class_ext + m->l->ext_attached, &obj);
	if (err || (err = obj_flags(m, obj, &flags)))
		return err ? err : -EINVAL;
	if ((flags & RB_T_MASK) != RB_T_CLASS && (flags & RB_T_MASK) != RB_T_MODULE)
		return -ENOENT;	/* a singleton of a plain object: no path */
	return plain_class_path(m, obj, out, out_size);
}

#define IMM_SIZE 54		/* IMMEDIATE_TABLE_SIZE */
#define BLOCK_BYTES 80		/* struct succ_dict_block: rank, small_block_ranks, bits[8] */

size_t rb_succ__bytes(__u32 max_pos)
{
	size_t imm = (max_pos < IMM_SIZE ? max_pos + 8 : IMM_SIZE) / 9;
	size_t succ = max_pos < IMM_SIZE ? 0 : (max_pos - IMM_SIZE + 511) / 512;

	return succ ? 48 + succ * BLOCK_BYTES : imm * 8;
}

int rb_succ__positions(const void *tab, size_t len, __u32 max_pos, __u32 *out, __u32 max, __u32 *n)
{
	const __u8 *b = tab;
	__u32 imm = (max_pos < IMM_SIZE ? max_pos + 8 : IMM_SIZE) / 9, prev = 0, k = 0;
	__u32 succ = max_pos < IMM_SIZE ? 0 : (max_pos - IMM_SIZE + 511) / 512;
	__u64 v;

	if (len < rb_succ__bytes(max_pos))
		return -EINVAL;
	/* the immediate part: 7-bit ranks, nine a word; a position where the rank grows */
	for (__u32 x = 0; x < imm * 9; x++) {
		__u32 rank;

		memcpy(&v, b + 8 * (x / 9), 8);
		rank = (v >> (7 * (x % 9))) & 0x7f;
		if (rank == prev)
			continue;
		if (rank != prev + 1 || k == max)
			return -EINVAL;
		out[k++] = x;
		prev = rank;
	}
	/* then blocks of 512 bits, one a position */
	for (__u32 blk = 0; blk < succ; blk++)
		for (__u32 j = 0; j < 8; j++) {
			memcpy(&v, b + 48 + blk * BLOCK_BYTES + 16 + 8 * j, 8);
			for (__u32 i = 0; i < 64; i++) {
				if (!(v >> i & 1))
					continue;
				if (k == max)
					return -EINVAL;
				out[k++] = IMM_SIZE + blk * 512 + j * 64 + i;
			}
		}
	*n = k;
	return 0;
}

/* The insn-info table of the body read at B: positions and lines into c. */
static int read_lines(const struct rb_mem *m, const __u8 *b, struct rb_code *c)
{
	__u64 info[4], tab_len;	/* body, positions, size, succ_index_table */
	__u8 *tab = NULL, *ents = NULL;
	__u32 n = 0;
	int err = -ENOMEM;

	memcpy(info, b + m->l->body_insns_info, sizeof(info));
	info[2] = (__u32)info[2];
	if (!info[2] || info[2] > c->iseq_size || !info[0])
		return -EINVAL;
	c->positions = calloc(info[2], sizeof(*c->positions));
	c->lines = calloc(info[2], sizeof(*c->lines));
	ents = malloc(info[2] * RB_INSN_INFO_SIZE);
	if (!c->positions || !c->lines || !ents)
		goto out;
	if ((err = rd(m, info[0], ents, info[2] * RB_INSN_INFO_SIZE)))
		goto out;
	if (info[2] == 1) {
		n = 1;		/* one entry: no table, it covers every position */
	} else if (info[1]) {
		err = rd(m, info[1], c->positions, info[2] * sizeof(__u32));
		n = info[2];
	} else {
		tab_len = rb_succ__bytes(c->iseq_size);
		err = (tab = malloc(tab_len)) ? rd(m, info[3], tab, tab_len) : -ENOMEM;
		if (!err)
			err = rb_succ__positions(tab, tab_len, c->iseq_size, c->positions, info[2], &n);
	}
	if (err)
		goto out;
	for (__u32 i = 0; i < n; i++)
		memcpy(&c->lines[i], ents + i * RB_INSN_INFO_SIZE, 4);
	c->n_lines = n;
out:
	free(tab);
	free(ents);
	return err;
}

/* A method entry: its method's name, and its owner's path */
static int read_me(const struct rb_mem *m, struct rb_code *c)
{
	__u64 flags, def, id, owner;
	char name[RB_STR_MAX], klass[RB_STR_MAX];
	int err;

	if ((err = obj_flags(m, c->addr, &flags)))
		return err;
	if ((flags & RB_T_MASK) != RB_T_IMEMO)
		return -ESTALE;	/* freed by the GC before it was read */
	if (((flags >> RB_FL_USHIFT) & 0xf) != RB_IMEMO_MENT)
		return -ENOENT;	/* a cref or svar: a frame of no method */
	if ((err = rd64(m, c->addr + RB_ME_DEF, &def)) ||
	    (err = rd64(m, def + RB_DEF_ORIGINAL_ID, &id)) || (err = rd64(m, c->addr + RB_ME_OWNER, &owner)))
		return err;
	if (rb_mem__id_name(m, id, name, sizeof(name)) > 0 && !(c->name = strdup(name)))
		return -ENOMEM;
	if (rb_mem__class_path(m, owner, klass, sizeof(klass), &c->singleton) > 0 &&
	    !(c->klass = strdup(klass)))
		return -ENOMEM;
	return c->name || c->klass ? 0 : -EINVAL;
}

static int read_iseq(const struct rb_mem *m, struct rb_code *c)
{
	__u8 b[RB_BODY_READ];
	__u64 body, loc[4], path;
	char file[RB_STR_MAX], label[RB_STR_MAX], base[RB_STR_MAX];
	int err;

	if ((err = rd64(m, c->addr + RB_ISEQ_BODY, &body)) || (err = rd(m, body, b, sizeof(b))))
		return err;
	memcpy(&c->iseq_size, b + RB_BODY_SIZE, 4);
	memcpy(&c->encoded, b + RB_BODY_ENCODED, 8);
	memcpy(loc, b + RB_BODY_LOCATION, sizeof(loc));
	if (!c->iseq_size || c->iseq_size > RB_ISEQ_SIZE_MAX)
		return -E2BIG;
	/* pathobj: the path as given, or [path, realpath] */
	path = loc[0];
	if (rb_mem__string(m, path, file, sizeof(file)) < 0 &&
	    (rb_mem__array_entry(m, loc[0], 0, &path) || rb_mem__string(m, path, file, sizeof(file)) < 0))
		return -EINVAL;
	if ((err = rb_mem__string(m, loc[2], label, sizeof(label))) < 0 ||
	    (err = rb_mem__string(m, loc[1], base, sizeof(base))) < 0)
		return err;
	c->first_line = (__s32)loc[3] > 0 ? (__u32)loc[3] : 0;
	c->name = strdup(label);
	c->base = strdup(base);
	c->file = strdup(file);
	if (!c->name || !c->base || !c->file)
		return -ENOMEM;
	if (read_lines(m, b, c)) {
		/* named, with its first line only */
		free(c->positions);
		free(c->lines);
		c->positions = c->lines = NULL;
		c->n_lines = 0;
	}
	return 0;
}

int rb_code__read(const struct rb_mem *m, struct rb_code *c)
{
	return c->cme ? read_me(m, c) : read_iseq(m, c);
}

char *rb_name__compose(const struct rb_code *iseq, const struct rb_code *me)
{
	const char *sep = me && me->singleton ? "." : "#";
	size_t ll, bl;
	char *out = NULL;

	if (!iseq) {	/* a C method: "Integer#times", or its name alone */
		if (me->klass && me->name)
			return asprintf(&out, "%s%s%s", me->klass, sep, me->name) < 0 ? NULL : out;
		return strdup(me->name ? me->name : "[ruby C method of an unknown name]");
	}
	ll = strlen(iseq->name);
	bl = strlen(iseq->base);
	/*
	 * "block in bar" of Foo: "block in Foo#bar"; a label not ending in its
	 * base, or of no method ("<main>", "<class:Foo>"), stays as it is
	 */
	if (!me || !me->klass || bl > ll || iseq->base[0] == '<' || strcmp(iseq->name + ll - bl, iseq->base))
		return strdup(iseq->name);
	return asprintf(&out, "%.*s%s%s%s", (int)(ll - bl), iseq->name, me->klass, sep, iseq->base) < 0 ?
		       NULL : out;
}

void rb_code__free(struct rb_code *c)
{
	free(c->name);
	free(c->base);
	free(c->klass);
	free(c->file);
	free(c->positions);
	free(c->lines);
	c->name = c->base = c->klass = c->file = NULL;
	c->positions = c->lines = NULL;
}

size_t rb_code__bytes(const struct rb_code *c)
{
	const char *s[] = { c->name, c->base, c->klass, c->file };
	size_t n = sizeof(*c) + (size_t)c->n_lines * 8;

	for (size_t i = 0; i < 4; i++)
		n += s[i] ? strlen(s[i]) + 1 : 0;
	return n;
}
