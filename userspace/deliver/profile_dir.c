/* profile_dir.c -- the agent's local store: one SERVICE-START.pb.gz per series window, oldest removed past a bound */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lib/fdio.h"
#include "lib/array.h"
#include "profile_dir.h"

struct entry {
	char *name;
	__s64 mtime_ns;
};

/* Files in the order they were written: a ring would save little over memmove at this size. */
struct profile_dir {
	int dirfd;
	int retention;
	struct entry *files;
	size_t n, cap;
};

static int by_mtime(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns < y->mtime_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

static bool is_profile(const char *name)
{
	size_t len = strlen(name);

	return len > 6 && !strcmp(name + len - 6, ".pb.gz") && name[0] != '.';
}

static int push(struct profile_dir *d, const char *name, __s64 mtime_ns)
{
	char *copy = strdup(name);

	if (!copy || ARRAY_RESERVE(d->files, d->cap, d->n + 1)) {
		free(copy);
		return -ENOMEM;
	}
	d->files[d->n++] = (struct entry){ copy, mtime_ns };
	return 0;
}

static int adopt_existing(struct profile_dir *d)
{
	int fd = dup(d->dirfd);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	struct stat st;
	int err = 0;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while (!err && (de = readdir(dir))) {
		if (!is_profile(de->d_name) ||
		    fstatat(d->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		err = push(d, de->d_name, st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec);
	}
	closedir(dir);
	if (d->n)	/* files is NULL in an empty dir, and qsort's base must not be */
		qsort(d->files, d->n, sizeof(*d->files), by_mtime);
	return err;
}

struct profile_dir *profile_dir__open(const char *path, int retention)
{
	struct profile_dir *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return NULL;
	d->dirfd = -1;
	d->retention = retention;
	if (mkdir(path, 0755) && errno != EEXIST) {
		err = -errno;
		goto err_free;
	}
	d->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->dirfd < 0) {
		err = -errno;
		goto err_free;
	}
	err = adopt_existing(d);
	if (err)
		goto err_free;
	return d;

err_free:
	profile_dir__free(d);
	errno = -err;
	return NULL;
}

void profile_dir__free(struct profile_dir *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++)
		free(d->files[i].name);
	free(d->files);
	if (d->dirfd >= 0)
		close(d->dirfd);
	free(d);
}

/* A service name made safe as one path component. */
static void file_name(char *buf, size_t len, const char *service, __s64 start_ns)
{
	time_t secs = start_ns / 1000000000LL;
	char safe[100], stamp[32];
	struct tm tm;
	size_t i;

	for (i = 0; service[i] && i < sizeof(safe) - 1; i++) {
		char c = service[i];

		safe[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			  c == '-' || c == '_' || (c == '.' && i) ? c : '_';
	}
	safe[i] = '\0';
	gmtime_r(&secs, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	snprintf(buf, len, "%s-%s.%03lldZ.pb.gz", i ? safe : "_", stamp,
		 (long long)(start_ns / 1000000) % 1000);
}

static void enforce_retention(struct profile_dir *d)
{
	size_t drop = d->n > (size_t)d->retention ? d->n - d->retention : 0;

	for (size_t i = 0; i < drop; i++) {
		unlinkat(d->dirfd, d->files[i].name, 0);
		free(d->files[i].name);
	}
	memmove(d->files, d->files + drop, (d->n - drop) * sizeof(*d->files));
	d->n -= drop;
}

int profile_dir__write(struct profile_dir *d, const char *service, __s64 start_ns,
		       const void *data, size_t len)
{
	char name[200], tmp[220];
	int fd, err;

	file_name(name, sizeof(name), service, start_ns);
	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	fd = openat(d->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	err = fdio__write_all(fd, data, len);
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(d->dirfd, tmp, d->dirfd, name))
		err = -errno;
	if (err) {
		unlinkat(d->dirfd, tmp, 0);
		return err;
	}
	err = push(d, name, start_ns);
	enforce_retention(d);
	return err;
}

size_t profile_dir__count(const struct profile_dir *d)
{
	return d->n;
}
