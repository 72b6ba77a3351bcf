/* test_pprof.c -- unit tests for the pprof builder and its writers, read back with `go tool pprof` */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "profile/pprof.h"
#include "profile/pprof_int.h"
#include "test.h"

/*
 * The fixture: an app mapping and a kernel one; a location with two inline
 * lines, an unsymbolized one in the app, one with no mapping, a recursive
 * function; samples that merge (same stack and labels), that differ only in
 * pid, and one whose first value is zero.
 */
struct fixture {
	struct pprof *p;
	__u32 app, kernel;
	__u32 l_main, l_inl, l_unk, l_sys, l_nomap, l_rec;
};

#define APP_BASE 0x400000ULL
#define KERN_BASE 0xffffffff81000000ULL

static int add(struct pprof *p, const __u32 *locs, int n, __s64 count, __s64 ns, int pid,
	       const char *comm)
{
	struct pprof_label labels[] = {
		{ .key = "pid", .num = pid, .num_unit = "pid" },
		{ .key = "comm", .str = comm },
	};
	__s64 values[] = { count, ns };

	return pprof__add_sample(p, locs, n, values, labels, comm ? 2 : 0);
}

static int fixture_build(struct fixture *f)
{
	struct pprof_opts opts = {
		.sample_types = { { "samples", "count" }, { "cpu", "nanoseconds" } },
		.n_sample_types = 2,
		.period_type = { "cpu", "nanoseconds" },
		.period = 10101010,
		.time_nanos = 1700000000000000000LL,
		.duration_nanos = 2000000000LL,
		.default_sample_type = "samples",
	};
	struct pprof_mapping_desc app = {
		.start = APP_BASE, .limit = 0x500000, .file_offset = 0x1000,
		.filename = "/usr/bin/app", .build_id = "abcdef0123",
		.has_functions = true, .has_filenames = true, .has_inline_frames = true,
	};
	struct pprof_mapping_desc kernel = {
		.start = KERN_BASE, .limit = 0xffffffff82000000ULL,
		.filename = "[kernel.kallsyms]", .has_functions = true, .is_kernel = true,
	};
	struct pprof_line main_line = { "main", "/src/app.c", 10 };
	struct pprof_line inl_lines[] = {	/* callee first */
		{ "inlined_helper", "/src/app.c", 5 },
		{ "worker", "/src/app.c", 20 },
	};
	struct pprof_line sys_line = { "do_syscall_64", NULL, 0 };
	struct pprof_line rec_line = { "recurse", "/src/app.c", 30 };
	int err = 0;

	memset(f, 0, sizeof(*f));
	f->p = pprof__new(&opts);
	if (!f->p)
		return -errno;
	f->app = pprof__add_mapping(f->p, &app);
	f->kernel = pprof__add_mapping(f->p, &kernel);
	f->l_main = pprof__add_location(f->p, f->app, 0x401000, &main_line, 1);
	f->l_inl = pprof__add_location(f->p, f->app, 0x402000, inl_lines, 2);
	f->l_unk = pprof__add_location(f->p, f->app, 0x403000, NULL, 0);
	f->l_sys = pprof__add_location(f->p, f->kernel, KERN_BASE + 0x1234, &sys_line, 1);
	f->l_nomap = pprof__add_location(f->p, 0, 0x7f00dead, NULL, 0);
	f->l_rec = pprof__add_location(f->p, f->app, 0x404000, &rec_line, 1);
	if (!f->app || !f->kernel || !f->l_main || !f->l_inl || !f->l_unk || !f->l_sys ||
	    !f->l_nomap || !f->l_rec)
		return -EINVAL;

	{
		__u32 s1[] = { f->l_inl, f->l_main };
		__u32 s2[] = { f->l_sys, f->l_unk, f->l_inl, f->l_main };
		__u32 s4[] = { f->l_rec, f->l_rec, f->l_main };
		__u32 s5[] = { f->l_nomap };
		__u32 s6[] = { f->l_main };

		err = err ?: add(f->p, s1, 2, 3, 30303030, 42, "app");
		err = err ?: add(f->p, s2, 4, 2, 20202020, 42, "app");
		err = err ?: add(f->p, s1, 2, 3, 30303030, 42, "app");	/* merges */
		err = err ?: add(f->p, s1, 2, 1, 10101010, 43, "app");	/* another pid */
		err = err ?: add(f->p, s4, 3, 4, 40404040, 44, "sh");
		err = err ?: add(f->p, s5, 1, 1, 10101010, 0, NULL);
		err = err ?: add(f->p, s6, 1, 0, 5, 42, "app");
	}
	return err;
}

