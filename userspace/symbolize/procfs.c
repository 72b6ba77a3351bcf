/* procfs.c -- bounded reads of /proc text files, and safe opening of another process's mapped files */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <linux/openat2.h>
#include "proc_maps.h"
#include "procfs.h"

#define READ_CHUNK_MIN (16 * 1024)

/* read(2) that retries on EINTR; returns bytes read or a negative errno */
static ssize_t read_retry(int fd, void *buf, size_t len)
{
	ssize_t r;

	do {
		r = read(fd, buf, len);
	} while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

/* reads FD to EOF or CAP bytes; /proc files report st_size 0, so grow as we go */
static int read_all(int fd, size_t cap, char **buf, size_t *len, bool *truncated)
{
	size_t size = READ_CHUNK_MIN, used = 0;
	char *data = NULL, *tmp;
	ssize_t r;
	int err;

	if (size > cap + 1)
		size = cap + 1;
	data = malloc(size);
	if (!data)
		return -ENOMEM;
	for (;;) {
		if (used == cap) {
			char probe;

			r = read_retry(fd, &probe, 1);
			if (r < 0) {
				err = r;
				goto out_free;
			}
			if (truncated)
				*truncated = r > 0;
			break;
		}
		if (used + 1 == size) {
			/* keep one byte for the NUL; never grow past cap + 1 */
			size = size > (cap + 1) / 2 ? cap + 1 : size * 2;
			tmp = realloc(data, size);
			if (!tmp) {
				err = -ENOMEM;
				goto out_free;
			}
			data = tmp;
		}
		r = read_retry(fd, data + used, size - 1 - used);
		if (r < 0) {
			err = r;
			goto out_free;
		}
		if (r == 0) {
			if (truncated)
				*truncated = false;
			break;
		}
		used += r;
	}
	data[used] = '\0';
	*buf = data;
	*len = used;
	return 0;

out_free:
	free(data);
	return err;
}

int procfs__read_file(int dirfd, const char *path, size_t cap, char **buf, size_t *len,
		      bool *truncated)
{
	int fd, err;

	/* O_NONBLOCK: a FIFO put where a file was expected must not block us */
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	err = read_all(fd, cap, buf, len, truncated);
	close(fd);
	return err;
}

/* PROC_ROOT/PID/map_files/START-END into PATH (PATH_MAX bytes): 0 or -ENAMETOOLONG */
static int map_files_path(char *path, const char *proc_root, __u32 pid, const struct proc_map *m)
{
	int n = snprintf(path, PATH_MAX, "%s/%u/map_files/%llx-%llx", proc_root, pid,
			 (unsigned long long)m->start, (unsigned long long)m->end);

	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/* opens the mapping through map_files; exact, but needs CAP_SYS_ADMIN-like rights */
static int open_map_files(const char *proc_root, __u32 pid, const struct proc_map *m)
{
	char path[PATH_MAX];
	int fd;

	if (map_files_path(path, proc_root, pid, m))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

/* opens m->path as the process sees it: resolution can never leave its root */
static int open_in_root(const char *proc_root, __u32 pid, const struct proc_map *m)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char path[PATH_MAX];
	int n, root_fd, fd;

	if (m->path[0] != '/')
		return -ENOENT;
	n = snprintf(path, sizeof(path), "%s/%u/root", proc_root, pid);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		return -errno;
	fd = syscall(SYS_openat2, root_fd, m->path, &how, sizeof(how));
	if (fd < 0)
		fd = -errno;
	close(root_fd);
	return fd;
}

int procfs__open_mapped(const char *proc_root, __u32 pid, const struct proc_map *m, int *fd,
			struct stat *st)
{
	bool exact = true;
	int f, err;

	f = open_map_files(proc_root, pid, m);
	if (f < 0) {
		int map_err = f;

		exact = false;
		f = open_in_root(proc_root, pid, m);
		/* a deleted file has no path: map_files' refusal is the reason it is lost */
		if (f < 0 && m->deleted && (map_err == -EPERM || map_err == -EACCES))
			return map_err;
		if (f < 0)
			return f;
	}
	if (fstat(f, st)) {
		err = -errno;
		goto out_close;
	}
	if (!S_ISREG(st->st_mode)) {
		err = -EINVAL;
		goto out_close;
	}
	/* a path may have been replaced since the mapping was made */
	if (!exact && m->inode &&
	    (st->st_ino != m->inode || major(st->st_dev) != m->dev_major ||
	     minor(st->st_dev) != m->dev_minor)) {
		err = -ESTALE;
		goto out_close;
	}
	*fd = f;
	return 0;

out_close:
	close(f);
	return err;
}

int procfs__stat_mapped(const char *proc_root, __u32 pid, const struct proc_map *m,
			struct stat *st)
{
	char path[PATH_MAX];
	int fd, err;

	/* map_files names the very file, as an open of it would: no descriptor made and closed */
	if (!map_files_path(path, proc_root, pid, m) && !stat(path, st))
		return S_ISREG(st->st_mode) ? 0 : -EINVAL;
	err = procfs__open_mapped(proc_root, pid, m, &fd, st);
	if (!err)
		close(fd);
	return err;
}
