/* v8_names.c -- V8 functions named from process memory: name, script, lines; cached per process */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "lib/clock.h"
#include "lib/hashmap.h"
#include "lib/proc_mem.h"
#include "v8_int.h"

#define FUNCS_PER_PID_MAX 65536		/* functions cached per process */
#define NAME_MAX_BYTES 512		/* a function or script name, UTF-8: longer ones are cut */
#define LINE_ENDS_MAX (1u << 20)	/* lines of a script we keep the ends of */
#define POSITIONS_MAX (1u << 20)	/* a source position table larger than this is refused */
#define SCOPE_WORDS 24			/* words of a ScopeInfo read for the function's name */
#define PAGE_BYTES 4096ull		/* what one read may not cross: a mapping ends at a page */

static int mem_read(void *ctx, __u64 addr, void *buf, size_t len)
{
	return proc_mem__read((__u32)(unsigned long)ctx, addr, buf, len);
}
void v8_func__free(struct v8_func *f)
{
	free(f->name);
	free(f->positions);
	f->name = NULL;
	f->positions = NULL;
}
struct func_key {
	__u64 addr;
	__u16 gen;
};

static int func_eq(__u32 id, const void *key, const void *ctx)
{
	const struct v8_pid *p = ctx;
	const struct func_key *k = key;

	return p->funcs[id - 1].addr == k->addr && p->funcs[id - 1].gen == k->gen;
}

size_t v8_func__bytes(const struct v8_func *f)
{
	return sizeof(*f) + (f->name ? strlen(f->name) + 1 : 0) + f->n_positions;
}

/* The script at SCRIPT (tagged), read once per process. */
static struct v8_script *get_script(struct v8_rt *r, struct v8_pid *p, const struct v8_mem *m,
				    __u64 script)
{
	struct v8_script *s;
	char name[NAME_MAX_BYTES];
	__u64 nm;

	for (size_t i = 0; i < p->n_scripts; i++)
		if (p->scripts[i]->addr == script)
			return p->scripts[i];
	if (ARRAY_RESERVE(p->scripts, p->cap_scripts, p->n_scripts + 1))
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->addr = script;
	if (m->read(m->ctx, script - 1 + p->layout.script_name, &nm, sizeof(nm)) ||
	    v8_mem__string(m, nm, name, sizeof(name)) <= 0)
		snprintf(name, sizeof(name), "[unknown script]");
	s->name = strdup(name);
	s->lines_ok = !v8_mem__line_ends(m, script, &s->ends, &s->n_ends, LINE_ENDS_MAX);
	r->stats.func_bytes += sizeof(*s) + strlen(name) + 1 + (size_t)s->n_ends * 4;
	p->scripts[p->n_scripts++] = s;
	return s;
}

/*
 * N words from ADDR, as far as they are mapped: a small object near the end
 * of the heap's mapping has no N words after it. Words past the end of the
 * page holding ADDR are read on their own, and left 0 (a Smi: nothing) where
 * that fails. 0 or the first page's error.
 */
static int read_words(const struct v8_mem *m, __u64 addr, __u64 *w, size_t n)
{
	size_t len = n * sizeof(*w), head = PAGE_BYTES - (addr & (PAGE_BYTES - 1));

	if (head >= len)
		return m->read(m->ctx, addr, w, len);
	memset(w, 0, len);
	if (m->read(m->ctx, addr, w, head))
		return -EFAULT;
	m->read(m->ctx, addr + head, (char *)w + head, len - head);
	return 0;
}

/*
 * The name of a function whose name_or_scope_info word is NOS: a String, or
 * found in its ScopeInfo; "" when it has none. -EFAULT when a word of it
 * could not be read: a function not named, rather than named anonymous.
 */
