/* java_names.c -- names Java frames: methods and compiled methods read from a JVM's memory, cached per JVM */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "lib/log.h"
#include "java_int.h"

#define SYMBOL_MAX 1024			/* bytes of a class or method name: longer ones are cut */
#define LINES_MAX 8192			/* bytes of a line number table read */
#define DEBUG_INFO_MAX (1u << 20)	/* an nmethod's PcDescs, scopes or metadata larger than this are refused */
#define METHODS_PER_PID_MAX 262144
#define INLINE_MAX 16

bool java__is_frame(__u64 slot)
{
	__u64 tag = slot >> FRAME_TAG_SHIFT;

	return tag == JAVA_TAG_INTERP || tag == JAVA_TAG_COMPILED || tag == JAVA_TAG_STUB;
}

bool java__is_lost(__u64 slot)
{
	return slot >> FRAME_TAG_SHIFT == JAVA_TAG_LOST;
}

const char *java__lost_name(struct java *j, __u64 slot)
{
	j->stats.frames_lost[(slot & 0xff) < 4 ? slot & 0xff : 0]++;
	switch (slot & 0xff) {
	case JAVA_LOST_NO_BLOB:
		return "[java frames lost: no code blob]";
	case JAVA_LOST_FRAME:
		return "[java frames lost: bad frame]";
	default:
		return "[java frames lost: unreadable frame]";
	}
}

static __u64 method_size(const struct jvm_method *m)
{
	return m->ok ? sizeof(*m) + m->n_lines + strlen(m->function) + 1 +
			       (m->file ? strlen(m->file) + 1 : 0) : 0;
}

static __u64 nmethod_size(const struct jvm_nmethod *n)
{
	return n->ok ? sizeof(*n) + n->n_pcs + n->n_scopes + 8ull * n->n_metadata : 0;
}

void jvm__free_names(struct java *j, struct jvm_pid *p)
{
	for (size_t i = 0; i < p->n_methods; i++) {
		j->stats.cache_bytes -= method_size(&p->methods[i]);
		free(p->methods[i].function);
		free(p->methods[i].file);
		free(p->methods[i].lines);
	}
	for (size_t i = 0; i < p->n_nmethods; i++) {
		j->stats.cache_bytes -= nmethod_size(&p->nmethods[i]);
		free(p->nmethods[i].pcs);
		free(p->nmethods[i].scopes);
		free(p->nmethods[i].metadata);
	}
	free(p->methods);
	free(p->nmethods);
	hmap__free(p->m_index);
	hmap__free(p->nm_index);
}

/* A Symbol (u2 length, then its bytes) as a string; '/' as '.' when dots. */
static char *read_symbol(__u32 pid, const struct jvm_layout *l, __u64 sym, bool dots)
{
	__u16 len;
	char *s;

	if (!sym || proc_mem__read(pid, sym + l->sym_length, &len, 2))
		return NULL;
	if (len > SYMBOL_MAX)
		len = SYMBOL_MAX;
	s = malloc(len + 1u);
	if (!s || proc_mem__read(pid, sym + l->sym_body, s, len)) {
		free(s);
		return NULL;
	}
	s[len] = 0;
	for (__u16 i = 0; dots && i < len; i++)
		if (s[i] == '/')
			s[i] = '.';
	if (memchr(s, 0, len))
		s[strlen(s)] = 0;	/* a NUL inside: cut there */
	return s;
}

/* the Symbol* of utf8 entry idx of a constant pool (its slots follow the ConstantPool) */
static char *cp_symbol(__u32 pid, const struct jvm_layout *l, __u64 cp, __u16 idx, bool dots)
{
	__u64 sym;

	if (!idx || proc_mem__read(pid, cp + l->cp_size + 8ull * idx, &sym, 8))
		return NULL;
	return read_symbol(pid, l, sym, dots);
}

/* Reads a line number table of unknown length (0 ends it): at most LINES_MAX, less near unmapped memory. */
static __u8 *read_lines(__u32 pid, __u64 addr, __u32 *n)
{
	__u8 *buf = malloc(LINES_MAX);
	__u32 got = 0;

	if (!buf)
		return NULL;
	/* only whole chunks that were read count; the table ends at its 0 byte */
	while (got + 256 <= LINES_MAX && !proc_mem__read(pid, addr + got, buf + got, 256)) {
		got += 256;
		if (memchr(buf + got - 256, 0, 256))
			break;
	}
	if (!got) {
		free(buf);
		return NULL;
	}
	*n = got;
	return buf;
}

