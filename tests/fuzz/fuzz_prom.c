/* fuzz_prom.c -- libFuzzer target: Prometheus label escaping, value formatting and HELP text */
#include <math.h>
#include <string.h>
#include "fuzz.h"
#include "deliver/prom.h"

/* Undoes prom__escape into out (room for strlen(s) + 1); 0 when an escape is broken. */
static int unescape(const char *s, char *out)
{
	for (; *s; s++) {
		if (*s == '\\') {
			s++;
			if (*s != '\\' && *s != '"' && *s != 'n')
				return 0;
			*out++ = *s == 'n' ? '\n' : *s;
		} else {
			if (*s == '"' || *s == '\n')
				return 0;
			*out++ = *s;
		}
	}
	*out = '\0';
	return 1;
}

/* A strict UTF-8 check is not needed: only that no sequence is cut at the end. */
static int utf8_tail_complete(const char *s)
{
	size_t n = strlen(s), i = n, want;
	unsigned char lead;

	while (i > 0 && n - i < 3 && ((unsigned char)s[i - 1] & 0xc0) == 0x80)
		i--;
	if (i == 0)
		return 1;
	lead = s[i - 1];
	want = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
	return n - (i - 1) >= want;
}

static void check_escape(const char *value, size_t room)
{
	size_t len = strlen(value);
	char *full = malloc(2 * len + 1), *cut = malloc(room ? room : 1), *back = malloc(len + 1);

	FUZZ_CHECK(full && cut && back);
	FUZZ_CHECK(prom__escape(value, full, 2 * len + 1) == full);
	FUZZ_CHECK(unescape(full, back) && !strcmp(back, value));
	FUZZ_CHECK(prom__escape(value, cut, room) == cut);
	if (room) {
		FUZZ_CHECK(strnlen(cut, room) < room);
		FUZZ_CHECK(!strncmp(cut, full, strlen(cut)));
		FUZZ_CHECK(unescape(cut, back) && !strncmp(back, value, strlen(back)));
		/* cut short: never inside a UTF-8 sequence the value completes */
		if (strlen(back) < len)
			FUZZ_CHECK(utf8_tail_complete(back) ||
				   ((unsigned char)value[strlen(back)] & 0xc0) != 0x80);
	}
	free(full);
	free(cut);
	free(back);
}

static void check_value(double v)
{
	char *text = NULL, *end;
	size_t size;
	FILE *f = open_memstream(&text, &size);

	FUZZ_CHECK(f);
	prom__value(f, "m", NULL, v);
	fclose(f);
	FUZZ_CHECK(!strncmp(text, "m ", 2) && size > 3 && text[size - 1] == '\n');
	text[size - 1] = '\0';
	if (isnan(v)) {
		FUZZ_CHECK(!strcmp(text + 2, "NaN"));
	} else if (isinf(v)) {
		FUZZ_CHECK(!strcmp(text + 2, v > 0 ? "+Inf" : "-Inf"));
	} else {
		FUZZ_CHECK(strtod(text + 2, &end) == v && *end == '\0');
		if (fabs(v) < 0x1p63 && v == (double)(long long)v)
			FUZZ_CHECK(!strpbrk(text + 2, "e."));
	}
	free(text);
}

/* HELP text: one line whatever it holds. */
static void check_header(const char *help)
{
	char *text = NULL;
	size_t size, lines = 0;
	FILE *f = open_memstream(&text, &size);

	FUZZ_CHECK(f);
	prom__header(f, "m", "gauge", help);
	fclose(f);
	for (size_t i = 0; i < size; i++)
		lines += text[i] == '\n';
	FUZZ_CHECK(lines == 2 && strstr(text, "\n# TYPE m gauge\n"));
	free(text);
}

/* Input: the escape buffer size, a double, then the value text. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	size_t room = fin_u8(&in);
	uint64_t bits = fin_uint(&in, 8);
	double v;
	char *value = fin_str(&in, 1 << 16);

	memcpy(&v, &bits, sizeof(v));
	check_escape(value, room);
	check_value(v);
	check_header(value);
	free(value);
	return 0;
}
