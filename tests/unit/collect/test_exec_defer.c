/* test_exec_defer.c -- unit tests for the exec waits: order, taking out, the idle rule, each level, a full ring */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include "collect/exec_defer.h"
#include "test.h"

#define MS 1000000LL

/* when a process idle at every look (on time) falls due at level L, from its exec */
static __s64 idle_age(int l)
{
	__s64 age = 0;

	for (int i = 0; i <= l; i++)
		age += i == EXEC_DEFER_RECHECK ? 0 : exec_defer_waits[i];
	return age;
}

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

/* an idle process waits at each level but the recheck, due at its age there; then no more */
static int test_levels(void)
{
	struct exec_defer *d = exec_defer__new(16);
	struct deferred_exec x = exec_of(7), y = exec_of(8), out;

	CHECK(d);
	exec_defer__add(d, &x, 0, &out);
	for (int l = 0; l < EXEC_DEFER_LEVELS; l++) {
		bool last = l + 1 == EXEC_DEFER_LEVELS;

		if (l == EXEC_DEFER_RECHECK)
			continue;
		CHECK(exec_defer__next_due(d) == idle_age(l));
		CHECK(exec_defer__pop_due(d, idle_age(l), &out));
		CHECK(out.pid == 7 && out.level == l && out.exec_ns == 0);
		if (l == 2)	/* a younger exec at the first level falls due between */
			exec_defer__add(d, &y, idle_age(2), &out);
		/* no CPU used at all */
		CHECK(exec_defer__judge(d, &out, 0, idle_age(l)) ==
		      (last ? EXEC_HAND_ON : EXEC_IDLE));
		if (l == 2) {
			CHECK(exec_defer__next_due(d) == idle_age(2) + EXEC_DEFER_NS);
			CHECK(exec_defer__pop_due(d, INT64_MAX, &out) && out.pid == 8 && out.level == 0);
		}
	}
	CHECK(exec_defer__next_due(d) == INT64_MAX);
	/* taken out at a later level too */
	exec_defer__add(d, &x, 0, &out);
	CHECK(exec_defer__pop_due(d, INT64_MAX, &out) &&
	      exec_defer__judge(d, &out, 0, EXEC_DEFER_NS) == EXEC_IDLE);
	CHECK(exec_defer__take(d, 7) && exec_defer__next_due(d) == INT64_MAX);
	exec_defer__free(d);
	return TEST_OK;
}

/*
 * The first look sees the CPU since the fork; later ones only what came since
 * the last look. A start that cost 13 ms of CPU (a costly fork, exec and
 * loader) and then sleeps is rechecked and found idle; one that computes on
 * is handed on at the recheck; one that wakes to compute after idling is
 * handed on at the next look, however idle its life was on the whole.
 */
static int test_judge(void)
{
	struct exec_defer *d = exec_defer__new(16);
	struct deferred_exec x, out;
	__s64 t;

	CHECK(d);
	/* cheap start, then asleep: idle at once, no recheck */
	x = exec_of(1);
	exec_defer__add(d, &x, 0, &out);
	CHECK(exec_defer__pop_due(d, INT64_MAX, &out));
	CHECK(exec_defer__judge(d, &out, 1 * MS, EXEC_DEFER_NS) == EXEC_IDLE);
	CHECK(exec_defer__pop_due(d, INT64_MAX, &out) && out.level == EXEC_DEFER_RECHECK + 1);
	CHECK(out.cpu_ns == 1 * MS && out.look_ns == EXEC_DEFER_NS);

	/* costly start, then asleep: rechecked, then idle */
	x = exec_of(2);
	exec_defer__add(d, &x, 0, &out);
	CHECK(exec_defer__pop_due(d, INT64_MAX, &out));
	CHECK(exec_defer__judge(d, &out, 13 * MS, EXEC_DEFER_NS) == EXEC_RECHECK);
	t = exec_defer__next_due(d);
	CHECK(t == EXEC_DEFER_NS + exec_defer_waits[EXEC_DEFER_RECHECK]);
	CHECK(exec_defer__pop_due(d, t, &out) && out.level == EXEC_DEFER_RECHECK);
	CHECK(exec_defer__judge(d, &out, 13 * MS + 100000, t) == EXEC_IDLE);

	/* at the next look it has woken and computes: handed on */
	CHECK(exec_defer__pop_due(d, INT64_MAX, &out) && out.pid == 2);
	t = out.look_ns + exec_defer_waits[out.level];
	CHECK(exec_defer__judge(d, &out, 13 * MS + 100000 + 20 * MS, t) == EXEC_HAND_ON);

	/* costly start, computing on: handed on at the recheck */
	x = exec_of(3);
	exec_defer__add(d, &x, 0, &out);
	CHECK(exec_defer__pop_due(d, INT64_MAX, &out));
	CHECK(exec_defer__judge(d, &out, 13 * MS, EXEC_DEFER_NS) == EXEC_RECHECK);
	CHECK(exec_defer__pop_due(d, INT64_MAX, &out));
	CHECK(exec_defer__judge(d, &out, 17 * MS, EXEC_DEFER_NS + exec_defer_waits[EXEC_DEFER_RECHECK]) ==
	      EXEC_HAND_ON);
	CHECK(exec_defer__next_due(d) == INT64_MAX);

	/* a first look made late (40 ms) is checked again 5 ms after it, not at once over no time */
	x = exec_of(4);
	exec_defer__add(d, &x, 0, &out);
	CHECK(exec_defer__pop_due(d, 40 * MS, &out));
	CHECK(exec_defer__judge(d, &out, 13 * MS, 40 * MS) == EXEC_RECHECK);
	CHECK(!exec_defer__pop_due(d, 40 * MS, &out));
	CHECK(exec_defer__next_due(d) == 40 * MS + exec_defer_waits[EXEC_DEFER_RECHECK]);
	CHECK(exec_defer__pop_due(d, 45 * MS, &out) && out.pid == 4);
	CHECK(exec_defer__judge(d, &out, 13 * MS, 45 * MS) == EXEC_IDLE);
	exec_defer__free(d);
	return TEST_OK;
}

/* full: the first level gives up its oldest; a later level refuses, for the caller to hand on */
static int test_full(void)
{
	struct exec_defer *d = exec_defer__new(32);	/* later levels hold 2, the recheck 32 */
	struct deferred_exec x, out;
	int idle = 0, rechecked = 0;

	CHECK(d);
	for (__u32 pid = 1; pid <= 32; pid++) {
		x = exec_of(pid);
		CHECK(!exec_defer__add(d, &x, pid, &out));
	}
	x = exec_of(33);
	CHECK(exec_defer__add(d, &x, 33, &out) && out.pid == 1);
	/* half idle (two find room), half busy (all rechecked) */
	while (exec_defer__pop_due(d, EXEC_DEFER_NS + 100, &out) && out.level == 0) {
		enum exec_verdict v = exec_defer__judge(d, &out, out.pid % 2 ? 0 : 10 * MS,
							EXEC_DEFER_NS + 100);

		idle += v == EXEC_IDLE;
		rechecked += v == EXEC_RECHECK;
	}
	CHECK(idle == 2 && rechecked == 16);
	exec_defer__free(d);
	errno = 0;
	CHECK(!exec_defer__new(0) && errno == EINVAL);
	return TEST_OK;
}

TEST_MAIN("exec_defer", { "order_and_take", test_order_and_take }, { "levels", test_levels },
	  { "judge", test_judge },
	  { "full", test_full })