/* Writes p to a new temporary file whose name goes to path. */
static int write_tmp(const struct pprof *p, char *path, size_t size)
{
	FILE *out;
	int fd, err;

	snprintf(path, size, "/tmp/test_pprof.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	out = fdopen(fd, "w");
	if (!out) {
		err = -errno;
		close(fd);
		return err;
	}
	err = pprof__write(p, out);
	if (fclose(out) && !err)
		err = -errno;
	return err;
}

/* Runs cmd and returns its whole stdout (caller frees), NULL on failure. */
static char *run(const char *cmd)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	FILE *f = popen(cmd, "r");
	size_t n;

	if (!f || !buf) {
		if (f)
			pclose(f);
		free(buf);
		return NULL;
	}
	while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len < 2) {
			char *tmp = realloc(buf, cap * 2);

			if (!tmp)
				break;
			buf = tmp;
			cap *= 2;
		}
	}
	buf[len] = '\0';
	if (pclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static bool have_go(void)
{
	char *out = run("go version 2>/dev/null");
	bool ok = out && !strncmp(out, "go version", 10);

	free(out);
	return ok;
}

/* Renders a writer's output to a string (caller frees). */
static char *render(const struct pprof *p, int folded, int value_index, int n, int *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f) {
		*err = -errno;
		return NULL;
	}
	*err = folded ? pprof__write_folded(p, f, value_index)
		      : pprof__write_top(p, f, value_index, n);
	fclose(f);
	return buf;
}

/* ---- builder ---- */

static int test_dedup(void)
{
	struct pprof_line line = { "main", "/src/app.c", 10 };
	struct pprof_line other_file = { "main", "/src/other.c", 10 };
	struct fixture f;
	size_t n_functions, n_strings;
	int ok = TEST_FAIL;

	CHECK(fixture_build(&f) == 0);
	n_functions = f.p->n_functions;
	n_strings = f.p->n_strings;
	/* the same (mapping, address) is the same location, whatever lines come with it */
	if (pprof__add_location(f.p, f.app, 0x401000, &line, 1) != f.l_main ||
	    pprof__add_location(f.p, f.app, 0x401000, NULL, 0) != f.l_main ||
	    pprof__find_location(f.p, f.app, 0x401000) != f.l_main ||
	    pprof__find_location(f.p, 0, 0x7f00dead) != f.l_nomap ||
	    pprof__add_location(f.p, 0, 0x7f00dead, NULL, 0) != f.l_nomap)
		goto out;
	/* the address alone does not make a location: the mapping is part of the key */
	if (pprof__find_location(f.p, f.kernel, 0x401000) ||
	    pprof__find_location(f.p, 0, 0x401000))
		goto out;
	/* 7 adds: one merged, so 6 samples; nothing above created functions or strings */
	if (pprof__sample_count(f.p) != 6 || f.p->n_functions != n_functions ||
	    f.p->n_strings != n_strings || n_functions != 5)
		goto out;
	/* functions are keyed by (name, filename) */
	if (!pprof__add_location(f.p, f.app, 0x405000, &other_file, 1) ||
	    f.p->n_functions != n_functions + 1)
		goto out;
	/* (pid, comm) sets: 42/app, 43/app, 44/sh and the empty one */
	if (f.p->n_labelsets != 4)
		goto out;
	/* merged values are summed */
	for (size_t i = 0; i < f.p->n_samples; i++) {
		size_t n;
		const __u32 *locs = pprof_sample_locs(f.p, i, &n);
		const __s64 *v = pprof_sample_values(f.p, i);

		if (n == 2 && locs[0] == f.l_inl && f.p->samples[i].labelset == 1 &&
		    (v[0] != 6 || v[1] != 60606060))
			goto out;
	}
	ok = TEST_OK;
out:
	pprof__free(f.p);
	return ok;
}

