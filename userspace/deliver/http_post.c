/* http_post.c -- one HTTP/1.1 POST over plain TCP, for http:// push URLs without libcurl */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include "lib/hexdigit.h"
#include "http_post.h"

/*
 * Why not libcurl for these: linked or opened, libcurl brings OpenSSL,
 * GnuTLS, Kerberos, LDAP and SSH, about 5 MB of the agent's resident memory,
 * for a POST on a plain socket. https URLs, and http ones when a proxy is set
 * in the environment, still go through libcurl (pusher.c chooses). Parsing the
 * URL and the answer is http-parser's (Node's former parser, in Debian).
 */

#define POLL_STEP_MS 100	/* how often a wait looks at *stop */
#define RECV_CHUNK 4096

/* --- URL --- */

static int percent_decode(const char *s, size_t len, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (c == '%') {
			int hi = i + 2 < len ? hexval(s[i + 1]) : -1;
			int lo = hi >= 0 ? hexval(s[i + 2]) : -1;

			if (lo < 0)
				return -EINVAL;
			c = (char)(hi << 4 | lo);
			i += 2;
		}
		if (!c || c == '\r' || c == '\n' || o + 1 >= cap)
			return -EINVAL;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

int http_url__parse(const char *url, struct http_url *u)
{
	struct http_parser_url pu;
	size_t len = strlen(url);

	memset(u, 0, sizeof(*u));
	http_parser_url_init(&pu);
	if (len > HTTP_URL_MAX || http_parser_parse_url(url, len, 0, &pu))
		return -EINVAL;
	if (!(pu.field_set & (1 << UF_SCHEMA)) || !(pu.field_set & (1 << UF_HOST)) ||
	    pu.field_data[UF_SCHEMA].len != 4 || strncasecmp(url + pu.field_data[UF_SCHEMA].off, "http", 4))
		return -EINVAL;
	if (!pu.field_data[UF_HOST].len || pu.field_data[UF_HOST].len > HTTP_HOST_MAX)
		return -EINVAL;
	memcpy(u->host, url + pu.field_data[UF_HOST].off, pu.field_data[UF_HOST].len);
	/* the parser gives an IPv6 literal without its brackets */
	u->ipv6 = pu.field_data[UF_HOST].off && url[pu.field_data[UF_HOST].off - 1] == '[';
	u->has_port = pu.field_set & (1 << UF_PORT);
	snprintf(u->port, sizeof(u->port), "%u", u->has_port ? pu.port : 80);
	if (u->has_port && !pu.port)
		return -EINVAL;
	if (pu.field_set & (1 << UF_PATH)) {
		u->target = url + pu.field_data[UF_PATH].off;
		u->target_len = pu.field_data[UF_PATH].len;
	} else {
		u->target = "";
	}
	u->has_query = pu.field_set & (1 << UF_QUERY);
	u->has_fragment = pu.field_set & (1 << UF_FRAGMENT);
	if (u->has_query) {	/* the query follows the path (or the authority) in the URL */
		if (!(pu.field_set & (1 << UF_PATH)))
			u->target = url + pu.field_data[UF_QUERY].off - 1;
		u->target_len = pu.field_data[UF_QUERY].off + pu.field_data[UF_QUERY].len -
				(u->target - url);
	}
	if (pu.field_set & (1 << UF_USERINFO))
		return percent_decode(url + pu.field_data[UF_USERINFO].off,
				      pu.field_data[UF_USERINFO].len, u->userinfo, sizeof(u->userinfo));
	return 0;
}

/* --- the answer --- */

/*
 * A header's value ended: Retry-After loses the spaces around it (RFC 9110's
 * OWS); one holding a control byte (a NUL above all) is no date or number
 * and is dropped whole, so the value never depends on how reads split it.
 */
static void end_value(struct http_resp *r)
{
	char *v = r->retry_after, *end = v + r->retry_len;
	size_t lead;

	if (!r->in_value || !r->is_retry_after)
		return;
	for (const char *c = v; c < end; c++) {
		if ((unsigned char)*c < 0x20 && *c != '\t') {
			end = v;
			break;
		}
	}
	*end = '\0';
	lead = strspn(v, " \t");
	while (end > v + lead && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	memmove(v, v + lead, end - v - lead);
	v[end - v - lead] = '\0';
	r->retry_len = 0;
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
	struct http_resp *r = p->data;

	if (r->in_value) {	/* a new header */
		end_value(r);
		r->field_len = 0;
		r->field_long = false;
		r->in_value = false;
	}
	if (r->field_len + len >= sizeof(r->field)) {
		r->field_long = true;
		return 0;
	}
	memcpy(r->field + r->field_len, at, len);
	r->field_len += len;
	return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
	struct http_resp *r = p->data;
	size_t have, room;

	if (!r->in_value) {
		r->in_value = true;
		r->is_retry_after = !r->field_long && r->field_len == 11 &&
				    !strncasecmp(r->field, "retry-after", 11);
		if (r->is_retry_after)
			r->retry_len = 0;
	}
	if (!r->is_retry_after)
		return 0;
	have = r->retry_len;
	room = sizeof(r->retry_after) - 1 - have;
	len = len < room ? len : room;
	memcpy(r->retry_after + have, at, len);
	r->retry_len = have + len;
	r->retry_after[r->retry_len] = '\0';
	return 0;
}

static int on_headers_complete(http_parser *p)
{
	struct http_resp *r = p->data;

	end_value(r);
	r->field_len = 0;
	r->field_long = false;
	r->in_value = false;
	return 0;
}

static int on_body(http_parser *p, const char *at, size_t len)
{
	struct http_resp *r = p->data;
	size_t room = r->body_cap - r->body_len;

	if (p->status_code < 200)
		return 0;
	len = len < room ? len : room;
	memcpy(r->body + r->body_len, at, len);
	r->body_len += len;
	return 0;
}

/* a 1xx answer is followed by the real one: read on */
static int on_message_complete(http_parser *p)
{
	struct http_resp *r = p->data;

	if (p->status_code < 200) {
		r->retry_after[0] = '\0';	/* the final answer's headers are the ones that count */
		return 0;
	}
	r->status = p->status_code;
	r->done = true;
	http_parser_pause(p, 1);	/* what follows the answer is not ours to parse */
	return 0;
}

static const http_parser_settings settings = {
	.on_header_field = on_header_field,
	.on_header_value = on_header_value,
	.on_headers_complete = on_headers_complete,
	.on_body = on_body,
	.on_message_complete = on_message_complete,
};

void http_resp__init(struct http_resp *r, char *body, size_t body_cap)
{
	memset(r, 0, sizeof(*r));
	http_parser_init(&r->parser, HTTP_RESPONSE);
	r->parser.data = r;
	r->body = body;
	r->body_cap = body ? body_cap : 0;
}

int http_resp__feed(struct http_resp *r, const char *data, size_t len)
{
	if (r->done)
		return 0;
	http_parser_execute(&r->parser, &settings, data, len);
	if (r->done)
		return 0;
	return HTTP_PARSER_ERRNO(&r->parser) == HPE_OK ? 0 : -EBADMSG;
}

int http_resp__eof(struct http_resp *r)
{
	if (r->done)
		return 0;
	/* an answer delimited by the close completes here */
	http_parser_execute(&r->parser, &settings, NULL, 0);
	return r->done ? 0 : -EBADMSG;
}

/* --- the request --- */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Waits for EVENTS on fd until deadline; 0, -ETIMEDOUT or -ECANCELED. */
static int wait_fd(int fd, short events, long long deadline, const int *stop)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = events };
		long long left = deadline - now_ms();
		int n;

		if (stop && __atomic_load_n(stop, __ATOMIC_RELAXED))
			return -ECANCELED;
		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(&pfd, 1, left < POLL_STEP_MS ? (int)left : POLL_STEP_MS);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

static int connect_one(const struct addrinfo *ai, long long deadline, const int *stop)
{
	int fd, err = 0;
	socklen_t len = sizeof(err);

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
		return -errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) && errno != EINPROGRESS) {
		err = -errno;
	} else {
		err = wait_fd(fd, POLLOUT, deadline, stop);
		if (!err && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
			err = errno;
		err = err > 0 ? -err : err;
	}
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* the first address that answers; each gets what is left of the connect timeout */
static int connect_url(const struct http_url *u, long long deadline, const int *stop, char *why,
		       size_t why_len)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_ADDRCONFIG | AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	int fd = -EHOSTUNREACH, rc;

	rc = getaddrinfo(u->host, u->port, &hints, &res);
	if (rc) {
		snprintf(why, why_len, "could not resolve %s: %s", u->host, gai_strerror(rc));
		return rc == EAI_MEMORY ? -ENOMEM : -EHOSTUNREACH;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = connect_one(ai, deadline, stop);
		if (fd >= 0 || fd == -ECANCELED || fd == -ETIMEDOUT)
			break;
	}
	freeaddrinfo(res);
	if (fd == -ETIMEDOUT)
		snprintf(why, why_len, "connect to %s port %s: timed out", u->host, u->port);
	else if (fd < 0 && fd != -ECANCELED)
		snprintf(why, why_len, "connect to %s port %s: %s", u->host, u->port, strerror(-fd));
	return fd;
}

