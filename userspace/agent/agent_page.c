/* agent_page.c -- GET /: the agent's flame graph page, of its last windows (or seconds), or of seconds collected now */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "agent_int.h"
#include "lib/log.h"

#define PAGE_DEFAULT_SECONDS 10	/* a pull-only agent keeps no windows: it collects this long */
#define MAX_INPUT (64u << 20)	/* uncompressed bytes of one series read back */

int agent_page__add(struct page_window *w, const struct window_series *s)
{
	struct page_series *ps;
	int err;

	if (w->n == w->cap) {
		int cap = w->cap ? w->cap * 2 : 8;
		void *tmp = realloc(w->series, cap * sizeof(*w->series));

		if (!tmp)
			return -ENOMEM;
		w->series = tmp;
		w->cap = cap;
	}
	ps = &w->series[w->n];
	*ps = (struct page_series){ .name = strdup(s->name ? s->name : "") };
	if (!ps->name)
		return -ENOMEM;
	err = agent_deliver__encode(s->prof, &ps->data, &ps->len);
	if (err) {
		free(ps->name);
		return err;
	}
	w->bytes += ps->len;
	w->n++;
	return 0;
}

void agent_page__window_free(struct page_window *w)
{
	if (!w)
		return;
	for (int i = 0; i < w->n; i++) {
		free(w->series[i].name);
		free(w->series[i].data);
	}
	free(w->series);
	free(w);
}

void agent_page__window_begin(struct agent *a, __s64 start)
{
	if (!a->http)
		return;	/* nobody can ask for the page */
	a->delivering = calloc(1, sizeof(*a->delivering));
	if (a->delivering)
		a->delivering->start = start;
}

/* The window becomes the newest kept; the oldest go past AGENT_PAGE_WINDOWS or the byte cap. */
void agent_page__window_end(struct agent *a, __s64 end)
{
	struct page_window *w = a->delivering, *drop[AGENT_PAGE_WINDOWS];
	size_t bytes;
	int n_drop = 0;

	if (!w)
		return;
	a->delivering = NULL;
	w->end = end;
	pthread_mutex_lock(&a->lock);
	if (a->n_recent == AGENT_PAGE_WINDOWS)
		drop[n_drop++] = a->recent[--a->n_recent];
	memmove(&a->recent[1], &a->recent[0], a->n_recent * sizeof(a->recent[0]));
	a->recent[0] = w;
	a->n_recent++;
	bytes = 0;
	for (int i = 0; i < a->n_recent; i++) {
		bytes += a->recent[i]->bytes;
		if (i > 0 && bytes > AGENT_PAGE_MAX_BYTES) {
			for (int j = i; j < a->n_recent; j++)
				drop[n_drop++] = a->recent[j];
			a->n_recent = i;
			break;
		}
	}
	pthread_mutex_unlock(&a->lock);
	for (int i = 0; i < n_drop; i++)
		agent_page__window_free(drop[i]);
}

void agent_page__free(struct agent *a)
{
	agent_page__window_free(a->delivering);
	for (int i = 0; i < a->n_recent; i++)
		agent_page__window_free(a->recent[i]);
	a->n_recent = 0;
}

/*
 * Copies the newest n kept windows' series into one window (or, seconds_ns
 * > 0, as many as span that long, all there are at most), so decoding runs
 * without the lock.
 */