static int test_invalid_args(void)
{
	struct pprof_opts none = { .n_sample_types = 0 };
	__u32 bad_loc[] = { 999 };
	__s64 v[] = { 1, 1 };
	struct pprof_label no_key = { .str = "x" };
	struct fixture f;
	int ok = TEST_FAIL;

	errno = 0;
	CHECK(!pprof__new(NULL) && errno == EINVAL);
	CHECK(!pprof__new(&none) && errno == EINVAL);
	pprof__free(NULL);
	CHECK(fixture_build(&f) == 0);
	errno = 0;
	if (pprof__add_location(f.p, 99, 0x1000, NULL, 0) || errno != EINVAL)
		goto out;
	if (pprof__add_sample(f.p, bad_loc, 1, v, NULL, 0) != -EINVAL ||
	    pprof__add_sample(f.p, &f.l_main, 1, v, &no_key, 1) != -EINVAL ||
	    pprof__add_sample(f.p, &f.l_main, 1, NULL, NULL, 0) != -EINVAL)
		goto out;
	if (pprof__write_folded(f.p, stdout, 2) != -EINVAL ||
	    pprof__write_top(f.p, stdout, -1, 5) != -EINVAL)
		goto out;
	/* failed calls leave nothing behind */
	if (pprof__sample_count(f.p) != 6)
		goto out;
	ok = TEST_OK;
out:
	pprof__free(f.p);
	return ok;
}

/* ---- pprof__write, read back ---- */

