/* utf8.h -- valid UTF-8 for every string we emit: invalid bytes become U+FFFD, nothing is dropped */
#ifndef EBPFPROF_UTF8_H
#define EBPFPROF_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* U+FFFD REPLACEMENT CHARACTER, in place of each byte that starts no valid sequence */
#define UTF8_REPLACEMENT "\xef\xbf\xbd"

/* Length of the valid sequence at S[0, LEN) (1 to 4), or 0 when S[0] starts none. */
size_t utf8__seq_len(const char *s, size_t len);

/* Whether S[0, LEN) is valid UTF-8 (RFC 3629: no overlong forms, no surrogates, <= U+10FFFF). */
bool utf8__valid(const char *s, size_t len);

/*
 * Writes S[0, LEN) to OUT with every byte that starts no valid sequence
 * replaced by U+FFFD, at most CAP - 1 bytes and a NUL (a sequence that does
 * not fit whole is left out). Returns the length the whole result needs,
 * NUL not counted: at most 3 * LEN.
 */
size_t utf8__sanitize(const char *s, size_t len, char *out, size_t cap);

/* S repaired as above, malloc'ed (the caller frees it); NULL with errno ENOMEM. */
char *utf8__dup(const char *s);

#endif /* EBPFPROF_UTF8_H */
