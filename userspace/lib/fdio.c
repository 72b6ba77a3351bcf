/* fdio.c -- whole-buffer writes to file descriptors */
#include <errno.h>
#include <unistd.h>
#include "fdio.h"

int fdio__write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;	/* 0 bytes for a non-empty write: give up */
		p += n;
		len -= n;
	}
	return 0;
}
