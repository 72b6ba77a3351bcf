/* test_pprof_read.c -- the pprof reader (our files read back, hand-made foreign ones, refusals) and the html and top writers */
#include <errno.h>
#include <string.h>
#include <zlib.h>
#include "test.h"
#include "profile/pprof.h"
#include "profile/pprof_int.h"

/* a text writer's output as a string (malloc'd) */
#define CAPTURE(call, out)                                     \
	do {                                                   \
		size_t len_;                                   \
		FILE *f_ = open_memstream(&(out), &len_);      \
		CHECK(f_);                                     \
		CHECK((call) == 0);                            \
		fclose(f_);                                    \
	} while (0)
#define F f_

/* kernel and user frames, an inline pair, an unnamed frame, labels, two sample types */
static struct pprof *sample_profile(void)
{
	struct pprof_opts po = { .n_sample_types = 2,
				 .sample_types = { { "samples", "count" }, { "cpu", "nanoseconds" } },
				 .period_type = { "cpu", "nanoseconds" }, .period = 10101010 };
	struct pprof_mapping_desc app = { .start = 0x400000, .limit = 0x500000, .filename = "/usr/bin/app",
					  .build_id = "abcd", .has_functions = true };
	struct pprof_mapping_desc kern = { .start = 0xffffffff81000000, .limit = 0xffffffff82000000,
					   .filename = "[kernel.kallsyms]", .is_kernel = true };
	struct pprof_line inl[2] = { { "inlined_leaf", "app.c", 7 }, { "worker", "app.c", 30 } };
	struct pprof_line main_l = { "main", "app.c", 12 }, sys = { "do_syscall_64", NULL, 0 };
	struct pprof_label lab[2] = { { .key = "pid", .str = "42" }, { .key = "comm", .str = "app" } };
	struct pprof *p = pprof__new(&po);
	__u32 m1, m2, l_main, l_inl, l_sys, l_anon, s1[2], s2[3], s3[2];
	__s64 v1[2] = { 3, 30303030 }, v2[2] = { 1, 10101010 }, v3[2] = { 2, 20202020 };

	if (!p)
		return NULL;
	m1 = pprof__add_mapping(p, &app);
	m2 = pprof__add_mapping(p, &kern);
	l_main = pprof__add_location(p, m1, 0x401000, &main_l, 1);
	l_inl = pprof__add_location(p, m1, 0x402000, inl, 2);
	l_sys = pprof__add_location(p, m2, 0xffffffff81001000, &sys, 1);
	l_anon = pprof__add_location(p, m1, 0x403000, NULL, 0);
	s1[0] = l_inl, s1[1] = l_main;
	s2[0] = l_sys, s2[1] = l_inl, s2[2] = l_main;
	s3[0] = l_anon, s3[1] = l_main;
	if (pprof__add_sample(p, s1, 2, v1, lab, 2) || pprof__add_sample(p, s2, 3, v2, lab, 2) ||
	    pprof__add_sample(p, s3, 2, v3, NULL, 0)) {
		pprof__free(p);
		return NULL;
	}
	return p;
}

static int encode(const struct pprof *p, char **data, size_t *len)
{
	FILE *f = open_memstream(data, len);

	if (!f)
		return -errno;
	if (pprof__write(p, f)) {
		fclose(f);
		return -EIO;
	}
	return fclose(f) ? -errno : 0;
}

/* what we write reads back to the same stacks, values, kernel frames and top */
static int test_round_trip(void)
{
	struct pprof *p = sample_profile(), *q;
	char *enc = NULL, *fa = NULL, *fb = NULL, *ta = NULL, *tb = NULL, why[160];
	size_t len;
	int ok;

	CHECK(p && encode(p, &enc, &len) == 0);
	q = pprof__read(enc, len, 1 << 20, why, sizeof(why));
	if (!q)
		fprintf(stderr, "  %s\n", why);
	CHECK(q);
	CAPTURE(pprof__write_folded(p, F, 1), fa);
	CAPTURE(pprof__write_folded(q, F, 1), fb);
	CAPTURE(pprof__write_top(p, F, 0, 0), ta);
	CAPTURE(pprof__write_top(q, F, 0, 0), tb);
	ok = !strcmp(fa, fb) && !strcmp(ta, tb) && q->n_types == 2 && q->period == 10101010 &&
	     pprof__find_type(q, "cpu") == 1 && strstr(fb, "do_syscall_64_[k]") &&
	     strstr(fb, "app;main;worker;inlined_leaf 30303030") && strstr(fb, "[app+0x3000]");
	if (!ok)
		fprintf(stderr, "  wrote:\n%s  read:\n%s%s%s", fa, fb, ta, tb);
	free(enc), free(fa), free(fb), free(ta), free(tb);
	pprof__free(p);
	pprof__free(q);
	return ok ? TEST_OK : TEST_FAIL;
}

