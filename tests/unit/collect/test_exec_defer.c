/* test_exec_defer.c -- unit tests for the exec waits: order, taking out, waiting again at each level, a full ring */
#include <errno.h>
#include <stdint.h>
#include "collect/exec_defer.h"
#include "test.h"

#define MS 1000000LL

static struct deferred_exec exec_of(__u32 pid)
{
	return (struct deferred_exec){ .pid = pid, .cgroup_id = pid * 10ull };
}

/* execs fall due EXEC_DEFER_NS after they came, oldest first; a taken one never does */
static int test_order_and_take(void)
{
	struct exec_defer *d = exec_defer__new(8);
	struct deferred_exec x, out;

	CHECK(d && exec_defer__next_due(d) == INT64_MAX);
	for (__u32 pid = 1; pid <= 3; pid++) {
		x = exec_of(pid);
		CHECK(!exec_defer__add(d, &x, pid * MS, &out));
	}
	CHECK(exec_defer__next_due(d) == 1 * MS + EXEC_DEFER_NS);
	CHECK(exec_defer__take(d, 1) && !exec_defer__take(d, 1) && !exec_defer__take(d, 9));
	CHECK(exec_defer__next_due(d) == 2 * MS + EXEC_DEFER_NS);
	CHECK(!exec_defer__pop_due(d, 2 * MS + EXEC_DEFER_NS - 1, &out));
	CHECK(exec_defer__pop_due(d, 3 * MS + EXEC_DEFER_NS, &out));
	CHECK(out.pid == 2 && out.cgroup_id == 20 && out.exec_ns == 2 * MS && out.level == 0);
	CHECK(exec_defer__pop_due(d, 3 * MS + EXEC_DEFER_NS, &out) && out.pid == 3);
	CHECK(!exec_defer__pop_due(d, INT64_MAX, &out) && exec_defer__next_due(d) == INT64_MAX);
	exec_defer__free(d);
	exec_defer__free(NULL);
	return TEST_OK;
}

/* an idle process waits at each level in turn, due at its age there; then no more */
static int test_levels(void)
{
	struct exec_defer *d = exec_defer__new(16);
	struct deferred_exec x = exec_of(7), y = exec_of(8), out;

	CHECK(d);
	exec_defer__add(d, &x, 0, &out);
	for (int l = 0; l < EXEC_DEFER_LEVELS; l++) {
		CHECK(exec_defer__next_due(d) == exec_defer_ages[l]);
		CHECK(exec_defer__pop_due(d, exec_defer_ages[l], &out));
		CHECK(out.pid == 7 && out.level == l && out.exec_ns == 0);
		if (l == 1)	/* a younger exec at the first level falls due between */
			exec_defer__add(d, &y, exec_defer_ages[1], &out);
		CHECK(exec_defer__again(d, &out) == (l + 1 < EXEC_DEFER_LEVELS));
		if (l == 1) {
			CHECK(exec_defer__next_due(d) == exec_defer_ages[1] + EXEC_DEFER_NS);
			CHECK(exec_defer__pop_due(d, INT64_MAX, &out) && out.pid == 8 && out.level == 0);
		}
	}
	CHECK(exec_defer__next_due(d) == INT64_MAX);
	/* taken out at a later level too */
	exec_defer__add(d, &x, 0, &out);
	CHECK(exec_defer__pop_due(d, INT64_MAX, &out) && exec_defer__again(d, &out));
	CHECK(exec_defer__take(d, 7) && exec_defer__next_due(d) == INT64_MAX);
	exec_defer__free(d);
	return TEST_OK;
}

/* full: the first level gives up its oldest; a later level refuses, for the caller to hand on */
static int test_full(void)
{
	struct exec_defer *d = exec_defer__new(32);	/* later levels hold 2 */
	struct deferred_exec x, out;
	int again = 0;

	CHECK(d);
	for (__u32 pid = 1; pid <= 32; pid++) {
		x = exec_of(pid);
		CHECK(!exec_defer__add(d, &x, pid, &out));
	}
	x = exec_of(33);
	CHECK(exec_defer__add(d, &x, 33, &out) && out.pid == 1);
	while (exec_defer__pop_due(d, EXEC_DEFER_NS + 100, &out) && out.level == 0)
		again += exec_defer__again(d, &out);
	CHECK(again == 2 && exec_defer__next_due(d) == 2 + exec_defer_ages[1]);
	exec_defer__free(d);
	errno = 0;
	CHECK(!exec_defer__new(0) && errno == EINVAL);
	return TEST_OK;
}

TEST_MAIN("exec_defer", { "order_and_take", test_order_and_take }, { "levels", test_levels },
	  { "full", test_full })
