/* unwind_check.h -- shared by the unwind table tests: fixture paths, opening, the table's shape */
#ifndef EBPFPROF_TEST_UNWIND_CHECK_H
#define EBPFPROF_TEST_UNWIND_CHECK_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <unistd.h>
#include "unwind/unwind_table.h"
#include "test.h"

#define FIX FIXTURES_DIR "unwind/"	/* build/fixtures/ or build/san/fixtures/ */
#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

static inline bool have(const char *path)
{
	return access(path, R_OK) == 0;
}

static struct unwind_table *build_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct unwind_table *t;
	int err;

	if (fd < 0)
		return NULL;
	t = unwind_table__build(fd);
	err = errno;
	close(fd);
	errno = err;
	return t;
}

/* the structural promises of the header: sorted, strictly increasing, merged, ends with NONE */
static inline int check_shape(const struct unwind_table *t)
{
	size_t n;
	const struct unwind_row *r = unwind_table__rows(t, &n);

	CHECK(n > 0);
	CHECK(r[n - 1].cfa_type == UNWIND_CFA_NONE);
	for (size_t i = 1; i < n; i++) {
		CHECK(r[i - 1].pc < r[i].pc);
		CHECK(r[i - 1].cfa_type != r[i].cfa_type || r[i - 1].cfa_off != r[i].cfa_off ||
		      r[i - 1].rbp_off != r[i].rbp_off);
		CHECK(r[i].cfa_type <= UNWIND_CFA_MAX);
	}
	CHECK(unwind_table__find(t, r[0].pc) == &r[0]);
	CHECK(!r[0].pc || !unwind_table__find(t, r[0].pc - 1));
	CHECK(unwind_table__find(t, r[n - 1].pc + 100) == &r[n - 1]);
	CHECK(unwind_table__mem_size(t) >= n * sizeof(*r));
	return TEST_OK;
}

#endif /* EBPFPROF_TEST_UNWIND_CHECK_H */
