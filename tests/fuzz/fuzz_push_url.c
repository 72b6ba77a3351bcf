/* fuzz_push_url.c -- libFuzzer target: series keys, /ingest URLs and push requests built from arbitrary labels */
#include <errno.h>
#include <string.h>
#include "fuzz.h"
#include "profile/pbuf.h"
#include "deliver/push_url.h"

#define MAX_LABELS 16

static int name_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '/' || c == '-';
}

static int key_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* What push_url__series_key promises: NAME{k=v,...} that Pyroscope reads back unambiguously. */
static void check_key(const char *key)
{
	const char *open = strchr(key, '{'), *p;
	size_t len = strlen(key);

	FUZZ_CHECK(open && open > key && key[len - 1] == '}');
	for (p = key; p < open; p++)
		FUZZ_CHECK(name_char(*p));
	p = open + 1;
	while (*p != '}') {
		const char *k = p, *eq, *v, *end;

		for (end = p; *end != ',' && *end != '}'; end++)
			FUZZ_CHECK(*end && *end != '{');
		eq = memchr(k, '=', end - k);
		FUZZ_CHECK(eq && eq > k && eq + 1 < end);
		FUZZ_CHECK(!(*k >= '0' && *k <= '9'));
		for (p = k; p < eq; p++)
			FUZZ_CHECK(key_char(*p));
		FUZZ_CHECK(!(eq - k == 8 && !memcmp(k, "__name__", 8)));
		v = eq + 1;
		FUZZ_CHECK(end - v <= PUSH_URL_MAX_VALUE);
		FUZZ_CHECK(*v != ' ' && end[-1] != ' ');
		for (p = v; p < end; p++)
			FUZZ_CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
		p = *end == ',' ? end + 1 : end;
		FUZZ_CHECK(*p != '}' || *end == '}');
	}
	FUZZ_CHECK(p == key + len - 1);
}

static int unhex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* push_url__escape: the full length whatever the room; a prefix that decodes back. */
static void check_escape(const char *s, size_t room)
{
	size_t full_len = push_url__escape(s, NULL, 0), n, i, j;
	char *full = malloc(full_len + 1), *cut = malloc(room ? room : 1);

	FUZZ_CHECK(full && cut);
	FUZZ_CHECK(push_url__escape(s, full, full_len + 1) == full_len && strlen(full) == full_len);
	FUZZ_CHECK(push_url__escape(s, cut, room) == full_len);
	if (room) {
		n = strlen(cut);
		FUZZ_CHECK(n < room && !strncmp(cut, full, n));
	}
	for (i = 0, j = 0; i < full_len; j++) {
		if (full[i] == '%') {
			FUZZ_CHECK(unhex(full[i + 1]) >= 0 && unhex(full[i + 2]) >= 0);
			FUZZ_CHECK((unsigned char)s[j] == (unhex(full[i + 1]) << 4 | unhex(full[i + 2])));
			i += 3;
		} else {
			FUZZ_CHECK(full[i] == s[j]);
			i++;
		}
	}
	FUZZ_CHECK(s[j] == '\0');
	free(full);
	free(cut);
}

static void check_window(__s64 from_ns, __s64 until_ns)
{
	__s64 from_s, until_s;

	push_url__window(from_ns, until_ns, &from_s, &until_s);
	/* from_s is the floor of from_ns in seconds */
	FUZZ_CHECK((__int128)from_s * 1000000000 <= from_ns &&
		   from_ns < ((__int128)from_s + 1) * 1000000000);
	FUZZ_CHECK(until_s > from_s);
}

/*
 * Input: the room for push_url__escape, two s64 times, a rate, then strings (fin_str): the
 * name, the base URL, and key/value pairs; a string "\x01" stands for NULL.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct push_label labels[MAX_LABELS];
	char *strs[2 * MAX_LABELS + 2] = {}, *key, *url;
	int n_labels = 0, n_strs = 0, rate;
	__s64 from_ns, until_ns;
	size_t room;
	struct pbuf b;
	int err;

	room = fin_u8(&in);
	from_ns = (__s64)fin_uint(&in, 8);
	until_ns = (__s64)fin_uint(&in, 8);
	rate = (int)fin_uint(&in, 4);
	strs[n_strs++] = fin_str(&in, 4096);	/* name */
	strs[n_strs++] = fin_str(&in, 4096);	/* base URL */
	while (in.n && n_labels < MAX_LABELS) {
		char *k = fin_str(&in, 4096), *v = fin_str(&in, 4096);

		strs[n_strs++] = k;
		strs[n_strs++] = v;
		labels[n_labels].key = strcmp(k, "\x01") ? k : NULL;
		labels[n_labels].value = strcmp(v, "\x01") ? v : NULL;
		n_labels++;
	}

	check_window(from_ns, until_ns);
	check_escape(strs[0], room);

	/* a key read back from a spool file is not necessarily one we made */
	pbuf__init(&b);
	/* and a profile type from the input: only a Prometheus name is taken */
	err = push_url__push_request(strs[0], strs[1], "body", 4, &b);
	FUZZ_CHECK(err == 0 || err == -EINVAL);
	pbuf__release(&b);

	key = push_url__series_key(strs[0], labels, n_labels);
	if (!*strs[0]) {
		FUZZ_CHECK(!key && errno == EINVAL);
		goto out;
	}
	FUZZ_CHECK(key);
	check_key(key);
	pbuf__init(&b);
	FUZZ_CHECK(push_url__push_request(key, NULL, "body", 4, &b) == 0 && b.len > 0);
	pbuf__release(&b);
	url = push_url__ingest(strs[1], key, from_ns, until_ns, rate);
	FUZZ_CHECK(url && strstr(url, "/ingest?name="));
	free(url);
	free(key);
out:
	for (int i = 0; i < n_strs; i++)
		free(strs[i]);
	return 0;
}