static void read_method(__u32 pid, const struct jvm_layout *l, __u64 addr, struct jvm_method *m)
{
	__u64 cm, cp, holder, kname;
	__u16 name_i, code_size, src_i;
	__u32 flags = 0;
	char *klass = NULL, *name = NULL;

	memset(m, 0, sizeof(*m));
	m->addr = addr;
	if (proc_mem__read(pid, addr + l->m_const, &cm, 8) ||
	    proc_mem__read(pid, cm + l->cm_constants, &cp, 8) ||
	    proc_mem__read(pid, cm + l->cm_name_index, &name_i, 2) ||
	    proc_mem__read(pid, cm + l->cm_code_size, &code_size, 2) ||
	    proc_mem__read(pid, cm + l->cm_flags, &flags, 2) ||
	    proc_mem__read(pid, cp + l->cp_holder, &holder, 8) ||
	    proc_mem__read(pid, holder + l->k_name, &kname, 8) ||
	    proc_mem__read(pid, (l->src_in_klass ? holder : cp) + l->cp_source_file, &src_i, 2))
		return;
	m->const_method = cm;
	m->code_size = code_size;
	klass = read_symbol(pid, l, kname, true);
	name = cp_symbol(pid, l, cp, name_i, false);
	m->file = cp_symbol(pid, l, cp, src_i, false);
	if (flags & l->cm_has_lines)
		m->lines = read_lines(pid, cm + l->cm_size + code_size, &m->n_lines);
	if (klass && name && asprintf(&m->function, "%s.%s", klass, name) < 0)
		m->function = NULL;
	m->ok = m->function != NULL;
	free(klass);
	free(name);
}

static int method_eq(__u32 id, const void *key, const void *ctx)
{
	return ((const struct jvm_pid *)ctx)->methods[id - 1].addr == *(const __u64 *)key;
}

static int nmethod_eq(__u32 id, const void *key, const void *ctx)
{
	return ((const struct jvm_pid *)ctx)->nmethods[id - 1].addr == *(const __u64 *)key;
}

static struct jvm_method *get_method(struct java *j, struct jvm_pid *p, __u64 addr)
{
	__u64 h = hash_u64(addr, 1), t0;
	__u32 id = hmap__find(p->m_index, h, method_eq, &addr, p);
	struct jvm_method *m;

	if (id)
		return &p->methods[id - 1];
	if (p->superseded)
		return NULL;	/* its memory is a later image's now: unnamed, counted */
	if (p->n_methods >= METHODS_PER_PID_MAX ||
	    ARRAY_RESERVE(p->methods, p->cap_methods, p->n_methods + 1) ||
	    hmap__insert(p->m_index, h, (__u32)p->n_methods + 1))
		return NULL;
	m = &p->methods[p->n_methods++];
	t0 = (__u64)clock_ns(CLOCK_MONOTONIC);
	read_method(p->img.pid, &p->layout, addr, m);
	j->stats.read_ns += (__u64)clock_ns(CLOCK_MONOTONIC) - t0;
	if (m->ok) {
		j->stats.methods++;
		j->stats.cache_bytes += method_size(m);
	} else {
		j->stats.read_failed++;
	}
	return m;
}

/* len bytes of the process at [begin, end) into a new buffer, bounded */
static __u8 *read_range(__u32 pid, __u64 begin, __u64 end, __u32 *len)
{
	__u8 *buf;

	if (end < begin || end - begin > DEBUG_INFO_MAX)
		return NULL;
	buf = malloc(end - begin ? end - begin : 1);
	if (buf && proc_mem__read(pid, begin, buf, end - begin)) {
		free(buf);
		return NULL;
	}
	*len = (__u32)(end - begin);
	return buf;
}

static __s32 s32_at(__u32 pid, __u64 addr, int *err)
{
	__s32 v = 0;

	if (proc_mem__read(pid, addr, &v, 4))
		*err = -EFAULT;
	return v;
}

