/* exec_defer.c -- rings of execs in the order they were queued, one per wait: due times only grow in each, so a head is next */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "exec_defer.h"

/*
 * 20 ms, then 5 times longer each: an idle process costs one clock_gettime
 * per wait. A wait counts from the look that queued it, so a look made late
 * is never judged again over no time, and a ring's due times grow with the
 * order it is filled in: a head is next.
 */
const __s64 exec_defer_waits[EXEC_DEFER_LEVELS] = {
	EXEC_DEFER_NS, EXEC_DEFER_NS / 4, 4 * EXEC_DEFER_NS, 20 * EXEC_DEFER_NS, 100 * EXEC_DEFER_NS,
};

/*
 * the later waits hold only processes that outlived the first idle: a
 * smaller ring; the recheck may hold every exec of a host whose starts are
 * costly, so it is as large as the first
 */
#define LATER_CAP_SHIFT 4

struct ring {
	struct deferred_exec *e;	/* e[i].pid 0: taken out before it fell due */
	int cap;
	int head;		/* oldest */
	int n;
};

struct exec_defer {
	struct ring level[EXEC_DEFER_LEVELS];
};

struct exec_defer *exec_defer__new(int cap)
{
	struct exec_defer *d = cap > 0 ? calloc(1, sizeof(*d)) : NULL;

	for (int i = 0; d && i < EXEC_DEFER_LEVELS; i++) {
		struct ring *r = &d->level[i];

		r->cap = i && i != EXEC_DEFER_RECHECK ? (cap >> LATER_CAP_SHIFT ?: 1) : cap;
		r->e = calloc(r->cap, sizeof(*r->e));
		if (!r->e) {
			exec_defer__free(d);
			d = NULL;
		}
	}
	if (!d)
		errno = cap <= 0 ? EINVAL : ENOMEM;
	return d;
}

void exec_defer__free(struct exec_defer *d)
{
	if (!d)
		return;
	for (int i = 0; i < EXEC_DEFER_LEVELS; i++)
		free(d->level[i].e);
	free(d);
}

/* Drops taken-out entries at the head, so the head is always a live one. */
static void skip_taken(struct ring *r)
{
	while (r->n && !r->e[r->head].pid) {
		r->head = (r->head + 1) % r->cap;
		r->n--;
	}
}

static struct deferred_exec pop(struct ring *r)
{
	struct deferred_exec x = r->e[r->head];

	r->head = (r->head + 1) % r->cap;
	r->n--;
	skip_taken(r);
	return x;
}

static void push(struct ring *r, const struct deferred_exec *x)
{
	r->e[(r->head + r->n) % r->cap] = *x;
	r->n++;
}

bool exec_defer__add(struct exec_defer *d, const struct deferred_exec *x, __s64 now,
		     struct deferred_exec *evicted)
{
	struct ring *r = &d->level[0];
	struct deferred_exec y = *x;
	bool full = r->n == r->cap;

	if (full)
		*evicted = pop(r);
	y.exec_ns = now;
	y.level = 0;
	y.cpu_ns = 0;
	y.look_ns = now;
	push(r, &y);
	return full;
}

/* Queues X at LEVEL, with the look just made; false when it is no level or full. */
static bool again(struct exec_defer *d, const struct deferred_exec *x, int level,
		  __u64 cpu_ns, __s64 now)
{
	struct deferred_exec y = *x;
	struct ring *r;

	if (level <= x->level || level >= EXEC_DEFER_LEVELS)
		return false;
	r = &d->level[level];
	if (r->n == r->cap)
		return false;
	y.level = level;
	y.cpu_ns = cpu_ns;
	y.look_ns = now;
	push(r, &y);
	return true;
}

enum exec_verdict exec_defer__judge(struct exec_defer *d, const struct deferred_exec *x,
				    __u64 cpu_ns, __s64 now)
{
	/* the first look sees the whole life; later ones what came since the last (a clock only grows) */
	__u64 used = cpu_ns > x->cpu_ns ? cpu_ns - x->cpu_ns : 0;
	__s64 span = now > x->look_ns ? now - x->look_ns : 0;
	bool idle = used < (__u64)(span / EXEC_IDLE_SHARE);
	int next = x->level + 1;

	if (x->level < 0 || x->level >= EXEC_DEFER_LEVELS)
		return EXEC_HAND_ON;
	if (!x->level && !idle)
		return again(d, x, EXEC_DEFER_RECHECK, cpu_ns, now) ? EXEC_RECHECK : EXEC_HAND_ON;
	if (next == EXEC_DEFER_RECHECK)
		next++;		/* idle at the first look: no second one */
	return idle && again(d, x, next, cpu_ns, now) ? EXEC_IDLE : EXEC_HAND_ON;
}

bool exec_defer__take(struct exec_defer *d, __u32 pid)
{
	for (int l = 0; l < EXEC_DEFER_LEVELS; l++) {
		struct ring *r = &d->level[l];

		for (int i = 0; i < r->n; i++) {
			struct deferred_exec *e = &r->e[(r->head + i) % r->cap];

			if (e->pid == pid) {
				e->pid = 0;
				skip_taken(r);
				return true;
			}
		}
	}
	return false;
}

/* The level whose head falls due first, or -1 when all are empty. */
static int first_due(const struct exec_defer *d, __s64 *due)
{
	int best = -1;

	*due = INT64_MAX;
	for (int l = 0; l < EXEC_DEFER_LEVELS; l++) {
		const struct ring *r = &d->level[l];
		__s64 t;

		if (!r->n)
			continue;
		t = r->e[r->head].look_ns + exec_defer_waits[l];
		if (t < *due) {
			*due = t;
			best = l;
		}
	}
	return best;
}

bool exec_defer__pop_due(struct exec_defer *d, __s64 now, struct deferred_exec *out)
{
	__s64 due;
	int l = first_due(d, &due);

	if (l < 0 || due > now)
		return false;
	*out = pop(&d->level[l]);
	return true;
}

__s64 exec_defer__next_due(const struct exec_defer *d)
{
	__s64 due;

	first_due(d, &due);
	return due;
}