static int read_name(const struct v8_mem *m, __u64 nos, char *out, size_t size)
{
	const struct v8_layout *l = m->l;
	__u64 w[SCOPE_WORDS];
	int type = v8_mem__type(m, nos);

	out[0] = 0;
	if (v8_is_smi(nos))
		return 0;	/* no name */
	if (type < 0)
		return -EFAULT;
	if (type < l->first_nonstring_type)
		return v8_mem__string(m, nos, out, size) < 0 ? -EFAULT : 0;
	if (type != l->type_scope_info)
		return 0;
	if (read_words(m, nos - 1 + 8, w, SCOPE_WORDS))
		return -EFAULT;
	/*
	 * Past the locals: a saved class variable (a Smi), the function
	 * variable's name ("" when it has none) and slot (a Smi), then the
	 * inferred name. The first non-empty string is the name; any other
	 * object (undefined, the outer ScopeInfo) ends the search.
	 */
	for (int i = v8_scope_info__names(l, w, SCOPE_WORDS); i >= 0 && i < SCOPE_WORDS; i++) {
		if (v8_is_smi(w[i]))
			continue;
		type = v8_mem__type(m, w[i]);
		if (type < 0)
			return -EFAULT;
		if (type >= l->first_nonstring_type)
			break;
		if (v8_mem__string(m, w[i], out, size) > 0)
			return 0;
		out[0] = 0;
	}
	return 0;
}

/* the BytecodeArray a function runs (tagged), through baseline code or interpreter data; or 0 */
static __u64 bytecode_of(const struct v8_mem *m, __u64 data)
{
	const struct v8_layout *l = m->l;

	for (int i = 0; i < 3 && data; i++) {
		int type = v8_mem__type(m, data);
		__u64 next = 0;

		if (type == l->bpf.type_bytecode_array)
			return data;
		if (l->type_code && type == l->type_code)
			m->read(m->ctx, data - 1 + l->code_bytecode, &next, sizeof(next));
		else if (l->type_interp_data && type == l->type_interp_data)
			m->read(m->ctx, data - 1 + l->interp_data_bytecode, &next, sizeof(next));
		data = next;
	}
	return 0;
}

static void read_positions(const struct v8_mem *m, __u64 bc, struct v8_func *f)
{
	const struct v8_layout *l = m->l;
	__u64 len, tab, tlen;

	if (!bc || m->read(m->ctx, bc - 1 + l->fixed_length, &len, sizeof(len)) || !v8_is_smi(len) ||
	    v8_smi(len) <= 0 || v8_smi(len) > (1 << 24))
		return;
	f->bytecode_len = (__u32)v8_smi(len);
	if (!l->bytecode_positions ||
	    m->read(m->ctx, bc - 1 + l->bytecode_positions, &tab, sizeof(tab)) ||
	    v8_mem__type(m, tab) != l->type_positions ||
	    m->read(m->ctx, tab - 1 + l->fixed_length, &tlen, sizeof(tlen)) || !v8_is_smi(tlen) ||
	    v8_smi(tlen) <= 0 || v8_smi(tlen) > POSITIONS_MAX)
		return;
	f->positions = malloc((size_t)v8_smi(tlen));
	if (f->positions && !m->read(m->ctx, tab - 1 + l->fixed_data, f->positions, (size_t)v8_smi(tlen)))
		f->n_positions = (__u32)v8_smi(tlen);
	else {
		free(f->positions);
		f->positions = NULL;
	}
	/* the first statement's position: the line of a frame that has no offset */
	f->first_pos = f->n_positions ? v8_positions__find(f->positions, f->n_positions, 0) : -1;
}