/* hand-written protobuf: just enough to make the shapes other writers produce */
struct pb {
	unsigned char b[4096];
	size_t n;
};

static void pb_varint(struct pb *p, __u64 v)
{
	do {
		p->b[p->n++] = (v & 0x7f) | (v >= 0x80 ? 0x80 : 0);
		v >>= 7;
	} while (v);
}

static void pb_vi(struct pb *p, __u32 field, __u64 v)
{
	pb_varint(p, field << 3);
	pb_varint(p, v);
}

static void pb_ld(struct pb *p, __u32 field, const void *data, size_t len)
{
	pb_varint(p, field << 3 | 2);
	pb_varint(p, len);
	memcpy(p->b + p->n, data, len);
	p->n += len;
}

static void pb_str(struct pb *p, const char *s)
{
	pb_ld(p, 6, s, strlen(s));
}

/*
 * A Go-like profile: no mappings, every location at address 0 with its own
 * function, ids not in order, unpacked repeated fields. The locations must
 * stay apart though they share (mapping 0, address 0).
 */
static int build_foreign(struct pb *out, int bad)
{
	static const char *const strs[] = { "", "samples", "count", "alpha", "beta", "a.go" };
	struct pb st = {}, fn = {}, loc = {}, sm = {};

	out->n = 0;
	pb_vi(&st, 1, 1), pb_vi(&st, 2, 2);
	pb_ld(out, 1, st.b, st.n);
	for (int i = 0; i < 2; i++) {
		struct pb ln = {};

		fn.n = loc.n = 0;
		pb_vi(&fn, 1, 7 + i), pb_vi(&fn, 2, 3 + i), pb_vi(&fn, 4, 5);
		pb_ld(out, 5, fn.b, fn.n);
		pb_vi(&ln, 1, 7 + i), pb_vi(&ln, 2, 10 + i);
		pb_vi(&loc, 1, 20 - i);
		pb_ld(&loc, 4, ln.b, ln.n);
		pb_ld(out, 4, loc.b, loc.n);
	}
	pb_vi(&sm, 1, 20), pb_vi(&sm, 1, 19), pb_vi(&sm, 2, 5);
	if (bad == 1)
		pb_vi(&sm, 2, 6);	/* two values for one sample type */
	if (bad == 2)
		pb_vi(&sm, 1, 99);	/* no such location */
	pb_ld(out, 2, sm.b, sm.n);
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		pb_str(out, strs[i]);
	if (bad == 3)
		pb_vi(out, 14, 77);	/* default_sample_type out of the string table */
	return 0;
}

static int test_foreign(void)
{
	struct pb b;
	char why[160], *folded = NULL;
	struct pprof *p;
	int ok;

	build_foreign(&b, 0);
	p = pprof__read(b.b, b.n, 1 << 20, why, sizeof(why));
	if (!p)
		fprintf(stderr, "  %s\n", why);
	CHECK(p);
	CAPTURE(pprof__write_folded(p, F, 0), folded);
	ok = !strcmp(folded, "beta;alpha 5\n");
	if (!ok)
		fprintf(stderr, "  got %s", folded);
	free(folded);
	pprof__free(p);
	return ok ? TEST_OK : TEST_FAIL;
}

/* each refusal: NULL, EBADMSG or EFBIG, one line saying why */
static int refused(const void *data, size_t len, size_t max, const char *want)
{
	char why[160];
	struct pprof *p = pprof__read(data, len, max, why, sizeof(why));

	if (p || !strstr(why, want) || strchr(why, '\n')) {
		fprintf(stderr, "  want a refusal with '%s', got %s ('%s')\n", want, p ? "a profile" : "NULL",
			why);
		pprof__free(p);
		return 0;
	}
	return 1;
}

