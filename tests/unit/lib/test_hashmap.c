/* test_hashmap.c -- unit tests for the open-addressing hash index: collisions, backward-shift removal, growth */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hashmap.h"
#include "test.h"

/* the entries are plain ids: entry id matches key when they are equal */
static int id_eq(__u32 id, const void *key, const void *ctx)
{
	return id == *(const __u32 *)key;
}

static __u32 find(const struct hmap *h, __u64 hash, __u32 id)
{
	return hmap__find(h, hash, id_eq, &id, NULL);
}

/* a small deterministic generator, so failures reproduce */
static __u64 rng_state = 0x9e3779b97f4a7c15ULL;

static __u64 rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

#define MANY 100000

/* 20 entries share each hash, so probe chains are long and clustered. */
static __u64 clustered_hash(__u32 id)
{
	return hash_u64(id % (MANY / 20), 0);
}

static int test_insert_find_many_colliding(void)
{
	struct hmap *h = hmap__new();
	int ok = TEST_FAIL;

	CHECK(h);
	for (__u32 id = 1; id <= MANY; id++)
		if (hmap__insert(h, clustered_hash(id), id))
			goto out;
	if (hmap__count(h) != MANY)
		goto out;
	/* the load factor stays under 3/4: 2^18 slots of 16 bytes for 100000 entries */
	if (hmap__bytes(h) < (1u << 18) * 16 || hmap__bytes(h) > (1u << 18) * 16 + 64)
		goto out;
	for (__u32 id = 1; id <= MANY; id++)
		if (find(h, clustered_hash(id), id) != id)
			goto out;
	/* right hash, absent id; and an id under the wrong hash */
	if (find(h, clustered_hash(1), MANY + 1) || find(h, clustered_hash(1) + 1, 1))
		goto out;
	ok = TEST_OK;
out:
	hmap__free(h);
	return ok;
}

static int test_remove_keeps_others_findable(void)
{
	struct hmap *h = hmap__new();
	bool *present = calloc(MANY + 1, sizeof(*present));
	int ok = TEST_FAIL;

	if (!h || !present)
		goto out;
	for (__u32 id = 1; id <= MANY; id++) {
		if (hmap__insert(h, clustered_hash(id), id))
			goto out;
		present[id] = true;
	}
	/* remove two thirds in a scrambled order, then check every id */
	for (__u32 i = 0; i < MANY; i++) {
		__u32 id = 1 + (__u32)((i * 7919ULL) % MANY);

		if (id % 3 == 0)
			continue;
		if (hmap__remove(h, clustered_hash(id), id))
			goto out;
		present[id] = false;
	}
	if (hmap__count(h) != MANY / 3)
		goto out;
	for (__u32 id = 1; id <= MANY; id++)
		if (find(h, clustered_hash(id), id) != (present[id] ? id : 0))
			goto out;
	if (hmap__remove(h, clustered_hash(1), 1) != -ENOENT)
		goto out;
	ok = TEST_OK;
out:
	free(present);
	hmap__free(h);
	return ok;
}

/*
 * A table kept at 16 slots (at most 11 entries, under the 3/4 load limit),
 * with hashes homed on the last two and first two slots, so chains wrap
 * around the end: random inserts and removes checked against a model.
 */
static int test_backward_shift_wraparound(void)
{
	static const __u64 homes[] = { 15, 14, 0, 1, 31, 16 };
	__u64 hash_of[64] = { 0 };
	struct hmap *h = hmap__new();
	int ok = TEST_FAIL, n = 0;

	CHECK(h);
	for (int step = 0; step < 200000; step++) {
		__u32 id = 1 + rng() % 63;

		if (hash_of[id]) {
			if (hmap__remove(h, hash_of[id], id))
				goto out;
			hash_of[id] = 0;
			n--;
		} else if (n < 11) {
			/* high bits make hashes differ while the home slot stays */
			hash_of[id] = homes[rng() % 6] | (rng() << 8) | 1ULL << 63;
			if (hmap__insert(h, hash_of[id], id))
				goto out;
			n++;
		}
		for (__u32 j = 1; j < 64; j++)
			if (find(h, hash_of[j] ? hash_of[j] : 1ULL << 62, j) != (hash_of[j] ? j : 0))
				goto out;
		if (hmap__count(h) != (size_t)n)
			goto out;
	}
	ok = TEST_OK;
out:
	hmap__free(h);
	return ok;
}

/* Every entry in one chain that wraps past the table's end, through growth and removal. */
static int test_growth_all_colliding(void)
{
	struct hmap *h = hmap__new();
	__u64 hash = ~0ULL;	/* home is the last slot at every capacity */
	int ok = TEST_FAIL;

	CHECK(h);
	for (__u32 id = 1; id <= 3000; id++)
		if (hmap__insert(h, hash, id))
			goto out;
	for (__u32 id = 1; id <= 3000; id += 2)
		if (hmap__remove(h, hash, id))
			goto out;
	for (__u32 id = 1; id <= 3000; id++)
		if (find(h, hash, id) != (id % 2 ? 0 : id))
			goto out;
	if (hmap__count(h) != 1500)
		goto out;
	ok = TEST_OK;
out:
	hmap__free(h);
	return ok;
}

static int test_duplicate_hash_and_id(void)
{
	struct hmap *h = hmap__new();
	int ok = TEST_FAIL;

	CHECK(h);
	/* the same (hash, id) twice: each remove takes one copy */
	if (hmap__insert(h, 42, 7) || hmap__insert(h, 42, 7) || hmap__insert(h, 42, 8))
		goto out;
	if (hmap__remove(h, 42, 7) || find(h, 42, 7) != 7 || hmap__remove(h, 42, 7))
		goto out;
	if (find(h, 42, 7) || find(h, 42, 8) != 8 || hmap__remove(h, 42, 7) != -ENOENT)
		goto out;
	ok = TEST_OK;
out:
	hmap__free(h);
	return ok;
}

static int test_hash_bytes(void)
{
	const char a[] = "hello", b[] = "hellp";

	CHECK(hash_bytes(a, 5, 0) == hash_bytes(a, 5, 0));
	CHECK(hash_bytes(a, 5, 0) != hash_bytes(b, 5, 0));
	CHECK(hash_bytes(a, 5, 0) != hash_bytes(a, 5, 1));
	CHECK(hash_bytes(a, 4, 0) != hash_bytes(a, 5, 0));
	CHECK(hash_u64(1, 0) != hash_u64(2, 0));
	hmap__free(NULL);
	return TEST_OK;
}

TEST_MAIN("hashmap",
	  TEST(test_insert_find_many_colliding),
	  TEST(test_remove_keeps_others_findable),
	  TEST(test_backward_shift_wraparound),
	  TEST(test_growth_all_colliding),
	  TEST(test_duplicate_hash_and_id),
	  TEST(test_hash_bytes))
