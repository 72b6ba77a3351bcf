/* test_http_request.c -- how pull requests are answered: routes, methods, bodies, tokens, ?seconds= and ?pid= */
#include <errno.h>
#include <string.h>
#include "deliver/http_request.h"
#include "test.h"

#define TOKEN "s3cret-Token_1"

static const struct http_request_policy open_policy = {
	.default_seconds = 30, .max_seconds = 300,
};
static const struct http_request_policy token_policy = {
	.bearer_token = TOKEN, .token_len = sizeof(TOKEN) - 1,
	.default_seconds = 30, .max_seconds = 300,
};

static struct http_decision decide(const struct http_request_policy *p, const char *method,
				   const char *path, const char *seconds, const char *pid,
				   const char *auth)
{
	struct http_request req = { method, path, seconds, pid, auth, false };
	struct http_decision d;

	if (http_request__decide(&req, p, &d))
		d.endpoint = -1;
	return d;
}

static int test_routes(void)
{
	static const struct {
		const char *path;
		enum http_endpoint ep;
	} cases[] = {
		{ "/debug/pprof/profile", HTTP_EP_PROFILE },
		{ "/debug/pprof/", HTTP_EP_INDEX },
		{ "/debug/pprof/heap", HTTP_EP_UNKNOWN_PROFILE },
		{ "/debug/pprof/../../etc/passwd", HTTP_EP_UNKNOWN_PROFILE },
		{ "/debug/pprof", HTTP_EP_INDEX_REDIRECT },
		{ "/metrics", HTTP_EP_METRICS },
		{ "/healthz", HTTP_EP_HEALTHZ },
		{ "/", HTTP_EP_PAGE },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct http_decision d = decide(&open_policy, "GET", cases[i].path, NULL, NULL, NULL);

		CHECK(d.endpoint == cases[i].ep);
	}
	return TEST_OK;
}

/* nothing outside the table routes: no path reaches a file */
static int test_not_found(void)
{
	static const char *const paths[] = { "//", "/index.html", "", "/etc/passwd", "/../etc/passwd", "/metrics/",
					     "/healthz/../metrics", "//metrics", "/debug/pprofx",
					     "/METRICS", "/proc/self/environ" };

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct http_decision d = decide(&open_policy, "GET", paths[i], NULL, NULL, NULL);

		CHECK(d.endpoint == HTTP_EP_REFUSED && d.status == 404);
	}
	return TEST_OK;
}

static int test_methods_and_bodies(void)
{
	struct http_request req = { "GET", "/metrics", NULL, NULL, NULL, true };
	struct http_decision d = decide(&open_policy, "POST", "/metrics", NULL, NULL, NULL);

	CHECK(d.endpoint == HTTP_EP_REFUSED && d.status == 405);
	CHECK(d.header && !strcmp(d.header, "Allow") && !strcmp(d.value, "GET"));
	d = decide(&open_policy, "get", "/healthz", NULL, NULL, NULL);
	CHECK(d.status == 405);
	/* an unknown path is 404 whatever the method */
	d = decide(&open_policy, "DELETE", "/x", NULL, NULL, NULL);
	CHECK(d.status == 404);
	CHECK(!http_request__decide(&req, &open_policy, &d));
	CHECK(d.endpoint == HTTP_EP_REFUSED && d.status == 413);
	return TEST_OK;
}

static int test_bearer_token(void)
{
	static const char *const bad[] = { NULL, "", "Bearer", "Bearer ", "Basic " TOKEN,
					   "Bearer " TOKEN "x", "Bearer s3cret-Token_", "Bearer " TOKEN " ",
					   "Bearer\t" TOKEN, "xBearer " TOKEN };
	struct http_decision d;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		d = decide(&token_policy, "GET", "/debug/pprof/profile", NULL, NULL, bad[i]);
		CHECK(d.endpoint == HTTP_EP_REFUSED && d.status == 401);
		CHECK(d.header && !strcmp(d.header, "WWW-Authenticate"));
		/* the catch-all is guarded too: it must not tell which profiles exist */
		d = decide(&token_policy, "GET", "/debug/pprof/heap", NULL, NULL, bad[i]);
		CHECK(d.status == 401);
	}
	d = decide(&token_policy, "GET", "/debug/pprof/profile", NULL, NULL, "Bearer " TOKEN);
	CHECK(d.endpoint == HTTP_EP_PROFILE);
	d = decide(&token_policy, "GET", "/debug/pprof/", NULL, NULL, "bEaReR   " TOKEN);
	CHECK(d.endpoint == HTTP_EP_INDEX);
	/* metrics and health stay open for probes and scrapers */
	d = decide(&token_policy, "GET", "/metrics", NULL, NULL, NULL);
	CHECK(d.endpoint == HTTP_EP_METRICS);
	d = decide(&token_policy, "GET", "/healthz", NULL, NULL, NULL);
	CHECK(d.endpoint == HTTP_EP_HEALTHZ);
	return TEST_OK;
}

