/* push_url.c -- what goes on the wire to Pyroscope: series keys, /ingest URLs, push API requests */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "profile/profile.h"
#include "push_url.h"
#include "lib/utf8.h"

#define NS_PER_SEC 1000000000LL

static bool is_alnum(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static void put_name(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = *s;

		fputc(is_alnum(c) || c == '_' || c == '.' || c == '/' || c == '-' ? c : '_', f);
	}
}

static void put_key(FILE *f, const char *s)
{
	if (*s >= '0' && *s <= '9')
		fputc('_', f);
	for (; *s; s++)
		fputc(is_alnum(*s) || *s == '_' ? *s : '_', f);
}

/* whether put_key writes s as __name__, the key Pyroscope reserves for the series name */
static bool is_reserved_key(const char *s)
{
	static const char reserved[] = "__name__";
	size_t i;

	for (i = 0; s[i] && reserved[i]; i++)
		if ((is_alnum(s[i]) || s[i] == '_' ? s[i] : '_') != reserved[i])
			return false;
	return !s[i] && !reserved[i];
}

/* the value's bytes without surrounding spaces, cut to PUSH_URL_MAX_VALUE on a UTF-8 boundary */
static size_t value_span(const char *s, const char **start)
{
	size_t len;

	while (is_space(*s))
		s++;
	len = strlen(s);
	while (len && is_space(s[len - 1]))
		len--;
	if (len > PUSH_URL_MAX_VALUE) {
		len = PUSH_URL_MAX_VALUE;
		/* s[len] starts the first byte left out: never keep half a sequence */
		while (len && ((unsigned char)s[len] & 0xc0) == 0x80)
			len--;
		/* the cut may land just after a space: no trailing space either way */
		while (len && is_space(s[len - 1]))
			len--;
	}
	*start = s;
	return len;
}

static void put_value(FILE *f, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = s[i];

		fputc(c < 0x20 || c == 0x7f || c == ',' || c == '{' || c == '}' ? '_' : c, f);
	}
}

char *push_url__series_key(const char *name, const struct push_label *labels, int n_labels)
{
	bool first = true, oom = false;
	char *out = NULL;
	size_t size;
	FILE *f;

	if (!name || !*name) {
		errno = EINVAL;
		return NULL;
	}
	f = open_memstream(&out, &size);
	if (!f)
		return NULL;
	put_name(f, name);
	fputc('{', f);
	for (int i = 0; i < n_labels; i++) {
		const char *key = labels[i].key, *val;
		char *clean;	/* bytes that are not UTF-8 as U+FFFD: the server refuses them */
		size_t len;

		if (!key || !*key || is_reserved_key(key) || !labels[i].value)
			continue;
		clean = utf8__dup(labels[i].value);
		if (!clean) {
			oom = true;
			break;
		}
		len = value_span(clean, &val);
		if (len) {
			if (!first)
				fputc(',', f);
			first = false;
			put_key(f, key);
			fputc('=', f);
			put_value(f, val, len);
		}
		free(clean);
	}
	fputc('}', f);
	if (fclose(f) || oom) {
		free(out);
		errno = ENOMEM;
		return NULL;
	}
	return out;
}

size_t push_url__escape(const char *s, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (; *s; s++) {
		unsigned char c = *s;
		char enc[3];
		int w = 1;

		enc[0] = c;
		if (!is_alnum(c) && c != '-' && c != '.' && c != '_' && c != '~') {
			enc[0] = '%';
			enc[1] = hex[c >> 4];
			enc[2] = hex[c & 15];
			w = 3;
		}
		for (int i = 0; i < w; i++, n++)
			if (n + 1 < size)
				out[n] = enc[i];
	}
	if (size)
		out[n < size ? n : size - 1] = '\0';
	return n;
}

/* floor division: windows before 1970 are not expected, but must not round the wrong way */
static __s64 div_floor(__s64 a, __s64 b)
{
	__s64 q = a / b;

	return (a % b && a < 0) ? q - 1 : q;
}

/*
 * Both ends round down: consecutive windows share a boundary instant, so they
 * share its second too and stay contiguous in Pyroscope's whole seconds. Only
 * a window shorter than a second inside one second gets stretched to one.
 */
void push_url__window(__s64 from_ns, __s64 until_ns, __s64 *from_s, __s64 *until_s)
{
	*from_s = div_floor(from_ns, NS_PER_SEC);
	*until_s = div_floor(until_ns, NS_PER_SEC);
	if (*until_s <= *from_s)
		*until_s = *from_s + 1;
}

