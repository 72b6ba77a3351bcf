/* fdio.h -- whole-buffer writes to file descriptors */
#ifndef EBPFPROF_FDIO_H
#define EBPFPROF_FDIO_H

#include <stddef.h>

/* Writes all len bytes, retrying short writes and EINTR. 0 or a negative errno. */
int fdio__write_all(int fd, const void *buf, size_t len);

#endif /* EBPFPROF_FDIO_H */
