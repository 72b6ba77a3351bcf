/* exec_defer.c -- a ring of (exec, due) in exec order: due times only grow, so the head is next */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "exec_defer.h"

struct exec_entry {
	struct deferred_exec x;	/* x.pid 0: taken out before it fell due */
	__s64 due;
};

struct exec_defer {
	struct exec_entry *ring;
	int cap;
	int head;		/* oldest */
	int n;
};

struct exec_defer *exec_defer__new(int cap)
{
	struct exec_defer *d = calloc(1, sizeof(*d));

	if (!d || cap <= 0 || !(d->ring = calloc(cap, sizeof(*d->ring)))) {
		free(d);
		errno = cap <= 0 ? EINVAL : ENOMEM;
		return NULL;
	}
	d->cap = cap;
	return d;
}

void exec_defer__free(struct exec_defer *d)
{
	if (!d)
		return;
	free(d->ring);
	free(d);
}

/* Drops taken-out entries at the head, so the head is always a live one. */
static void skip_taken(struct exec_defer *d)
{
	while (d->n && !d->ring[d->head].x.pid) {
		d->head = (d->head + 1) % d->cap;
		d->n--;
	}
}

static struct deferred_exec pop(struct exec_defer *d)
{
	struct deferred_exec x = d->ring[d->head].x;

	d->head = (d->head + 1) % d->cap;
	d->n--;
	skip_taken(d);
	return x;
}

bool exec_defer__add(struct exec_defer *d, const struct deferred_exec *x, __s64 now,
		     struct deferred_exec *evicted)
{
	bool full = d->n == d->cap;

	if (full)
		*evicted = pop(d);
	d->ring[(d->head + d->n) % d->cap] = (struct exec_entry){ *x, now + EXEC_DEFER_NS };
	d->n++;
	return full;
}

bool exec_defer__take(struct exec_defer *d, __u32 pid)
{
	for (int i = 0; i < d->n; i++) {
		struct exec_entry *e = &d->ring[(d->head + i) % d->cap];

		if (e->x.pid == pid) {
			e->x.pid = 0;
			skip_taken(d);
			return true;
		}
	}
	return false;
}

bool exec_defer__pop_due(struct exec_defer *d, __s64 now, struct deferred_exec *out)
{
	if (!d->n || d->ring[d->head].due > now)
		return false;
	*out = pop(d);
	return true;
}

__s64 exec_defer__next_due(const struct exec_defer *d)
{
	return d->n ? d->ring[d->head].due : INT64_MAX;
}
