/* test_bpf_util.c -- unit tests for map chores on real BPF maps: bits of an array value, one map and many */
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
	/* test_bit agrees, by the shadow the sets kept */
	CHECK(bpf_util__test_bit(fd, unwind_pid_bits__bit(4242, UNWIND_RT_NATIVE)) == 1 &&
	      bpf_util__test_bit(fd, unwind_pid_bits__bit(4243, UNWIND_RT_NATIVE)) == 0 &&
	      bpf_util__test_bit(fd, unwind_pid_bits__bit(UNWIND_PID_BITS + 7, UNWIND_RT_JAVA)) == 1);
	close(fd);
	return TEST_OK;
}

/*
 * The same bit in five maps, more than the shadows kept, each set for real:
 * what one map's value said never spares another's write. A bit another
 * writer set stays when we set one.
 */
static int test_set_bit_maps(void)
{
	static struct unwind_pid_bits bits;
	__u32 zero = 0, bit = unwind_pid_bits__bit(99, UNWIND_RT_PERL);
	int fds[5];

	for (int i = 0; i < 5; i++) {
		fds[i] = bpf_map_create(BPF_MAP_TYPE_ARRAY, "bits_many", 4, sizeof(bits), 1, NULL);
		CHECK(fds[i] >= 0);
	}
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 5; i++)
			CHECK(!bpf_util__set_bit(fds[i], bit));
	for (int i = 0; i < 5; i++) {
		CHECK(!bpf_map_lookup_elem(fds[i], &zero, &bits));
		CHECK(unwind_pid_bits__has(&bits, 99, UNWIND_RT_PERL) &&
		      !unwind_pid_bits__has(&bits, 98, UNWIND_RT_PERL));
	}
	/* another writer's bit, then ours: both */
	bits.mask[5] |= 1u << UNWIND_RT_RUBY;
	CHECK(!bpf_map_update_elem(fds[0], &zero, &bits, BPF_ANY));
	CHECK(!bpf_util__set_bit(fds[0], unwind_pid_bits__bit(6, UNWIND_RT_RUBY)));
	CHECK(!bpf_map_lookup_elem(fds[0], &zero, &bits));
	CHECK(unwind_pid_bits__has(&bits, 5, UNWIND_RT_RUBY) &&
	      unwind_pid_bits__has(&bits, 6, UNWIND_RT_RUBY) &&
	      unwind_pid_bits__has(&bits, 99, UNWIND_RT_PERL));
	for (int i = 0; i < 5; i++)
		close(fds[i]);
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

/*
 * An mmapable map's bits set in place: the kernel's copy (a lookup, as BPF
 * reads it) has them, with bits set by a map update kept, and test_bit
 * agrees both ways; a map without the flag is refused and still works the
 * slow way. After unmapping, sets are by system calls again.
 */
static int test_mapped_bits(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = BPF_F_MMAPABLE);
	static struct unwind_pid_bits bits;
	__u32 zero = 0;
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "bits_mmap", 4, sizeof(bits), 1, &mo);
	int plain = bpf_map_create(BPF_MAP_TYPE_ARRAY, "bits_plain", 4, sizeof(bits), 1, NULL);

	CHECK(fd >= 0 && plain >= 0);
	CHECK(bpf_util__map_bits(plain) == -EINVAL);
	CHECK(!bpf_util__map_bits(fd));
	bits.mask[5] |= 1u << UNWIND_RT_RUBY;	/* a bit written the other way */
	CHECK(!bpf_map_update_elem(fd, &zero, &bits, BPF_ANY));
	CHECK(!bpf_util__set_bit(fd, unwind_pid_bits__bit(UNWIND_PID_BITS - 1, UNWIND_RT_PHP)));
	CHECK(!bpf_util__set_bit(fd, unwind_pid_bits__bit(4242, UNWIND_RT_NATIVE)));
	CHECK(!bpf_map_lookup_elem(fd, &zero, &bits));
	CHECK(unwind_pid_bits__has(&bits, UNWIND_PID_BITS - 1, UNWIND_RT_PHP) &&
	      unwind_pid_bits__has(&bits, 4242, UNWIND_RT_NATIVE) &&
	      unwind_pid_bits__has(&bits, 5, UNWIND_RT_RUBY) &&
	      !unwind_pid_bits__has(&bits, 4242, UNWIND_RT_PHP));
	CHECK(bpf_util__test_bit(fd, unwind_pid_bits__bit(5, UNWIND_RT_RUBY)) == 1 &&
	      bpf_util__test_bit(fd, unwind_pid_bits__bit(4242, UNWIND_RT_NATIVE)) == 1 &&
	      bpf_util__test_bit(fd, unwind_pid_bits__bit(4243, UNWIND_RT_NATIVE)) == 0);
	bpf_util__unmap_bits(fd);
	CHECK(!bpf_util__set_bit(fd, unwind_pid_bits__bit(77, UNWIND_RT_JAVA)));
	CHECK(!bpf_map_lookup_elem(fd, &zero, &bits));
	CHECK(unwind_pid_bits__has(&bits, 77, UNWIND_RT_JAVA) &&
	      unwind_pid_bits__has(&bits, 4242, UNWIND_RT_NATIVE));
	CHECK(!bpf_util__set_bit(plain, unwind_pid_bits__bit(3, UNWIND_RT_JAVA)) &&
	      bpf_util__test_bit(plain, unwind_pid_bits__bit(3, UNWIND_RT_JAVA)) == 1);
	close(fd);
	close(plain);
	return TEST_OK;
}

TEST_MAIN("bpf_util",
	  TEST(test_set_bit),
	  TEST(test_set_bit_maps),
	  TEST(test_set_bit_refuses),
	  TEST(test_mapped_bits))
