/* agent_pull.c -- /debug/pprof/profile requests: handed from HTTP threads to the loop and back */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "agent_int.h"
#include "lib/log.h"

/* Called on an HTTP thread: queue the request, wake the loop, wait until it is answered. */
static int submit(struct agent *a, struct pull_req *r)
{
	struct pull_req req = *r;
	__u64 one = 1;

	pthread_mutex_lock(&a->lock);
	if (a->closing || a->n_pulls >= AGENT_MAX_PULLS) {
		pthread_mutex_unlock(&a->lock);
		return a->closing ? -ESHUTDOWN : -EBUSY;
	}
	a->n_pulls++;
	req.next = a->pending;
	a->pending = &req;
	pthread_mutex_unlock(&a->lock);

	if (write(a->wake_fd, &one, sizeof(one)) < 0)
		p_debug("cannot wake the loop: %m");	/* it still polls every half second */

	pthread_mutex_lock(&a->lock);
	while (!req.done)
		pthread_cond_wait(&a->done_cond, &a->lock);
	a->n_pulls--;
	pthread_mutex_unlock(&a->lock);
	*r = req;
	return req.err;
}

int agent_pull__profile(void *ctx, int seconds, __u32 pid, void **data, size_t *len)
{
	struct pull_req req = { .seconds = seconds, .pid = pid };
	int err = submit(ctx, &req);

	*data = req.data;
	*len = req.len;
	return err;
}

int agent_pull__page(struct agent *a, int seconds, __u32 pid, struct page_window *out)
{
	struct pull_req req = { .seconds = seconds, .pid = pid, .page = out };

	return submit(a, &req);
}

bool agent_pull__pending(struct agent *a)
{
	bool any;

	pthread_mutex_lock(&a->lock);
	any = a->pending != NULL;
	pthread_mutex_unlock(&a->lock);
	return any;
}

static void answer(struct agent *a, struct pull_req *r, int err)
{
	pthread_mutex_lock(&a->lock);
	r->err = err;
	r->done = true;
	pthread_cond_broadcast(&a->done_cond);
	pthread_mutex_unlock(&a->lock);
}

/* Call right after a harvest, so a new request collects only what comes after it. */
int agent_pull__activate(struct agent *a, __s64 now_mono, __s64 now_real)
{
	struct pull_req *r, *next;

	pthread_mutex_lock(&a->lock);
	r = a->pending;
	a->pending = NULL;
	pthread_mutex_unlock(&a->lock);
	for (; r; r = next) {
		struct window_opts wo = {
			.start_ns = now_real,
			.frequency = a->cfg->frequency,
			.per_thread = a->cfg->per_thread,
			.pid = r->pid,
			.demangle = a->cfg->demangle,
			.mode = a->cfg->mode,
			/* the page picks among services, as the agent's windows split them */
			.split = r->page && a->cfg->ag.group_by != GROUP_NONE,
		};

		next = r->next;
		r->win = window__new(&wo);
		if (!r->win) {
			answer(a, r, -ENOMEM);
			continue;
		}
		r->end_mono = now_mono + r->seconds * 1000000000LL;
		r->next = a->active;
		a->active = r;
	}
	return 0;
}

static int take_series(const struct window_series *s, void *ctx)
{
	struct pull_req *r = ctx;

	if (r->page)
		return agent_page__add(r->page, s);
	return agent_deliver__encode(s->prof, &r->data, &r->len);
}

/* An empty window still answers with a valid profile, as Go's handler does. */
static int empty_profile(struct agent *a, struct pull_req *r, __s64 start, __s64 end)
{
	struct pprof_opts po;
	struct report_opts ro = { .frequency = a->cfg->frequency, .time_nanos = start,
				  .duration_nanos = end - start, .mode = a->cfg->mode };
	struct pprof *p;
	int err;

	report__pprof_opts(&po, &ro);
	p = pprof__new(&po);
	if (!p)
		return -ENOMEM;
	err = agent_deliver__encode(p, &r->data, &r->len);
	pprof__free(p);
	return err;
}

void agent_pull__finish_due(struct agent *a, __s64 now_mono, __s64 now_real, bool all)
{
	struct pull_req **pp = &a->active;

	while (*pp) {
		struct pull_req *r = *pp;
		__s64 start = window__start(r->win);
		int err;

		if (!all && r->end_mono > now_mono) {
			pp = &r->next;
			continue;
		}
		*pp = r->next;
		err = window__finish(r->win, now_real, take_series, r);
		if (r->page) {
			r->page->start = start;
			r->page->end = now_real;
		} else if (!err && !r->data) {
			err = empty_profile(a, r, start, now_real);
		}
		window__free(r->win);
		r->win = NULL;
		answer(a, r, err);
	}
}

__s64 agent_pull__next_end(const struct agent *a)
{
	__s64 next = INT64_MAX;

	for (const struct pull_req *r = a->active; r; r = r->next)
		if (r->end_mono < next)
			next = r->end_mono;
	return next;
}