static int test_profile_params(void)
{
	struct http_request_policy short_max = { .default_seconds = 30, .max_seconds = 10 };
	struct http_decision d;

	d = decide(&open_policy, "GET", "/debug/pprof/profile", NULL, NULL, NULL);
	CHECK(d.endpoint == HTTP_EP_PROFILE && d.seconds == 30 && d.pid == 0);
	d = decide(&open_policy, "GET", "/debug/pprof/profile", "5", "1234", NULL);
	CHECK(d.endpoint == HTTP_EP_PROFILE && d.seconds == 5 && d.pid == 1234);
	d = decide(&open_policy, "GET", "/debug/pprof/profile", "300", "2147483647", NULL);
	CHECK(d.seconds == 300 && d.pid == 2147483647u);
	/* the default is capped, an explicit value over the cap refused */
	d = decide(&short_max, "GET", "/debug/pprof/profile", NULL, NULL, NULL);
	CHECK(d.endpoint == HTTP_EP_PROFILE && d.seconds == 10);
	d = decide(&short_max, "GET", "/debug/pprof/profile", "11", NULL, NULL);
	CHECK(d.status == 400 && strstr(d.message, "from 1 to 10"));
	return TEST_OK;
}

static int test_bad_params(void)
{
	static const char *const secs[] = { "", "0", "-1", "+5", " 5", "5 ", "5s", "1e3", "0x10",
					    "301", "99999999999", "00000000005", "5\n" };
	static const char *const pids[] = { "", "-1", "2147483648", "4294967296", "12a", " 1",
					    "99999999999" };
	struct http_decision d;

	for (size_t i = 0; i < sizeof(secs) / sizeof(secs[0]); i++) {
		d = decide(&open_policy, "GET", "/debug/pprof/profile", secs[i], NULL, NULL);
		CHECK(d.endpoint == HTTP_EP_REFUSED && d.status == 400);
		CHECK(d.message[strlen(d.message) - 1] == '\n');
	}
	for (size_t i = 0; i < sizeof(pids) / sizeof(pids[0]); i++) {
		d = decide(&open_policy, "GET", "/debug/pprof/profile", "1", pids[i], NULL);
		CHECK(d.endpoint == HTTP_EP_REFUSED && d.status == 400);
	}
	return TEST_OK;
}

static int test_parse_int(void)
{
	long long v = -7;

	CHECK(!http_request__parse_int("0000000042", 0, 100, &v) && v == 42);
	CHECK(http_request__parse_int("00000000042", 0, 100, &v) == -EINVAL);
	CHECK(http_request__parse_int(NULL, 0, 100, &v) == -EINVAL);
	CHECK(http_request__parse_int("9999999999", 0, 100, &v) == -EINVAL && v == 42);
	return TEST_OK;
}

static int test_bad_arguments(void)
{
	struct http_request req = { "GET", NULL };
	struct http_request_policy zero = { 0 };
	struct http_decision d;

	CHECK(http_request__decide(&req, &open_policy, &d) == -EINVAL);
	req.path = "/metrics";
	CHECK(http_request__decide(NULL, &open_policy, &d) == -EINVAL);
	CHECK(http_request__decide(&req, NULL, &d) == -EINVAL);
	CHECK(http_request__decide(&req, &open_policy, NULL) == -EINVAL);
	CHECK(http_request__decide(&req, &zero, &d) == -EINVAL);
	return TEST_OK;
}

/* the page: behind the token like /debug/pprof/, ?windows= in 1..16, ?series= a name, ?label= KEY:VALUE */
static int test_page_params(void)
{
	struct http_request req = { "GET", "/", NULL, NULL, NULL, false, "3", "cpu_split" };
	struct http_decision d = decide(&token_policy, "GET", "/", NULL, NULL, NULL);
	char long_name[HTTP_PAGE_MAX_SERIES_LEN + 2];

	CHECK(d.endpoint == HTTP_EP_REFUSED && d.status == 401);
	d = decide(&token_policy, "GET", "/", "5", "42", "Bearer " TOKEN);
	CHECK(d.endpoint == HTTP_EP_PAGE && d.seconds == 5 && d.seconds_given && d.pid == 42 &&
	      d.windows == 1 && !d.series);
	CHECK(!http_request__decide(&req, &open_policy, &d));
	CHECK(d.endpoint == HTTP_EP_PAGE && !d.seconds_given && d.windows == 3 &&
	      !strcmp(d.series, "cpu_split"));
	for (const char *const *w = (const char *const[]){ "0", "17", "-1", "x", "", NULL }; *w; w++) {
		req.windows = *w;
		CHECK(!http_request__decide(&req, &open_policy, &d));
		CHECK(d.endpoint == HTTP_EP_REFUSED && d.status == 400 && strstr(d.message, "windows"));
	}
	req.windows = NULL;
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	for (const char *const *s = (const char *const[]){ "", long_name, NULL }; *s; s++) {
		req.series = *s;
		CHECK(!http_request__decide(&req, &open_policy, &d));
		CHECK(d.endpoint == HTTP_EP_REFUSED && d.status == 400 && strstr(d.message, "series"));
	}
	/* ?label=KEY:VALUE: a key, a colon, any value (a path's colons too) */
	req.series = NULL;
	req.label = "endpoint:/checkout:v2";
	CHECK(!http_request__decide(&req, &open_policy, &d));
	CHECK(d.endpoint == HTTP_EP_PAGE && !strcmp(d.label, "endpoint:/checkout:v2"));
	for (const char *const *l = (const char *const[]){ "", ":x", "endpoint", long_name, NULL }; *l; l++) {
		req.label = *l;
		CHECK(!http_request__decide(&req, &open_policy, &d));
		CHECK(d.endpoint == HTTP_EP_REFUSED && d.status == 400 && strstr(d.message, "label"));
	}
	return TEST_OK;
}

TEST_MAIN("http_request", TEST(test_routes), TEST(test_page_params), TEST(test_not_found), TEST(test_methods_and_bodies),
	  TEST(test_bearer_token), TEST(test_profile_params), TEST(test_bad_params),
	  TEST(test_parse_int), TEST(test_bad_arguments))
