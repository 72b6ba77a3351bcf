/* http_request.h -- what a pull request asks for: route, ?seconds=, ?pid=, bearer token; parsing only, no I/O */
#ifndef EBPFPROF_HTTP_REQUEST_H
#define EBPFPROF_HTTP_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

enum http_endpoint {
	HTTP_EP_REFUSED,		/* answer status with message */
	HTTP_EP_PROFILE,		/* /debug/pprof/profile */
	HTTP_EP_INDEX,			/* /debug/pprof/ */
	HTTP_EP_INDEX_REDIRECT,		/* /debug/pprof -> /debug/pprof/ */
	HTTP_EP_UNKNOWN_PROFILE,	/* /debug/pprof/anything-else */
	HTTP_EP_METRICS,		/* /metrics */
	HTTP_EP_HEALTHZ,		/* /healthz */
	HTTP_EP_PAGE,			/* /: the flame graph page */
};

/* What the request says, as the server library decoded it; every field is untrusted. */
struct http_request {
	const char *method;
	const char *path;		/* percent-decoded, without the query */
	const char *seconds;		/* first ?seconds= value; NULL when absent */
	const char *pid;		/* first ?pid= value; NULL when absent */
	const char *authorization;	/* the Authorization header; NULL when absent */
	bool has_body;			/* Content-Length other than 0, or Transfer-Encoding */
	const char *windows;		/* the page's ?windows=; NULL when absent */
	const char *series;		/* the page's ?series=; NULL when absent */
	const char *label;		/* the page's ?label=KEY:VALUE; NULL when absent */
};

/* The server's side: what it allows. */
struct http_request_policy {
	const char *bearer_token;	/* NULL: /debug/pprof/ is open */
	size_t token_len;
	int default_seconds;		/* ?seconds= absent (capped at max_seconds) */
	int max_seconds;		/* larger ?seconds= is refused */
};

struct http_decision {
	enum http_endpoint endpoint;
	unsigned int status;		/* HTTP_EP_REFUSED: the status to answer */
	const char *header, *value;	/* one header a refusal carries (Allow...); NULL: none */
	char message[128];		/* a refusal's body, one line */
	int seconds;			/* HTTP_EP_PROFILE: in [1, max_seconds] */
	__u32 pid;			/* HTTP_EP_PROFILE: 0 is every process */
	bool seconds_given;		/* HTTP_EP_PAGE: ?seconds= was there */
	int windows;			/* HTTP_EP_PAGE: the last N windows, 1 when absent */
	const char *series;		/* HTTP_EP_PAGE: one series, NULL: all */
	const char *label;		/* HTTP_EP_PAGE: KEY:VALUE, only its samples; NULL: all */
};

#define HTTP_PAGE_MAX_WINDOWS 16
#define HTTP_PAGE_MAX_SERIES_LEN 512

/*
 * Decides how to answer REQ under POLICY, in the order the checks must run:
 * unknown path 404, not GET 405, a body 413, no or wrong bearer token on
 * /debug/pprof/ 401, malformed ?seconds= or ?pid= 400. No path names a
 * file: the endpoints are a fixed table. Returns 0 (the decision is in D),
 * or -EINVAL when REQ, POLICY or D is NULL, a required field is, or a
 * policy's seconds are below 1.
 */
int http_request__decide(const struct http_request *req, const struct http_request_policy *policy,
			 struct http_decision *d);

/*
 * A decimal integer in [min, max] from V: digits only (no sign, no spaces),
 * at most 10 of them, so it cannot overflow. 0, or -EINVAL.
 */
int http_request__parse_int(const char *v, long long min, long long max, long long *out);

/*
 * Whether the Authorization header value carries "Bearer TOKEN" (the scheme
 * case-insensitive, RFC 7235), compared in a time that depends only on
 * token_len. A NULL token allows everything.
 */
bool http_request__authorized(const char *authorization, const char *token, size_t token_len);

#endif /* EBPFPROF_HTTP_REQUEST_H */
