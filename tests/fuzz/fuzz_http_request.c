/* fuzz_http_request.c -- libFuzzer target: a pull request's method, path, query values and token against http_request__decide */
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>
#include "deliver/http_request.h"
#include "fuzz.h"

/*
 * Input: a flags byte (bit 0: a body, bit 1: a token is configured, bit 2:
 * ?seconds= present, bit 3: ?pid= present, bit 4: an Authorization header),
 * a 16-bit max_seconds, a 16-bit default, then the strings (fuzz.h's
 * fin_str): path, seconds, pid, Authorization, method, token.
 */

/* the reference the decision must agree with: "Bearer", spaces, the token, nothing else */
static bool ref_authorized(const char *auth, const char *token)
{
	if (!token)
		return true;
	if (!auth || strncasecmp(auth, "Bearer ", 7))
		return false;
	for (auth += 7; *auth == ' '; auth++)
		;
	return !strcmp(auth, token);
}

/* the reference for ?seconds= and ?pid=: 1 to 10 ASCII digits */
static bool ref_int(const char *v, long long min, long long max, long long *out)
{
	size_t n = strlen(v);
	long long val = 0;

	if (n == 0 || n > 10 || strspn(v, "0123456789") != n)
		return false;
	for (size_t i = 0; i < n; i++)
		val = val * 10 + (v[i] - '0');
	*out = val;
	return val >= min && val <= max;
}

static bool routed(const char *path)
{
	return !strcmp(path, "/debug/pprof") || !strncmp(path, "/debug/pprof/", 13) ||
	       !strcmp(path, "/metrics") || !strcmp(path, "/healthz") || !strcmp(path, "/");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	__u8 flags = fin_u8(&in);
	int max_seconds = fin_uint(&in, 2), def_seconds = fin_uint(&in, 2);
	char *path = fin_str(&in, 4096), *seconds = fin_str(&in, 64), *pid = fin_str(&in, 64);
	char *auth = fin_str(&in, 512), *method = fin_str(&in, 16), *token = fin_str(&in, 128);
	struct http_request req = {
		.method = (flags & 0x20) ? method : "GET",
		.path = path,
		.seconds = (flags & 4) ? seconds : NULL,
		.pid = (flags & 8) ? pid : NULL,
		.authorization = (flags & 0x10) ? auth : NULL,
		.has_body = flags & 1,
	};
	struct http_request_policy policy = {
		.bearer_token = (flags & 2) && *token ? token : NULL,
		.token_len = strlen(token),
		.default_seconds = def_seconds,
		.max_seconds = max_seconds,
	};
	struct http_decision d;
	long long v;
	int err = http_request__decide(&req, &policy, &d);

	if (max_seconds < 1 || def_seconds < 1) {
		FUZZ_CHECK(err < 0);
		goto out;
	}
	FUZZ_CHECK(err == 0);
	FUZZ_CHECK(strlen(d.message) < sizeof(d.message));
	if (d.endpoint == HTTP_EP_REFUSED) {
		FUZZ_CHECK(d.status == 400 || d.status == 401 || d.status == 404 || d.status == 405 ||
			   d.status == 413);
		FUZZ_CHECK(d.message[0] && d.message[strlen(d.message) - 1] == '\n');
		FUZZ_CHECK(d.status != 404 || !routed(path));
		goto out;
	}
	/* answered: only a fixed path, only GET without a body, and the token was right */
	FUZZ_CHECK(routed(path));
	FUZZ_CHECK(!strcmp(req.method, "GET") && !req.has_body);
	if (!strncmp(path, "/debug/pprof/", 13) || !strcmp(path, "/"))
		FUZZ_CHECK(ref_authorized(req.authorization, policy.bearer_token));
	if (d.endpoint == HTTP_EP_PAGE) {
		FUZZ_CHECK(!strcmp(path, "/") && d.windows >= 1 && d.windows <= HTTP_PAGE_MAX_WINDOWS);
		FUZZ_CHECK(d.seconds_given == (req.seconds != NULL) && !d.series);
	}
	if (d.endpoint == HTTP_EP_PROFILE) {
		FUZZ_CHECK(!strcmp(path, "/debug/pprof/profile"));
		FUZZ_CHECK(d.seconds >= 1 && d.seconds <= max_seconds);
		FUZZ_CHECK(d.pid <= INT_MAX);
		if (req.seconds)
			FUZZ_CHECK(ref_int(req.seconds, 1, max_seconds, &v) && v == d.seconds);
		else
			FUZZ_CHECK(d.seconds == (def_seconds < max_seconds ? def_seconds : max_seconds));
		if (req.pid)
			FUZZ_CHECK(ref_int(req.pid, 0, INT_MAX, &v) && v == d.pid);
	}
out:
	/* and the other way round: a right request is never refused for its token */
	if (!err && d.endpoint == HTTP_EP_REFUSED && d.status == 401)
		FUZZ_CHECK(!ref_authorized(req.authorization, policy.bearer_token));
	free(path);
	free(seconds);
	free(pid);
	free(auth);
	free(method);
	free(token);
	return 0;
}