static int copy_recent(struct agent *a, int n, __s64 seconds_ns, struct page_window *out)
{
	int err = 0;

	pthread_mutex_lock(&a->lock);
	if (seconds_ns > 0) {
		for (n = 1; n < a->n_recent; n++)
			if (a->recent[0]->end - a->recent[n - 1]->start >= seconds_ns)
				break;
	}
	if (n > a->n_recent)
		n = a->n_recent;
	out->windows = n;
	if (!n)
		err = -ENODATA;
	for (int i = 0; i < n && !err; i++) {
		const struct page_window *w = a->recent[i];

		if (i == 0)
			out->end = w->end;
		out->start = w->start;
		for (int j = 0; j < w->n && !err; j++) {
			struct page_series *s;

			if (out->n == out->cap) {
				int cap = out->cap ? out->cap * 2 : 8;
				void *tmp = realloc(out->series, cap * sizeof(*out->series));

				if (!tmp) {
					err = -ENOMEM;
					break;
				}
				out->series = tmp;
				out->cap = cap;
			}
			s = &out->series[out->n];
			s->name = strdup(w->series[j].name);
			s->data = malloc(w->series[j].len ? w->series[j].len : 1);
			s->len = w->series[j].len;
			if (!s->name || !s->data) {
				free(s->name);
				free(s->data);
				err = -ENOMEM;
				break;
			}
			memcpy(s->data, w->series[j].data, s->len);
			out->n++;
		}
	}
	pthread_mutex_unlock(&a->lock);
	return err;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The distinct series names of w, sorted, NULL-terminated; borrowed from w. */
static const char **series_names(const struct page_window *w)
{
	const char **names = calloc(w->n + 1, sizeof(*names));
	int n = 0;

	if (!names)
		return NULL;
	for (int i = 0; i < w->n; i++)
		names[n++] = w->series[i].name;
	qsort(names, n, sizeof(*names), cmp_str);
	int j = 0;

	for (int i = 0; i < n; i++)
		if (!j || strcmp(names[j - 1], names[i]))
			names[j++] = names[i];
	names[j] = NULL;
	return names;
}

static void page_title(const struct agent *a, const struct page_window *w, bool collected,
		       char *buf, size_t len)
{
	char from[32] = "", to[32] = "";
	struct tm tm;
	time_t t;

	t = w->start / 1000000000;
	if (gmtime_r(&t, &tm))
		strftime(from, sizeof(from), "%H:%M:%S", &tm);
	t = w->end / 1000000000;
	if (gmtime_r(&t, &tm))
		strftime(to, sizeof(to), "%H:%M:%S", &tm);
	snprintf(buf, len, "ebpfprof agent on %s: %s %s-%s UTC", a->hostname,
		 collected ? "collected" : w->windows > 1 ? "last windows" : "last window", from, to);
}

/* With ?label=KEY:VALUE, *p keeps only the samples that carry it. 0 or -errno. */
static int focus(struct pprof **p, const char *label)
{
	const char *colon = label ? strchr(label, ':') : NULL;
	struct pprof *kept;
	char key[256];
	size_t n;

	if (!colon)
		return 0;
	snprintf(key, sizeof(key), "%.*s", (int)(colon - label), label);
	kept = pprof__focus_label(*p, key, colon + 1, &n);
	if (!kept)
		return -errno;
	pprof__free(*p);
	*p = kept;
	return 0;
}

/* Reads the series of w (only those named series, when set) and writes one merged graph. */
static int render(struct agent *a, const struct page_window *w, const struct http_page_args *args,
		  bool collected, FILE *out)
{
	struct pprof **profs = calloc(w->n + 1, sizeof(*profs));
	const char **names = series_names(w);
	struct pprof_html_opts ho = { .value_index = -1, .refresh_url = "", .series = names,
				      .series_current = args->series };
	char title[512], why[160];
	int n = 0, err = 0;

	if (!profs || !names) {
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < w->n && !err; i++) {
		if (args->series && strcmp(args->series, w->series[i].name))
			continue;
		profs[n] = pprof__read(w->series[i].data, w->series[i].len, MAX_INPUT, why, sizeof(why));
		if (!profs[n]) {
			p_warn("page: cannot read back the %s series: %s", w->series[i].name, why);
			err = -errno;
			break;
		}
		err = focus(&profs[n++], args->label);
	}
	if (!err && !n && args->series)
		err = -ENOENT;
	if (err)
		goto out;
	page_title(a, w, collected, title, sizeof(title));
	ho.title = title;
	if (!n) {
		/* nothing sampled: an empty graph of the agent's sample types */
		struct pprof_opts po;
		struct report_opts ro = { .frequency = a->cfg->frequency, .time_nanos = w->start,
					  .duration_nanos = w->end - w->start, .mode = a->cfg->mode };

		report__pprof_opts(&po, &ro);
		profs[n] = pprof__new(&po);
		if (!profs[n]) {
			err = -ENOMEM;
			goto out;
		}
		n++;
	}
	/* the page's time line says what it covers: every window merged, not the first series' own */
	pprof__set_time(profs[0], w->start, w->end - w->start);
	ho.more = (const struct pprof *const *)profs + 1;
	ho.n_more = n - 1;
	err = pprof__write_html(profs[0], out, &ho);
out:
	for (int i = 0; profs && i < n; i++)
		pprof__free(profs[i]);
	free(profs);
	free(names);
	return err;
}

int agent_page__render(void *ctx, const struct http_page_args *args, FILE *out)
{
	struct agent *a = ctx;
	struct page_window *w = calloc(1, sizeof(*w));
	int err;
	bool collect;

	if (!w)
		return -ENOMEM;
	pthread_mutex_lock(&a->lock);
	collect = !a->n_recent;
	pthread_mutex_unlock(&a->lock);
	/* the past when the agent keeps windows; else (pull only) the next seconds */
	if (collect)
		err = agent_pull__page(a, args->seconds_given ? args->seconds : PAGE_DEFAULT_SECONDS,
				       args->pid, w);
	else
		err = copy_recent(a, args->windows, args->seconds_given ? args->seconds * 1000000000LL : 0, w);
	if (!err)
		err = render(a, w, args, collect, out);
	agent_page__window_free(w);
	return err;
}
