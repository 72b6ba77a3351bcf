/* ruby_names.c -- names CRuby frames: iseqs and method entries read when first seen, lines by pc */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/clock.h"
#include "lib/hashmap.h"
#include "lib/proc_mem.h"
#include "ruby_int.h"

#define CACHE_BYTES_MAX (64u << 20)	/* names and line tables kept per process */

static int mem_read(void *ctx, __u64 addr, void *buf, size_t len)
{
	return proc_mem__read(*(const __u32 *)ctx, addr, buf, len);
}

struct code_key {
	__u64 addr;
	__u32 gen;
	bool cme;
};

static int code_eq(__u32 id, const void *key, const void *ctx)
{
	const struct rb_code *c = &((const struct rb_pid *)ctx)->codes[id - 1];
	const struct code_key *k = key;

	return c->addr == k->addr && c->gen == k->gen && c->cme == k->cme;
}

static __u64 code_hash(const struct code_key *k)
{
	return hash_u64(k->addr, (__u64)k->gen << 1 | k->cme);
}

static struct rb_code *find_code(const struct rb_pid *p, const struct code_key *k)
{
	__u32 id = hmap__find(p->index, code_hash(k), code_eq, k, p);

	return id ? &p->codes[id - 1] : NULL;
}

static void count(struct ruby_rt *r, bool cme, int err)
{
	if (err == -ENOENT)
		return;	/* a method entry slot that holds no method: nothing lost */
	if (cme)
		err ? r->stats.mes_failed++ : r->stats.mes++;
	else
		err ? r->stats.iseqs_failed++ : r->stats.iseqs++;
}

/* Reads what K names now, while the process lives, and caches it (a failure too: asked once). */
static struct rb_code *read_code(struct ruby_rt *r, struct rb_pid *p, const struct code_key *k)
{
	struct rb_mem m = { .read = mem_read, .ctx = &p->img.pid, .l = p->layout, .symbols = p->symbols };
	__u64 t0 = (__u64)clock_ns(CLOCK_MONOTONIC);
	struct rb_code *c;
	int err;

	if (p->bytes > CACHE_BYTES_MAX) {
		r->stats.cache_full++;
		return NULL;
	}
	if (p->n_codes == p->cap_codes) {
		size_t cap = p->cap_codes ? 2 * p->cap_codes : 64;
		struct rb_code *codes = realloc(p->codes, cap * sizeof(*codes));

		if (!codes)
			return NULL;
		p->codes = codes;
		p->cap_codes = cap;
	}
	c = &p->codes[p->n_codes];
	*c = (struct rb_code){ .addr = k->addr, .gen = k->gen, .cme = k->cme };
	err = rb_code__read(&m, c);
	c->ok = !err;
	if (err)
		rb_code__free(c);
	if (hmap__insert(p->index, code_hash(k), (__u32)p->n_codes + 1)) {
		rb_code__free(c);
		return NULL;
	}
	p->n_codes++;
	p->bytes += rb_code__bytes(c);
	r->stats.cache_bytes += rb_code__bytes(c);
	count(r, k->cme, err);
	r->stats.read_ns += (__u64)clock_ns(CLOCK_MONOTONIC) - t0;
	return c;
}

/* K's entry, read now if it was never announced (a full ring, a frame of the last instant) */
static struct rb_code *get_code(struct ruby_rt *r, struct rb_pid *p, const struct code_key *k)
{
	struct rb_code *c = find_code(p, k);

	if (!c && !p->superseded && !p->unknown)
		c = read_code(r, p, k);
	return c && c->ok ? c : NULL;
}

void ruby__event(struct ruby_rt *r, const struct rt_event *e)
{
	struct proc_image img = rt_event__image(e);
	struct rb_pid *p = ruby__find_image(r, &img);
	struct code_key k = { .addr = e->addr, .gen = e->gen, .cme = e->kind == RB_EVENT_CME };

	/* a superseded image's memory is another's now: not read */
	if (!p || p->superseded || p->unknown || find_code(p, &k))
		return;
	read_code(r, p, &k);
}

