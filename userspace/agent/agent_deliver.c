/* agent_deliver.c -- hands each series of a closed window to the push queue and the local directory */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agent_int.h"
#include "lib/log.h"

#define MAX_PUSH_LABELS 64

int agent_deliver__encode(const struct pprof *p, void **data, size_t *len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	int err;

	if (!f)
		return -errno;
	err = pprof__write(p, f);
	if (fclose(f) && !err)
		err = -errno;
	if (err) {
		free(buf);
		return err;
	}
	*data = buf;
	*len = size;
	return 0;
}

/* Series labels: the window's own (container, pod), then static ones, then host and node. */
static int push_labels(const struct agent *a, const struct window_series *s, struct push_label *l)
{
	const struct agent_config *ag = &a->cfg->ag;
	int n = 0;

	for (int i = 0; i < s->n_labels && n < MAX_PUSH_LABELS; i++)
		l[n++] = s->labels[i];
	for (int i = 0; i < ag->n_labels && n < MAX_PUSH_LABELS; i++)
		l[n++] = (struct push_label){ ag->labels[i].key, ag->labels[i].value };
	if (n < MAX_PUSH_LABELS - 1) {
		l[n++] = (struct push_label){ "hostname", a->hostname };
		l[n++] = (struct push_label){ "node", ag->node_name ? ag->node_name : a->hostname };
	}
	return n;
}

struct deliver_ctx {
	struct agent *a;
	__s64 start_real;
	__s64 end_real;
};

static int deliver_series(const struct window_series *s, void *ctx)
{
	struct deliver_ctx *dc = ctx;
	struct agent *a = dc->a;
	struct push_label labels[MAX_PUSH_LABELS];
	void *data;
	size_t len;
	int err;

	err = agent_deliver__encode(s->prof, &data, &len);
	if (err)
		return err;
	if (a->pusher) {
		struct push_item item = {
			.name = s->name,
			.labels = labels,
			.n_labels = push_labels(a, s, labels),
			.from_ns = dc->start_real,
			.until_ns = dc->end_real,
			.sample_rate = a->cfg->frequency,
			.data = data,
			.len = len,
		};

		err = pusher__enqueue(a->pusher, &item);
	}
	if (a->dir) {
		int e = profile_dir__write(a->dir, s->name, dc->start_real, data, len);

		if (e)
			p_warn("cannot write the %s profile to %s: %s", s->name, a->cfg->ag.output_dir,
			       strerror(-e));
		err = err ?: e;
	}
	free(data);
	pthread_mutex_lock(&a->lock);
	if (err)
		a->fig.delivery_errors++;
	else
		a->fig.series_delivered++;
	pthread_mutex_unlock(&a->lock);
	return err;
}

int agent_deliver__window(struct agent *a, struct window *w, __s64 end_real)
{
	struct deliver_ctx dc = { a, window__start(w), end_real };
	int err = window__finish(w, end_real, deliver_series, &dc);

	pthread_mutex_lock(&a->lock);
	a->fig.windows++;
	pthread_mutex_unlock(&a->lock);
	p_debug("window %.3f s: %llu samples", (end_real - dc.start_real) / 1e9,
		(unsigned long long)window__samples(w));
	return err;
}
