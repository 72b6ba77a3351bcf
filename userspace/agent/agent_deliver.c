/* agent_deliver.c -- hands each series of a closed window to the push queue and the local directory */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agent_int.h"
#include "lib/log.h"

/*
 * Pyroscope's default per-tenant limits (pkg/validation): a profile over
 * them is refused whole, so pushes are cut to fit before they leave.
 */
#define MAX_PUSH_LABELS 30	/* label names per series, sample labels merged in */
#define MAX_LABEL_VALUE 2048	/* bytes */
#define MAX_PROFILE_SAMPLES 16000
#define MAX_PROFILE_BYTES (4UL << 20)	/* uncompressed */
#define FIT_ROUNDS 16

static int encode_sized(const struct pprof *p, void **data, size_t *len, size_t *raw_len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	int err;

	if (!f)
		return -errno;
	err = pprof__write_sized(p, f, raw_len);
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

int agent_deliver__encode(const struct pprof *p, void **data, size_t *len)
{
	return encode_sized(p, data, len, NULL);
}

/* Series labels: the window's own (container, pod), then static ones, then host and node. */
static int push_labels(const struct agent *a, const struct window_series *s, struct push_label *l,
		       bool delta)
{
	const struct agent_config *ag = &a->cfg->ag;
	int n = 0;

	/* alloc_* are already deltas: Pyroscope must not take differences of them again */
	if (delta)
		l[n++] = (struct push_label){ "__delta__", "false" };
	/* __name__ and service_name count too */
	for (int i = 0; i < s->n_labels && n < MAX_PUSH_LABELS - 2; i++)
		l[n++] = s->labels[i];
	for (int i = 0; i < ag->n_labels && n < MAX_PUSH_LABELS - 2; i++)
		l[n++] = (struct push_label){ ag->labels[i].key, ag->labels[i].value };
	if (n < MAX_PUSH_LABELS - 3) {
		l[n++] = (struct push_label){ "hostname", a->hostname };
		l[n++] = (struct push_label){ "node", ag->node_name ? ag->node_name : a->hostname };
	}
	return n;
}

struct deliver_ctx {
	struct agent *a;
	__s64 start_real;
	__s64 end_real;
	struct pusher *push, *otlp;
	const char *kind;	/* NULL: the CPU window; "memory": a heap window */
};

/*
 * The window as the backend will take it: pid and tid left out (the backend
 * makes a series of every sample label value) unless --push-sample-labels,
 * values cut, and the coldest samples folded until it fits the sample and
 * size limits. Local files and the pull endpoint keep everything.
 */
struct push_encoding {
	int n_series_labels;		/* they count against the label-name limit */
	const struct otlp_attr *resource;	/* OTLP: the resource's attributes; NULL: pprof */
	int n_resource;
};

/* r as gzip pprof or an OTLP request; raw_len is what the backend's size limit counts */
static int encode_one(const struct pprof *r, const struct push_encoding *enc, void **data,
		      size_t *len, size_t *raw_len)
{
	struct pbuf b;
	int err;

	if (!enc->resource)
		return encode_sized(r, data, len, raw_len);
	pbuf__init(&b);
	err = pprof__write_otlp(r, enc->resource, enc->n_resource, &b);
	if (err) {
		pbuf__release(&b);
		return err;
	}
	*data = b.data;		/* the buffer is the caller's now */
	*len = *raw_len = b.len;
	return 0;
}

static int encode_for_push(struct agent *a, const struct pprof *prof,
			   const struct push_encoding *enc, void **data, size_t *len)
{
	static const char *const identities[] = { "pid", "tid", NULL };
	struct pprof_limits lim = {
		.drop_labels = a->cfg->ag.push_sample_labels ? NULL : identities,
		.max_samples = a->cfg->ag.push_max_samples ?: MAX_PROFILE_SAMPLES,
		.max_label_value = MAX_LABEL_VALUE,
		.max_label_names = MAX_PUSH_LABELS - 2 - enc->n_series_labels,
	};
	struct pprof_reduce_stats st = {};
	size_t raw = 0;
	int err = 0;

	for (int round = 0; round < FIT_ROUNDS; round++) {
		struct pprof *r = pprof__reduce(prof, &lim, &st);

		if (!r)
			return -errno;
		err = encode_one(r, enc, data, len, &raw);
		if (!err && raw > MAX_PROFILE_BYTES && pprof__sample_count(r) > 1) {
			/* samples are most of the bytes: shrink their number in proportion */
			lim.max_samples = pprof__sample_count(r) * (MAX_PROFILE_BYTES / 2) / raw + 1;
			free(*data);
			*data = NULL;
			err = -EFBIG;
		}
		pprof__free(r);
		if (err != -EFBIG)
			break;
	}
	if (st.folded_samples)
		p_debug("push: folded %zu samples into [other] to fit %zu samples, %lu bytes",
			st.folded_samples, lim.max_samples, MAX_PROFILE_BYTES);
	pthread_mutex_lock(&a->lock);
	a->fig.push_folded_samples += st.folded_samples;
	a->fig.push_cut_values += st.cut_values;
	a->fig.push_dropped_labels += st.dropped_labels;
	pthread_mutex_unlock(&a->lock);
	return err;
}

/* our series labels as OpenTelemetry's resource semantic conventions name them */
static const char *resource_key(const char *key)
{
	static const char *const names[][2] = {
		{ "hostname", "host.name" },
		{ "node", "k8s.node.name" },
		{ "namespace", "k8s.namespace.name" },
		{ "pod", "k8s.pod.name" },
		{ "pod_uid", "k8s.pod.uid" },
		{ "container", "k8s.container.name" },
		{ "container_id", "container.id" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i][0], key))
			return names[i][1];
	return key;
}

