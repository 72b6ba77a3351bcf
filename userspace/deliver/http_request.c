/* http_request.c -- decides how to answer a pull request from its method, path, query and token */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <limits.h>
#include "http_request.h"

/* INT_MAX has 10 digits: longer seconds or pid values are refused unparsed. */
#define MAX_INT_DIGITS 10

struct route {
	const char *path;
	bool prefix;		/* matches every path starting with path */
	bool needs_auth;	/* the bearer token guards it */
	enum http_endpoint endpoint;
};

/* First match wins: exact paths before the /debug/pprof/ catch-all. */
static const struct route routes[] = {
	{ "/debug/pprof/profile", false, true, HTTP_EP_PROFILE },
	{ "/debug/pprof/", false, true, HTTP_EP_INDEX },
	{ "/debug/pprof/", true, true, HTTP_EP_UNKNOWN_PROFILE },
	{ "/debug/pprof", false, false, HTTP_EP_INDEX_REDIRECT },
	{ "/metrics", false, false, HTTP_EP_METRICS },
	{ "/healthz", false, false, HTTP_EP_HEALTHZ },
	{ "/", false, true, HTTP_EP_PAGE },
};

static const struct route *find_route(const char *path)
{
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		const struct route *r = &routes[i];

		if (r->prefix ? !strncmp(path, r->path, strlen(r->path)) : !strcmp(path, r->path))
			return r;
	}
	return NULL;
}

int http_request__parse_int(const char *v, long long min, long long max, long long *out)
{
	long long val = 0;
	size_t n;

	if (!v)
		return -EINVAL;
	n = strnlen(v, MAX_INT_DIGITS + 1);
	if (n == 0 || n > MAX_INT_DIGITS)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -EINVAL;
		val = val * 10 + (v[i] - '0');
	}
	if (val < min || val > max)
		return -EINVAL;
	*out = val;
	return 0;
}

/*
 * Compares in a time that depends only on the configured token's length, so
 * response timing does not tell an attacker how many leading bytes matched.
 */
static bool token_equal(const char *given, const char *want, size_t want_len)
{
	size_t given_len = strnlen(given, want_len + 1);
	unsigned char diff = given_len != want_len;

	for (size_t i = 0; i < want_len; i++)
		diff |= (unsigned char)want[i] ^ (unsigned char)(i < given_len ? given[i] : 0);
	return diff == 0;
}

bool http_request__authorized(const char *authorization, const char *token, size_t token_len)
{
	const char *v = authorization;

	if (!token)
		return true;
	if (!v || strncasecmp(v, "Bearer ", 7))
		return false;
	for (v += 7; *v == ' '; v++)
		;
	return token_equal(v, token, token_len);
}

__attribute__((format(printf, 3, 4)))
static int refuse(struct http_decision *d, unsigned int status, const char *fmt, ...)
{
	va_list ap;

	d->endpoint = HTTP_EP_REFUSED;
	d->status = status;
	va_start(ap, fmt);
	vsnprintf(d->message, sizeof(d->message), fmt, ap);
	va_end(ap);
	return 0;
}

/* ?seconds= and ?pid= of a profile request; net/http/pprof's names and defaults */
static int profile_params(const struct http_request *req, const struct http_request_policy *policy,
			  struct http_decision *d)
{
	long long seconds = policy->default_seconds, pid = 0;

	if (seconds > policy->max_seconds)
		seconds = policy->max_seconds;
	if (req->seconds &&
	    http_request__parse_int(req->seconds, 1, policy->max_seconds, &seconds))
		return refuse(d, 400, "invalid seconds: want an integer from 1 to %d\n",
			      policy->max_seconds);
	if (req->pid && http_request__parse_int(req->pid, 0, INT_MAX, &pid))
		return refuse(d, 400, "invalid pid: want a process id, or 0 for all processes\n");
	d->seconds = (int)seconds;
	d->pid = (__u32)pid;
	return 0;
}

/* the page: ?seconds= and ?pid= as a profile's, ?windows=, ?series= and ?label= */
static int page_params(const struct http_request *req, const struct http_request_policy *policy,
		       struct http_decision *d)
{
	long long windows = 1;

	if (profile_params(req, policy, d) || d->endpoint != HTTP_EP_PAGE)
		return 0;
	if (req->windows &&
	    http_request__parse_int(req->windows, 1, HTTP_PAGE_MAX_WINDOWS, &windows))
		return refuse(d, 400, "invalid windows: want an integer from 1 to %d\n",
			      HTTP_PAGE_MAX_WINDOWS);
	if (req->series && (!*req->series || strnlen(req->series, HTTP_PAGE_MAX_SERIES_LEN + 1) >
					      HTTP_PAGE_MAX_SERIES_LEN))
		return refuse(d, 400, "invalid series: want a series name\n");
	if (req->label && (!*req->label || *req->label == ':' || !strchr(req->label, ':') ||
			   strnlen(req->label, HTTP_PAGE_MAX_SERIES_LEN + 1) > HTTP_PAGE_MAX_SERIES_LEN))
		return refuse(d, 400, "invalid label: want KEY:VALUE\n");
	d->seconds_given = req->seconds != NULL;
	d->windows = (int)windows;
	d->series = req->series;
	d->label = req->label;
	return 0;
}

int http_request__decide(const struct http_request *req, const struct http_request_policy *policy,
			 struct http_decision *d)
{
	const struct route *r;

	if (!req || !policy || !d || !req->method || !req->path || policy->max_seconds < 1 ||
	    policy->default_seconds < 1)
		return -EINVAL;
	memset(d, 0, sizeof(*d));
	r = find_route(req->path);
	if (!r)
		return refuse(d, 404, "not found\n");
	if (strcmp(req->method, "GET")) {
		d->header = "Allow";
		d->value = "GET";
		return refuse(d, 405, "method not allowed\n");
	}
	if (req->has_body)
		return refuse(d, 413, "request bodies are not accepted\n");
	if (r->needs_auth &&
	    !http_request__authorized(req->authorization, policy->bearer_token, policy->token_len)) {
		d->header = "WWW-Authenticate";
		d->value = "Bearer";
		return refuse(d, 401, "unauthorized\n");
	}
	d->endpoint = r->endpoint;
	if (r->endpoint == HTTP_EP_PROFILE)
		return profile_params(req, policy, d);
	if (r->endpoint == HTTP_EP_PAGE)
		return page_params(req, policy, d);
	return 0;
}
