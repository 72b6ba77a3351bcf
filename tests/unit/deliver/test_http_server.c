/* test_http_server.c -- pull endpoint tests: go tool pprof, libcurl and raw sockets as clients */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>
#include "deliver/http_server.h"
#include "profile/pprof.h"
#include "deliver/prom.h"
#include "test.h"

#define TOKEN "s3cret-Token_1"
#define MAX_BODY (1 << 20)

/* What the fake callbacks saw and must answer; the server calls them from its threads. */
static struct {
	pthread_mutex_t lock;
	int calls;
	int active;		/* profiles in progress */
	int seconds;
	__u32 pid;
	int profile_result;
	int metrics_result;
} fake = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void fake_reset(void)
{
	pthread_mutex_lock(&fake.lock);
	fake.calls = fake.active = fake.seconds = 0;
	fake.pid = 0;
	fake.profile_result = fake.metrics_result = 0;
	pthread_mutex_unlock(&fake.lock);
}

static void fake_set(int *field, int v)
{
	pthread_mutex_lock(&fake.lock);
	*field = v;
	pthread_mutex_unlock(&fake.lock);
}

static int fake_get(int *field)
{
	int v;

	pthread_mutex_lock(&fake.lock);
	v = *field;
	pthread_mutex_unlock(&fake.lock);
	return v;
}

/* Two samples over two known functions, written as the gzip pprof the agent serves. */
static int build_profile(void **data, size_t *len)
{
	struct pprof_opts opts = {
		.sample_types = { { "samples", "count" }, { "cpu", "nanoseconds" } },
		.n_sample_types = 2,
		.period_type = { "cpu", "nanoseconds" },
		.period = 10000000,
		.duration_nanos = 1000000000,
		.default_sample_type = "samples",
	};
	struct pprof_mapping_desc map = {
		.start = 0x400000, .limit = 0x500000,
		.filename = "/usr/bin/fake", .has_functions = true,
	};
	struct pprof_line leaf = { "fake_leaf_fn", "/src/fake.c", 10 };
	struct pprof_line caller = { "fake_caller_fn", "/src/fake.c", 20 };
	__s64 v1[] = { 3, 30000000 }, v2[] = { 2, 20000000 };
	__u32 locs[2], m;
	struct pprof *p;
	FILE *out = NULL;
	int err = -ENOMEM;

	*data = NULL;
	p = pprof__new(&opts);
	if (!p)
		goto out;
	m = pprof__add_mapping(p, &map);
	locs[0] = pprof__add_location(p, m, 0x401000, &leaf, 1);
	locs[1] = pprof__add_location(p, m, 0x402000, &caller, 1);
	if (!m || !locs[0] || !locs[1])
		goto out;
	err = pprof__add_sample(p, locs, 2, v1, NULL, 0);
	if (!err)
		err = pprof__add_sample(p, &locs[1], 1, v2, NULL, 0);
	if (err)
		goto out;
	out = open_memstream((char **)data, len);
	if (!out) {
		err = -errno;
		goto out;
	}
	err = pprof__write(p, out);
out:
	if (out && fclose(out) && !err)
		err = -EIO;
	if (err) {
		free(*data);
		*data = NULL;
	}
	pprof__free(p);
	return err;
}

/*
 * Sleeps `seconds` like the real sampler, but only up to 2: longer requests
 * (the default 30, and cases that only check parameters) return at once.
 */
static int fake_profile(void *ctx, int seconds, __u32 pid, void **data, size_t *len)
{
	int err;

	pthread_mutex_lock(&fake.lock);
	fake.calls++;
	fake.active++;
	fake.seconds = seconds;
	fake.pid = pid;
	err = fake.profile_result;
	pthread_mutex_unlock(&fake.lock);

	if (seconds <= 2)
		sleep(seconds);
	if (!err)
		err = build_profile(data, len);

	pthread_mutex_lock(&fake.lock);
	fake.active--;
	pthread_mutex_unlock(&fake.lock);
	return err;
}

static int fake_metrics(void *ctx, FILE *out)
{
	int err = fake_get(&fake.metrics_result);

	if (err)
		return err;
	prom__header(out, "ebpfprof_test_total", "counter", "A test counter.");
	prom__value(out, "ebpfprof_test_total", "kind=\"a\"", 42);
	return 0;
}

