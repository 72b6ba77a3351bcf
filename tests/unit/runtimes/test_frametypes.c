/* test_frametypes.c -- unit tests for the one table of runtime ids, frame tags and event kinds, and runtimes[] */
#include <string.h>
#include "frametypes.h"
#include "runtimes/runtime.h"
#include "test.h"

#define TAG_ROW(t, rt, n) { t, rt, n, #t },
#define EVENT_ROW(k, rt) { k, rt, 0, #k },

static const struct row {
	unsigned long long value;
	int runtime;
	int slots;
	const char *name;
} tags[] = { FRAME_TAGS(TAG_ROW) }, events[] = { RT_EVENTS(EVENT_ROW) };

#define N(a) (int)(sizeof(a) / sizeof((a)[0]))

/* no two tags or kinds alike; each is its runtime's, as the lookup says */
static int test_no_clash(void)
{
	int slots;

	for (int i = 0; i < N(tags); i++) {
		for (int k = i + 1; k < N(tags); k++)
			CHECK(tags[i].value != tags[k].value);
		CHECK(frame_tag__runtime(tags[i].value, &slots) == tags[i].runtime);
		CHECK(slots == tags[i].slots);
	}
	for (int i = 0; i < N(events); i++) {
		for (int k = i + 1; k < N(events); k++)
			CHECK(events[i].value != events[k].value);
		CHECK(rt_event__runtime((unsigned int)events[i].value) == events[i].runtime);
		CHECK(events[i].value);	/* 0 is no kind: a zeroed event is none */
	}
	CHECK(frame_tag__runtime(0, &slots) == -1 && rt_event__runtime(0) == -1);
	return TEST_OK;
}

/* a user address (below 2^47) never looks like a tag; a tagged slot keeps what it carries */
static int test_addresses(void)
{
	int slots;

	for (int i = 0; i < N(tags); i++) {
		unsigned long long slot = tags[i].value << FRAME_TAG_SHIFT | 0x7fffffffffffULL;

		CHECK(FRAME_TAG(slot) == tags[i].value && (slot & FRAME_ADDR_MASK) == 0x7fffffffffffULL);
	}
	CHECK(FRAME_TAG(0x7fffffffffffULL) < FRAME_TAG_MIN);
	CHECK(frame_tag__runtime(FRAME_TAG(0x7ffff7dd1234ULL), &slots) == -1);
	return TEST_OK;
}

/* runtimes[]: each built-in runtime sits at its id, with all it must have */
static int test_table(void)
{
	int built = 0;

	CHECK(!runtimes[UNWIND_RT_NATIVE]);
	for (int i = 0; i < UNWIND_RT_MAX; i++) {
		const struct runtime_ops *o = runtimes[i];

		if (!o)
			continue;
		built++;
		CHECK((int)o->id == i && o->name && o->procs_map);
		CHECK(o->new && o->free && o->add_image && o->event && o->frame && o->mark && o->sweep);
		CHECK(o->stats && o->n_stats > 0 && o->stats_size && o->stats_read);
		for (int k = 0; k < o->n_stats; k++)
			CHECK(o->stats[k].offset + sizeof(__u64) <= o->stats_size &&
			      (k || o->stats[k].help));
		for (int k = i + 1; k < UNWIND_RT_MAX; k++)
			CHECK(!runtimes[k] || strcmp(runtimes[k]->name, o->name));
	}
	CHECK(built >= 2);	/* python and java, the null runtime too in the test build */
	return TEST_OK;
}

/* a pid's bits: one word for every runtime, the bit userspace sets is the one BPF tests */
static int test_pid_bits(void)
{
	static struct unwind_pid_bits b;
	__u32 pids[] = { 1, 4242, UNWIND_PID_BITS - 1, UNWIND_PID_BITS + 5, 32767 };

	for (int i = 0; i < N(pids); i++) {
		for (int rt = 0; rt < UNWIND_RT_MAX; rt++) {
			__u32 bit = unwind_pid_bits__bit(pids[i], rt);
			__u8 *bytes = (__u8 *)&b;

			memset(&b, 0, sizeof(b));
			bytes[bit / 8] |= 1u << (bit % 8);	/* as bpf_util__set_bit does */
			for (int other = 0; other < UNWIND_RT_MAX; other++)
				CHECK(unwind_pid_bits__has(&b, pids[i], other) == (other == rt));
			CHECK(unwind_pid_bits__has(&b, pids[i] + UNWIND_PID_BITS, rt));	/* a shared bit: maybe */
			CHECK(!unwind_pid_bits__has(&b, pids[i] + 1, rt));
		}
	}
	return TEST_OK;
}

TEST_MAIN("frametypes", { "no_clash", test_no_clash }, { "addresses", test_addresses },
	  { "table", test_table }, { "pid_bits", test_pid_bits })
