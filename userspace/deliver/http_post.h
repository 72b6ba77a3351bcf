/* http_post.h -- one HTTP/1.1 POST over plain TCP, for http:// push URLs without libcurl */
#ifndef EBPFPROF_HTTP_POST_H
#define EBPFPROF_HTTP_POST_H

#include <stdbool.h>
#include <stddef.h>
#include <http_parser.h>

#define HTTP_URL_MAX 8192	/* longer URLs are refused (the parser's offsets are 16-bit) */
#define HTTP_HOST_MAX 255	/* a DNS name's longest */
#define HTTP_USERINFO_MAX 1024

/* What a request needs of "http://[user[:password]@]host[:port][/path][?query]". */
struct http_url {
	char host[HTTP_HOST_MAX + 1];	/* without an IPv6 literal's brackets */
	char port[6];
	bool ipv6;			/* host is an IPv6 literal: the Host header brackets it */
	bool has_port;			/* the URL named the port: so does the Host header */
	const char *target;		/* path and query, pointing into the URL; a '/' goes first if absent */
	size_t target_len;
	bool has_query, has_fragment;
	char userinfo[HTTP_USERINFO_MAX + 1];	/* percent-decoded "user:password", "" when none */
};

/* Fills *u from URL (scheme http only). 0, or -EINVAL. */
int http_url__parse(const char *url, struct http_url *u);

/* An answer read incrementally: status, Retry-After, and the first bytes of the body. */
struct http_resp {
	http_parser parser;
	int status;		/* the final answer's status; 1xx answers are skipped */
	bool done;		/* the final answer is complete */
	char *body;		/* the caller's buffer: the first body_cap bytes are kept */
	size_t body_len, body_cap;
	char retry_after[64];	/* the final answer's value without spaces around it; "" when absent or not text */
	size_t retry_len;	/* bytes in retry_after while the value is read (it may hold a NUL) */
	char field[16];		/* the header name being read, while it fits */
	size_t field_len;
	bool field_long;	/* the name did not fit: not one we look for */
	bool in_value;		/* the last callback was a value: the next name is a new header */
	bool is_retry_after;	/* the value being read belongs to Retry-After */
};

void http_resp__init(struct http_resp *r, char *body, size_t body_cap);

/* Feeds LEN bytes of the answer; after the final answer more bytes are ignored. 0 or -EBADMSG. */
int http_resp__feed(struct http_resp *r, const char *data, size_t len);

/* The peer closed: 0 if that completed the answer, else -EBADMSG. */
int http_resp__eof(struct http_resp *r);

struct http_post_req {
	const char *url;		/* http:// only */
	const char *const *headers;	/* "Name: value" lines, none with CR or LF */
	size_t n_headers;
	const char *user_agent;
	const char *userpwd;		/* "user:password" for Basic auth; NULL: the URL's, if any */
	const void *body;
	size_t len;
	long timeout_ms;		/* the whole request, from the connect on */
	long connect_timeout_ms;
	const int *stop;		/* non-zero (read atomically) aborts within 100 ms */
};

/*
 * Sends one POST and reads the answer into *rs (initialized by the caller).
 * The connection is closed after it. 0 once an answer came, whatever its
 * status; -ETIMEDOUT, -ECANCELED (stop), -EBADMSG (not HTTP), or the error of
 * name resolution, connect, send or receive, with one line in ERR.
 * Name resolution is getaddrinfo's, bounded by resolv.conf, not by timeout_ms.
 */
int http_post(const struct http_post_req *rq, struct http_resp *rs, char *err, size_t err_len);

#endif /* EBPFPROF_HTTP_POST_H */