static struct http_server *start(const char *listen, const char *token, int max_connections)
{
	struct http_server_opts opts = {
		.listen = listen,
		.bearer_token = token,
		.max_connections = max_connections,
		.profile = fake_profile,
		.metrics = fake_metrics,
	};

	fake_reset();
	return http_server__new(&opts);
}

struct reply {
	long status;
	char type[128];
	char header[256];	/* value of the header asked for, "" when absent */
	const char *header_name;
	char *body;
	size_t len;
};

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
	struct reply *r = arg;
	char *grown;

	if (r->len + n > MAX_BODY)
		return 0;
	grown = realloc(r->body, r->len + n + 1);
	if (!grown)
		return 0;
	r->body = grown;
	memcpy(r->body + r->len, data, n);
	r->len += n;
	r->body[r->len] = '\0';
	return n;
}

static size_t on_header(char *line, size_t size, size_t n, void *arg)
{
	struct reply *r = arg;
	size_t name_len = r->header_name ? strlen(r->header_name) : 0;

	if (name_len && n > name_len + 1 && !strncasecmp(line, r->header_name, name_len) &&
	    line[name_len] == ':') {
		const char *v = line + name_len + 1;
		size_t vlen = n - name_len - 1;

		while (vlen && *v == ' ')
			v++, vlen--;
		while (vlen && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n'))
			vlen--;
		if (vlen >= sizeof(r->header))
			vlen = sizeof(r->header) - 1;
		memcpy(r->header, v, vlen);
		r->header[vlen] = '\0';
	}
	return n;
}

/*
 * One request on a fresh connection. method NULL: GET; body non-NULL is sent
 * as the request body; req_header is one extra request header line.
 * Returns 0 or -1 when the transfer failed.
 */
static int fetch(const char *method, const char *url, const char *body, const char *req_header,
		 const char *header_name, struct reply *r)
{
	struct curl_slist *headers = NULL;
	const char *type = NULL;
	CURLcode rc = CURLE_OUT_OF_MEMORY;
	CURL *c = curl_easy_init();

	memset(r, 0, sizeof(*r));
	r->header_name = header_name;
	if (!c)
		return -1;
	if (req_header) {
		headers = curl_slist_append(NULL, req_header);
		if (!headers)
			goto out;
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	if (body)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	if (method)
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK) {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
		curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &type);
		snprintf(r->type, sizeof(r->type), "%s", type ? type : "");
	} else {
		fprintf(stderr, "  curl %s: %s\n", url, curl_easy_strerror(rc));
	}
out:
	curl_slist_free_all(headers);
	curl_easy_cleanup(c);
	return rc == CURLE_OK ? 0 : -1;
}

/* The status of GET base+path (with one optional request header), -1 on failure. */
static long status_of(int port, const char *path, const char *req_header)
{
	char url[512];
	struct reply r;
	long status;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	status = fetch(NULL, url, NULL, req_header, NULL, &r) ? -1 : r.status;
	free(r.body);
	return status;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int tcp_connect(int family, int port)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(port),
				     .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = 3 };
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int err;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (family == AF_INET6)
		err = connect(fd, (struct sockaddr *)&sin6, sizeof(sin6));
	else
		err = connect(fd, (struct sockaddr *)&sin, sizeof(sin));
	if (err) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Sends request on fd and reads the answer's first bytes. Returns their
 * count, 0 when the server closed the connection, or a negative errno.
 */