static int read_varint(const unsigned char **p, const unsigned char *end, __u64 *v)
{
	*v = 0;
	for (int shift = 0; *p < end && shift < 64; shift += 7) {
		unsigned char b = *(*p)++;

		*v |= (__u64)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

/* Our own minimal decode: gzip magic, then the top-level fields of Profile. */
static int test_gzip_and_string_table(void)
{
	unsigned char magic[2], *raw = NULL;
	const unsigned char *p, *end;
	struct fixture f;
	char path[64];
	size_t n_strings = 0, first_len = SIZE_MAX;
	int ok = TEST_FAIL, len = 0, got;
	gzFile gz;
	FILE *in;

	CHECK(fixture_build(&f) == 0);
	if (write_tmp(f.p, path, sizeof(path)))
		goto out_free;
	in = fopen(path, "r");
	if (!in || fread(magic, 1, 2, in) != 2 || magic[0] != 0x1f || magic[1] != 0x8b) {
		if (in)
			fclose(in);
		goto out;
	}
	fclose(in);

	gz = gzopen(path, "rb");
	raw = malloc(1 << 20);
	if (!gz || !raw) {
		if (gz)
			gzclose(gz);
		goto out;
	}
	while ((got = gzread(gz, raw + len, (1 << 20) - len)) > 0)
		len += got;
	gzclose(gz);

	for (p = raw, end = raw + len; p < end;) {
		__u64 tag, v;

		if (read_varint(&p, end, &tag) || read_varint(&p, end, &v))
			goto out;
		if ((tag & 7) == 2) {	/* length-delimited: v is the length */
			if (v > (__u64)(end - p))
				goto out;
			if (tag >> 3 == 6 && n_strings++ == 0)
				first_len = v;
			p += v;
		} else if ((tag & 7) != 0) {	/* we only write varints and lengths */
			goto out;
		}
	}
	if (p != end || first_len != 0 || n_strings != f.p->n_strings)
		goto out;
	ok = TEST_OK;
out:
	free(raw);
	unlink(path);
out_free:
	pprof__free(f.p);
	return ok;
}

/*
 * What `go tool pprof -raw` printed, normalized: location ids (which pprof
 * renumbers) replaced by addresses, labels on the sample's line.
 */
#define RAW_MAX 32

struct raw {
	char header[256];
	char samples[RAW_MAX][256];
	int n_samples;
	__u64 loc_addr[RAW_MAX + 1];	/* by pprof's location id */
	char loc_funcs[RAW_MAX + 1][128];
	char mappings[RAW_MAX][256];
	int n_mappings;
	char types[128];
};

static void trim(char *s)
{
	size_t n = strlen(s);

	while (n && s[n - 1] == ' ')
		s[--n] = '\0';
}

/* Appends the first word of s (a function name) to the location's list. */
static void add_func(struct raw *r, unsigned id, const char *s)
{
	size_t n = strcspn(s, " ");
	char *dst = r->loc_funcs[id];

	if (!n || id > RAW_MAX)
		return;
	snprintf(dst + strlen(dst), sizeof(r->loc_funcs[0]) - strlen(dst), "%s%.*s",
		 *dst ? " " : "", (int)n, s);
}

static int parse_raw(char *out, struct raw *r)
{
	enum { NONE, TYPES, SAMPLES, LOCATIONS, MAPPINGS } sect = NONE;
	char *save, *line, ids[192] = "", *cur = NULL;	/* fits in a samples[] row */
	unsigned last_loc = 0;

	memset(r, 0, sizeof(*r));
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a, b, addr;
		unsigned id;
		int off = 0;

		if (!strncmp(line, "PeriodType:", 11) || !strncmp(line, "Period:", 7) ||
		    !strncmp(line, "Time:", 5) || !strncmp(line, "Duration:", 9)) {
			snprintf(r->header + strlen(r->header), sizeof(r->header) - strlen(r->header),
				 "%s|", line);
		} else if (!strcmp(line, "Samples:")) {
			sect = TYPES;
		} else if (!strcmp(line, "Locations")) {
			sect = LOCATIONS;
		} else if (!strcmp(line, "Mappings")) {
			sect = MAPPINGS;
		} else if (sect == TYPES) {
			snprintf(r->types, sizeof(r->types), "%s", line);
			trim(r->types);
			sect = SAMPLES;
		} else if (sect == SAMPLES && sscanf(line, "%llu %llu: %n", &a, &b, &off) == 2 && off) {
			if (r->n_samples == RAW_MAX)
				return -1;
			cur = r->samples[r->n_samples++];
			snprintf(ids, sizeof(ids), "%s", line + off);
			trim(ids);
			/* ids become addresses once Locations has been read */
			snprintf(cur, sizeof(r->samples[0]), "%llu %llu:%s|", a, b, ids);
		} else if (sect == SAMPLES && cur) {
			while (*line == ' ')
				line++;
			snprintf(cur + strlen(cur), sizeof(r->samples[0]) - strlen(cur), " %s", line);
		} else if (sect == LOCATIONS && sscanf(line, " %u: 0x%llx %n", &id, &addr, &off) == 2) {
			if (id > RAW_MAX)
				return -1;
			r->loc_addr[id] = addr;
			last_loc = id;
			line += off;
			if (!strncmp(line, "M=", 2))
				line += strcspn(line, " ") + (line[strcspn(line, " ")] == ' ');
			add_func(r, id, line);
		} else if (sect == LOCATIONS && last_loc) {
			while (*line == ' ')
				line++;
			add_func(r, last_loc, line);
		} else if (sect == MAPPINGS && r->n_mappings < RAW_MAX) {
			char *m = r->mappings[r->n_mappings++];

			snprintf(m, sizeof(r->mappings[0]), "%s", line + strcspn(line, " ") + 1);
			trim(m);
		}
	}
	return 0;
}

/* "3 4 1" (pprof ids) -> "0x402000 0x401000 ..." */
static void ids_to_addrs(const struct raw *r, char *sample)
{
	char out[256] = "", *colon = strchr(sample, ':'), *bar = strchr(sample, '|');
	char *save, *tok;

	char labels[256];

	if (!colon || !bar)
		return;
	*bar = '\0';
	snprintf(labels, sizeof(labels), "%s", bar + 1);
	for (tok = strtok_r(colon + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		unsigned id = strtoul(tok, NULL, 10);

		snprintf(out + strlen(out), sizeof(out) - strlen(out), " 0x%llx",
			 id <= RAW_MAX ? (unsigned long long)r->loc_addr[id] : 0ULL);
	}
	snprintf(colon + 1, 256 - (colon + 1 - sample), "%s |%s", out, labels);
}

static bool has_sample(const struct raw *r, const char *want)
{
	for (int i = 0; i < r->n_samples; i++)
		if (!strcmp(r->samples[i], want))
			return true;
	fprintf(stderr, "  missing sample: %s\n", want);
	return false;
}

static const char *funcs_at(const struct raw *r, __u64 addr)
{
	for (int i = 1; i <= RAW_MAX; i++)
		if (r->loc_addr[i] == addr)
			return r->loc_funcs[i];
	return "(no such location)";
}

static bool has_mapping(const struct raw *r, const char *want)
{
	for (int i = 0; i < r->n_mappings; i++)
		if (!strncmp(r->mappings[i], want, strlen(want)))
			return true;
	fprintf(stderr, "  missing mapping: %s\n", want);
	return false;
}

static int test_go_pprof_raw(void)
{
	static struct raw r;
	struct fixture f;
	char path[64], cmd[160], *out = NULL, *copy = NULL;
	int ok = TEST_FAIL;

	if (!have_go())
		SKIP("go not found: `go tool pprof` is the independent decoder");
	CHECK(fixture_build(&f) == 0);
	if (write_tmp(f.p, path, sizeof(path)))
		goto out_free;
	/* TZ: the Time line is in local time */
	snprintf(cmd, sizeof(cmd), "TZ=UTC go tool pprof -raw -symbolize=none %s 2>&1", path);
	out = run(cmd);
	/* parse a copy: strtok_r cuts it up, and out is shown when the test fails */
	copy = out ? strdup(out) : NULL;
	if (!copy || parse_raw(copy, &r))
		goto out;
	for (int i = 0; i < r.n_samples; i++)
		ids_to_addrs(&r, r.samples[i]);

	if (strcmp(r.header, "PeriodType: cpu nanoseconds|Period: 10101010|"
			     "Time: 2023-11-14 22:13:20 +0000 UTC|Duration: 2s|") ||
	    strcmp(r.types, "samples/count[dflt] cpu/nanoseconds"))
		goto out;
	/* one stack with the same labels merged (3 + 3); pid 43 stays its own sample */
	if (r.n_samples != 6 ||
	    !has_sample(&r, "6 60606060: 0x402000 0x401000 | comm:[app] pid:[42 pid]") ||
	    !has_sample(&r, "2 20202020: 0xffffffff81001234 0x403000 0x402000 0x401000 | "
			    "comm:[app] pid:[42 pid]") ||
	    !has_sample(&r, "1 10101010: 0x402000 0x401000 | comm:[app] pid:[43 pid]") ||
	    !has_sample(&r, "4 40404040: 0x404000 0x404000 0x401000 | comm:[sh] pid:[44 pid]") ||
	    !has_sample(&r, "1 10101010: 0x7f00dead |") ||
	    !has_sample(&r, "0 5: 0x401000 | comm:[app] pid:[42 pid]"))
		goto out;
	/* inline lines callee first; an unsymbolized location has none */
	if (strcmp(funcs_at(&r, 0x402000), "inlined_helper worker") ||
	    strcmp(funcs_at(&r, 0x401000), "main") ||
	    strcmp(funcs_at(&r, KERN_BASE + 0x1234), "do_syscall_64") ||
	    strcmp(funcs_at(&r, 0x404000), "recurse") || strcmp(funcs_at(&r, 0x403000), ""))
		goto out;
	if (!has_mapping(&r, "0x400000/0x500000/0x1000 /usr/bin/app abcdef0123 [FN][FL][IN]") ||
	    !has_mapping(&r, "0xffffffff81000000/0xffffffff82000000/0x0 [kernel.kallsyms]"))
		goto out;
	ok = TEST_OK;
out:
	if (ok != TEST_OK && out) {
		fprintf(stderr, "  go tool pprof -raw said:\n%s\n  read as: %s / %s\n", out,
			r.header, r.types);
		for (int i = 0; i < r.n_samples; i++)
			fprintf(stderr, "  sample: %s\n", r.samples[i]);
	}
	free(copy);
	free(out);
	unlink(path);
out_free:
	pprof__free(f.p);
	return ok;
}

static int test_go_pprof_top(void)
{
	struct fixture f;
	char path[64], cmd[160], *out = NULL;
	int ok = TEST_FAIL;

	if (!have_go())
		SKIP("go not found: `go tool pprof` is the independent decoder");
	CHECK(fixture_build(&f) == 0);
	if (write_tmp(f.p, path, sizeof(path)))
		goto out_free;
	snprintf(cmd, sizeof(cmd), "go tool pprof -top -symbolize=none %s 2>&1", path);
	out = run(cmd);
	/* default_sample_type "samples" makes it pprof's choice: 14 samples in all */
	if (!out || !strstr(out, "File: app\n") || !strstr(out, "Build ID: abcdef0123\n") ||
	    !strstr(out, "Type: samples\n") || !strstr(out, "Duration: 2s, Total samples = 14") ||
	    !strstr(out, "         7 50.00% 50.00%          9 64.29%  inlined_helper (inline)\n") ||
	    !strstr(out, "         4 28.57% 78.57%          4 28.57%  recurse\n") ||
	    !strstr(out, "         2 14.29% 92.86%          2 14.29%  do_syscall_64\n") ||
	    !strstr(out, "         0     0%   100%         13 92.86%  main\n"))
		goto out;
	ok = TEST_OK;
out:
	if (ok != TEST_OK && out)
		fprintf(stderr, "  go tool pprof -top said:\n%s\n", out);
	free(out);
	unlink(path);
out_free:
	pprof__free(f.p);
	return ok;
}

static int test_write_error(void)
{
	struct fixture f;
	FILE *full = fopen("/dev/full", "w");
	int ok = TEST_FAIL;

	if (!full)
		SKIP("no /dev/full to provoke a write error");
	CHECK(fixture_build(&f) == 0);
	if (pprof__write(f.p, full) != -ENOSPC)
		goto out;
	clearerr(full);
	if (pprof__write_folded(f.p, full, 0) != -ENOSPC)
		goto out;
	clearerr(full);
	if (pprof__write_top(f.p, full, 0, 10) != -ENOSPC)
		goto out;
	ok = TEST_OK;
out:
	fclose(full);
	pprof__free(f.p);
	return ok;
}

/* ---- text writers ---- */

static int test_folded(void)
{
	static const char want0[] =
		"[unknown] 1\n"
		"app;main;worker;inlined_helper 7\n"
		"app;main;worker;inlined_helper;[app+0x4000];do_syscall_64_[k] 2\n"
		"sh;main;recurse;recurse 4\n";
	static const char want1[] =
		"[unknown] 10101010\n"
		"app;main 5\n"
		"app;main;worker;inlined_helper 70707070\n"
		"app;main;worker;inlined_helper;[app+0x4000];do_syscall_64_[k] 20202020\n"
		"sh;main;recurse;recurse 40404040\n";
	struct fixture f;
	char *out0, *out1;
	int err0, err1, ok;

	CHECK(fixture_build(&f) == 0);
	out0 = render(f.p, 1, 0, 0, &err0);
	out1 = render(f.p, 1, 1, 0, &err1);
	ok = !err0 && !err1 && out0 && out1 && !strcmp(out0, want0) && !strcmp(out1, want1);
	if (!ok)
		fprintf(stderr, "  got:\n%s--\n%s--\n", out0 ? out0 : "", out1 ? out1 : "");
	free(out0);
	free(out1);
	pprof__free(f.p);
	return ok ? TEST_OK : TEST_FAIL;
}

/* ';' would split a frame and '\n' a line: they become ':' and ' '. */
static int test_folded_odd_names(void)
{
	struct pprof_opts opts = { .sample_types = { { "samples", "count" } }, .n_sample_types = 1 };
	struct pprof_mapping_desc lib = { .start = 0x7f0000000000ULL, .limit = 0x7f0000100000ULL,
					  .file_offset = 0x2000, .filename = "/lib/libx.so" };
	struct pprof_line odd = { "ns;fn\nx", NULL, 0 };
	struct pprof_line unnamed = { "", NULL, 0 };
	struct pprof_label comm = { .key = "comm", .str = "a;b" };
	__s64 one = 1;
	struct pprof *p = pprof__new(&opts);
	__u32 locs[2];
	char *out = NULL;
	int err = -1, ok;

	CHECK(p);
	locs[0] = pprof__add_location(p, 0, 0x1000, &odd, 1);
	locs[1] = pprof__add_location(p, pprof__add_mapping(p, &lib), 0x7f0000000100ULL, &unnamed, 1);
	/* and a sample with no frames and no comm still gets a frame before its count */
	if (locs[0] && locs[1] && !pprof__add_sample(p, locs, 2, &one, &comm, 1) &&
	    !pprof__add_sample(p, NULL, 0, &one, NULL, 0))
		out = render(p, 1, 0, 0, &err);
	ok = !err && out && !strcmp(out, "[unknown] 1\na:b;[libx.so+0x2100];ns:fn x 1\n");
	if (!ok)
		fprintf(stderr, "  got: %s\n", out ? out : "(null)");
	free(out);
	pprof__free(p);
	return ok ? TEST_OK : TEST_FAIL;
}

static int test_top(void)
{
	static const char want[] =
		"Showing top 5 of 7 functions, total 141414145 cpu/nanoseconds\n"
		"      flat   flat%    sum%        cum    cum%\n"
		"  70707070  50.00%  50.00%   90909090  64.29%  inlined_helper\n"
		"  40404040  28.57%  78.57%   40404040  28.57%  recurse\n"
		"  20202020  14.29%  92.86%   20202020  14.29%  do_syscall_64 [k]\n"
		"  10101010   7.14% 100.00%   10101010   7.14%  [unknown]\n"
		"         5   0.00% 100.00%  131313135  92.86%  main\n";
	static const char want_all_tail[] =
		"         0   0.00% 100.00%   20202020  14.29%  [app+0x4000]\n"
		"         0   0.00% 100.00%   90909090  64.29%  worker\n";
	struct fixture f;
	char *out, *all;
	int err, err_all, ok;

	CHECK(fixture_build(&f) == 0);
	out = render(f.p, 0, 1, 5, &err);
	all = render(f.p, 0, 1, 0, &err_all);
	/* recurse is in its sample twice but its cum counts the sample once */
	ok = !err && !err_all && out && all && !strcmp(out, want) &&
	     strlen(all) > strlen(want_all_tail) &&
	     !strcmp(all + strlen(all) - strlen(want_all_tail), want_all_tail);
	if (!ok)
		fprintf(stderr, "  got:\n%s--\n%s--\n", out ? out : "", all ? all : "");
	free(out);
	free(all);
	pprof__free(f.p);
	return ok ? TEST_OK : TEST_FAIL;
}

/* ---- scale ---- */

/* bytes in use: small chunks plus the big ones malloc mmaps */
/* ---- reduce: what a push backend accepts ---- */

static __s64 total0(const struct pprof *p)
{
	__s64 t = 0;

	for (size_t i = 0; i < p->n_samples; i++)
		t += pprof_sample_values(p, i)[0];
	return t;
}

static int test_reduce(void)
{
	static const char *const drop_pid[] = { "pid", NULL };
	struct pprof_limits merge = { .drop_labels = drop_pid };
	struct pprof_limits fold = { .max_samples = 3 };
	struct pprof_reduce_stats st;
	struct pprof *m = NULL, *r = NULL;
	char path[64] = "", cmd[128], *out = NULL;
	struct fixture f;
	int ok = TEST_FAIL;

	CHECK(fixture_build(&f) == 0);
	/* without pid, the two s1 samples (pid 42 and 43) are one; totals stay */
	m = pprof__reduce(f.p, &merge, &st);
	if (!m || pprof__sample_count(m) != 5 || total0(m) != total0(f.p) || total0(m) != 14)
		goto out;
	/* 3 samples at most: the two hottest (4 and 6 after merging) and [other] with the rest */
	r = pprof__reduce(m, &fold, &st);
	if (!r || pprof__sample_count(r) != 3 || st.folded_samples != 3 || total0(r) != 14)
		goto out;
	if (!have_go()) {
		ok = TEST_OK;
		goto out;
	}
	if (write_tmp(r, path, sizeof(path)))
		goto out;
	snprintf(cmd, sizeof(cmd), "go tool pprof -raw %s 2>&1", path);
	out = run(cmd);
	/* the independent reader sees the fold: [other] holds 1+2+1 samples */
	if (out && strstr(out, "[other]") && strstr(out, "recurse") && !strstr(out, "do_syscall"))
		ok = TEST_OK;
	else
		fprintf(stderr, "  go tool pprof -raw said:\n%s\n", out ? out : "(nothing)");
out:
	if (path[0])
		unlink(path);
	free(out);
	pprof__free(r);
	pprof__free(m);
	pprof__free(f.p);
	return ok;
}

static int test_reduce_cut_utf8(void)
{
	struct pprof_opts opts = {
		.sample_types = { { "samples", "count" } }, .n_sample_types = 1,
		.period_type = { "cpu", "nanoseconds" },
	};
	struct pprof_limits lim = { .max_label_value = 4, .max_label_names = 1 };
	/* "ab" then a 3-byte character: a cut at 4 bytes would split it */
	struct pprof_label labels[] = { { .key = "comm", .str = "ab\xe2\x82\xacz" },
					{ .key = "exe", .str = "/bin/x" } };
	struct pprof_line line = { "f", NULL, 0 };
	struct pprof_reduce_stats st;
	struct pprof *p = pprof__new(&opts), *r = NULL;
	__s64 one = 1;
	__u32 loc;
	size_t n;
	int ok = TEST_FAIL;
	const struct pp_label *l;

	CHECK(p);
	loc = pprof__add_location(p, 0, 0x1000, &line, 1);
	if (!loc || pprof__add_sample(p, &loc, 1, &one, labels, 2))
		goto out;
	r = pprof__reduce(p, &lim, &st);
	if (!r || st.cut_values != 1 || st.dropped_labels != 1)
		goto out;
	l = pprof_labelset(r, r->samples[0].labelset, &n);
	if (n == 1 && !strcmp(pprof_str(r, l[0].str), "ab"))
		ok = TEST_OK;
out:
	pprof__free(r);
	pprof__free(p);
	return ok;
}

static size_t heap(const struct mallinfo2 *mi)
{
	return mi->uordblks + mi->hblkhd;
}

/* resident bytes: what the RSS budget is about (untouched capacity is not) */
static size_t rss(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * sysconf(_SC_PAGESIZE);
}

/*
 * Roughly a whole-machine profile: 200k locations (16k functions), 100k
 * samples 16 frames deep from 500 processes. Prints what the model costs.
 */
static int test_memory_footprint(void)
{
	struct pprof_opts opts = {
		.sample_types = { { "samples", "count" }, { "cpu", "nanoseconds" } },
		.n_sample_types = 2,
	};
	struct pprof_mapping_desc m = { .start = 0x400000, .limit = ~0ULL, .filename = "/bin/x" };
	struct mallinfo2 before = mallinfo2(), mid, after;
	size_t rss_before = rss(), rss_mid = 0, rss_after;
	struct pprof *p = pprof__new(&opts);
	enum { N_LOCS = 200000, N_SAMPLES = 100000, DEPTH = 16 };
	__u32 mapping, locs[DEPTH];
	__s64 values[2] = { 1, 10000000 };
	char name[32], comm[16];
	size_t used;
	int ok = TEST_FAIL;

	CHECK(p);
	mapping = pprof__add_mapping(p, &m);
	for (__u32 i = 0; i < N_LOCS; i++) {
		struct pprof_line line = { name, "/src/x.c", i % 1000 };

		snprintf(name, sizeof(name), "function_%u", i % 16000);
		if (pprof__add_location(p, mapping, 0x400000 + 16ULL * i, &line, 1) != i + 1)
			goto out;
	}
	mid = mallinfo2();
	rss_mid = rss();
	for (__u32 s = 0; s < N_SAMPLES; s++) {
		struct pprof_label labels[] = {
			{ .key = "pid", .num = 1000 + s % 500, .num_unit = "pid" },
			{ .key = "comm", .str = comm },
		};

		snprintf(comm, sizeof(comm), "proc%u", s % 500);
		for (int d = 0; d < DEPTH; d++)
			locs[d] = 1 + (s * 7 + d * 12553ULL) % N_LOCS;
		if (pprof__add_sample(p, locs, DEPTH, values, labels, 2))
			goto out;
	}
	after = mallinfo2();
	rss_after = rss();
	fprintf(stderr, "  rss: +%.1f MB (locations +%.1f, samples +%.1f)\n",
		(rss_after - rss_before) / 1e6, (rss_mid - rss_before) / 1e6,
		(rss_after - rss_mid) / 1e6);
	used = heap(&after) - heap(&before);
	fprintf(stderr, "  %d locations + %d samples x %d frames: %.1f MB in the model; "
		"%.0f bytes a location (with its line, function and string share, index), "
		"%.0f a sample (with %d frame ids, values, index)\n",
		N_LOCS, N_SAMPLES, DEPTH, used / 1e6,
		(double)(heap(&mid) - heap(&before)) / N_LOCS,
		(double)(heap(&after) - heap(&mid)) / N_SAMPLES, DEPTH);
	/* a guard against layout regressions, not the RSS budget of the whole profiler */
	if (pprof__sample_count(p) != N_SAMPLES ||
	    heap(&mid) - heap(&before) > 100 * N_LOCS ||
	    heap(&after) - heap(&mid) > (100 + 4 * DEPTH) * N_SAMPLES)
		goto out;
	ok = TEST_OK;
out:
	pprof__free(p);
	return ok;
}

TEST_MAIN("pprof",
	  TEST(test_dedup),
	  TEST(test_invalid_args),
	  TEST(test_gzip_and_string_table),
	  TEST(test_go_pprof_raw),
	  TEST(test_go_pprof_top),
	  TEST(test_write_error),
	  TEST(test_folded),
	  TEST(test_folded_odd_names),
	  TEST(test_top),
	  TEST(test_reduce),
	  TEST(test_reduce_cut_utf8),
	  TEST(test_memory_footprint))
