/* top.c -- writes the functions with the most self value, like `go tool pprof -top`, or wide with bars for a terminal */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hashmap.h"
#include "pbuf.h"
#include "pprof.h"
#include "pprof_int.h"
#include "lib/array.h"

/* One row: every frame with this name (and kernel-ness) counts toward it. */
struct top_entry {
	const char *name;	/* set once all entries exist */
	__s64 flat;
	__s64 cum;
	__u32 text;		/* string index, or offset in top.unnamed when unnamed */
	__u32 stamp;		/* 1 + the last sample counted in cum, so recursion counts once */
	bool unnamed;
	bool kernel;
};

struct top {
	const struct pprof *p;
	struct top_entry *entries;
	size_t n, cap;
	struct hmap *index;
	struct pbuf unnamed;	/* NUL-terminated names of unnamed frames */
	__u32 *line_entry;	/* line index -> entry id; 0: not looked up yet */
	__u32 *loc_entry;	/* location id - 1 -> entry id of its unnamed frame */
};

struct entry_key {
	const char *text;
	bool kernel;
};

static const char *entry_text(const struct top *t, const struct top_entry *e)
{
	return e->unnamed ? (const char *)t->unnamed.data + e->text : pprof_str(t->p, e->text);
}

static int entry_eq(__u32 id, const void *key, const void *ctx)
{
	const struct top *t = ctx;
	const struct top_entry *e = &t->entries[id - 1];
	const struct entry_key *k = key;

	return e->kernel == k->kernel && !strcmp(entry_text(t, e), k->text);
}

/* Finds or adds the entry for text; str is its string index, or -1 for an unnamed frame. */
static int entry_id(struct top *t, const char *text, __s64 str, bool kernel, __u32 *id)
{
	struct entry_key k = { text, kernel };
	__u64 hash = hash_bytes(text, strlen(text), kernel);
	struct top_entry *e;
	int err;

	*id = hmap__find(t->index, hash, entry_eq, &k, t);
	if (*id)
		return 0;
	if (ARRAY_RESERVE(t->entries, t->cap, t->n + 1))
		return -ENOMEM;
	e = &t->entries[t->n];
	memset(e, 0, sizeof(*e));
	e->kernel = kernel;
	e->unnamed = str < 0;
	if (e->unnamed) {
		e->text = t->unnamed.len;
		pbuf__append(&t->unnamed, text, strlen(text) + 1);
	} else {
		e->text = (__u32)str;
	}
	err = pbuf__err(&t->unnamed);
	if (!err)
		err = hmap__insert(t->index, hash, t->n + 1);
	if (err)
		return err;
	*id = ++t->n;
	return 0;
}

static int unnamed_entry(struct top *t, __u32 loc_id, bool kernel, __u32 *id)
{
	char buf[320];
	int err;

	if (t->loc_entry[loc_id - 1]) {
		*id = t->loc_entry[loc_id - 1];
		return 0;
	}
	pprof__unnamed_frame(t->p, loc_id, buf, sizeof(buf));
	err = entry_id(t, buf, -1, kernel, id);
	if (!err)
		t->loc_entry[loc_id - 1] = *id;
	return err;
}

/* The entry of line li of location loc_id; a line without a name is an unnamed frame. */
static int line_entry(struct top *t, __u32 loc_id, size_t li, bool kernel, __u32 *id)
{
	const struct pprof *p = t->p;
	__u32 name;
	int err;

	if (t->line_entry[li]) {
		*id = t->line_entry[li];
		return 0;
	}
	name = p->functions[p->lines[li].function_id - 1].name;
	if (*pprof_str(p, name))
		err = entry_id(t, pprof_str(p, name), name, kernel, id);
	else
		err = unnamed_entry(t, loc_id, kernel, id);
	if (!err)
		t->line_entry[li] = *id;
	return err;
}

static void count(struct top *t, __u32 id, size_t sample, bool leaf, __s64 v)
{
	struct top_entry *e = &t->entries[id - 1];

	if (leaf)
		e->flat += v;
	if (e->stamp != sample + 1) {
		e->cum += v;
		e->stamp = sample + 1;
	}
}

