/* stats.h -- a statistic declared once (name, help, kind, unit); -v and /metrics are written from it */
#ifndef EBPFPROF_STATS_H
#define EBPFPROF_STATS_H

#include <stddef.h>
#include <linux/types.h>

enum stat_type { STAT_TYPE_COUNTER, STAT_TYPE_GAUGE };

/*
 * One series: a __u64 at OFFSET of its module's stats struct, times SCALE
 * (0: 1; 1e-9 turns nanoseconds into seconds). Series of one family (the
 * same NAME) sit side by side, each with its LABELS ("reason=\"x\""); HELP
 * and TYPE are the first's. The name is the metric's after its prefix
 * ("processes_total" under "ebpfprof_python_"); UNIT says what a value is
 * ("bytes", "seconds"), NULL for a count.
 */
struct stat_desc {
	const char *name;
	const char *help;
	enum stat_type type;
	const char *unit;
	const char *labels;
	size_t offset;
	double scale;
};

/*
 * A declaration a line: a count; one series of a labelled family (HELP
 * NULL after its first); a level in UNIT; nanoseconds counted, read as
 * seconds. OFF is the __u64's offsetof in the module's stats struct.
 */
#define STAT_COUNT(name, help, off) { name, help, STAT_TYPE_COUNTER, NULL, NULL, off, 0 }
#define STAT_COUNT_BY(name, help, labels, off) { name, help, STAT_TYPE_COUNTER, NULL, labels, off, 0 }
#define STAT_LEVEL(name, help, unit, off) { name, help, STAT_TYPE_GAUGE, unit, NULL, off, 0 }
#define STAT_NS_AS_SECONDS(name, help, type, off) { name, help, type, "seconds", NULL, off, 1e-9 }

/* The value of D in STATS, a module's stats struct. */
double stat_desc__value(const struct stat_desc *d, const void *stats);

/*
 * One -v line's body: "name=value" for each, space-separated, labels in
 * braces, a unit after the value; cut to fit LEN (always terminated).
 */
void stats__format(char *buf, size_t len, const struct stat_desc *d, int n, const void *stats);

#endif /* EBPFPROF_STATS_H */
