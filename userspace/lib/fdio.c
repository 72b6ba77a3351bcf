/* fdio.c -- whole-buffer reads and writes on file descriptors */
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

ssize_t fdio__read_full(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			break;	/* end of file */
		got += (size_t)n;
	}
	return (ssize_t)got;
}
