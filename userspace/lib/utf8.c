/* utf8.c -- UTF-8 validation and repair (RFC 3629, as the Unicode standard's table 3-7 bounds it) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "utf8.h"

static size_t seq_len(const unsigned char *s, size_t len);

size_t utf8__seq_len(const char *s, size_t len)
{
	return len ? seq_len((const unsigned char *)s, len) : 0;
}

static size_t seq_len(const unsigned char *s, size_t len)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;	/* a continuation byte, an overlong lead (c0, c1) or past U+10FFFF */
	/* the second byte's range rules out overlong forms, surrogates and > U+10FFFF */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (len < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

bool utf8__valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0, n; i < len; i += n) {
		n = seq_len(p + i, len - i);
		if (!n)
			return false;
	}
	return true;
}

size_t utf8__sanitize(const char *s, size_t len, char *out, size_t cap)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t need = 0, w = 0, i = 0, n, piece_len;
	bool full = !cap;
	const char *piece;

	while (i < len) {
		n = seq_len(p + i, len - i);
		piece = n ? s + i : UTF8_REPLACEMENT;
		piece_len = n ? n : 3;
		if (!full && w + piece_len < cap) {
			memcpy(out + w, piece, piece_len);
			w += piece_len;
		} else {
			full = true;	/* nothing after a piece that did not fit */
		}
		need += piece_len;
		i += n ? n : 1;
	}
	if (cap)
		out[w] = '\0';
	return need;
}

char *utf8__dup(const char *s)
{
	size_t len = strlen(s), need = utf8__sanitize(s, len, NULL, 0);
	char *out = malloc(need + 1);

	if (!out) {
		errno = ENOMEM;
		return NULL;
	}
	utf8__sanitize(s, len, out, need + 1);
	return out;
}
