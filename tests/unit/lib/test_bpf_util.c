/* test_bpf_util.c -- unit tests for the map chores on real BPF maps: a bit of an array value, as BPF reads it (unwind_pid_bits__has) */
#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "lib/bpf_util.h"
#include "unwind.h"
#include "test.h"

static int test_set_bit(void)
{
	static struct unwind_pid_bits bits;
	__u32 zero = 0, set[] = { 1, 63, 64, 4242, UNWIND_PID_BITS - 1 };
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "bits_test", 4, sizeof(bits), 1, NULL);

	CHECK(fd >= 0);
	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
		CHECK(!bpf_util__set_bit(fd, unwind_pid_bits__bit(set[i], UNWIND_RT_PYTHON)));
	/* pid mod the size: 7, a JVM */
	CHECK(!bpf_util__set_bit(fd, unwind_pid_bits__bit(UNWIND_PID_BITS + 7, UNWIND_RT_JAVA)));
	/* 4242 given tables too, twice (the second a no-op) */
	CHECK(!bpf_util__set_bit(fd, unwind_pid_bits__bit(4242, UNWIND_RT_NATIVE)));
	CHECK(!bpf_util__set_bit(fd, unwind_pid_bits__bit(4242, UNWIND_RT_NATIVE)));
	CHECK(!bpf_map_lookup_elem(fd, &zero, &bits));
	CHECK(unwind_pid_bits__has(&bits, 4242, UNWIND_RT_NATIVE) &&
	      unwind_pid_bits__has(&bits, 4242, UNWIND_RT_PYTHON) &&
	      !unwind_pid_bits__has(&bits, 4242, UNWIND_RT_JAVA));
	CHECK(!unwind_pid_bits__has(&bits, 4243, UNWIND_RT_NATIVE) &&
	      !unwind_pid_bits__has(&bits, 7, UNWIND_RT_NATIVE));
	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
		CHECK(unwind_pid_bits__has(&bits, set[i], UNWIND_RT_PYTHON) &&
		      !unwind_pid_bits__has(&bits, set[i], UNWIND_RT_JAVA));
	CHECK(unwind_pid_bits__has(&bits, 7, UNWIND_RT_JAVA) &&
	      unwind_pid_bits__has(&bits, UNWIND_PID_BITS + 7, UNWIND_RT_JAVA));
	CHECK(!unwind_pid_bits__has(&bits, 7, UNWIND_RT_PYTHON));
	CHECK(!unwind_pid_bits__has(&bits, 0, UNWIND_RT_PYTHON) &&
	      !unwind_pid_bits__has(&bits, 2, UNWIND_RT_PYTHON));
	CHECK(!unwind_pid_bits__has(&bits, 65, UNWIND_RT_PYTHON) &&
	      !unwind_pid_bits__has(&bits, 4243, UNWIND_RT_PYTHON));
	close(fd);
	return TEST_OK;
}

static int test_set_bit_refuses(void)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "bits_hash", 4, 8, 4, NULL);

	CHECK(fd >= 0);
	CHECK(bpf_util__set_bit(fd, 3) == -EINVAL);	/* only an array's value at key 0 */
	close(fd);
	CHECK(bpf_util__set_bit(-1, 3) < 0);	/* no map */
	return TEST_OK;
}

TEST_MAIN("bpf_util",
	  TEST(test_set_bit),
	  TEST(test_set_bit_refuses))