/* one series window to pusher p: to an OTLP endpoint when otlp */
static int push_series(struct deliver_ctx *dc, const struct window_series *s, struct pusher *p,
		       bool otlp)
{
	struct agent *a = dc->a;
	struct push_label labels[MAX_PUSH_LABELS];
	struct otlp_attr resource[MAX_PUSH_LABELS + 1];
	struct push_item item = {
		.name = s->name,
		.labels = labels,
		/* the push API's series only: /ingest and OTLP name types by their sample types */
		.n_labels = push_labels(a, s, labels, dc->kind && !otlp && a->cfg->ag.push_api),
		.from_ns = dc->start_real,
		.until_ns = dc->end_real,
		.sample_rate = a->cfg->frequency,
	};
	struct push_encoding enc = { .n_series_labels = item.n_labels };
	void *data = NULL;
	int err;

	if (otlp) {
		resource[0] = (struct otlp_attr){ "service.name", s->name };
		for (int i = 0; i < item.n_labels; i++)
			resource[i + 1] = (struct otlp_attr){ resource_key(labels[i].key),
							      labels[i].value };
		enc.resource = resource;
		enc.n_resource = item.n_labels + 1;
	}
	err = encode_for_push(a, s->prof, &enc, &data, &item.len);
	if (!err) {
		item.data = data;
		err = pusher__enqueue(p, &item);
	}
	free(data);
	return err;
}

static int deliver_series(const struct window_series *s, void *ctx)
{
	struct deliver_ctx *dc = ctx;
	struct agent *a = dc->a;
	void *data = NULL;
	size_t len;
	int err = 0;

	char kind_name[160];
	struct window_series named = *s;

	if (dc->kind) {	/* "nginx.memory": beside the CPU series in the directory and the page */
		snprintf(kind_name, sizeof(kind_name), "%s.%s", s->name, dc->kind);
		named.name = kind_name;
	}
	if (dc->push)
		err = push_series(dc, s, dc->push, false);
	if (dc->otlp)
		err = push_series(dc, s, dc->otlp, true) ?: err;
	if (a->dir) {
		int e = agent_deliver__encode(s->prof, &data, &len);

		if (!e)
			e = profile_dir__write(a->dir, named.name, dc->start_real, data, len);
		if (e)
			p_warn("cannot write the %s profile to %s: %s", s->name, a->cfg->ag.output_dir,
			       strerror(-e));
		err = err ?: e;
	}
	free(data);
	if (a->delivering && agent_page__add(a->delivering, &named))
		p_debug("the page will miss the %s series: out of memory", s->name);
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
	struct deliver_ctx dc = { a, window__start(w), end_real, a->pusher, a->otlp, NULL };
	int err;

	agent_page__window_begin(a, dc.start_real);
	err = window__finish(w, end_real, deliver_series, &dc);
	if (a->heap)	/* the same span; its series join the page's window */
		agent_heap__window(a, dc.start_real, end_real);
	agent_page__window_end(a, end_real);

	pthread_mutex_lock(&a->lock);
	a->fig.windows++;
	pthread_mutex_unlock(&a->lock);
	p_debug("window %.3f s: %llu samples", (end_real - dc.start_real) / 1e9,
		(unsigned long long)window__samples(w));
	return err;
}

int agent_deliver__heap_window(struct agent *a, struct window *w, __s64 end_real)
{
	struct deliver_ctx dc = { a, window__start(w), end_real, a->heap_push, a->heap_otlp,
				  "memory" };

	/* the page keeps the CPU window's series; the heaps join them when it is open */
	return window__finish(w, end_real, deliver_series, &dc);
}
