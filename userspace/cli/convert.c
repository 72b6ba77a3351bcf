/* convert.c -- `ebpfprof convert IN` and `ebpfprof diff BEFORE AFTER`: pprof files read and written as html, folded, top */
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include "convert.h"
#include "output.h"
#include "lib/fdio.h"
#include "lib/log.h"
#include "lib/options.h"
#include "profile/profile.h"

#define MAX_INPUT (256u << 20)	/* bytes of a pprof file, compressed or not */

/* Reads a whole file (or stdin for "-"), at most MAX_INPUT bytes. */
static int slurp(const char *path, unsigned char **data, size_t *len)
{
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	size_t cap = 1 << 16, n = 0;
	unsigned char *buf = NULL, *tmp;
	ssize_t got;
	int err = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		if (n == cap || !buf) {
			cap = buf ? cap * 2 : cap;
			if (cap > MAX_INPUT + 1)
				cap = MAX_INPUT + 1;
			tmp = realloc(buf, cap);
			if (!tmp) {
				err = -ENOMEM;
				break;
			}
			buf = tmp;
		}
		got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			err = -errno;
			break;
		}
		if (!got)
			break;
		n += got;
		if (n > MAX_INPUT) {
			err = -EFBIG;
			break;
		}
	}
	if (fd != STDIN_FILENO)
		close(fd);
	if (err) {
		free(buf);
		return err;
	}
	*data = buf;
	*len = n;
	return 0;
}

static struct pprof *load(const char *path)
{
	unsigned char *data = NULL;
	struct pprof *p;
	char why[160];
	size_t len = 0;
	int err = slurp(path, &data, &len);

	if (err) {
		if (err == -EFBIG)
			p_err("%s: larger than %u MB", path, MAX_INPUT >> 20);
		else
			p_err("cannot read %s: %s", path, strerror(-err));
		return NULL;
	}
	p = pprof__read(data, len, 4 * (size_t)MAX_INPUT, why, sizeof(why));
	if (!p)
		p_err("%s: not a pprof profile: %s", path, why);
	free(data);
	return p;
}

static bool cpu_like(const char *type)
{
	return !strcmp(type, "samples") || !strcmp(type, "cpu") || !strcmp(type, "wall") ||
	       !strcmp(type, "off_cpu");
}

static const char *type_name(const struct pprof *p, int i)
{
	return pprof__type_name(p, i);
}

int convert__pick_type(const struct pprof *p, const char *name)
{
	static const char *const order[] = { "samples", "cpu", "wall", "off_cpu" };
	const char *def = pprof__default_type(p);
	int i;

	if (name) {
		i = pprof__find_type(p, name);
		if (i < 0)
			p_err("the profile has no sample type '%s'", name);
		return i;
	}
	if (def && cpu_like(def))
		return pprof__find_type(p, def);
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		i = pprof__find_type(p, order[k]);
		if (i >= 0)
			return i;
	}
	p_err("no CPU-like sample type (cpu, samples, wall or off_cpu); the first is '%s' (use --type)",
	      type_name(p, 0));
	return -1;
}

void convert__top_opts(FILE *out, struct pprof_top_opts *o)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS");
	const char *cs;

	*o = (struct pprof_top_opts){ .width = 100 };
	if (cols && atoi(cols) >= 40 && atoi(cols) <= 1000)
		o->width = atoi(cols);
	if (!isatty(fileno(out)))
		return;	/* plain: '#' bars, names whole, for grep and files */
	if (!ioctl(fileno(out), TIOCGWINSZ, &ws) && ws.ws_col >= 40)
		o->width = ws.ws_col;
	setlocale(LC_CTYPE, "");
	cs = nl_langinfo(CODESET);
	o->unicode = cs && !strcmp(cs, "UTF-8");
	o->fit_names = true;
}

/* folded of one type into memory: "stack count\n" lines, sorted by stack */
static int folded_text(const struct pprof *p, int type, char **text, size_t *len)
{
	FILE *m = open_memstream(text, len);
	int err;

	if (!m)
		return -errno;
	err = pprof__write_folded(p, m, type);
	if (fclose(m) && !err)
		err = -EIO;
	return err;
}

/* Splits "stack count" at its last space; false for a line that is not one. */
static bool folded_line(char *line, char **stack, long long *count)
{
	char *sp = strrchr(line, ' ');

	if (!sp)
		return false;
	*sp = '\0';
	*stack = line;
	*count = strtoll(sp + 1, NULL, 10);
	return true;
}

/*
 * flamegraph.pl's diff input ("stack before after"): both folded outputs
 * are sorted by stack, so one merge pass pairs them.
 */
