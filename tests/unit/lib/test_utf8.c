/* test_utf8.c -- unit tests for UTF-8 validation and repair: the Unicode standard's edge cases */
#include <string.h>
#include "lib/utf8.h"
#include "test.h"

#define R UTF8_REPLACEMENT

static int test_valid(void)
{
	static const char *const good[] = {
		"", "plain", "caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x94\xa5", "\xef\xbf\xbf",
		"\xf4\x8f\xbf\xbf", "\xed\x9f\xbf",	/* U+10FFFF, U+D7FF */
	};
	static const char *const bad[] = {
		"\x80", "\xc3", "\xc0\xaf", "\xc1\xbf",		/* lone continuation, cut, overlong */
		"\xe0\x80\xaf", "\xed\xa0\x80",			/* overlong 3-byte, surrogate U+D800 */
		"\xf0\x80\x80\xaf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80",	/* overlong, > U+10FFFF */
		"\xff", "a\xe2\x82",
	};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK(utf8__valid(good[i], strlen(good[i])));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(!utf8__valid(bad[i], strlen(bad[i])));
	return TEST_OK;
}

static int test_sanitize(void)
{
	char out[64];

	/* each byte that starts no valid sequence is one U+FFFD; the rest is kept */
	CHECK(utf8__sanitize("a\xc3" "b", 3, out, sizeof(out)) == 5 && !strcmp(out, "a" R "b"));
	CHECK(utf8__sanitize("\xed\xa0\x80", 3, out, sizeof(out)) == 9 && !strcmp(out, R R R));
	CHECK(utf8__sanitize("caf\xc3\xa9", 5, out, sizeof(out)) == 5 && !strcmp(out, "caf\xc3\xa9"));
	/* a kernel comm cut inside a 3-byte character */
	CHECK(utf8__sanitize("x\xe2\x82", 3, out, sizeof(out)) == 7 && !strcmp(out, "x" R R));
	/* too small: what fits whole, NUL-terminated, and the length it would need */
	CHECK(utf8__sanitize("ab\xff", 3, out, 4) == 5 && !strcmp(out, "ab"));
	CHECK(utf8__sanitize("ab", 2, NULL, 0) == 2);
	CHECK(utf8__valid(out, strlen(out)));
	return TEST_OK;
}

TEST_MAIN("utf8",
	  TEST(test_valid),
	  TEST(test_sanitize))
