/* php_names.c -- PHP functions named from process memory: Class::method, file, first line; cached per process */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "lib/clock.h"
#include "lib/hashmap.h"
#include "lib/proc_mem.h"
#include "php_int.h"

#define FUNCS_PER_PID_MAX 65536		/* functions cached per process */

static int mem_read(void *ctx, __u64 addr, void *buf, size_t len)
{
	return proc_mem__read((__u32)(unsigned long)ctx, addr, buf, len);
}

struct func_key {
	__u64 addr;
	__u32 tag;
};

static int func_eq(__u32 id, const void *key, const void *ctx)
{
	const struct php_pid *p = ctx;
	const struct func_key *k = key;

	return p->funcs[id - 1].addr == k->addr && p->funcs[id - 1].tag == k->tag;
}

size_t php_func__bytes(const struct php_func *f)
{
	return sizeof(*f) + (f->info.name ? strlen(f->info.name) + 1 : 0) +
	       (f->info.file ? strlen(f->info.file) + 1 : 0);
}

/*
 * The function at ADDR whose tag is TAG, read now if not yet. Each (address,
 * tag) is its own entry: a function freed and another compiled at its
 * address has another name, file or first line, so another tag.
 */
static struct php_func *get_func(struct php_rt *r, struct php_pid *p, __u64 addr, __u32 tag)
{
	struct func_key k = { addr, tag };
	struct php_mem m = { mem_read, (void *)(unsigned long)p->img.pid, p->layout };
	__u64 h = hash_u64(addr, tag), t0;
	__u32 id = hmap__find(p->index, h, func_eq, &k, p);
	struct php_func *f;

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
	f->addr = addr;
	f->tag = tag;
	t0 = (__u64)clock_ns(CLOCK_MONOTONIC);
	f->ok = !php_func__read(&m, addr, tag, &f->info);
	r->stats.read_ns += (__u64)clock_ns(CLOCK_MONOTONIC) - t0;
	if (f->ok) {
		r->stats.funcs++;
		r->stats.func_bytes += php_func__bytes(f);
	} else {
		r->stats.funcs_failed++;
	}
	return f;
}

void php__event(void *rt, const struct rt_event *e)
{
	struct php_rt *r = rt;
	struct proc_image img = rt_event__image(e);
	struct php_pid *p = php__find_image(r, &img);

	/* a superseded image's memory is another's now: not read */
	if (p && !p->unknown && !p->superseded)
		get_func(r, p, e->addr, e->gen);
}

int php__frame(void *rt, const struct proc_image *img, __u64 a, __u64 b,
	       struct src_line *out, int max, __u64 *loc)
{
	struct php_rt *r = rt;
	struct php_pid *p = php__find_image(r, img);
	struct php_func *f;

	if (max < 1)
		return 0;
	*loc = hash_u64(b, hash_u64(a, proc_image__hash(img))) | 1ull << 63;
	f = p && !p->unknown ? get_func(r, p, a & FRAME_ADDR_MASK, (__u32)(b >> 32)) : NULL;
	if (!f || !f->ok) {
		r->stats.frames_unnamed++;
		out[0] = (struct src_line){ .function = "[unknown php function]" };
		return 1;
	}
	r->stats.frames_named++;
	out[0] = (struct src_line){ .function = f->info.name, .file = f->info.file };
	if (!f->info.internal)
		out[0].line = (__u32)b ? (__u32)b : f->info.line_start;
	return 1;
}

const char *php__mark(void *rt, __u64 slot)
{
	struct php_rt *r = rt;
	__u64 why = slot & 0xff;

	r->stats.frames_lost[why < PHP_LOST_MAX ? why : 0]++;
	switch (why) {
	case PHP_LOST_RUN:
		return "[php frames lost: too deep]";
	case PHP_LOST_NO_FRAME:
		return "[php frames lost: no frame left]";
	case PHP_LOST_JIT:
		return "[php jit code]";
	default:
		return "[php frames lost: unreadable frame]";
	}
}
