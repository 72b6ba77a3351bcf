/* test_file_set.c -- unit tests for the bounded set of files: membership, emptying when full */
#include "lib/file_set.h"
#include "test.h"

static int test_members(void)
{
	struct file_set *fs = file_set__new(8);

	CHECK(fs);
	CHECK(!file_set__has(fs, 1, 2));
	CHECK(!file_set__add(fs, 1, 2));
	CHECK(!file_set__add(fs, 1, 2));	/* again: still one entry */
	CHECK(file_set__count(fs) == 1);
	CHECK(file_set__has(fs, 1, 2));
	/* the same inode on another device, and the swapped pair, are other files */
	CHECK(!file_set__has(fs, 2, 2) && !file_set__has(fs, 2, 1));
	CHECK(!file_set__add(fs, 2, 2));
	CHECK(file_set__has(fs, 2, 2) && file_set__has(fs, 1, 2));
	file_set__free(fs);
	file_set__free(NULL);
	return TEST_OK;
}

static int test_full_empties(void)
{
	struct file_set *fs = file_set__new(100);

	CHECK(fs);
	for (__u64 i = 0; i < 100; i++)
		CHECK(!file_set__add(fs, 7, 1000 + i));
	CHECK(file_set__count(fs) == 100 && file_set__flushes(fs) == 0);
	for (__u64 i = 0; i < 100; i++)
		CHECK(file_set__has(fs, 7, 1000 + i));
	/* the 101st: the set forgets the 100 and holds the new one */
	CHECK(!file_set__add(fs, 7, 5000));
	CHECK(file_set__count(fs) == 1 && file_set__flushes(fs) == 1);
	CHECK(file_set__has(fs, 7, 5000) && !file_set__has(fs, 7, 1000) && !file_set__has(fs, 7, 1099));
	file_set__free(fs);
	return TEST_OK;
}

TEST_MAIN("file_set",
	  TEST(test_members),
	  TEST(test_full_empties))
