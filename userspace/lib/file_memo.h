/* file_memo.h -- a bounded memo of what one read of a file found, by the file's identity */
#ifndef EBPFPROF_FILE_MEMO_H
#define EBPFPROF_FILE_MEMO_H

#include <stddef.h>
#include <sys/stat.h>
#include <linux/types.h>

struct file_memo;

/*
 * A memo of at most CAP answers of VALUE_SIZE bytes each; NULL with errno
 * set. A file is known by its device, inode, size and modification time
 * (what fstat of an open descriptor says), so a file rebuilt in place under
 * a recycled inode is another file; EXTRA tells apart reads of one file
 * that depend on more (a mapping's offset).
 */
struct file_memo *file_memo__new(size_t cap, size_t value_size);
void file_memo__free(struct file_memo *fm);

/* The answer kept for (ST, EXTRA), borrowed until the next put; NULL when none. */
const void *file_memo__get(struct file_memo *fm, const struct stat *st, __u64 extra);

/*
 * Keeps VALUE for (ST, EXTRA), replacing an answer kept for it. A full memo
 * is emptied first: forgetting costs a read again, never a wrong answer.
 * 0 or -ENOMEM (the memo is then unchanged or empty, still usable).
 */
int file_memo__put(struct file_memo *fm, const struct stat *st, __u64 extra, const void *value);

/* Answers kept now; answers given (gets that found one). */
size_t file_memo__count(const struct file_memo *fm);
__u64 file_memo__hits(const struct file_memo *fm);

#endif /* EBPFPROF_FILE_MEMO_H */
