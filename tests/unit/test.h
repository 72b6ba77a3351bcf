/* test.h -- minimal unit test harness: each case prints PASS:/FAIL:/SKIP: lines that tests/run.sh counts */
#ifndef EBPFPROF_TEST_H
#define EBPFPROF_TEST_H

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* where make put the fixture programs: build/fixtures/, build/san/fixtures/ with SANITIZE=1 */
#ifndef FIXTURES_DIR
#define FIXTURES_DIR "build/fixtures/"
#endif

enum { TEST_OK = 0, TEST_FAIL = 1, TEST_SKIP = 2 };

static const char *test__skip_reason = "";
static int test__failed;

/* Inside a test case: fail the case with the expression and location. */
#define CHECK(cond)                                                                   \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "  check failed: %s (%s:%d)\n", #cond, __FILE__,  \
				__LINE__);                                            \
			return TEST_FAIL;                                             \
		}                                                                     \
	} while (0)

#define SKIP(reason)                                                                  \
	do {                                                                          \
		test__skip_reason = (reason);                                         \
		return TEST_SKIP;                                                     \
	} while (0)

struct test_case {
	const char *name;
	int (*fn)(void);
};

/*
 * True when the case filter picks name: TEST_CASES holds patterns separated by spaces (make test
 * TESTS=pprof/id_reuse sets it to "id_reuse"); one picks the cases whose name contains it, with
 * the shell's wildcards. Unset or empty, every case runs.
 */
static inline int test__selected(const char *name)
{
	const char *cases = getenv("TEST_CASES"), *p, *end;
	char pattern[256];

	if (!cases || !cases[strspn(cases, " ")])
		return 1;
	for (p = cases; *p; p = end) {
		p += strspn(p, " ");
		end = p + strcspn(p, " ");
		if (end == p || (size_t)(end - p) + 3 > sizeof(pattern))
			continue;
		snprintf(pattern, sizeof(pattern), "*%.*s*", (int)(end - p), p);
		if (!fnmatch(pattern, name, 0))
			return 1;
	}
	return 0;
}

/* Runs every case the filter picks; the exit code is 1 when any failed. */
static inline int test__run_all(const char *suite, const struct test_case *cases, int n)
{
	for (int i = 0; i < n; i++) {
		int r;

		if (!test__selected(cases[i].name))
			continue;
		r = cases[i].fn();

		if (r == TEST_OK)
			printf("PASS: %s/%s\n", suite, cases[i].name);
		else if (r == TEST_SKIP)
			printf("SKIP: %s/%s: %s\n", suite, cases[i].name, test__skip_reason);
		else {
			printf("FAIL: %s/%s\n", suite, cases[i].name);
			test__failed = 1;
		}
		fflush(stdout);
	}
	return test__failed;
}

#define TEST_MAIN(suite, ...)                                                         \
	int main(void)                                                                \
	{                                                                             \
		static const struct test_case cases[] = { __VA_ARGS__ };              \
		return test__run_all(suite, cases, sizeof(cases) / sizeof(cases[0])); \
	}

#define TEST(fn) { #fn, fn }

#endif /* EBPFPROF_TEST_H */