static void base64(const char *in, size_t len, char *out)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;

	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned char)in[i] << 16;

		v |= i + 1 < len ? (unsigned char)in[i + 1] << 8 : 0;
		v |= i + 2 < len ? (unsigned char)in[i + 2] : 0;
		out[o++] = tab[v >> 18 & 63];
		out[o++] = tab[v >> 12 & 63];
		out[o++] = i + 1 < len ? tab[v >> 6 & 63] : '=';
		out[o++] = i + 2 < len ? tab[v & 63] : '=';
	}
	out[o] = '\0';
}

/* The request line and headers; malloc'd, NULL on ENOMEM. */
static char *request_head(const struct http_post_req *rq, const struct http_url *u, size_t *len)
{
	const char *userpwd = rq->userpwd ? rq->userpwd : u->userinfo;
	char *head = NULL, *auth = NULL;
	size_t cap = 0;
	FILE *f = open_memstream(&head, &cap);

	if (!f)
		return NULL;
	/* an origin-form target starts with '/', also when the URL had a query and no path */
	fprintf(f, "POST %s%.*s HTTP/1.1\r\nHost: %s%s%s%s%s\r\n",
		u->target_len && u->target[0] == '/' ? "" : "/", (int)u->target_len, u->target,
		u->ipv6 ? "[" : "", u->host, u->ipv6 ? "]" : "", u->has_port ? ":" : "",
		u->has_port ? u->port : "");
	if (rq->user_agent)
		fprintf(f, "User-Agent: %s\r\n", rq->user_agent);
	if (userpwd[0] && (auth = malloc(strlen(userpwd) / 3 * 4 + 5))) {
		base64(userpwd, strlen(userpwd), auth);
		fprintf(f, "Authorization: Basic %s\r\n", auth);
		explicit_bzero(auth, strlen(auth));
		free(auth);
	} else if (userpwd[0]) {
		fclose(f);
		free(head);
		return NULL;
	}
	for (size_t i = 0; i < rq->n_headers; i++)
		fprintf(f, "%s\r\n", rq->headers[i]);
	fprintf(f, "Content-Length: %zu\r\nConnection: close\r\n\r\n", rq->len);
	if (fclose(f)) {
		free(head);
		return NULL;
	}
	*len = cap;
	return head;
}

