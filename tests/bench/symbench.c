/* symbench.c -- addresses per second through binary.c, cold (open + first lookups) and warm */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "symbolize/binary.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* usage: symbench FILE ADDRFILE (one hex file offset per line) */
int main(int argc, char **argv)
{
	struct binary_opts o = { .dwarf_max = 256 << 20 };
	struct src_line lines[SRC_LINES_MAX];
	unsigned long long *addrs = NULL;
	size_t n = 0, cap = 0, named = 0;
	const char *name;
	__u64 off;
	double t0, t1, t2;
	FILE *f;
	int fd;

	if (argc != 3 || !(f = fopen(argv[2], "r")))
		return fprintf(stderr, "usage: symbench FILE ADDRFILE\n"), 2;
	for (unsigned long long a; fscanf(f, "%llx", &a) == 1;) {
		if (n == cap && !(addrs = realloc(addrs, (cap = cap ? cap * 2 : 1024) * sizeof(*addrs))))
			return 1;
		addrs[n++] = a;
	}
	fclose(f);
	t0 = now();
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	struct binary *b = fd >= 0 ? binary__open(fd, &o) : NULL;

	if (!b)
		return fprintf(stderr, "cannot read %s\n", argv[1]), 1;
	close(fd);
	for (size_t i = 0; i < n; i++)
		named += binary__lookup(b, addrs[i], &name, &off, lines, SRC_LINES_MAX) >= 0 && name;
	t1 = now();
	for (size_t i = 0; i < n; i++)
		binary__lookup(b, addrs[i], &name, &off, lines, SRC_LINES_MAX);
	t2 = now();
	printf("%zu addresses, %zu named; cold %.0f/s (%.3f s incl. open), warm %.0f/s, %.1f MB held\n",
	       n, named, n / (t1 - t0), t1 - t0, n / (t2 - t1), binary__mem_size(b) / 1048576.0);
	binary__free(b);
	free(addrs);
	return 0;
}