static int test_refusals(void)
{
	struct pprof *p = sample_profile();
	unsigned char *gz;
	uLongf gz_len;
	char *enc = NULL, zeros[65536] = {};
	size_t len;
	struct pb b;
	int ok = 1;

	CHECK(p && encode(p, &enc, &len) == 0);
	ok &= refused(enc, len / 2, 1 << 20, "corrupt gzip");
	build_foreign(&b, 1);
	ok &= refused(b.b, b.n, 1 << 20, "values for 1 sample types");
	build_foreign(&b, 2);
	ok &= refused(b.b, b.n, 1 << 20, "no location 99");
	build_foreign(&b, 3);
	ok &= refused(b.b, b.n, 1 << 20, "out of range");
	ok &= refused("\x0a\x05" "ab", 4, 1 << 20, "not a profile.proto");
	ok &= refused("", 0, 1 << 20, "no sample types");
	/* a small zlib bomb: 64 KB of zeros against a 1 KB cap */
	gz_len = compressBound(sizeof(zeros));
	gz = malloc(gz_len);
	CHECK(gz && compress(gz, &gz_len, (const Bytef *)zeros, sizeof(zeros)) == Z_OK);
	ok &= refused(gz, gz_len, 1024, "larger than 1024 bytes");
	free(gz);
	free(enc);
	pprof__free(p);
	return ok ? TEST_OK : TEST_FAIL;
}

/* the page: the template around one JSON object, no name can close the script element */
static int test_html(void)
{
	struct pprof_opts po = { .n_sample_types = 1, .sample_types = { { "samples", "count" } } };
	struct pprof *p = pprof__new(&po), *q = sample_profile();
	struct pprof_line evil = { "</script><b>x\"\\", "a.py", 3 };
	struct pprof_html_opts diff = { .base = q, .value_index = 0 };
	__u32 loc;
	__s64 v = 4;
	char *out = NULL, *d = NULL, *s;
	int scripts = 0, ok;

	CHECK(p && q);
	loc = pprof__add_location(p, 0, 0x10, &evil, 1);
	CHECK(loc && pprof__add_sample(p, &loc, 1, &v, NULL, 0) == 0);
	CAPTURE(pprof__write_html(p, F, NULL), out);
	CAPTURE(pprof__write_html(q, F, &diff), d);
	for (s = out; (s = strstr(s, "</script")); s++)
		scripts++;
	/* the frame is (name, file, line, mapping, kind): kind 3 is JIT/interpreted for a .py file */
	ok = scripts == 2 && strstr(out, "\"<\\/script><b>x\\\"\\\\\"") && strstr(out, "\"diff\":false") &&
	     strstr(d, "\"diff\":true") && strstr(d, "\"nv\":2") && strstr(out, "<!DOCTYPE html>");
	if (!ok)
		fprintf(stderr, "  %d </script, page:\n%.400s\n", scripts, strstr(out, "{\"v\"") ?: out);
	free(out);
	free(d);
	pprof__free(p);
	pprof__free(q);
	return ok ? TEST_OK : TEST_FAIL;
}

/* --format top on a terminal of 80 columns: self, total, a bar, names cut to fit */
static int test_top_wide(void)
{
	struct pprof *p = sample_profile();
	struct pprof_top_opts tty = { .width = 80, .unicode = true, .fit_names = true };
	struct pprof_top_opts plain = { .width = 100 };
	char *a = NULL, *b = NULL, *diff = NULL;
	int ok;

	CHECK(p);
	CAPTURE(pprof__write_top_opts(p, F, 0, 3, &tty), a);
	CAPTURE(pprof__write_top_opts(p, F, 0, 3, &plain), b);
	CAPTURE(pprof__write_top_diff(p, 0, p, 0, F, 2), diff);
	/* 6 samples: inlined_leaf 4 of them (self 3), [app+0x3000] 2, do_syscall_64 1 */
	ok = strstr(a, "      self  self%      total total%  self share") &&
	     strstr(a, "         3  50.0%          4  66.7%  |\u2588\u2588\u2588\u2588\u2588     | inlined_leaf\n") &&
	     strstr(b, "|##########          | inlined_leaf\n") &&
	     strstr(b, "|###                 | do_syscall_64 [k]\n") &&
	     strstr(diff, "  +0.00  ") && !strstr(diff, "-0.0");
	if (!ok)
		fprintf(stderr, "  got:\n%s%s%s", a, b, diff);
	free(a);
	free(b);
	free(diff);
	pprof__free(p);
	return ok ? TEST_OK : TEST_FAIL;
}

TEST_MAIN("pprof_read",
	  TEST(test_round_trip),
	  TEST(test_foreign),
	  TEST(test_refusals),
	  TEST(test_html),
	  TEST(test_top_wide))
