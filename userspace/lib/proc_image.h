/* proc_image.h -- a process image (pid, start, exec count): compared, hashed, and checked against /proc */
#ifndef EBPFPROF_PROC_IMAGE_H
#define EBPFPROF_PROC_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "profile.h"

static inline struct proc_image proc_image__of(__u32 pid, __u64 start, __u32 exec)
{
	return (struct proc_image){ .pid = pid, .exec = exec, .start = start };
}

static inline bool proc_image__eq(const struct proc_image *a, const struct proc_image *b)
{
	return a->pid == b->pid && a->start == b->start && a->exec == b->exec;
}

/* Whether B came after A at A's pid: a later process, or a later exec of A's. */
static inline bool proc_image__after(const struct proc_image *a, const struct proc_image *b)
{
	return a->pid == b->pid && (b->start > a->start || (b->start == a->start && b->exec > a->exec));
}

__u64 proc_image__hash(const struct proc_image *img);

/*
 * The start of the process at PID (struct proc_image's unit: clock ticks
 * since boot), from PROC_ROOT/PID/stat: 0, -ESRCH when no process holds
 * the pid, or another negative errno.
 */
int proc_image__start_of(const char *proc_root, __u32 pid, __u64 *start);

/*
 * From here to proc_image__release(pid) (at most 1 s; 16 pids at once, the
 * oldest hold ends first), the checks of PID under /proc read one open
 * /proc/PID/stat again, which fails once the process it was opened for is
 * reaped: for the readers of one new process, one after the other. Held
 * again before that (its next image), the file is opened anew, and held
 * until released as many times. Thread-safe.
 */
void proc_image__hold(__u32 pid);
void proc_image__release(__u32 pid);

/* The start field of a /proc/PID/stat line BUF of LEN bytes: 0 or -EINVAL. */
int proc_image__parse_stat(const char *buf, size_t len, __u64 *start);

/*
 * Whether the process of IMG still holds its pid. Its exec count is not
 * shown in /proc: an image that exec'd since still "lives" here.
 */
bool proc_image__lives(const char *proc_root, const struct proc_image *img);

#endif /* EBPFPROF_PROC_IMAGE_H */
