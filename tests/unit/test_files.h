/* test_files.h -- unit test helpers over real files: a whole file into memory, a symbol's address per nm(1), a program run on pipes */
#ifndef EBPFPROF_TEST_FILES_H
#define EBPFPROF_TEST_FILES_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/types.h>
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

/* NAME's address and size (0 if nm gives none) in FILE's symbol table, per nm -S; 0 when absent */
static inline __u64 test__nm_sym(const char *file, const char *name, __u64 *size)
{
	char cmd[512], line[1024], sym[512], type;
	unsigned long long addr, sz;
	__u64 found = 0;
	FILE *p;

	if (size)
		*size = 0;
	snprintf(cmd, sizeof(cmd), "nm -S --defined-only %s 2>/dev/null", file);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p)) {
		/* "addr size type name"; a line without a size would read its type as a hex size */
		if (sscanf(line, "%llx %llx %c %511s", &addr, &sz, &type, sym) == 4 && type != ' ' &&
		    !strcmp(sym, name)) {
			found = addr;
			if (size)
				*size = sz;
		} else if (sscanf(line, "%llx %c %511s", &addr, &type, sym) == 3 && !strcmp(sym, name)) {
			found = addr;	/* a symbol without a size */
		}
	}
	pclose(p);
	return found;
}

/* address of NAME in FILE's symbol table, per nm(1); 0 when absent */
static inline __u64 test__nm_addr(const char *file, const char *name)
{
	return test__nm_sym(file, name, NULL);
}

/*
 * Runs ARGV[0] with pipes on its stdin and stdout: *to writes its stdin
 * (closing it is its EOF), *from reads its stdout (NULL if it cannot).
 * Its pid, or -1.
 */
static inline pid_t test__spawn_piped(char *const argv[], int *to, FILE **from)
{
	int in[2], out[2];
	pid_t pid;

	if (pipe(in))
		return -1;
	if (pipe(out)) {
		close(in[0]);
		close(in[1]);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	if (pid < 0) {
		close(in[1]);
		close(out[0]);
		return -1;
	}
	*to = in[1];
	*from = fdopen(out[0], "r");
	if (!*from)
		close(out[0]);
	return pid;
}

#endif /* EBPFPROF_TEST_FILES_H */
