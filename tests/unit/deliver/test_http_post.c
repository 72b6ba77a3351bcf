/* test_http_post.c -- the plain-socket POST against a raw TCP server that answers byte for byte what each test wrote */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "deliver/http_post.h"
#include "test.h"

#define REQ_MAX (2u << 20)

static char req_buf[REQ_MAX];	/* one server at a time; the test reads it after the stop */

/* One connection: reads the request (head and Content-Length body), then writes the pieces. */
struct server {
	int listen_fd;
	int port;
	pthread_t thread;
	const char *const *pieces;	/* written one by one, 50 ms apart; NULL-terminated */
	bool silent;			/* read the request, answer nothing, wait for the client to go */
	char *req;			/* what came in */
	size_t req_len;
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static size_t body_expected(const char *req)
{
	const char *cl = strcasestr(req, "\r\nContent-Length: ");

	return cl ? strtoul(cl + 18, NULL, 10) : 0;
}

static void *serve(void *arg)
{
	struct server *s = arg;
	int fd = accept(s->listen_fd, NULL, NULL);
	char *end = NULL;
	ssize_t n;

	if (fd < 0)
		return NULL;
	while (s->req_len < REQ_MAX - 1) {
		n = recv(fd, s->req + s->req_len, REQ_MAX - 1 - s->req_len, 0);
		if (n <= 0)
			break;
		s->req_len += n;
		s->req[s->req_len] = '\0';
		end = strstr(s->req, "\r\n\r\n");
		if (end && s->req_len >= (size_t)(end + 4 - s->req) + body_expected(s->req))
			break;
	}
	if (s->silent) {
		char c;

		while (recv(fd, &c, 1, 0) > 0)	/* until the client closes */
			;
	}
	for (size_t i = 0; s->pieces && s->pieces[i]; i++) {
		if (i)
			usleep(50000);
		if (send(fd, s->pieces[i], strlen(s->pieces[i]), MSG_NOSIGNAL) < 0)
			break;
	}
	close(fd);
	return NULL;
}

static int server_start(struct server *s, const char *const *pieces, bool silent)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);

	memset(s, 0, sizeof(*s));
	s->pieces = pieces;
	s->silent = silent;
	s->req = req_buf;
	req_buf[0] = '\0';
	s->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->listen_fd < 0 || bind(s->listen_fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(s->listen_fd, 1) || getsockname(s->listen_fd, (struct sockaddr *)&a, &len))
		return -1;
	s->port = ntohs(a.sin_port);
	return pthread_create(&s->thread, NULL, serve, s) ? -1 : 0;
}

static void server_stop(struct server *s)
{
	shutdown(s->listen_fd, SHUT_RDWR);
	pthread_join(s->thread, NULL);
	close(s->listen_fd);
}

static struct http_post_req req_to(const char *url, const char *body)
{
	return (struct http_post_req){ .url = url, .user_agent = "ebpfprof-test", .body = body,
				       .len = strlen(body), .timeout_ms = 3000,
				       .connect_timeout_ms = 1000 };
}

/* 100 Continue, then a chunked 503 whose Retry-After and chunks arrive split across writes */
static int test_chunked_after_continue(void)
{
	static const char *const pieces[] = {
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Service Unavailable\r\nRetry-",
		"After:  120 \r\nTransfer-Encoding: chunked\r\nX-Long-Header-Name-Here: 1\r\n\r\n5\r\nhel",
		"lo\r\n6\r\n world\r\n0\r\n\r\n",
		NULL,
	};
	static const char *const headers[] = { "X-Scope-OrgID: team-a", "Content-Type: application/octet-stream" };
	char url[128], body[64];
	struct http_post_req rq;
	struct http_resp rs;
	struct server s;
	char err[256];

	CHECK(!server_start(&s, pieces, false));
	snprintf(url, sizeof(url), "http://user:s3%%63ret@127.0.0.1:%d/ingest?name=a%%7Bb%%7D&x=1", s.port);
	rq = req_to(url, "abcde");
	rq.headers = headers;
	rq.n_headers = 2;
	http_resp__init(&rs, body, sizeof(body));
	CHECK(http_post(&rq, &rs, err, sizeof(err)) == 0);
	server_stop(&s);
	CHECK(rs.done && rs.status == 503);
	CHECK(!strcmp(rs.retry_after, "120"));
	CHECK(rs.body_len == 11 && !memcmp(body, "hello world", 11));
	/* the request as the server read it */
	CHECK(!strncmp(s.req, "POST /ingest?name=a%7Bb%7D&x=1 HTTP/1.1\r\n", 41));
	CHECK(strstr(s.req, "\r\nHost: 127.0.0.1:"));
	/* "user:s3cret" (the URL's %63 decoded) in base64 */
	CHECK(strstr(s.req, "\r\nAuthorization: Basic dXNlcjpzM2NyZXQ=\r\n"));
	CHECK(strstr(s.req, "\r\nX-Scope-OrgID: team-a\r\n"));
	CHECK(strstr(s.req, "\r\nUser-Agent: ebpfprof-test\r\n"));
	CHECK(strstr(s.req, "\r\nContent-Length: 5\r\n"));
	CHECK(s.req_len > 5 && !memcmp(s.req + s.req_len - 9, "\r\n\r\nabcde", 9));
	return TEST_OK;
}