static ssize_t raw_exchange(int fd, const char *request, char *buf, size_t len)
{
	ssize_t n;

	buf[0] = '\0';
	/* a refused connection may be reset before the request is out: still read */
	if (send(fd, request, strlen(request), MSG_NOSIGNAL) < 0 && errno != EPIPE &&
	    errno != ECONNRESET)
		return -errno;
	n = recv(fd, buf, len - 1, 0);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

static void remove_dir(const char *dir)
{
	char path[512];
	struct dirent *e;
	DIR *d = opendir(dir);

	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static int test_profile_go_pprof(void)
{
	char dir[] = "/tmp/test_http_server.XXXXXX", cmd[512], line[512];
	struct http_server *s;
	bool leaf = false, caller = false;
	double t0, elapsed;
	FILE *p;
	int status;

	if (system("command -v go >/dev/null 2>&1"))
		SKIP("go is not installed (golang-go)");
	s = start("127.0.0.1:0", NULL, 0);
	CHECK(s);
	CHECK(mkdtemp(dir));
	/* PPROF_TMPDIR: pprof saves what it fetched there instead of ~/pprof */
	snprintf(cmd, sizeof(cmd),
		 "PPROF_TMPDIR=%s go tool pprof -raw -symbolize=none "
		 "'http://127.0.0.1:%d/debug/pprof/profile?seconds=1&pid=4242' 2>&1",
		 dir, http_server__port(s));
	t0 = now();
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		leaf |= strstr(line, "fake_leaf_fn") != NULL;
		caller |= strstr(line, "fake_caller_fn") != NULL;
	}
	status = p ? pclose(p) : -1;
	elapsed = now() - t0;
	http_server__free(s);
	remove_dir(dir);
	CHECK(status == 0);
	CHECK(leaf && caller);
	CHECK(fake_get(&fake.calls) == 1);
	CHECK(fake_get(&fake.seconds) == 1);
	CHECK(fake.pid == 4242);
	CHECK(elapsed >= 1.0);
	return TEST_OK;
}

static int check_profile_reply(int port, const char *query, int want_seconds, __u32 want_pid)
{
	char url[256];
	struct reply r;
	int ok;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/debug/pprof/profile%s", port, query);
	if (fetch(NULL, url, NULL, NULL, "Content-Disposition", &r))
		return 0;
	ok = r.status == 200 && !strcmp(r.type, "application/octet-stream") &&
	     !strcmp(r.header, "attachment; filename=\"profile\"") &&
	     r.len > 2 && (unsigned char)r.body[0] == 0x1f && (unsigned char)r.body[1] == 0x8b &&
	     fake_get(&fake.seconds) == want_seconds && fake.pid == want_pid;
	if (!ok)
		fprintf(stderr, "  %s: status %ld type %s seconds %d pid %u\n", query, r.status,
			r.type, fake.seconds, fake.pid);
	free(r.body);
	return ok;
}

static int test_profile_params(void)
{
	struct http_server *s = start("127.0.0.1:0", NULL, 0);
	int port, ok;

	CHECK(s);
	port = http_server__port(s);
	ok = check_profile_reply(port, "?seconds=1&pid=7", 1, 7) &&
	     check_profile_reply(port, "", 30, 0) &&	/* net/http/pprof's default */
	     check_profile_reply(port, "?seconds=3&seconds=abc", 3, 0) &&	/* first wins */
	     check_profile_reply(port, "?pid=0&seconds=300", 300, 0) &&
	     check_profile_reply(port, "?debug=1&seconds=4", 4, 0);	/* unknown ones ignored */
	http_server__free(s);
	CHECK(ok);
	CHECK(fake_get(&fake.calls) == 5);
	return TEST_OK;
}

static int test_profile_bad_params(void)
{
	static const char *const queries[] = {
		"?seconds=0", "?seconds=abc", "?seconds=301", "?seconds=-1", "?seconds=",
		"?seconds=1.5", "?seconds=%2B5", "?seconds=%201", "?seconds=99999999999999999999",
		"?seconds=1&pid=abc", "?seconds=1&pid=-1", "?seconds=1&pid=99999999999",
		"?seconds=1e1",
	};
	char long_query[4200] = "/debug/pprof/profile?seconds=";
	struct http_server *s = start("127.0.0.1:0", NULL, 0);
	char url[256];
	struct reply r;
	int port;
	bool ok = true;

	CHECK(s);
	port = http_server__port(s);
	for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
		snprintf(url, sizeof(url), "http://127.0.0.1:%d/debug/pprof/profile%s", port,
			 queries[i]);
		if (fetch(NULL, url, NULL, NULL, NULL, &r) || r.status != 400 ||
		    strcmp(r.type, "text/plain; charset=utf-8") || !r.body ||
		    (!strstr(r.body, "seconds") && !strstr(r.body, "pid"))) {
			fprintf(stderr, "  %s: status %ld body %s\n", queries[i], r.status, r.body);
			ok = false;
		}
		free(r.body);
	}
	/* an absurdly long value is refused without being parsed */
	memset(long_query + strlen(long_query), '9', 4000);
	long_query[sizeof(long_query) - 1] = '\0';
	ok = ok && status_of(port, long_query, NULL) == 400;
	http_server__free(s);
	CHECK(ok);
	CHECK(fake_get(&fake.calls) == 0);
	return TEST_OK;
}