/* where an nmethod's PcDescs, scopes and metadata are: JDK <= 22 in the blob, 23+ apart */
static int debug_ranges(__u32 pid, const struct jvm_layout *l, __u64 nm, __u64 r[6])
{
	__u64 imm, mut;
	int err = 0;

	if (l->nm_scopes_is_ptr) {
		r[0] = nm + s32_at(pid, nm + l->nm_pcs, &err);
		r[1] = nm + s32_at(pid, nm + l->nm_pcs_end, &err);
		if (err || proc_mem__read(pid, nm + l->nm_scopes, &r[2], 8))
			return -EFAULT;
		r[3] = r[0];	/* scopes end where the PcDescs begin */
		r[4] = nm + s32_at(pid, nm + l->nm_metadata, &err);
		r[5] = r[2];	/* metadata ends where the scopes begin */
		return err;
	}
	if (proc_mem__read(pid, nm + l->nm_immutable, &imm, 8) ||
	    proc_mem__read(pid, nm + l->cb_mutable, &mut, 8))
		return -EFAULT;
	r[0] = imm + s32_at(pid, nm + l->nm_pcs, &err);
	r[1] = imm + s32_at(pid, nm + l->nm_scopes, &err);
	r[2] = r[1];
	r[3] = imm + s32_at(pid, nm + l->nm_imm_size, &err) - 4;	/* a reference count ends it */
	r[4] = mut + s32_at(pid, nm + l->cb_reloc_size, &err);
	r[5] = mut + s32_at(pid, nm + l->cb_mutable_size, &err);
	return err;
}

static void read_nmethod(__u32 pid, const struct jvm_layout *l, __u64 addr, __u32 id,
			 struct jvm_nmethod *n)
{
	__u64 r[6];
	__s32 off;
	__u32 meta_bytes = 0;

	memset(n, 0, sizeof(*n));
	n->addr = addr;
	n->compile_id = id;
	if (proc_mem__read(pid, addr + l->nm_method, &n->method, 8))
		return;
	if (l->bpf.cb_code_is_offset) {
		if (proc_mem__read(pid, addr + l->bpf.cb_code, &off, 4))
			return;
		n->code_begin = addr + off;
	} else if (proc_mem__read(pid, addr + l->bpf.cb_code, &n->code_begin, 8)) {
		return;
	}
	n->ok = true;	/* named by its method at least */
	if (debug_ranges(pid, l, addr, r))
		return;
	n->pcs = read_range(pid, r[0], r[1], &n->n_pcs);
	n->scopes = read_range(pid, r[2], r[3], &n->n_scopes);
	n->metadata = (__u64 *)read_range(pid, r[4], r[5], &meta_bytes);
	n->n_metadata = meta_bytes / 8;
}

static struct jvm_nmethod *get_nmethod(struct java *j, struct jvm_pid *p, __u64 addr, __u32 cid)
{
	__u64 h = hash_u64(addr, 2), t0;
	__u32 id = hmap__find(p->nm_index, h, nmethod_eq, &addr, p);
	struct jvm_nmethod *n;

	if (id) {
		n = &p->nmethods[id - 1];
		if (n->compile_id == cid)
			return n;
		if (p->superseded)
			return NULL;	/* its memory is a later image's now: unnamed, counted */
		/* the address holds another compilation now: read it again in place */
		j->stats.nmethods_replaced++;
		j->stats.cache_bytes -= nmethod_size(n);
		free(n->pcs);
		free(n->scopes);
		free(n->metadata);
	} else {
		if (p->superseded)
			return NULL;
		if (p->n_nmethods >= METHODS_PER_PID_MAX ||
		    ARRAY_RESERVE(p->nmethods, p->cap_nmethods, p->n_nmethods + 1) ||
		    hmap__insert(p->nm_index, h, (__u32)p->n_nmethods + 1))
			return NULL;
		n = &p->nmethods[p->n_nmethods++];
	}
	t0 = (__u64)clock_ns(CLOCK_MONOTONIC);
	read_nmethod(p->img.pid, &p->layout, addr, cid, n);
	j->stats.read_ns += (__u64)clock_ns(CLOCK_MONOTONIC) - t0;
	if (n->ok) {
		j->stats.nmethods++;
		j->stats.cache_bytes += nmethod_size(n);
	} else {
		j->stats.read_failed++;
	}
	return n;
}

/* one frame of method m at bci (-1: unknown) */
static bool name_method(struct src_line *out, const struct jvm_method *m, __s32 bci, bool x1)
{
	if (!m || !m->ok)
		return false;
	*out = (struct src_line){ .function = m->function, .file = m->file };
	if (bci >= 0 && (__u32)bci < m->code_size && m->lines)
		out->line = jvm_lines__find(m->lines, m->n_lines, x1, (__u32)bci);
	return true;
}