/* The line of pc (the instruction's before it, as CRuby's own backtraces take it) in c. */
static __u32 code_line(const struct rb_code *c, __u64 where)
{
	__u64 pc = (c->encoded & ~(__u64)RB_PC_MASK) | (where & RB_PC_MASK), pos;
	size_t lo = 0, hi = c->n_lines;

	if (pc < c->encoded)
		pc += RB_PC_MASK + 1;	/* the low bits wrapped past the iseq's start */
	pos = (pc - c->encoded) / 8;
	if (pos > c->iseq_size || !c->n_lines)
		return 0;
	if (pos)
		pos--;	/* pc points past the instruction running */
	while (lo < hi) {	/* the last entry starting at or before pos */
		size_t mid = lo + (hi - lo) / 2;

		if (c->positions[mid] <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? c->lines[lo - 1] : c->lines[0];
}

struct name_key {
	__u64 iseq, me;
	__u32 iseq_gen, me_gen;
};

static int name_eq(__u32 id, const void *key, const void *ctx)
{
	const struct rb_name *n = &((const struct rb_pid *)ctx)->names[id - 1];
	const struct name_key *k = key;

	return n->iseq == k->iseq && n->me == k->me && n->iseq_gen == k->iseq_gen && n->me_gen == k->me_gen;
}

/* The whole name of (ISEQ, ME), made once and kept with the image's state (NULL: no memory). */
static const char *whole_name(struct ruby_rt *r, struct rb_pid *p, const struct rb_code *iseq,
			      const struct rb_code *me)
{
	struct name_key k = { iseq ? iseq->addr : 0, me ? me->addr : 0, iseq ? iseq->gen : 0,
			      me ? me->gen : 0 };
	__u64 h = hash_u64(k.iseq, hash_u64(k.me, (__u64)k.iseq_gen << 32 | k.me_gen));
	__u32 id = hmap__find(p->name_index, h, name_eq, &k, p);
	struct rb_name *n;

	if (id)
		return p->names[id - 1].full;
	if (p->n_names == p->cap_names) {
		size_t cap = p->cap_names ? 2 * p->cap_names : 64;
		struct rb_name *names = realloc(p->names, cap * sizeof(*names));

		if (!names)
			return NULL;
		p->names = names;
		p->cap_names = cap;
	}
	n = &p->names[p->n_names];
	*n = (struct rb_name){ k.iseq, k.me, k.iseq_gen, k.me_gen, rb_name__compose(iseq, me) };
	if (!n->full || hmap__insert(p->name_index, h, (__u32)p->n_names + 1)) {
		free(n->full);
		return NULL;
	}
	p->n_names++;
	p->bytes += sizeof(*n) + strlen(n->full) + 1;
	r->stats.cache_bytes += sizeof(*n) + strlen(n->full) + 1;
	return n->full;
}

int ruby__frame(struct ruby_rt *r, const struct proc_image *img, __u64 a, __u64 b,
		struct src_line *out, int max, __u64 *loc)
{
	struct rb_pid *p = ruby__find_image(r, img);
	bool cfunc = FRAME_TAG(a) == RB_TAG_CFUNC;
	__u32 gen = rb_slot_gen(a);
	__u64 obj = rb_slot_obj(a), me_addr = cfunc ? obj : rb_where_me(b);
	struct code_key ki = { .addr = obj, .gen = rb_iseq_gen(me_addr, gen) };
	struct code_key km = { .addr = me_addr, .gen = gen, .cme = true };
	const struct rb_code *iseq = NULL, *me = NULL;
	const char *name = NULL;

	if (max < 1)
		return 0;
	*loc = hash_u64(a & FRAME_ADDR_MASK, hash_u64(b, proc_image__hash(img))) | 1ull << 63;
	if (p) {
		iseq = cfunc ? NULL : get_code(r, p, &ki);
		me = me_addr ? get_code(r, p, &km) : NULL;
		/* a C method whose name's symbol was not read is not named, and counted as such */
		if (iseq || (cfunc && me && me->name))
			name = whole_name(r, p, iseq, me);
	}
	if (!name) {
		r->stats.frames_unnamed++;
		out[0] = (struct src_line){ .function = cfunc ? "[unknown ruby C method]" :
								"[unknown ruby method]" };
		return 1;
	}
	r->stats.frames_named++;
	out[0] = (struct src_line){ .function = name, .file = iseq ? iseq->file : NULL };
	if (iseq) {
		out[0].line = code_line(iseq, b);
		if (!out[0].line) {
			out[0].line = iseq->first_line;
			r->stats.frames_no_line++;
		}
	}
	return 1;
}

static const char *const lost_names[RB_LOST_REASONS] = {
	[RB_LOST_NO_EC] = "[ruby frames lost: no execution context]",
	[RB_LOST_READ] = "[ruby frames lost: unreadable frame]",
	[RB_LOST_RUN] = "[ruby frames lost: too deep]",
	[RB_LOST_JIT] = "[ruby frames lost: jit code's caller not found]",
};

const char *ruby__mark(struct ruby_rt *r, __u64 slot)
{
	__u64 why = slot & FRAME_ADDR_MASK;

	if (FRAME_TAG(slot) == RB_TAG_JIT) {
		r->stats.frames_jit++;
		return "[ruby jit code]";
	}
	if (FRAME_TAG(slot) != RB_TAG_LOST || !why || why >= RB_LOST_REASONS)
		why = RB_LOST_READ;
	r->stats.frames_lost[why]++;
	return lost_names[why];
}
