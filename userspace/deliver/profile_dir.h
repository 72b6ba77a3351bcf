/* profile_dir.h -- the agent's local store: one SERVICE-START.pb.gz per series window, oldest removed past a bound */
#ifndef EBPFPROF_PROFILE_DIR_H
#define EBPFPROF_PROFILE_DIR_H

#include <stddef.h>
#include <linux/types.h>

struct profile_dir;

/* Creates dir if needed and adopts the .pb.gz files already there. NULL with errno set. */
struct profile_dir *profile_dir__open(const char *dir, int retention);
void profile_dir__free(struct profile_dir *d);

/* Writes data atomically as SERVICE-YYYYmmddTHHMMSS.mmmZ.pb.gz; removes the oldest past retention. */
int profile_dir__write(struct profile_dir *d, const char *service, __s64 start_ns,
		       const void *data, size_t len);

size_t profile_dir__count(const struct profile_dir *d);

#endif /* EBPFPROF_PROFILE_DIR_H */