/* no length: the answer ends where the server closes; the body beyond the buffer is dropped */
static int test_close_delimited_and_cut(void)
{
	static const char *const pieces[] = {
		"HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain\r\n\r\nname is not valid: ",
		"0123456789012345678901234567890123456789", NULL,
	};
	char url[64], body[16];
	struct http_post_req rq;
	struct http_resp rs;
	struct server s;
	char err[256];

	CHECK(!server_start(&s, pieces, false));
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", s.port);
	rq = req_to(url, "");
	rq.userpwd = "a:b";
	http_resp__init(&rs, body, sizeof(body));
	CHECK(http_post(&rq, &rs, err, sizeof(err)) == 0);
	server_stop(&s);
	CHECK(rs.status == 400 && rs.body_len == sizeof(body) && !memcmp(body, "name is not vali", 16));
	CHECK(!rs.retry_after[0]);
	CHECK(!strncmp(s.req, "POST / HTTP/1.1\r\n", 17));
	CHECK(strstr(s.req, "\r\nAuthorization: Basic YTpi\r\n"));
	CHECK(strstr(s.req, "\r\nContent-Length: 0\r\n"));
	return TEST_OK;
}

/*
 * The parser alone: a 1xx answer's Retry-After is not the final answer's, and
 * a value that starts with a NUL (the only place http-parser lets one
 * through) is dropped the same whether the read splits it or not.
 */
static int test_retry_after_edges(void)
{
	static const char one_xx[] = "HTTP/1.1 100 Continue\r\nRetry-After: 7\r\n\r\n"
				     "HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n";
	static const char nul[] = "HTTP/1.1 429 Slow\r\nRetry-After:\0 9\r\nContent-Length: 0\r\n\r\n";
	struct http_resp r;

	http_resp__init(&r, NULL, 0);
	CHECK(!http_resp__feed(&r, one_xx, sizeof(one_xx) - 1));
	CHECK(r.done && r.status == 503 && !r.retry_after[0]);
	for (size_t cut = 0; cut < sizeof(nul) - 1; cut++) {
		http_resp__init(&r, NULL, 0);
		CHECK(!http_resp__feed(&r, nul, cut));
		CHECK(!http_resp__feed(&r, nul + cut, sizeof(nul) - 1 - cut));
		CHECK(r.done && r.status == 429 && !r.retry_after[0]);
	}
	return TEST_OK;
}

/* a large body goes out whole through a socket that fills */
static int test_large_body(void)
{
	static const char *const pieces[] = { "HTTP/1.1 204 No Content\r\n\r\n", NULL };
	size_t n = 1536 * 1024;
	char url[64], *big = malloc(n + 1);
	struct http_post_req rq;
	struct http_resp rs;
	struct server s;
	char err[256];

	CHECK(big);
	for (size_t i = 0; i < n; i++)
		big[i] = 'a' + i % 26;
	big[n] = '\0';
	CHECK(!server_start(&s, pieces, false));
	snprintf(url, sizeof(url), "http://localhost:%d/x", s.port);
	rq = req_to(url, big);
	http_resp__init(&rs, NULL, 0);
	CHECK(http_post(&rq, &rs, err, sizeof(err)) == 0);
	server_stop(&s);
	CHECK(rs.status == 204 && rs.body_len == 0);
	CHECK(s.req_len > n && !memcmp(s.req + s.req_len - n, big, n));
	free(big);
	return TEST_OK;
}

