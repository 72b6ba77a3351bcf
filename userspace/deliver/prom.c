/* prom.c -- Prometheus text exposition format (version 0.0.4) writers */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "prom.h"

/* Room for "%.0f" of any integral double below 2^64, and for "%.17g" of anything. */
#define VALUE_BUF 32

/* HELP text escapes only backslash and newline (the format has no quotes there). */
static void write_help(FILE *out, const char *help)
{
	for (; *help; help++) {
		if (*help == '\\')
			fputs("\\\\", out);
		else if (*help == '\n')
			fputs("\\n", out);
		else
			fputc(*help, out);
	}
}

void prom__header(FILE *out, const char *name, const char *type, const char *help)
{
	if (help) {
		fprintf(out, "# HELP %s ", name);
		write_help(out, help);
		fputc('\n', out);
	}
	if (type)
		fprintf(out, "# TYPE %s %s\n", name, type);
}

/* The build links no libm: trunc() is out, and from 2^53 on every double is integral. */
static int is_integral(double v)
{
	return fabs(v) >= 0x1p53 || v == (double)(long long)v;
}

/*
 * Counters are integers far more often than not: print those as integers
 * ("%g" would turn 1234567 into 1.23457e+06 and lose digits). Below 2^64 every
 * integral double prints exactly with "%.0f"; beyond, exponent form is shorter.
 */
static void format_value(double v, char *buf, size_t len)
{
	if (isnan(v)) {
		snprintf(buf, len, "NaN");
	} else if (isinf(v)) {
		snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
	} else if (v == 0) {
		snprintf(buf, len, "0");	/* also -0, which would print "-0" */
	} else if (fabs(v) < 0x1p64 && is_integral(v)) {
		snprintf(buf, len, "%.0f", v);
	} else {
		/* shortest precision that reads back as the same double */
		for (int prec = 1; prec <= 17; prec++) {
			snprintf(buf, len, "%.*g", prec, v);
			if (strtod(buf, NULL) == v)
				break;
		}
	}
}

void prom__value(FILE *out, const char *name, const char *labels, double value)
{
	char buf[VALUE_BUF];

	format_value(value, buf, sizeof(buf));
	if (labels && *labels)
		fprintf(out, "%s{%s} %s\n", name, labels, buf);
	else
		fprintf(out, "%s %s\n", name, buf);
}

/* Length of the last UTF-8 sequence in s[0..n) when it is incomplete, else 0. */
static size_t incomplete_utf8_tail(const char *s, size_t n)
{
	size_t i = n, want;
	unsigned char lead;

	/* a sequence is at most 4 bytes: step back over at most 3 continuation bytes */
	while (i > 0 && n - i < 3 && ((unsigned char)s[i - 1] & 0xc0) == 0x80)
		i--;
	if (i == 0)
		return 0;
	lead = (unsigned char)s[i - 1];
	if (lead >= 0xf0)
		want = 4;
	else if (lead >= 0xe0)
		want = 3;
	else if (lead >= 0xc0)
		want = 2;
	else
		return 0;
	return n - (i - 1) < want ? n - (i - 1) : 0;
}

const char *prom__escape(const char *value, char *buf, size_t len)
{
	size_t n = 0;

	if (!len)
		return buf;
	for (; value && *value; value++) {
		char c = *value;
		int esc = c == '\\' || c == '"' || c == '\n';

		/* keep one byte for the terminator; never write half an escape */
		if (n + 1 + esc >= len) {
			n -= incomplete_utf8_tail(buf, n);
			break;
		}
		if (esc) {
			buf[n++] = '\\';
			c = c == '\n' ? 'n' : c;
		}
		buf[n++] = c;
	}
	buf[n] = '\0';
	return buf;
}

void prom__stats(FILE *out, const char *prefix, const struct stat_desc *d, int n,
		 const void *stats)
{
	char name[128];

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s%s", prefix, d[i].name);
		if (!i || strcmp(d[i].name, d[i - 1].name))
			prom__header(out, name, d[i].type == STAT_TYPE_GAUGE ? "gauge" : "counter",
				     d[i].help);
		prom__value(out, name, d[i].labels, stat_desc__value(&d[i], stats));
	}
}
