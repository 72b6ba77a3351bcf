/* output.c -- the profile file: created (as a temp file) before profiling, renamed into place at the end */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "output.h"

struct output {
	FILE *file;
	char *path;	/* NULL for stdout */
	char *tmp;
};

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
	if (o->path && o->file)
		fclose(o->file);
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	free(o);
}
