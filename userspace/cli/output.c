/* output.c -- the profile file: created (as a temp file) before profiling, renamed into place at the end */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "output.h"

struct output {
	FILE *file;
	char *path;	/* NULL for stdout */
	char *tmp;
	bool special;	/* a device or FIFO, written in place */
};

/*
 * A path that exists and is no regular file (/dev/null, a FIFO, /dev/stdout)
 * is written in place: renaming a temporary over it would replace the device.
 */
static int open_special(struct output *o, const char *path)
{
	struct stat st;
	int fd;

	if (stat(path, &st) || S_ISREG(st.st_mode))
		return 0;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	o->file = fdopen(fd, "w");
	if (!o->file) {
		close(fd);
		return -errno;
	}
	o->special = true;
	return 1;
}

struct output *output__open(const char *path)
{
	struct output *o = calloc(1, sizeof(*o));
	int fd, err;

	if (!o)
		return NULL;
	if (!strcmp(path, "-")) {
		o->file = stdout;
		return o;
	}
	err = open_special(o, path);
	if (err > 0)
		return o;
	if (err < 0) {
		err = -err;
		goto err_free;
	}
	o->path = strdup(path);
	if (!o->path || asprintf(&o->tmp, "%s.XXXXXX", path) < 0) {
		o->tmp = NULL;
		err = ENOMEM;
		goto err_free;
	}
	fd = mkstemp(o->tmp);
	if (fd < 0) {
		err = errno;
		free(o->tmp);
		o->tmp = NULL;	/* nothing to unlink */
		goto err_free;
	}
	fchmod(fd, 0644);	/* mkstemp's 0600 would hide the profile from the user who asked */
	o->file = fdopen(fd, "w");
	if (!o->file) {
		err = errno;
		close(fd);
		goto err_free;
	}
	return o;

err_free:
	output__abort(o);
	errno = err;
	return NULL;
}

FILE *output__file(struct output *o)
{
	return o->file;
}

int output__commit(struct output *o)
{
	int err = 0;

	if (fflush(o->file) || ferror(o->file))
		err = -errno ? -errno : -EIO;
	if (o->special && fclose(o->file) && !err)
		err = -errno;
	if (!o->path) {
		free(o);
		return err;
	}
	if (fclose(o->file) && !err)
		err = -errno;
	o->file = NULL;
	if (!err && rename(o->tmp, o->path))
		err = -errno;
	if (err) {
		output__abort(o);
		return err;
	}
	free(o->tmp);
	free(o->path);
	free(o);
	return 0;
}

void output__abort(struct output *o)
{
	if (!o)
		return;
	if ((o->path || o->special) && o->file)
		fclose(o->file);
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	free(o);
}