static void read_func(struct v8_rt *r, struct v8_pid *p, __u64 sfi, struct v8_func *f)
{
	struct v8_mem m = { mem_read, (void *)(unsigned long)p->img.pid, &p->layout };
	const struct v8_layout *l = &p->layout;
	char name[NAME_MAX_BYTES];
	__u64 nos, script, sid, data;

	f->first_pos = -1;
	if (v8_mem__type(&m, sfi) != l->bpf.type_sfi ||
	    m.read(m.ctx, sfi - 1 + l->bpf.sfi_name_or_scope_info, &nos, sizeof(nos)))
		return;
	/* as BPF reads it: a word not read is 0 */
	if (m.read(m.ctx, sfi - 1 + l->sfi_script, &script, sizeof(script)))
		script = 0;
	if (!l->bpf.script_id || !v8_is_object(script) ||
	    m.read(m.ctx, script - 1 + l->bpf.script_id, &sid, sizeof(sid)))
		sid = 0;
	if (v8_gen(nos, sid) != f->gen)
		return;	/* another function is there now: never named as it */
	if (read_name(&m, nos, name, sizeof(name)))
		return;	/* not named, counted */
	f->name = strdup(name[0] ? name : "(anonymous)");
	if (v8_mem__type(&m, script) == l->type_script)
		f->script = get_script(r, p, &m, script);
	if (l->sfi_function_data &&
	    !m.read(m.ctx, sfi - 1 + l->sfi_function_data, &data, sizeof(data)))
		read_positions(&m, bytecode_of(&m, data), f);
	f->ok = f->name != NULL;
}

/*
 * The function at sfi whose gen is gen, read now if not yet. Each (address,
 * gen) is its own entry: the GC moves functions, and one moved or made onto
 * a freed one's address has another name word or script, so another gen.
 */
static struct v8_func *get_func(struct v8_rt *r, struct v8_pid *p, __u64 sfi, __u16 gen)
{
	struct func_key k = { sfi, gen };
	__u64 h = hash_u64(sfi, gen), t0;
	__u32 id = hmap__find(p->index, h, func_eq, &k, p);
	struct v8_func *f;

	if (id)
		return &p->funcs[id - 1];
	if (p->superseded)
		return NULL;	/* its memory is a later image's now: unnamed, counted */
	if (p->n_funcs >= FUNCS_PER_PID_MAX) {
		r->stats.func_cache_full++;
		return NULL;
	}
	if (ARRAY_RESERVE(p->funcs, p->cap_funcs, p->n_funcs + 1) ||
	    hmap__insert(p->index, h, (__u32)p->n_funcs + 1))
		return NULL;
	f = &p->funcs[p->n_funcs++];
	memset(f, 0, sizeof(*f));
	f->addr = sfi;
	f->gen = gen;
	t0 = (__u64)clock_ns(CLOCK_MONOTONIC);
	read_func(r, p, sfi, f);
	r->stats.read_ns += (__u64)clock_ns(CLOCK_MONOTONIC) - t0;
	if (f->ok) {
		r->stats.funcs++;
		r->stats.func_bytes += v8_func__bytes(f);
	} else {
		v8_func__free(f);
		r->stats.funcs_failed++;
	}
	return f;
}

/*
 * The bytecode an interpreted frame of a function ran: its source
 * positions, if the function's own fields did not lead to them. The
 * function was announced just before (same CPU, same ring: in order).
 */
static void bytecode_seen(struct v8_rt *r, struct v8_pid *p, __u64 bc, __u32 sfi_key)
{
	struct v8_mem m = { mem_read, (void *)(unsigned long)p->img.pid, &p->layout };

	for (size_t i = p->n_funcs; i-- > 0;) {
		struct v8_func *f = &p->funcs[i];

		if ((__u32)(f->addr >> 3) != sfi_key || !f->ok)
			continue;
		if (f->n_positions)
			return;
		r->stats.func_bytes -= v8_func__bytes(f);
		read_positions(&m, bc, f);
		r->stats.func_bytes += v8_func__bytes(f);
		return;
	}
}

void v8__event(void *rt, const struct rt_event *e)
{
	struct v8_rt *r = rt;
	struct proc_image img = rt_event__image(e);
	struct v8_pid *p = v8__find_image(r, &img);

	/* a superseded image's memory is another's now: not read */
	if (!p || p->unknown || p->superseded)
		return;
	if (e->kind == V8_EVENT_BYTECODE)
		bytecode_seen(r, p, e->addr, e->gen);
	else
		get_func(r, p, e->addr, (__u16)e->gen);
}

