/* fuzz_http_post.c -- libFuzzer target: a push backend's answer through http_resp, fed in pieces, and the input as a URL */
#include <stdbool.h>
#include <string.h>
#include "deliver/http_post.h"
#include "fuzz.h"

/*
 * Input: a byte giving the body buffer's size, a byte giving where the
 * answer is cut in two feeds, then the answer. The same answer fed in one
 * piece must end the same way: parsing may not depend on where reads split.
 */
struct outcome {
	int err, status;
	bool done;
	size_t body_len;
	char retry_after[64];
	char body[256];
};

static void run(const char *data, size_t len, size_t cut, size_t cap, struct outcome *o)
{
	struct http_resp r;

	memset(o, 0, sizeof(*o));
	http_resp__init(&r, o->body, cap);
	o->err = http_resp__feed(&r, data, cut);
	if (!o->err)
		o->err = http_resp__feed(&r, data + cut, len - cut);
	if (!o->err)
		o->err = http_resp__eof(&r);
	FUZZ_CHECK(r.body_len <= cap);
	FUZZ_CHECK(memchr(r.retry_after, '\0', sizeof(r.retry_after)));
	FUZZ_CHECK(!r.done || (r.status >= 200 && r.status <= 999));
	o->status = r.status;
	o->done = r.done;
	o->body_len = r.body_len;
	memcpy(o->retry_after, r.retry_after, sizeof(o->retry_after));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	size_t cap = fin_u8(&in), cut = fin_u8(&in);
	struct outcome one, two;
	struct http_url u;
	char url[HTTP_URL_MAX + 2];

	cut = in.n ? cut % (in.n + 1) : 0;
	run((const char *)in.p, in.n, in.n, cap, &one);
	run((const char *)in.p, in.n, cut, cap, &two);
	FUZZ_CHECK(one.done == two.done && one.status == two.status);
	if (one.done)
		FUZZ_CHECK(one.body_len == two.body_len && !memcmp(one.body, two.body, one.body_len) &&
			   !strcmp(one.retry_after, two.retry_after));
	if (in.n <= HTTP_URL_MAX) {
		memcpy(url, in.p, in.n);
		url[in.n] = '\0';
		if (!http_url__parse(url, &u)) {
			FUZZ_CHECK(u.host[0] && memchr(u.host, '\0', sizeof(u.host)));
			FUZZ_CHECK(u.target_len <= strlen(url));
			FUZZ_CHECK(!strpbrk(u.userinfo, "\r\n"));
		}
	}
	return 0;
}