static int test_profile_errors(void)
{
	struct http_server *s = start("127.0.0.1:0", NULL, 0);
	char url[128];
	struct reply busy, eio, metrics;
	int err;

	CHECK(s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/debug/pprof/profile?seconds=1",
		 http_server__port(s));
	fake_set(&fake.profile_result, -EBUSY);
	err = fetch(NULL, url, NULL, NULL, NULL, &busy);
	fake_set(&fake.profile_result, -EIO);
	err |= fetch(NULL, url, NULL, NULL, NULL, &eio);
	fake_set(&fake.metrics_result, -ENOMEM);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", http_server__port(s));
	err |= fetch(NULL, url, NULL, NULL, NULL, &metrics);
	http_server__free(s);
	CHECK(!err);
	CHECK(busy.status == 503 && strstr(busy.body, "retry"));
	CHECK(eio.status == 500 && strstr(eio.body, "Input/output error"));
	CHECK(!strcmp(eio.type, "text/plain; charset=utf-8"));
	CHECK(metrics.status == 500 && strstr(metrics.body, "Cannot allocate memory"));
	free(busy.body);
	free(eio.body);
	free(metrics.body);
	return TEST_OK;
}

/* /healthz answers while a profile holds another connection's thread. */
static int test_health_during_profile(void)
{
	static const char req[] = "GET /debug/pprof/profile?seconds=2 HTTP/1.1\r\nHost: x\r\n\r\n";
	struct http_server *s = start("127.0.0.1:0", NULL, 0);
	double t0, took = 0;
	char buf[256];
	long status = 0;
	int fd, active = 0;

	CHECK(s);
	fd = tcp_connect(AF_INET, http_server__port(s));
	if (fd >= 0 && send(fd, req, strlen(req), MSG_NOSIGNAL) > 0) {
		for (t0 = now(); now() - t0 < 2 && !fake_get(&fake.active);)
			usleep(10000);
		t0 = now();
		status = status_of(http_server__port(s), "/healthz", NULL);
		active = fake_get(&fake.active);
		took = now() - t0;
		recv(fd, buf, sizeof(buf), 0);
	}
	if (fd >= 0)
		close(fd);
	http_server__free(s);
	CHECK(fd >= 0);
	CHECK(status == 200);
	CHECK(active == 1 && took < 1);
	return TEST_OK;
}

