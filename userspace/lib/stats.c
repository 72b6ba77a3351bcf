/* stats.c -- reads declared statistics and writes them as a -v line (prom__stats: /metrics) */
#include <stdio.h>
#include <string.h>
#include "stats.h"

double stat_desc__value(const struct stat_desc *d, const void *stats)
{
	__u64 v;

	memcpy(&v, (const char *)stats + d->offset, sizeof(v));
	return (double)v * (d->scale ? d->scale : 1.0);
}

void stats__format(char *buf, size_t len, const struct stat_desc *d, int n, const void *stats)
{
	size_t used = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (int i = 0; i < n && used < len; i++) {
		int w = snprintf(buf + used, len - used, "%s%s%s%s%s=%.10g%s%s", i ? " " : "",
				 d[i].name, d[i].labels ? "{" : "", d[i].labels ? d[i].labels : "",
				 d[i].labels ? "}" : "", stat_desc__value(&d[i], stats),
				 d[i].unit ? " " : "", d[i].unit ? d[i].unit : "");

		if (w < 0)
			break;
		used += (size_t)w;
	}
}
