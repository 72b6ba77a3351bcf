/* prom.h -- Prometheus text exposition format (version 0.0.4) writers */
#ifndef EBPFPROF_PROM_H
#define EBPFPROF_PROM_H

#include <stdio.h>
#include "lib/stats.h"

/* The Content-Type of a scrape response in this format. */
#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* "# HELP name help\n# TYPE name counter|gauge\n" once per metric family. */
void prom__header(FILE *out, const char *name, const char *type, const char *help);

/*
 * One sample line; labels is NULL or e.g. "reason=\"collision\"" (values must
 * already be escaped). Integral values print without exponent, NaN as "NaN",
 * infinities as "+Inf"/"-Inf", others in the shortest form that reads back exactly.
 */
void prom__value(FILE *out, const char *name, const char *labels, double value);

/*
 * Escapes a label value (backslash, double quote, newline) into buf; returns buf.
 * A value too long for buf is cut at a character boundary (never inside an
 * escape or a UTF-8 sequence); buf is always terminated when len > 0.
 */
const char *prom__escape(const char *value, char *buf, size_t len);

/* The families of declared statistics D[0, n) read from STATS, each name after PREFIX ("ebpfprof_python_"). */
void prom__stats(FILE *out, const char *prefix, const struct stat_desc *d, int n,
		 const void *stats);

#endif /* EBPFPROF_PROM_H */
