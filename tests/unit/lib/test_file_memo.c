/* test_file_memo.c -- unit tests for the memo of file answers: identity, replacement, emptying when full */
#include <string.h>
#include "lib/file_memo.h"
#include "test.h"

static struct stat file(__u64 dev, __u64 ino, off_t size, time_t mtime)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_dev = dev;
	st.st_ino = ino;
	st.st_size = size;
	st.st_mtim.tv_sec = mtime;
	return st;
}

static int test_identity(void)
{
	struct file_memo *fm = file_memo__new(8, sizeof(int));
	struct stat a = file(1, 2, 4096, 100), rebuilt = file(1, 2, 8192, 200);
	int v = 7, w = 9;
	const int *got;

	CHECK(fm);
	CHECK(!file_memo__get(fm, &a, 0));
	CHECK(!file_memo__put(fm, &a, 0, &v));
	got = file_memo__get(fm, &a, 0);
	CHECK(got && *got == 7);
	CHECK(file_memo__hits(fm) == 1);
	/* the inode rebuilt in place (other size and time), or read at another offset: not known */
	CHECK(!file_memo__get(fm, &rebuilt, 0));
	CHECK(!file_memo__get(fm, &a, 4096));
	rebuilt.st_size = 4096;	/* the same size, another modification time */
	CHECK(!file_memo__get(fm, &rebuilt, 0));
	/* a second put of one key replaces its answer */
	CHECK(!file_memo__put(fm, &a, 0, &w));
	got = file_memo__get(fm, &a, 0);
	CHECK(got && *got == 9 && file_memo__count(fm) == 1);
	file_memo__free(fm);
	file_memo__free(NULL);
	return TEST_OK;
}

static int test_full_empties(void)
{
	struct file_memo *fm = file_memo__new(100, sizeof(__u64));
	struct stat st;

	CHECK(fm);
	for (__u64 i = 0; i < 100; i++) {
		st = file(7, 1000 + i, 10, 1);
		CHECK(!file_memo__put(fm, &st, 0, &i));
	}
	CHECK(file_memo__count(fm) == 100);
	for (__u64 i = 0; i < 100; i++) {
		const __u64 *got;

		st = file(7, 1000 + i, 10, 1);
		got = file_memo__get(fm, &st, 0);
		CHECK(got && *got == i);
	}
	/* the 101st: the memo forgets the 100 and holds the new one */
	st = file(7, 5000, 10, 1);
	CHECK(!file_memo__put(fm, &st, 0, &(__u64){ 42 }));
	CHECK(file_memo__count(fm) == 1 && file_memo__get(fm, &st, 0));
	st = file(7, 1000, 10, 1);
	CHECK(!file_memo__get(fm, &st, 0));
	file_memo__free(fm);
	return TEST_OK;
}

TEST_MAIN("file_memo",
	  TEST(test_identity),
	  TEST(test_full_empties))