/* Adds sample i's value v to the flat of its leaf frame and the cum of each function in it. */
static int add_sample(struct top *t, size_t i, __s64 v)
{
	const struct pprof *p = t->p;
	const __u32 *locs;
	size_t n;
	__u32 id;
	int err;

	locs = pprof_sample_locs(p, i, &n);
	for (size_t j = 0; j < n; j++) {
		const struct pp_location *loc = pprof_location(p, locs[j]);
		bool kernel = pprof_location_is_kernel(p, loc);
		size_t n_lines;

		pprof_location_lines(p, locs[j], &n_lines);
		if (!n_lines) {
			err = unnamed_entry(t, locs[j], kernel, &id);
			if (err)
				return err;
			count(t, id, i, j == 0, v);
		}
		/* the first line of the leaf location is the innermost inlined callee */
		for (size_t k = 0; k < n_lines; k++) {
			err = line_entry(t, locs[j], loc->line_start + k, kernel, &id);
			if (err)
				return err;
			count(t, id, i, j == 0 && k == 0, v);
		}
	}
	return 0;
}

/* flat descending, then name, then user before kernel */
static int cmp_entries(const void *a, const void *b)
{
	const struct top_entry *x = a, *y = b;
	int r;

	if (x->flat != y->flat)
		return x->flat < y->flat ? 1 : -1;
	r = strcmp(x->name, y->name);
	if (r)
		return r;
	return x->kernel - y->kernel;
}

/* errno from the failed stdio call; stdio does not always set one */
static int write_error(void)
{
	return errno ? -errno : -EIO;
}

static double percent(__s64 v, __s64 total)
{
	return total ? 100.0 * v / total : 0.0;
}

/*
 * Writes name with control characters as spaces, so a row stays one line;
 * cut to max columns (0: whole) at a character boundary, ending in "~".
 */
static int put_name(const char *name, FILE *out, int max)
{
	int cols = 0;

	for (const unsigned char *s = (const unsigned char *)name; *s; s++) {
		bool starts = (*s & 0xc0) != 0x80;	/* counts characters, not UTF-8 bytes */

		if (max && starts && ++cols >= max && s[1]) {
			if (putc('~', out) == EOF)
				return write_error();
			break;
		}
		if (putc(*s < 0x20 || *s == 0x7f ? ' ' : *s, out) == EOF)
			return write_error();
	}
	return 0;
}

static int print_classic(struct top *t, FILE *out, size_t rows, __s64 total)
{
	__s64 sum = 0;

	if (fprintf(out, "%10s %7s %7s %10s %7s\n", "flat", "flat%", "sum%", "cum", "cum%") < 0)
		return write_error();
	for (size_t i = 0; i < rows; i++) {
		const struct top_entry *e = &t->entries[i];

		sum += e->flat;
		if (fprintf(out, "%10" PRId64 " %6.2f%% %6.2f%% %10" PRId64 " %6.2f%%  ",
			    (int64_t)e->flat, percent(e->flat, total), percent(sum, total),
			    (int64_t)e->cum, percent(e->cum, total)) < 0 ||
		    put_name(e->name, out, 0) ||
		    fputs(e->kernel ? " [k]\n" : "\n", out) == EOF)
			return write_error();
	}
	return 0;
}

/* A bar of share (0..1) in width cells: eighths of a cell in block characters, else '#'. */
static int put_bar(FILE *out, double share, int width, bool unicode)
{
	static const char *const eighths[] = { "", "\u258f", "\u258e", "\u258d", "\u258c",
					       "\u258b", "\u258a", "\u2589" };
	int units = (int)(share * width * (unicode ? 8 : 1) + 0.5), cells = 0;

	if (unicode) {
		for (; units >= 8; units -= 8, cells++)
			fputs("\u2588", out);
		if (units) {
			fputs(eighths[units], out);
			cells++;
		}
	} else {
		for (; units > 0 && cells < width; units--, cells++)
			putc('#', out);
	}
	for (; cells < width; cells++)
		putc(' ', out);
	return ferror(out) ? write_error() : 0;
}