/* an interpreted frame's bytecode offset: the leaf's register if it is one, else its slot; or -1 */
static __s64 frame_offset(const struct v8_pid *p, const struct v8_func *f, __u64 b)
{
	__s64 hdr = (__s64)p->layout.bytecode_data - 1;
	__s64 slot = (__s64)(b & V8_OFFSET_MASK) - hdr;
	__s64 reg = (__s64)((b >> V8_LEAF_SHIFT) & V8_OFFSET_MASK) - hdr;

	if (reg >= 0 && reg < f->bytecode_len)
		return reg;
	if (slot >= 0 && slot < f->bytecode_len)
		return slot;
	return -1;
}

/* a typed frame's name, by the v8dbg_frametype_* values of its build */
static const char *stub_name(const struct v8_pid *p, __u64 type)
{
	static const char *const names[4] = { "[v8 entry frame]", "[v8 construct entry frame]",
					      "[v8 exit frame]", "[v8 builtin exit frame]" };

	for (int i = 0; p && i < 4; i++)
		if (p->layout.frame_types[i] && type == p->layout.frame_types[i])
			return names[i];
	return "[v8 stub frame]";
}

/* the code a JavaScript frame ran, by its tag, its pc's range and its baseline bit */
static enum v8_tier tier_of(const struct v8_pid *p, __u64 tag, __u64 b)
{
	__u64 pc = b & V8_WHERE_MASK & ~V8_BASELINE;

	if (tag == V8_TAG_INTERP)
		return V8_TIER_INTERPRETED;
	for (int i = 0; p && i < 2; i++)
		if (pc >= p->proc.builtins[i].low && pc < p->proc.builtins[i].high)
			return V8_TIER_BUILTIN;
	return b & V8_BASELINE ? V8_TIER_BASELINE : V8_TIER_OPTIMIZED;
}

int v8__frame(void *rt, const struct proc_image *img, __u64 a, __u64 b,
	      struct src_line *out, int max, __u64 *loc)
{
	struct v8_rt *r = rt;
	struct v8_pid *p = v8__find_image(r, img);
	__u64 tag = FRAME_TAG(a), sfi = a & FRAME_ADDR_MASK;
	__u16 gen = (__u16)(b >> V8_GEN_SHIFT);
	struct v8_func *f;
	__s64 pos = -1, off;

	if (max < 1)
		return 0;
	*loc = hash_u64(b, hash_u64(a, proc_image__hash(img))) | 1ull << 63;
	if (tag == V8_TAG_STUB) {
		r->stats.stub_frames++;
		out[0] = (struct src_line){ .function = stub_name(p, sfi) };
		return 1;
	}
	r->stats.frames_tier[tier_of(p, tag, b)]++;
	f = p && !p->unknown ? get_func(r, p, sfi, gen) : NULL;
	if (!f || !f->ok) {
		r->stats.frames_unnamed++;
		out[0] = (struct src_line){ .function = "[unknown javascript function]" };
		return 1;
	}
	r->stats.frames_named++;
	out[0] = (struct src_line){ .function = f->name,
				    .file = f->script ? f->script->name : NULL };
	if (tag == V8_TAG_INTERP && (off = frame_offset(p, f, b)) >= 0)
		pos = v8_positions__find(f->positions, f->n_positions, (__u32)off);
	if (pos < 0)
		pos = f->first_pos;	/* compiled code: its function's first statement */
	if (f->script && f->script->lines_ok)
		out[0].line = v8_lines__find(f->script->ends, f->script->n_ends, pos);
	if (!out[0].line)
		r->stats.frames_no_line++;
	return 1;
}

const char *v8__mark(void *rt, __u64 slot)
{
	struct v8_rt *r = rt;
	__u64 why = slot & 0xff;

	r->stats.frames_lost[why < 3 ? why : 0]++;
	return why == V8_LOST_READ ? "[javascript frames lost: unreadable frame]"
				   : "[javascript frames lost: broken frame chain]";
}