static int test_metrics(void)
{
	struct http_server *s = start("127.0.0.1:0", NULL, 0);
	char url[128];
	struct reply r;
	int err;

	CHECK(s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", http_server__port(s));
	err = fetch(NULL, url, NULL, NULL, "X-Content-Type-Options", &r);
	http_server__free(s);
	CHECK(!err);
	CHECK(r.status == 200);
	CHECK(!strcmp(r.type, "text/plain; version=0.0.4; charset=utf-8"));
	CHECK(!strcmp(r.header, "nosniff"));
	CHECK(r.body && !strcmp(r.body, "# HELP ebpfprof_test_total A test counter.\n"
					"# TYPE ebpfprof_test_total counter\n"
					"ebpfprof_test_total{kind=\"a\"} 42\n"));
	free(r.body);
	return TEST_OK;
}

static int test_healthz(void)
{
	struct http_server *s = start("127.0.0.1:0", NULL, 0);
	char url[128];
	struct reply r;
	int err;

	CHECK(s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/healthz", http_server__port(s));
	err = fetch(NULL, url, NULL, NULL, NULL, &r);
	http_server__free(s);
	CHECK(!err);
	CHECK(r.status == 200 && r.body && !strcmp(r.body, "ok\n"));
	CHECK(!strcmp(r.type, "text/plain; charset=utf-8"));
	free(r.body);
	return TEST_OK;
}

static int test_not_found(void)
{
	struct http_server *s = start("127.0.0.1:0", NULL, 0);
	int port;
	bool ok;

	CHECK(s);
	port = http_server__port(s);
	ok = status_of(port, "/", NULL) == 404 &&
	     status_of(port, "/nope", NULL) == 404 &&
	     status_of(port, "/healthz/", NULL) == 404 &&
	     status_of(port, "/debug/pprof/heap", NULL) == 404 &&
	     status_of(port, "/debug/pprof/profile/x", NULL) == 404 &&
	     status_of(port, "/etc/passwd", NULL) == 404 &&
	     status_of(port, "/metrics?x=1", NULL) == 200;
	http_server__free(s);
	CHECK(ok);
	return TEST_OK;
}

static int test_methods(void)
{
	struct http_server *s = start("127.0.0.1:0", NULL, 0);
	char url[128];
	struct reply post, put, body, del;
	int err;

	CHECK(s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/healthz", http_server__port(s));
	err = fetch(NULL, url, "x=1", NULL, "Allow", &post);	/* POST */
	err |= fetch("GET", url, "x=1", NULL, NULL, &body);	/* GET with a body */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/debug/pprof/profile", http_server__port(s));
	err |= fetch("PUT", url, NULL, NULL, "Allow", &put);
	err |= fetch("DELETE", url, NULL, NULL, NULL, &del);
	http_server__free(s);
	CHECK(!err);
	CHECK(post.status == 405 && !strcmp(post.header, "GET"));
	CHECK(put.status == 405 && !strcmp(put.header, "GET"));
	CHECK(del.status == 405);
	CHECK(body.status == 413);
	CHECK(fake_get(&fake.calls) == 0);
	free(post.body);
	free(put.body);
	free(body.body);
	free(del.body);
	return TEST_OK;
}

static int test_bearer_token(void)
{
	struct http_server *s = start("127.0.0.1:0", TOKEN, 0);
	char url[128];
	struct reply r;
	int port, err;
	bool ok;

	CHECK(s);
	port = http_server__port(s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/debug/pprof/", port);
	err = fetch(NULL, url, NULL, NULL, "WWW-Authenticate", &r);
	ok = status_of(port, "/debug/pprof/", "Authorization: Bearer wrong") == 401 &&
	     status_of(port, "/debug/pprof/", "Authorization: Bearer " TOKEN "x") == 401 &&
	     status_of(port, "/debug/pprof/", "Authorization: Bearer s3cret-Token_") == 401 &&
	     status_of(port, "/debug/pprof/", "Authorization: Bearer s3cret-token_1") == 401 &&
	     status_of(port, "/debug/pprof/", "Authorization: Basic " TOKEN) == 401 &&
	     status_of(port, "/debug/pprof/", "Authorization: " TOKEN) == 401 &&
	     status_of(port, "/debug/pprof/", "Authorization: Bearer") == 401 &&
	     status_of(port, "/debug/pprof/heap", NULL) == 401 &&
	     status_of(port, "/debug/pprof/profile?seconds=1", NULL) == 401 &&
	     status_of(port, "/debug/pprof/", "Authorization: Bearer " TOKEN) == 200 &&
	     status_of(port, "/debug/pprof/", "Authorization: bearer " TOKEN) == 200 &&
	     status_of(port, "/debug/pprof/profile?seconds=3",
		       "Authorization: Bearer " TOKEN) == 200 &&
	     status_of(port, "/metrics", NULL) == 200 &&
	     status_of(port, "/healthz", NULL) == 200;
	http_server__free(s);
	CHECK(!err);
	CHECK(r.status == 401 && !strcmp(r.header, "Bearer"));
	free(r.body);
	CHECK(ok);
	CHECK(fake_get(&fake.calls) == 1);	/* only the authorized profile ran */
	return TEST_OK;
}

static int test_index(void)
{
	struct http_server *s = start("127.0.0.1:0", NULL, 0);
	char url[128];
	struct reply index, redirect;
	int err;

	CHECK(s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/debug/pprof/", http_server__port(s));
	err = fetch(NULL, url, NULL, NULL, NULL, &index);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/debug/pprof", http_server__port(s));
	err |= fetch(NULL, url, NULL, NULL, "Location", &redirect);
	http_server__free(s);
	CHECK(!err);
	CHECK(index.status == 200 && !strcmp(index.type, "text/html; charset=utf-8"));
	CHECK(index.body && strstr(index.body, "<a href=\"profile\">profile</a>"));
	CHECK(strstr(index.body, "No other profiles are available"));
	CHECK(redirect.status == 301 && !strcmp(redirect.header, "/debug/pprof/"));
	free(index.body);
	free(redirect.body);
	return TEST_OK;
}

static int test_ipv6(void)
{
	struct sockaddr_in6 lo = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool have_v6 = fd >= 0 && !bind(fd, (struct sockaddr *)&lo, sizeof(lo));
	struct http_server *s;
	char url[128];
	struct reply r;
	int err, v4;

	if (fd >= 0)
		close(fd);
	if (!have_v6)
		SKIP("no IPv6 loopback (::1) on this machine");
	s = start("[::1]:0", NULL, 0);
	CHECK(s);
	snprintf(url, sizeof(url), "http://[::1]:%d/healthz", http_server__port(s));
	err = fetch(NULL, url, NULL, NULL, NULL, &r);
	/* bound to ::1 only: the same port on 127.0.0.1 is not ours */
	v4 = tcp_connect(AF_INET, http_server__port(s));
	if (v4 >= 0)
		close(v4);
	http_server__free(s);
	CHECK(!err && r.status == 200 && r.body && !strcmp(r.body, "ok\n"));
	free(r.body);
	CHECK(v4 < 0);
	return TEST_OK;
}

static int test_bad_listen(void)
{
	static const char *const bad[] = {
		"", "7070", ":7070", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536",
		"127.0.0.1:-1", "127.0.0.1:+80", "127.0.0.1:70x", "127.0.0.1:123456",
		"256.0.0.1:80", "1.2.3:80", "example.com:80", "localhostx:80", "[::1:80",
		"::1:80", "[::1]80", "[::1]", "[zz]:80", "[]:80", "[127.0.0.1]:80",
		" 127.0.0.1:80", "127.0.0.1:80 ", "127.0.0.1:8 0", "*:80",
		"[fe80::1%lo]:80",
		"127.0.0.1:0000000000000000000000000000000000000000000000000000000000000000080",
	};
	struct http_server_opts opts = { .listen = "127.0.0.1:0" };
	struct http_server *s;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		opts.listen = bad[i];
		errno = 0;
		s = http_server__new(&opts);
		if (s || errno != EINVAL) {
			fprintf(stderr, "  accepted or wrong errno: \"%s\"\n", bad[i]);
			http_server__free(s);
			return TEST_FAIL;
		}
	}
	opts.listen = NULL;
	CHECK(!http_server__new(&opts) && errno == EINVAL);
	CHECK(!http_server__new(NULL) && errno == EINVAL);
	opts.listen = "127.0.0.1:0";
	opts.max_connections = -1;
	CHECK(!http_server__new(&opts) && errno == EINVAL);
	opts.max_connections = 0;
	opts.bearer_token = "has space";
	CHECK(!http_server__new(&opts) && errno == EINVAL);

	/* the good spellings */
	opts.bearer_token = NULL;
	opts.listen = "localhost:0";
	s = http_server__new(&opts);
	CHECK(s && http_server__port(s) > 0);
	http_server__free(s);
	http_server__free(NULL);
	CHECK(http_server__port(NULL) == -EINVAL);
	return TEST_OK;
}

static int test_port_in_use(void)
{
	struct http_server *a = start("127.0.0.1:0", NULL, 0), *b = NULL;
	char listen[64];
	int err = 0;

	CHECK(a);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", http_server__port(a));
	b = start(listen, NULL, 0);
	if (!b)
		err = errno;
	http_server__free(b);
	http_server__free(a);
	CHECK(!b && err == EADDRINUSE);
	return TEST_OK;
}

/* With 2 slots held by idle clients, a third connection is closed unanswered. */
static int test_max_connections(void)
{
	static const char req[] = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	struct http_server *s = start("127.0.0.1:0", NULL, 2);
	int port, a, b, c, d = -1;
	ssize_t extra = 1, again = 0;
	char buf[256];
	double t0;

	CHECK(s);
	port = http_server__port(s);
	/* the server accepts in connection order: a and b get the slots */
	a = tcp_connect(AF_INET, port);
	b = tcp_connect(AF_INET, port);
	c = tcp_connect(AF_INET, port);
	if (c >= 0)
		extra = raw_exchange(c, req, buf, sizeof(buf));
	/* a slot frees once the server sees a close: retry until it has */
	if (a >= 0)
		close(a);
	for (t0 = now(); now() - t0 < 3; usleep(20000)) {
		d = tcp_connect(AF_INET, port);
		again = d >= 0 ? raw_exchange(d, req, buf, sizeof(buf)) : -1;
		if (d >= 0)
			close(d);
		if (again > 0)
			break;
	}
	if (b >= 0)
		close(b);
	if (c >= 0)
		close(c);
	http_server__free(s);
	CHECK(a >= 0 && b >= 0);
	/* a closed connection: end of file or a reset, not the 3 s receive timeout */
	CHECK(extra == 0 || extra == -ECONNRESET);
	CHECK(again > 0 && !strncmp(buf, "HTTP/1.1 200", 12));
	return TEST_OK;
}

/* request line or headers past the per-connection memory: refused, and the server serves on */
static int test_request_too_large(void)
{
	static const char ok_req[] = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	struct http_server *s = start("127.0.0.1:0", NULL, 0);
	char *big = malloc(64 * 1024), buf[256];
	ssize_t n1 = -1, n2 = -1, n3 = -1;
	int port, fd;

	CHECK(s && big);
	port = http_server__port(s);
	/* a 40 KiB path */
	strcpy(big, "GET /debug/pprof/profile?x=");
	memset(big + strlen(big), 'a', 40 * 1024);
	strcpy(big + strlen(big), " HTTP/1.1\r\nHost: x\r\n\r\n");
	if ((fd = tcp_connect(AF_INET, port)) >= 0) {
		n1 = raw_exchange(fd, big, buf, sizeof(buf));
		close(fd);
	}
	if (n1 > 0)
		CHECK(!strncmp(buf, "HTTP/1.1 414", 12) || !strncmp(buf, "HTTP/1.1 431", 12));
	/* 40 KiB of one header */
	strcpy(big, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Junk: ");
	memset(big + strlen(big), 'b', 40 * 1024);
	strcpy(big + strlen(big), "\r\n\r\n");
	if ((fd = tcp_connect(AF_INET, port)) >= 0) {
		n2 = raw_exchange(fd, big, buf, sizeof(buf));
		close(fd);
	}
	if (n2 > 0)
		CHECK(!strncmp(buf, "HTTP/1.1 431", 12) || !strncmp(buf, "HTTP/1.1 414", 12));
	if ((fd = tcp_connect(AF_INET, port)) >= 0) {
		n3 = raw_exchange(fd, ok_req, buf, sizeof(buf));
		close(fd);
	}
	http_server__free(s);
	free(big);
	/* an answer, or the connection closed on us: never served */
	CHECK(n1 >= 0 || n1 == -ECONNRESET);
	CHECK(n2 >= 0 || n2 == -ECONNRESET);
	CHECK(n3 > 0 && !strncmp(buf, "HTTP/1.1 200", 12));
	return TEST_OK;
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST(test_profile_go_pprof),
		TEST(test_profile_params),
		TEST(test_profile_bad_params),
		TEST(test_profile_errors),
		TEST(test_health_during_profile),
		TEST(test_metrics),
		TEST(test_healthz),
		TEST(test_not_found),
		TEST(test_methods),
		TEST(test_bearer_token),
		TEST(test_index),
		TEST(test_ipv6),
		TEST(test_bad_listen),
		TEST(test_port_in_use),
		TEST(test_max_connections),
		TEST(test_request_too_large),
	};
	int failed;

	/* not TEST_MAIN: libcurl's global state is set up once and torn down for valgrind */
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		fprintf(stderr, "curl_global_init failed\n");
		return 1;
	}
	failed = test__run_all("http_server", cases, sizeof(cases) / sizeof(cases[0]));
	curl_global_cleanup();
	return failed;
}
