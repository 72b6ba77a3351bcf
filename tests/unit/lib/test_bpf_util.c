/* test_bpf_util.c -- unit tests for the map chores on real BPF maps: a bit of an array value, as BPF reads it */
#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "lib/bpf_util.h"
#include "unwind.h"
#include "test.h"

/* the bit of pid as bpf/unwind.bpf.h's pid_maybe_in tests it */
static bool pid_bit(const struct unwind_pid_bits *b, __u32 pid)
{
	return b->w[pid / 64 % (UNWIND_PID_BITS / 64)] & 1ULL << (pid % 64);
}

static int test_set_bit(void)
{
	static struct unwind_pid_bits bits;
	__u32 zero = 0, set[] = { 1, 63, 64, 4242, UNWIND_PID_BITS - 1 };
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "bits_test", 4, sizeof(bits), 1, NULL);

	CHECK(fd >= 0);
	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
		CHECK(!bpf_util__set_bit(fd, set[i]));
	CHECK(!bpf_util__set_bit(fd, UNWIND_PID_BITS + 7));	/* pid mod the size: 7 */
	CHECK(!bpf_map_lookup_elem(fd, &zero, &bits));
	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
		CHECK(pid_bit(&bits, set[i]));
	CHECK(pid_bit(&bits, 7) && pid_bit(&bits, UNWIND_PID_BITS + 7));
	CHECK(!pid_bit(&bits, 0) && !pid_bit(&bits, 2) && !pid_bit(&bits, 65) && !pid_bit(&bits, 4243));
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