static int test_not_http(void)
{
	static const char *const pieces[] = { "SSH-2.0-OpenSSH_9.2\r\n", NULL };
	char url[64], err[256];
	struct http_post_req rq;
	struct http_resp rs;
	struct server s;

	CHECK(!server_start(&s, pieces, false));
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", s.port);
	rq = req_to(url, "x");
	http_resp__init(&rs, NULL, 0);
	CHECK(http_post(&rq, &rs, err, sizeof(err)) == -EBADMSG);
	server_stop(&s);
	CHECK(!rs.done && strstr(err, "not HTTP"));
	return TEST_OK;
}

/* a server that reads and never answers: the timeout, then stop, end the wait */
static int test_timeout_and_stop(void)
{
	char url[64], err[256];
	struct http_post_req rq;
	struct http_resp rs;
	struct server s;
	long long t0, took;
	int stop = 0;

	CHECK(!server_start(&s, NULL, true));
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", s.port);
	rq = req_to(url, "x");
	rq.timeout_ms = 400;
	http_resp__init(&rs, NULL, 0);
	t0 = now_ms();
	CHECK(http_post(&rq, &rs, err, sizeof(err)) == -ETIMEDOUT);
	took = now_ms() - t0;
	server_stop(&s);
	CHECK(took >= 400 && took < 1500 && strstr(err, "timed out after 400 ms"));

	CHECK(!server_start(&s, NULL, true));
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", s.port);
	rq = req_to(url, "x");
	rq.timeout_ms = 20000;
	rq.stop = &stop;
	stop = 1;	/* already asked to stop: the first wait returns */
	http_resp__init(&rs, NULL, 0);
	t0 = now_ms();
	CHECK(http_post(&rq, &rs, err, sizeof(err)) == -ECANCELED);
	server_stop(&s);
	CHECK(now_ms() - t0 < 1000);
	return TEST_OK;
}

static int test_refused(void)
{
	struct server s;
	char url[64], err[256];
	struct http_post_req rq;
	struct http_resp rs;
	int port;

	/* a port that was just free: bound, then closed without listening */
	CHECK(!server_start(&s, NULL, false));
	port = s.port;
	server_stop(&s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", port);
	rq = req_to(url, "x");
	http_resp__init(&rs, NULL, 0);
	CHECK(http_post(&rq, &rs, err, sizeof(err)) == -ECONNREFUSED);
	CHECK(strstr(err, "Connection refused") && strstr(err, "127.0.0.1"));
	rq.url = "http://no-such-host.invalid/";
	CHECK(http_post(&rq, &rs, err, sizeof(err)) == -EHOSTUNREACH);
	CHECK(strstr(err, "could not resolve no-such-host.invalid"));
	return TEST_OK;
}

static int test_urls(void)
{
	struct http_url u;

	CHECK(!http_url__parse("http://[::1]:8080/p?q=1", &u));
	CHECK(!strcmp(u.host, "::1") && u.ipv6 && u.has_port && !strcmp(u.port, "8080"));
	CHECK(u.target_len == 6 && !strncmp(u.target, "/p?q=1", 6) && u.has_query);
	CHECK(!http_url__parse("HTTP://example.org", &u));
	CHECK(!strcmp(u.host, "example.org") && !strcmp(u.port, "80") && !u.has_port);
	CHECK(u.target_len == 0 && !u.has_query && !u.has_fragment);
	CHECK(!http_url__parse("http://h?x=1", &u) && u.has_query && !strncmp(u.target, "?x=1", u.target_len));
	CHECK(!http_url__parse("http://u:p%40ss@h/#f", &u) && !strcmp(u.userinfo, "u:p@ss") && u.has_fragment);
	CHECK(http_url__parse("https://h/", &u) == -EINVAL);
	CHECK(http_url__parse("ftp://h/", &u) == -EINVAL);
	CHECK(http_url__parse("http://", &u) == -EINVAL);
	CHECK(http_url__parse("http://h:0/", &u) == -EINVAL);
	CHECK(http_url__parse("http://u:%0d%0aX:1@h/", &u) == -EINVAL);	/* a header smuggled in */
	CHECK(http_url__parse("http://u:%zz@h/", &u) == -EINVAL);
	CHECK(http_url__parse("/relative", &u) == -EINVAL);
	return TEST_OK;
}

TEST_MAIN("http_post",
	  TEST(test_urls),
	  TEST(test_chunked_after_continue),
	  TEST(test_close_delimited_and_cut),
	  TEST(test_retry_after_edges),
	  TEST(test_large_body),
	  TEST(test_not_http),
	  TEST(test_timeout_and_stop),
	  TEST(test_refused))