char *push_url__ingest(const char *base, const char *key, __s64 from_ns, __s64 until_ns,
		       int sample_rate)
{
	size_t base_len = strlen(base), key_len = strlen(key);
	__s64 from_s, until_s;
	char *url, *enc;
	int n;

	/* a base with a path prefix ("https://host/pyroscope/") keeps it, minus the slash */
	while (base_len && base[base_len - 1] == '/')
		base_len--;
	enc = malloc(3 * key_len + 1);
	if (!enc)
		return NULL;
	push_url__escape(key, enc, 3 * key_len + 1);
	push_url__window(from_ns, until_ns, &from_s, &until_s);
	n = asprintf(&url,
		     "%.*s/ingest?name=%s&from=%" PRId64 "&until=%" PRId64
		     "&format=pprof&sampleRate=%d&spyName=ebpfprof",
		     (int)base_len, base, enc, (int64_t)from_s, (int64_t)until_s, sample_rate);
	free(enc);
	if (n < 0) {
		errno = ENOMEM;
		return NULL;
	}
	return url;
}

struct label_pair {
	const char *name;
	const char *value;
};

static int cmp_label(const void *a, const void *b)
{
	return strcmp(((const struct label_pair *)a)->name, ((const struct label_pair *)b)->name);
}

/*
 * Splits a copy of "NAME{k=v,...}" in place. The key came from
 * push_url__series_key, whose values hold no ',' '{' '}' and whose names no
 * '=', so the first '=' of each pair is the separator.
 */
static int split_key(char *copy, const char *type, struct label_pair **out, size_t *n)
{
	char *open = strchr(copy, '{'), *end = copy + strlen(copy) - 1, *save = NULL, *tok;
	struct label_pair *pairs = NULL;
	size_t cap = 0, cnt = 2;
	int err = 0;

	if (!open || open == copy || *end != '}')
		return -EINVAL;
	*open = *end = '\0';
	if (ARRAY_RESERVE(pairs, cap, cnt))
		return -ENOMEM;
	pairs[0] = (struct label_pair){ "__name__", type };
	pairs[1] = (struct label_pair){ "service_name", copy };
	for (tok = strtok_r(open + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq || eq == tok || !eq[1]) {
			err = -EINVAL;
			goto err_free;
		}
		*eq = '\0';
		/* the series name is the service; a label of that name would be a duplicate */
		if (!strcmp(tok, "service_name"))
			continue;
		if (ARRAY_RESERVE(pairs, cap, cnt + 1)) {
			err = -ENOMEM;
			goto err_free;
		}
		pairs[cnt++] = (struct label_pair){ tok, eq + 1 };
	}
	qsort(pairs, cnt, sizeof(*pairs), cmp_label);
	*out = pairs;
	*n = cnt;
	return 0;

err_free:
	free(pairs);
	return err;
}

/* a Prometheus metric name: [a-zA-Z_][a-zA-Z0-9_]* */
static bool is_metric_name(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!is_alnum(*s) && *s != '_')
			return false;
	return true;
}

int push_url__push_request(const char *key, const char *type, const void *body, size_t len,
			   struct pbuf *out)
{
	struct label_pair *pairs = NULL;
	size_t n = 0, series, m;
	char *copy;
	int err;

	type = type ? type : PUSH_URL_PROFILE_TYPE;
	if (!is_metric_name(type))
		return -EINVAL;
	copy = strdup(key);
	if (!copy)
		return -ENOMEM;
	err = split_key(copy, type, &pairs, &n);
	if (err)
		goto out;
	series = pbuf__begin(out, 1);		/* PushRequest.series */
	for (size_t i = 0; i < n; i++) {
		m = pbuf__begin(out, 1);	/* RawProfileSeries.labels: LabelPair */
		pbuf__string(out, 1, pairs[i].name);
		pbuf__string(out, 2, pairs[i].value);
		pbuf__end(out, m);
	}
	m = pbuf__begin(out, 2);		/* RawProfileSeries.samples: RawSample */
	pbuf__bytes(out, 1, body, len);		/* raw_profile */
	pbuf__end(out, m);
	pbuf__end(out, series);
	err = pbuf__err(out);
out:
	free(pairs);
	free(copy);
	return err;
}
