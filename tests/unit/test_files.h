/* test_files.h -- unit test helpers over real files: a whole file into memory, a symbol's address per nm(1) */
#ifndef EBPFPROF_TEST_FILES_H
#define EBPFPROF_TEST_FILES_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/types.h>

/* the whole file at PATH, malloc'ed (at least one byte); NULL when it cannot be read */
static inline void *test__slurp(const char *path, size_t *len)
{
	struct stat st;
	char *buf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) || !(buf = malloc(st.st_size ? st.st_size : 1)) ||
	    read(fd, buf, st.st_size) != st.st_size) {
		free(buf);
		buf = NULL;
	}
	*len = buf ? (size_t)st.st_size : 0;
	if (fd >= 0)
		close(fd);
	return buf;
}

/* address of NAME in FILE's symbol table, per nm(1); 0 when absent */
static inline __u64 test__nm_addr(const char *file, const char *name)
{
	char cmd[512], line[1024], sym[512], type;
	unsigned long long addr;
	__u64 found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm --defined-only %s 2>/dev/null", file);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %c %511s", &addr, &type, sym) == 3 && !strcmp(sym, name))
			found = addr;
	pclose(p);
	return found;
}

#endif /* EBPFPROF_TEST_FILES_H */
