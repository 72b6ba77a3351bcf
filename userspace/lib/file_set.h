/* file_set.h -- a bounded set of files by device and inode */
#ifndef EBPFPROF_FILE_SET_H
#define EBPFPROF_FILE_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct file_set;

/* A set of at most CAP files; NULL with errno set. */
struct file_set *file_set__new(size_t cap);
void file_set__free(struct file_set *fs);

bool file_set__has(const struct file_set *fs, __u64 dev, __u64 ino);

/*
 * Adds (DEV, INO). A full set is emptied first: it is a cache of answers that
 * can be found again, so forgetting costs a re-read, never a wrong answer.
 * 0, or -ENOMEM (the set is then unchanged or empty, still usable).
 */
int file_set__add(struct file_set *fs, __u64 dev, __u64 ino);

/* Entries now, and how many times a full set was emptied. */
size_t file_set__count(const struct file_set *fs);
__u64 file_set__flushes(const struct file_set *fs);

#endif /* EBPFPROF_FILE_SET_H */
