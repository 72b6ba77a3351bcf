/* preload.c -- the processes alive when a whole-system profile starts, busiest first (from /proc/PID/stat) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/array.h"
#include "preload.h"

struct busy {
	__u32 pid;
	__u64 ticks;
};

#define PF_KTHREAD 0x00200000	/* include/linux/sched.h: a kernel thread has no user stack */

/*
 * utime + stime of /proc/PID/stat, or -1 for a kernel thread or a process
 * gone. The name field may hold anything, ')' too: fields start after the
 * last ')'. The file is the kernel's, but bounded all the same.
 */
static long long cpu_ticks(const char *proc_root, __u32 pid)
{
	char path[64], buf[1024], *p;
	unsigned long flags, ut, st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%u/stat", proc_root, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strrchr(buf, ')');
	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu %*u %*u %*u %*u %lu %lu", &flags, &ut,
			 &st) != 3)
		return -1;
	return flags & PF_KTHREAD ? -1 : (long long)(ut + st);
}

static int by_ticks(const void *a, const void *b)
{
	const struct busy *x = a, *y = b;

	return x->ticks < y->ticks ? 1 : x->ticks > y->ticks ? -1 : 0;
}

int preload__busiest(const char *proc_root, int max, __u32 **pids)
{
	DIR *d = opendir(proc_root);
	struct busy *all = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	int err = 0;

	*pids = NULL;
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char *end;
		unsigned long pid = strtoul(e->d_name, &end, 10);
		long long ticks;

		if (*end || !pid || pid > 0x7fffffff)
			continue;
		ticks = cpu_ticks(proc_root, (__u32)pid);
		if (ticks < 0)
			continue;
		if (ARRAY_RESERVE(all, cap, n + 1)) {
			err = -ENOMEM;
			goto out;
		}
		all[n++] = (struct busy){ (__u32)pid, (__u64)ticks };
	}
	qsort(all, n, sizeof(*all), by_ticks);
	if (n > (size_t)max)
		n = (size_t)max;
	*pids = malloc((n ? n : 1) * sizeof(**pids));
	if (!*pids) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		(*pids)[i] = all[i].pid;
out:
	closedir(d);
	free(all);
	return err ? err : (int)n;
}