/* The scope chain at pc: inlined methods callee first, then the compiled one. */
static int name_compiled(struct java *j, struct jvm_pid *p, const struct jvm_nmethod *n,
			 __u64 pc, struct src_line *out, int max)
{
	const struct jvm_layout *l = &p->layout;
	__s64 rel = (__s64)(pc - n->code_begin);
	__s32 pc_off, scope = 0;
	struct jvm_scope s;
	int k = 0;

	/* the first PcDesc at or after pc: a call's return address, or the next safepoint */
	for (__u32 i = 0; n->pcs && l->pc_size && i + l->pc_size <= n->n_pcs; i += l->pc_size) {
		memcpy(&pc_off, n->pcs + i + l->pc_pc, 4);
		if (pc_off >= rel) {
			memcpy(&scope, n->pcs + i + l->pc_scope, 4);
			break;
		}
	}
	while (scope > 0 && k < max && k < INLINE_MAX) {
		if (!n->scopes || jvm_scope__read(n->scopes, n->n_scopes, (__u32)scope, l->u5_x1, &s) ||
		    !s.method_index || s.method_index > n->n_metadata)
			break;
		if (!name_method(&out[k], get_method(j, p, n->metadata[s.method_index - 1]), s.bci,
				 l->u5_x1))
			break;
		k++;
		scope = s.sender;
	}
	if (k)
		return k;
	/* no debug info here: the compiled method, no line */
	return name_method(&out[0], get_method(j, p, n->method), -1, l->u5_x1) ? 1 : 0;
}

static const char *blob_kind_name(__u64 tag)
{
	return tag == JAVA_TAG_STUB ? "[java stub]" : "[unknown java frame]";
}

int java__frame(struct java *j, const struct proc_image *img, __u64 a, __u64 b,
		struct src_line *out, int max, __u64 *loc)
{
	struct jvm_pid *p = jvm__find_image(j, img);
	__u64 tag = a >> FRAME_TAG_SHIFT, addr = a & FRAME_ADDR_MASK;
	int n = 0;

	*loc = hash_u64(b, hash_u64(a, proc_image__hash(img))) | 1ull << 63;
	if (p && !p->unknown && max > 0) {
		if (tag == JAVA_TAG_INTERP) {
			struct jvm_method *m = get_method(j, p, addr);
			__s64 bci = m && m->ok ? (__s64)(b - m->const_method - p->layout.cm_size) : -1;

			n = name_method(&out[0], m, bci >= 0 && bci < 65536 ? (__s32)bci : -1,
					p->layout.u5_x1);
		} else if (tag == JAVA_TAG_COMPILED) {
			struct jvm_nmethod *nm = get_nmethod(j, p, addr, (__u32)(b >> 32));

			if (nm && nm->ok)
				n = name_compiled(j, p, nm, addr + (__u32)b, out, max);
		}
	}
	if (n) {
		j->stats.frames_named += n;
		return n;
	}
	if (tag != JAVA_TAG_STUB)
		j->stats.frames_unnamed++;
	out[0] = (struct src_line){ .function = blob_kind_name(tag) };
	return 1;
}

/* Every method an nmethod's scopes name, read now: after the JVM exits they cannot be. */
static void read_scope_methods(struct java *j, struct jvm_pid *p, const struct jvm_nmethod *n)
{
	const struct jvm_layout *l = &p->layout;
	struct jvm_scope s;
	__s32 scope;

	for (__u32 i = 0; n->pcs && l->pc_size && i + l->pc_size <= n->n_pcs; i += l->pc_size) {
		memcpy(&scope, n->pcs + i + l->pc_scope, 4);
		for (int k = 0; scope > 0 && k < INLINE_MAX; k++) {
			if (!n->scopes ||
			    jvm_scope__read(n->scopes, n->n_scopes, (__u32)scope, l->u5_x1, &s) ||
			    !s.method_index || s.method_index > n->n_metadata)
				break;
			get_method(j, p, n->metadata[s.method_index - 1]);
			scope = s.sender;
		}
	}
}

void java__seen(struct java *j, const struct proc_image *img, __u32 kind, __u64 addr)
{
	struct jvm_pid *p = j ? jvm__find_image(j, img) : NULL;
	struct jvm_nmethod *n;
	__s32 cid;

	if (!p || p->unknown || p->superseded)
		return;
	if (!p->named_one) {
		p->named_one = true;
		j->stats.first_named_ns = (__u64)clock_ns(CLOCK_MONOTONIC) - p->found_ns;
	}
	if (kind == JAVA_EVENT_METHOD) {
		get_method(j, p, addr);
		return;
	}
	if (kind != JAVA_EVENT_NMETHOD || proc_mem__read(img->pid, addr + p->layout.bpf.nm_compile_id, &cid, 4))
		return;
	n = get_nmethod(j, p, addr, (__u32)cid);
	if (!n || !n->ok)
		return;
	get_method(j, p, n->method);
	read_scope_methods(j, p, n);
}