/*
 * self and total with their shares, a bar of the self share, and the name
 * cut to what is left of the width (a terminal's; cut names end in "~").
 */
static int print_wide(struct top *t, FILE *out, size_t rows, __s64 total,
		      const struct pprof_top_opts *o)
{
	/* "      self  self%      total total%  " is 37 columns, the bar's brackets 3 */
	int bar = o->width >= 100 ? 20 : o->width >= 70 ? 10 : 0;
	int name_w = o->width - 37 - (bar ? bar + 3 : 0);

	if (fprintf(out, "%10s %6s %10s %6s  %-*s%s\n", "self", "self%", "total", "total%",
		    bar ? bar + 3 : 0, bar ? "self share" : "", "function") < 0)
		return write_error();
	for (size_t i = 0; i < rows; i++) {
		const struct top_entry *e = &t->entries[i];

		if (fprintf(out, "%10" PRId64 " %5.1f%% %10" PRId64 " %5.1f%%  ", (int64_t)e->flat,
			    percent(e->flat, total), (int64_t)e->cum, percent(e->cum, total)) < 0)
			return write_error();
		if (bar && (putc('|', out) == EOF ||
			    put_bar(out, total ? (double)e->flat / total : 0, bar, o->unicode) ||
			    fputs("| ", out) == EOF))
			return write_error();
		if (put_name(e->name, out, o->fit_names && name_w > 12 ? name_w - (e->kernel ? 4 : 0) : 0) ||
		    fputs(e->kernel ? " [k]\n" : "\n", out) == EOF)
			return write_error();
	}
	return 0;
}

static int print_rows(struct top *t, FILE *out, int value_index, int n, __s64 total,
		      const struct pprof_top_opts *o)
{
	const struct pprof *p = t->p;
	size_t rows = n > 0 && (size_t)n < t->n ? (size_t)n : t->n;

	if (fprintf(out, "Showing top %zu of %zu functions, total %" PRId64 " %s/%s\n", rows, t->n,
		    (int64_t)total, pprof_str(p, p->sample_types[value_index][0]),
		    pprof_str(p, p->sample_types[value_index][1])) < 0)
		return write_error();
	return o && o->width > 0 ? print_wide(t, out, rows, total, o) : print_classic(t, out, rows, total);
}

int pprof__write_top(const struct pprof *p, FILE *out, int value_index, int n)
{
	return pprof__write_top_opts(p, out, value_index, n, NULL);
}

/* Counts every sample's value_index value into t (entries unsorted, named); 0 or a negative errno. */
static int top_build(struct top *t, const struct pprof *p, int value_index, __s64 *total)
{
	int err = 0;

	*t = (struct top){ .p = p };
	*total = 0;
	pbuf__init(&t->unnamed);
	if (value_index < 0 || value_index >= p->n_types)
		return -EINVAL;
	t->index = hmap__new();
	t->line_entry = calloc(p->n_lines + 1, sizeof(*t->line_entry));
	t->loc_entry = calloc(p->n_locations + 1, sizeof(*t->loc_entry));
	if (!t->index || !t->line_entry || !t->loc_entry)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_samples && !err; i++) {
		__s64 v = pprof_sample_values(p, i)[value_index];

		if (!v)
			continue;
		*total += v;
		err = add_sample(t, i, v);
	}
	for (size_t i = 0; i < t->n && !err; i++)
		t->entries[i].name = entry_text(t, &t->entries[i]);
	return err;
}

static void top_release(struct top *t)
{
	free(t->line_entry);
	free(t->loc_entry);
	free(t->entries);
	hmap__free(t->index);
	pbuf__release(&t->unnamed);
}