static int write_folded_diff(const struct pprof *before, int tb, const struct pprof *after, int ta,
			     FILE *out)
{
	char *a = NULL, *b = NULL, *pa, *pb, *la = NULL, *lb = NULL, *sa = NULL, *sb = NULL;
	size_t na, nb;
	long long ca = 0, cb = 0;
	int err = folded_text(before, tb, &b, &nb);

	if (!err)
		err = folded_text(after, ta, &a, &na);
	pa = a;
	pb = b;
	while (!err) {
		if (!la && pa && *pa) {
			la = strsep(&pa, "\n");
			if (!folded_line(la, &sa, &ca))
				la = NULL;
		}
		if (!lb && pb && *pb) {
			lb = strsep(&pb, "\n");
			if (!folded_line(lb, &sb, &cb))
				lb = NULL;
		}
		if (!la && !lb)
			break;
		/* the same byte order folded.c sorts by */
		int c = !la ? 1 : !lb ? -1 : strcmp(sa, sb);

		if (c < 0) {
			fprintf(out, "%s 0 %lld\n", sa, ca);
			la = NULL;
		} else if (c > 0) {
			fprintf(out, "%s %lld 0\n", sb, cb);
			lb = NULL;
		} else {
			fprintf(out, "%s %lld %lld\n", sa, cb, ca);
			la = lb = NULL;
		}
	}
	free(a);
	free(b);
	if (!err && (fflush(out) || ferror(out)))
		err = errno ? -errno : -EIO;
	return err;
}

const struct pprof *convert__focus(const struct config *cfg, const struct pprof *p,
				   struct pprof **owned)
{
	const char *colon = cfg->label_focus ? strchr(cfg->label_focus, ':') : NULL;
	char key[256];
	size_t kept;

	*owned = NULL;
	if (!colon)
		return p;
	snprintf(key, sizeof(key), "%.*s", (int)(colon - cfg->label_focus), cfg->label_focus);
	*owned = pprof__focus_label(p, key, colon + 1, &kept);
	if (*owned)
		p_info("label %s=%s: %zu of %zu samples", key, colon + 1, kept, pprof__sample_count(p));
	return *owned;
}

static int write_one(const struct config *cfg, const struct pprof *whole, int type, FILE *f)
{
	struct pprof_html_opts ho = { .title = cfg->inputs[0], .value_index = type };
	struct pprof_top_opts to;
	struct pprof *owned;
	const struct pprof *p = convert__focus(cfg, whole, &owned);
	int err;

	if (!p)
		return -errno;
	switch (cfg->format) {
	case FORMAT_FOLDED: err = pprof__write_folded(p, f, type); break;
	case FORMAT_TOP:
		convert__top_opts(f, &to);
		err = pprof__write_top_opts(p, f, type, cfg->top_n, &to);
		break;
	case FORMAT_HTML: err = pprof__write_html(p, f, &ho); break;
	default: err = pprof__write(p, f);
	}
	pprof__free(owned);
	return err;
}

static int write_diff(const struct config *cfg, const struct pprof *before, int tb,
		      const struct pprof *after, int ta, FILE *f)
{
	char title[512];
	struct pprof_html_opts ho = { .title = title, .base = before, .value_index = ta };

	snprintf(title, sizeof(title), "diff: %s → %s", cfg->inputs[0], cfg->inputs[1]);
	switch (cfg->format) {
	case FORMAT_FOLDED: return write_folded_diff(before, tb, after, ta, f);
	case FORMAT_TOP: return pprof__write_top_diff(before, tb, after, ta, f, cfg->top_n);
	default: return pprof__write_html(after, f, &ho);
	}
}

int convert__run(const struct config *cfg)
{
	bool diff = cfg->command == CMD_DIFF;
	struct pprof *a = NULL, *b = NULL;
	struct output *out = NULL;
	int ta = -1, tb = -1, err = 0, ret = EXIT_RUNTIME;

	a = load(cfg->inputs[0]);
	if (a && diff)
		b = load(cfg->inputs[1]);
	if (!a || (diff && !b))
		goto out;
	ta = convert__pick_type(a, cfg->sample_type);
	if (b) {
		/* the after profile's type, by name in the before one */
		tb = convert__pick_type(b, cfg->sample_type);
		if (tb >= 0 && ta >= 0 && pprof__find_type(a, type_name(b, tb)) >= 0)
			ta = pprof__find_type(a, type_name(b, tb));
	}
	if (ta < 0 || (diff && tb < 0))
		goto out;
	out = output__open(cfg->output);
	if (!out) {
		p_err("cannot write %s: %s", cfg->output, strerror(errno));
		goto out;
	}
	/* in a diff, inputs[0] is before: a, and b the after profile */
	err = diff ? write_diff(cfg, a, ta, b, tb, output__file(out))
		   : write_one(cfg, a, ta, output__file(out));
	if (!err) {
		err = output__commit(out);
		out = NULL;
	}
	if (err)
		p_err("cannot write %s: %s", cfg->output, strerror(-err));
	else
		ret = EXIT_OK;
out:
	output__abort(out);
	pprof__free(a);
	pprof__free(b);
	return ret;
}
