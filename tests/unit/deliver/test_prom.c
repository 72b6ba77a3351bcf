/* test_prom.c -- unit tests for the Prometheus text format writers: exact output and escaping */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "deliver/prom.h"
#include "test.h"

/* Runs fn into a memory stream and compares the whole text with want. */
static int output_is(void (*fn)(FILE *out), const char *want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	int ok;

	if (!out)
		return 0;
	fn(out);
	fclose(out);
	ok = buf && !strcmp(buf, want);
	if (!ok)
		fprintf(stderr, "  got:\n%s  want:\n%s", buf ? buf : "(null)", want);
	free(buf);
	return ok;
}

static void write_counter(FILE *out)
{
	prom__header(out, "ebpfprof_samples_total", "counter", "Stack samples received.");
	prom__value(out, "ebpfprof_samples_total", NULL, 1234567);
}

static int test_counter(void)
{
	CHECK(output_is(write_counter,
			"# HELP ebpfprof_samples_total Stack samples received.\n"
			"# TYPE ebpfprof_samples_total counter\n"
			"ebpfprof_samples_total 1234567\n"));
	return TEST_OK;
}

static void write_labeled(FILE *out)
{
	prom__header(out, "ebpfprof_dropped_total", "counter", "Samples dropped, by reason.");
	prom__value(out, "ebpfprof_dropped_total", "reason=\"collision\"", 3);
	prom__value(out, "ebpfprof_dropped_total", "reason=\"ringbuf_full\",cpu=\"7\"", 0);
	prom__value(out, "ebpfprof_dropped_total", "", 5);
}

static int test_labels(void)
{
	CHECK(output_is(write_labeled,
			"# HELP ebpfprof_dropped_total Samples dropped, by reason.\n"
			"# TYPE ebpfprof_dropped_total counter\n"
			"ebpfprof_dropped_total{reason=\"collision\"} 3\n"
			"ebpfprof_dropped_total{reason=\"ringbuf_full\",cpu=\"7\"} 0\n"
			"ebpfprof_dropped_total 5\n"));
	return TEST_OK;
}

static void write_values(FILE *out)
{
	prom__value(out, "a", NULL, 0.25);
	prom__value(out, "b", NULL, -0.0);
	prom__value(out, "c", NULL, NAN);
	prom__value(out, "d", NULL, INFINITY);
	prom__value(out, "e", NULL, -INFINITY);
	prom__value(out, "f", NULL, 18446744073709551615.0);	/* UINT64_MAX as a double: 2^64 */
	prom__value(out, "g", NULL, 9007199254740993.0);	/* 2^53 + 1 rounds to 2^53 */
	prom__value(out, "h", NULL, 1e300);
	prom__value(out, "i", NULL, 0.1);
	prom__value(out, "j", NULL, 1.0 / 3);
	prom__value(out, "k", NULL, -42);
	prom__value(out, "l", NULL, 1e-7);
	prom__value(out, "m", NULL, 4294967296.0);
}

static int test_value_format(void)
{
	CHECK(output_is(write_values,
			"a 0.25\n"
			"b 0\n"
			"c NaN\n"
			"d +Inf\n"
			"e -Inf\n"
			"f 1.8446744073709552e+19\n"
			"g 9007199254740992\n"
			"h 1e+300\n"
			"i 0.1\n"
			"j 0.3333333333333333\n"
			"k -42\n"
			"l 1e-07\n"
			"m 4294967296\n"));
	return TEST_OK;
}

static void write_help_escaped(FILE *out)
{
	prom__header(out, "x", "gauge", "path C:\\tmp\nsecond \"line\"");
	prom__header(out, "y", NULL, "no type");
	prom__header(out, "z", "gauge", NULL);
}

static int test_help_escaping(void)
{
	/* HELP escapes backslash and newline only; quotes stay as they are */
	CHECK(output_is(write_help_escaped,
			"# HELP x path C:\\\\tmp\\nsecond \"line\"\n"
			"# TYPE x gauge\n"
			"# HELP y no type\n"
			"# TYPE z gauge\n"));
	return TEST_OK;
}

static int test_escape(void)
{
	char buf[64];

	CHECK(!strcmp(prom__escape("plain", buf, sizeof(buf)), "plain"));
	CHECK(!strcmp(prom__escape("a\\b\"c\"\nd", buf, sizeof(buf)), "a\\\\b\\\"c\\\"\\nd"));
	CHECK(!strcmp(prom__escape("", buf, sizeof(buf)), ""));
	CHECK(!strcmp(prom__escape(NULL, buf, sizeof(buf)), ""));
	CHECK(prom__escape("x", buf, sizeof(buf)) == buf);
	CHECK(!strcmp(prom__escape("caf\xc3\xa9", buf, sizeof(buf)), "caf\xc3\xa9"));
	return TEST_OK;
}

static int test_escape_truncates(void)
{
	char buf[5];

	/* room for 4 bytes: an escape that does not fit is left out whole */
	CHECK(!strcmp(prom__escape("abcdef", buf, sizeof(buf)), "abcd"));
	CHECK(!strcmp(prom__escape("abc\"", buf, sizeof(buf)), "abc"));
	CHECK(!strcmp(prom__escape("ab\"d", buf, sizeof(buf)), "ab\\\""));
	/* never half a UTF-8 character: "é" is 2 bytes, "€" 3 */
	CHECK(!strcmp(prom__escape("abc\xc3\xa9", buf, sizeof(buf)), "abc"));
	CHECK(!strcmp(prom__escape("a\xe2\x82\xac\xe2\x82\xac", buf, sizeof(buf)),
		      "a\xe2\x82\xac"));
	CHECK(!strcmp(prom__escape("ab\xe2\x82\xac", buf, sizeof(buf)), "ab"));
	CHECK(!strcmp(prom__escape("x", buf, 1), ""));
	buf[0] = 'q';
	CHECK(prom__escape("x", buf, 0) == buf && buf[0] == 'q');
	return TEST_OK;
}

TEST_MAIN("prom",
	  TEST(test_counter),
	  TEST(test_labels),
	  TEST(test_value_format),
	  TEST(test_help_escaping),
	  TEST(test_escape),
	  TEST(test_escape_truncates))