static int send_all(int fd, const char *p, size_t len, long long deadline, const int *stop)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		int err;

		if (n > 0) {
			p += n;
			len -= n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		err = wait_fd(fd, POLLOUT, deadline, stop);
		if (err)
			return err;
	}
	return 0;
}

static int read_answer(int fd, struct http_resp *rs, long long deadline, const int *stop)
{
	char buf[RECV_CHUNK];

	while (!rs->done) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		int err;

		if (n > 0) {
			err = http_resp__feed(rs, buf, n);
			if (err)
				return err;
			continue;
		}
		if (!n)
			return http_resp__eof(rs);
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		err = wait_fd(fd, POLLIN, deadline, stop);
		if (err)
			return err;
	}
	return 0;
}

int http_post(const struct http_post_req *rq, struct http_resp *rs, char *err, size_t err_len)
{
	long long start = now_ms(), deadline = start + rq->timeout_ms;
	long long connect_by = start + (rq->connect_timeout_ms < rq->timeout_ms ?
					rq->connect_timeout_ms : rq->timeout_ms);
	struct http_url u;
	char *head = NULL;
	size_t head_len = 0;
	int fd, rc;

	err[0] = '\0';
	if (http_url__parse(rq->url, &u)) {
		snprintf(err, err_len, "not an http:// URL");
		return -EINVAL;
	}
	head = request_head(rq, &u, &head_len);
	explicit_bzero(u.userinfo, sizeof(u.userinfo));
	if (!head)
		return -ENOMEM;
	fd = connect_url(&u, connect_by, rq->stop, err, err_len);
	if (fd < 0) {
		rc = fd;
		goto out;
	}
	rc = send_all(fd, head, head_len, deadline, rq->stop);
	if (!rc)
		rc = send_all(fd, rq->body, rq->len, deadline, rq->stop);
	/* a server may answer (413, 401) before it read the whole body, then close */
	if (!rc || rc == -EPIPE || rc == -ECONNRESET)
		rc = read_answer(fd, rs, deadline, rq->stop);
	close(fd);
	if (rc == -ETIMEDOUT)
		snprintf(err, err_len, "timed out after %ld ms", rq->timeout_ms);
	else if (rc && rc != -ECANCELED)
		snprintf(err, err_len, "%s", rc == -EBADMSG ? "the answer is not HTTP/1.x" :
			 strerror(-rc));
out:
	explicit_bzero(head, head_len);
	free(head);
	return rc;
}
