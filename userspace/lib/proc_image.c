/* proc_image.c -- a process image (pid, start, exec count): compared, hashed, and checked against /proc */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "hashmap.h"
#include "proc_image.h"

/* /proc/PID/stat is one line: a comm of 16 bytes and 50-odd numbers fit */
#define STAT_MAX 1024
/* starttime is field 22; the fields after the comm's ")" begin at 3 (state) */
#define START_FIELD (22 - 3)

__u64 proc_image__hash(const struct proc_image *img)
{
	return hash_u64(img->start * 0x9e3779b97f4a7c15ULL ^ ((__u64)img->exec << 32 | img->pid), 0);
}

int proc_image__parse_stat(const char *buf, size_t len, __u64 *start)
{
	const char *p = NULL, *end = buf + len;
	__u64 v = 0;
	int field = 0;

	/* the comm may hold spaces and ")": the last ")" ends it */
	for (const char *q = buf; q < end; q++)
		if (*q == ')')
			p = q + 1;
	if (!p)
		return -EINVAL;
	while (p < end && field <= START_FIELD) {
		while (p < end && *p == ' ')
			p++;
		if (p == end)
			break;
		if (field++ < START_FIELD) {
			while (p < end && *p != ' ')
				p++;
			continue;
		}
		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (; p < end && *p >= '0' && *p <= '9'; p++) {
			if (v > (~0ULL - 9) / 10)
				return -EINVAL;
			v = v * 10 + (__u64)(*p - '0');
		}
		*start = v;
		return 0;
	}
	return -EINVAL;
}

int proc_image__start_of(const char *proc_root, __u32 pid, __u64 *start)
{
	char path[64], buf[STAT_MAX];
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), "%s/%u/stat", proc_root, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, sizeof(buf));
	err = n < 0 ? (errno == ESRCH ? -ESRCH : -errno) : 0;
	close(fd);
	if (err)
		return err;
	return proc_image__parse_stat(buf, (size_t)n, start);
}

bool proc_image__lives(const char *proc_root, const struct proc_image *img)
{
	__u64 start;
	int err = proc_image__start_of(proc_root, img->pid, &start);

	/* a process we may not read (another namespace's /proc): say it lives, keep its state */
	if (err && err != -ESRCH)
		return true;
	return !err && start == img->start;
}
