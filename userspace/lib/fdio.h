/* fdio.h -- whole-buffer reads and writes on file descriptors */
#ifndef EBPFPROF_FDIO_H
#define EBPFPROF_FDIO_H

#include <stddef.h>
#include <sys/types.h>

/* Writes all len bytes, retrying short writes and EINTR. 0 or a negative errno. */
int fdio__write_all(int fd, const void *buf, size_t len);

/* Reads until len bytes or end of file, retrying short reads and EINTR: how many, or a negative errno. */
ssize_t fdio__read_full(int fd, void *buf, size_t len);

#endif /* EBPFPROF_FDIO_H */