int pprof__write_top_opts(const struct pprof *p, FILE *out, int value_index, int n,
			  const struct pprof_top_opts *opts)
{
	struct top t;
	__s64 total;
	int err = top_build(&t, p, value_index, &total);

	if (err)
		goto out;
	if (t.n)
		qsort(t.entries, t.n, sizeof(*t.entries), cmp_entries);
	errno = 0;
	err = print_rows(&t, out, value_index, n, total, opts);
	if (!err && (fflush(out) || ferror(out)))
		err = write_error();
out:
	top_release(&t);
	return err;
}

/* one function of a diff: shares before (b) and after (a) */
struct diff_row {
	const char *name;
	bool kernel;
	double self_b, total_b, self_a, total_a;
};

static int cmp_diff(const void *x, const void *y)
{
	const struct diff_row *a = x, *b = y;
	double da = a->total_a - a->total_b, db = b->total_a - b->total_b;
	double ma = da < 0 ? -da : da, mb = db < 0 ? -db : db;

	if (ma != mb)
		return ma < mb ? 1 : -1;
	return strcmp(a->name, b->name);
}

/* The entry of t named like e, NULL when t has none. */
static const struct top_entry *entry_like(const struct top *t, const struct top_entry *e)
{
	struct entry_key k = { e->name, e->kernel };
	__u32 id = hmap__find(t->index, hash_bytes(e->name, strlen(e->name), e->kernel), entry_eq, &k, t);

	return id ? &t->entries[id - 1] : NULL;
}

static int print_diff(FILE *out, const struct diff_row *rows, size_t n, size_t shown)
{
	if (fprintf(out, "Showing %zu of %zu functions by change of total share (after - before, percentage points)\n",
		    shown, n) < 0 ||
	    fprintf(out, "%8s %8s %8s %8s %8s %8s  %s\n", "total-b", "total-a", "change", "self-b", "self-a",
		    "change", "function") < 0)
		return write_error();
	for (size_t i = 0; i < shown; i++) {
		const struct diff_row *r = &rows[i];

		if (fprintf(out, "%7.2f%% %7.2f%% %+8.2f %7.2f%% %7.2f%% %+8.2f  ", r->total_b, r->total_a,
			    r->total_a - r->total_b, r->self_b, r->self_a, r->self_a - r->self_b) < 0 ||
		    put_name(r->name, out, 0) || fputs(r->kernel ? " [k]\n" : "\n", out) == EOF)
			return write_error();
	}
	return 0;
}

int pprof__write_top_diff(const struct pprof *before, int tb, const struct pprof *after, int ta,
			  FILE *out, int n)
{
	struct top b, a;
	__s64 sum_b, sum_a;
	struct diff_row *rows = NULL;
	size_t n_rows = 0;
	int err = top_build(&b, before, tb, &sum_b);

	if (!err)
		err = top_build(&a, after, ta, &sum_a);
	else
		a = (struct top){ .p = after };
	if (!err && !(rows = calloc(a.n + b.n + 1, sizeof(*rows))))
		err = -ENOMEM;
	/* every function of after, then those only before had */
	for (size_t i = 0; i < a.n && !err; i++) {
		const struct top_entry *e = &a.entries[i], *o = entry_like(&b, e);

		rows[n_rows++] = (struct diff_row){ e->name, e->kernel,
			o ? percent(o->flat, sum_b) : 0, o ? percent(o->cum, sum_b) : 0,
			percent(e->flat, sum_a), percent(e->cum, sum_a) };
	}
	for (size_t i = 0; i < b.n && !err; i++) {
		const struct top_entry *e = &b.entries[i];

		if (!entry_like(&a, e))
			rows[n_rows++] = (struct diff_row){ e->name, e->kernel, percent(e->flat, sum_b),
							    percent(e->cum, sum_b), 0, 0 };
	}
	if (!err) {
		qsort(rows, n_rows, sizeof(*rows), cmp_diff);
		errno = 0;
		err = print_diff(out, rows, n_rows, n > 0 && (size_t)n < n_rows ? (size_t)n : n_rows);
	}
	if (!err && (fflush(out) || ferror(out)))
		err = write_error();
	free(rows);
	top_release(&a);
	top_release(&b);
	return err;
}
