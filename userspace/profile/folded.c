/* folded.c -- writes the profile as folded stacks ("comm;root;...;leaf count") for flamegraph.pl */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "pprof.h"
#include "pprof_int.h"

/*
 * Reads one sample's folded stack a byte at a time. Sorting and merging
 * compare stacks through it, so the text of every stack (often kilobytes, for
 * ~100k samples) never has to exist in memory at once.
 */
struct stack_cursor {
	const struct pprof *p;
	const __u32 *locs;		/* the sample's locations, leaf first */
	size_t locs_left;		/* the next location to enter is locs[locs_left - 1] */
	const struct pp_line *lines;	/* the current location's lines, callee first */
	size_t lines_left;
	__u32 loc_id;
	bool kernel;
	const char *comm;		/* the first frame, NULL once read */
	const char *text;		/* the rest of the current frame's name */
	const char *suffix;		/* written after text */
	size_t frames;			/* frames started */
	char buf[320];			/* "[BASENAME+0xOFFSET]" of an unnamed frame */
};

struct folded {
	const struct pprof *p;
	int value_index;
	bool has_comm_key;
	__u32 comm_key;			/* string index of "comm" */
};

static const char *sample_comm(const struct folded *f, size_t i)
{
	const struct pp_label *labels;
	size_t n;

	if (!f->has_comm_key)
		return NULL;
	labels = pprof_labelset(f->p, f->p->samples[i].labelset, &n);
	for (size_t j = 0; j < n; j++)
		if (labels[j].key == f->comm_key && labels[j].str)
			return pprof_str(f->p, labels[j].str);
	return NULL;
}

static void cursor_init(struct stack_cursor *c, const struct folded *f, size_t i)
{
	c->p = f->p;
	c->locs = pprof_sample_locs(f->p, i, &c->locs_left);
	c->lines_left = 0;
	c->comm = sample_comm(f, i);
	/* a line needs a frame before its count; a sample with none gets this one */
	if (!c->comm && !c->locs_left)
		c->comm = "[unknown]";
	c->text = "";
	c->suffix = "";
	c->frames = 0;
}

/* Moves to the next frame, root first; false at the end of the stack. */
static bool next_frame(struct stack_cursor *c)
{
	const struct pp_line *line;
	const char *name;

	if (c->comm) {
		c->text = c->comm;
		c->comm = NULL;
		c->suffix = "";
		return true;
	}
	if (!c->lines_left) {
		if (!c->locs_left)
			return false;
		c->loc_id = c->locs[--c->locs_left];
		c->kernel = pprof_location_is_kernel(c->p, pprof_location(c->p, c->loc_id));
		c->lines = pprof_location_lines(c->p, c->loc_id, &c->lines_left);
		c->suffix = c->kernel ? "_[k]" : "";
		if (!c->lines_left) {
			pprof__unnamed_frame(c->p, c->loc_id, c->buf, sizeof(c->buf));
			c->text = c->buf;
			return true;
		}
	}
	/* callers come after their inlined callees in a location's lines */
	line = &c->lines[--c->lines_left];
	name = pprof_str(c->p, c->p->functions[line->function_id - 1].name);
	if (!*name) {
		pprof__unnamed_frame(c->p, c->loc_id, c->buf, sizeof(c->buf));
		name = c->buf;
	}
	c->text = name;
	return true;
}

/*
 * Names may hold anything; ';' would split a frame and a newline a line, so
 * ';' becomes ':' and control characters become spaces.
 */
static int clean(unsigned char ch)
{
	if (ch == ';')
		return ':';
	if (ch < 0x20 || ch == 0x7f)
		return ' ';
	return ch;
}

/* The next byte of the stack's text, or -1 at its end. */
static int next_byte(struct stack_cursor *c)
{
	for (;;) {
		if (*c->text)
			return clean(*c->text++);
		if (*c->suffix)
			return (unsigned char)*c->suffix++;
		if (!next_frame(c))
			return -1;
		if (c->frames++)
			return ';';
	}
}

/* Orders samples by their stack text, byte by byte; a prefix sorts first. */
static int cmp_stacks(const void *a, const void *b, void *ctx)
{
	struct stack_cursor ca, cb;
	int x, y;

	cursor_init(&ca, ctx, *(const __u32 *)a);
	cursor_init(&cb, ctx, *(const __u32 *)b);
	do {
		x = next_byte(&ca);
		y = next_byte(&cb);
	} while (x == y && x >= 0);
	return (x > y) - (x < y);
}

/* errno from the failed stdio call; stdio does not always set one */
static int write_error(void)
{
	return errno ? -errno : -EIO;
}

static int print_stack(const struct folded *f, size_t i, __s64 count, FILE *out)
{
	struct stack_cursor c;
	int ch;

	cursor_init(&c, f, i);
	while ((ch = next_byte(&c)) >= 0)
		if (putc(ch, out) == EOF)
			return write_error();
	if (fprintf(out, " %" PRId64 "\n", (int64_t)count) < 0)
		return write_error();
	return 0;
}

int pprof__write_folded(const struct pprof *p, FILE *out, int value_index)
{
	struct folded f = { .p = p, .value_index = value_index };
	size_t n = 0, i, j;
	__u32 *order;
	int err = 0;

	if (value_index < 0 || value_index >= p->n_types)
		return -EINVAL;
	f.has_comm_key = pprof__find_string(p, "comm", &f.comm_key);
	errno = 0;
	order = malloc((p->n_samples ? p->n_samples : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (i = 0; i < p->n_samples; i++)
		if (pprof_sample_values(p, i)[value_index])
			order[n++] = i;
	/* sorted, equal stacks (e.g. differing only in pid) are neighbours to merge */
	qsort_r(order, n, sizeof(*order), cmp_stacks, &f);
	for (i = 0; i < n && !err; i = j) {
		__s64 sum = pprof_sample_values(p, order[i])[value_index];

		for (j = i + 1; j < n && !cmp_stacks(&order[i], &order[j], &f); j++)
			sum += pprof_sample_values(p, order[j])[value_index];
		if (sum)
			err = print_stack(&f, order[i], sum, out);
	}
	free(order);
	if (!err && (fflush(out) || ferror(out)))
		err = write_error();
	return err;
}
