/* cpus.c -- lists online CPUs from sysfs */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include "cpus.h"

#define MAX_CPU_ID 65535	/* far above any real machine; bounds a hostile list */

static int read_number(const char **p, const char *end, int *out)
{
	long v = 0;
	const char *s = *p;

	if (s >= end || *s < '0' || *s > '9')
		return -EINVAL;
	while (s < end && *s >= '0' && *s <= '9') {
		v = v * 10 + (*s++ - '0');
		if (v > MAX_CPU_ID)
			return -EINVAL;
	}
	*p = s;
	*out = (int)v;
	return 0;
}

static int append(int **cpus, int *n, int *cap, int cpu)
{
	if (*n == *cap) {
		int ncap = *cap ? *cap * 2 : 8;
		int *p = realloc(*cpus, ncap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*cpus = p;
		*cap = ncap;
	}
	(*cpus)[(*n)++] = cpu;
	return 0;
}

int cpus__parse(const char *buf, size_t len, int **cpus, int *n)
{
	const char *p = buf, *end = buf + len;
	int cap = 0, lo, hi, err = 0;

	*cpus = NULL;
	*n = 0;
	while (p < end && *p != '\n') {
		err = read_number(&p, end, &lo);
		if (err)
			goto out;
		hi = lo;
		if (p < end && *p == '-') {
			p++;
			err = read_number(&p, end, &hi);
			if (err || hi < lo) {
				err = -EINVAL;
				goto out;
			}
		}
		for (int c = lo; c <= hi && !err; c++)
			err = append(cpus, n, &cap, c);
		if (err)
			goto out;
		if (p < end && *p == ',')
			p++;
	}
	if (*n == 0)
		err = -EINVAL;
out:
	if (err) {
		free(*cpus);
		*cpus = NULL;
		*n = 0;
	}
	return err;
}

int cpus__online(int **cpus, int *n)
{
	char buf[4096];
	ssize_t len;
	int fd, err;

	fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf));
	err = len < 0 ? -errno : cpus__parse(buf, len, cpus, n);
	close(fd);
	return err;
}
