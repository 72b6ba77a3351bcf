/* test_pprof_builder.c -- mapping identity across symbolizer id reuse, and lines of inlined frames */
#include <string.h>
#include "profile/pprof_builder.h"
#include "profile/pprof_int.h"
#include "profile/report.h"
#include "test.h"

static struct pprof_builder *new_builder(void)
{
	struct report_opts ro = { .frequency = 99 };
	struct pprof_opts po;

	report__pprof_opts(&po, &ro);
	return pprof_builder__new(&po, DEMANGLE_SHORT);
}

static int add_one(struct pprof_builder *b, const struct sym_mapping *m, __u64 addr)
{
	static struct stack st;
	__s64 values[2] = { 1, 10 };

	memset(&st, 0, sizeof(st));
	st.frames[0] = (struct frame){ .mapping = m, .name = "f", .addr = addr };
	st.n = 1;
	return pprof_builder__add(b, &st, values, NULL, 0);
}

/* a trim lets the symbolizer give an old id to a new mapping: its serial tells them apart */
static int test_id_reuse(void)
{
	struct sym_mapping a = { .id = 3, .serial = 10, .start = 0x1000, .limit = 0x2000,
				 .path = "/a", .build_id = "" };
	struct sym_mapping b = a, c = a;
	struct pprof_builder *pb = new_builder();
	int ret = TEST_FAIL;

	b.serial = 11;	/* same id, same range: another mapping all the same */
	b.path = "/b";
	c.path = "/c";	/* same serial: the same mapping, whatever else it says */
	CHECK(pb);
	if (add_one(pb, &a, 0x1100) || add_one(pb, &c, 0x1200))
		goto out;
	if (pprof_builder__pprof(pb)->n_mappings != 1)
		goto out;
	if (add_one(pb, &b, 0x1300) || pprof_builder__pprof(pb)->n_mappings != 2)
		goto out;
	ret = TEST_OK;
out:
	pprof_builder__free(pb);
	return ret;
}

/* an inlined frame's lines become the Location's lines, callee first, names demangled */
static int test_inline_lines(void)
{
	static struct stack st;
	struct sym_mapping m = { .id = 1, .serial = 1, .start = 0x1000, .limit = 0x2000,
				 .path = "/x", .build_id = "" };
	struct src_line lines[2] = {
		{ "_ZN2ns6helperEi", "x.cc", 12 },
		{ "caller", "x.cc", 40 },
	};
	struct pprof_builder *pb = new_builder();
	__s64 values[2] = { 1, 10 };
	const struct pp_line *pl;
	struct pprof *p;
	size_t n = 0;
	int ret = TEST_FAIL;

	CHECK(pb);
	st.frames[0] = (struct frame){ .mapping = &m, .name = "caller", .addr = 0x1234,
				       .lines = lines, .n_lines = 2 };
	st.n = 1;
	if (pprof_builder__add(pb, &st, values, NULL, 0))
		goto out;
	p = pprof_builder__pprof(pb);
	pl = pprof_location_lines(p, 1, &n);
	if (n != 2 || pl[0].line != 12 || pl[1].line != 40)
		goto out;
	/* callee first, demangled short */
	if (strcmp(pprof_str(p, p->functions[pl[0].function_id - 1].name), "ns::helper") ||
	    strcmp(pprof_str(p, p->functions[pl[1].function_id - 1].name), "caller"))
		goto out;
	ret = TEST_OK;
out:
	pprof_builder__free(pb);
	return ret;
}

TEST_MAIN("pprof_builder", TEST(test_id_reuse), TEST(test_inline_lines))
