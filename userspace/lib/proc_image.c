/* proc_image.c -- a process image (pid, start, exec count): compared, hashed, and checked against /proc */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "clock.h"
#include "hashmap.h"
#include "proc_image.h"

/* /proc/PID/stat is one line: a comm of 16 bytes and 50-odd numbers fit */
#define STAT_MAX 1024
/* starttime is field 22; the fields after the comm's ")" begin at 3 (state) */
#define START_FIELD (22 - 3)

__u64 proc_image__hash(const struct proc_image *img)
{
	return hash_u64(img->start * 0x9e3779b97f4a7c15ULL ^ ((__u64)img->exec << 32 | img->pid), 0);
}

int proc_image__parse_stat(const char *buf, size_t len, __u64 *start)
{
	const char *p = NULL, *end = buf + len;
	__u64 v = 0;
	int field = 0;

	/* the comm may hold spaces and ")": the last ")" ends it */
	for (const char *q = buf; q < end; q++)
		if (*q == ')')
			p = q + 1;
	if (!p)
		return -EINVAL;
	while (p < end && field <= START_FIELD) {
		while (p < end && *p == ' ')
			p++;
		if (p == end)
			break;
		if (field++ < START_FIELD) {
			while (p < end && *p != ' ')
				p++;
			continue;
		}
		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (; p < end && *p >= '0' && *p <= '9'; p++) {
			if (v > (~0ULL - 9) / 10)
				return -EINVAL;
			v = v * 10 + (__u64)(*p - '0');
		}
		*start = v;
		return 0;
	}
	return -EINVAL;
}

/*
 * A new process's readers (the agent's table, the symbolizer, the unwinder,
 * the runtimes) each check after their reads that its pid still holds its
 * image: an open, a read and a close of /proc/PID/stat, 25-60 us on a
 * loaded host, three or four times a process. While a pid is held, its stat
 * file stays open and the checks after the first read it again: an open
 * stat file is its process's, and reads of it fail with ESRCH once that
 * process is reaped, whoever holds the pid since.
 */
#define HOLD_SLOTS 16
#define HOLD_NS 1000000000LL	/* a hold never released ends after this */

struct hold {
	__u32 pid;
	int fd;		/* -1: not opened yet */
	int refs;	/* 0: slot free */
	__s64 at;	/* CLOCK_MONOTONIC ns of the last proc_image__hold() */
};

static struct hold holds[HOLD_SLOTS] = { [0 ... HOLD_SLOTS - 1] = { .fd = -1 } };
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;

static void hold_drop(struct hold *h)
{
	if (h->fd >= 0)
		close(h->fd);
	*h = (struct hold){ .fd = -1 };
}

/* Under hold_lock: PID's live hold, holds past HOLD_NS ended on the way. */
static struct hold *hold_find(__u32 pid, __s64 now)
{
	struct hold *hit = NULL;

	for (int i = 0; i < HOLD_SLOTS; i++) {
		struct hold *h = &holds[i];

		if (h->refs && now - h->at >= HOLD_NS)
			hold_drop(h);
		else if (h->refs && h->pid == pid)
			hit = h;
	}
	return hit;
}

void proc_image__hold(__u32 pid)
{
	__s64 now = clock_ns(CLOCK_MONOTONIC);
	struct hold *h;
	int refs = 0;

	pthread_mutex_lock(&hold_lock);
	h = hold_find(pid, now);
	if (h) {	/* held again (its next image, maybe another process's): opened anew */
		refs = h->refs;
	} else {	/* a free slot, or the oldest hold ends early */
		h = &holds[0];
		for (int i = 1; i < HOLD_SLOTS && h->refs; i++)
			if (!holds[i].refs || holds[i].at < h->at)
				h = &holds[i];
	}
	hold_drop(h);
	*h = (struct hold){ .pid = pid, .fd = -1, .refs = refs + 1, .at = now };
	pthread_mutex_unlock(&hold_lock);
}

void proc_image__release(__u32 pid)
{
	pthread_mutex_lock(&hold_lock);
	for (int i = 0; i < HOLD_SLOTS; i++)
		if (holds[i].refs && holds[i].pid == pid && !--holds[i].refs)
			hold_drop(&holds[i]);
	pthread_mutex_unlock(&hold_lock);
}

/* PATH's first STAT_MAX bytes into buf by an open, a read and a close: 0 or a negative errno */
static int read_stat(const char *path, char *buf, ssize_t *n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	*n = read(fd, buf, STAT_MAX);
	err = *n < 0 ? (errno == ESRCH ? -ESRCH : -errno) : 0;
	close(fd);
	return err;
}

/* Held PID's stat into buf, its file opened at the first read: 0, 1 when not held, or a negative errno */
static int read_held(const char *path, __u32 pid, char *buf, ssize_t *n)
{
	struct hold *h;
	int err = 1;

	pthread_mutex_lock(&hold_lock);
	h = hold_find(pid, clock_ns(CLOCK_MONOTONIC));
	if (h && h->fd < 0)
		h->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (h && h->fd < 0)
		err = errno == ENOENT ? -ESRCH : -errno;
	else if (h) {
		*n = pread(h->fd, buf, STAT_MAX, 0);
		err = *n < 0 ? (errno == ESRCH ? -ESRCH : -errno) : 0;
	}
	pthread_mutex_unlock(&hold_lock);
	return err;
}

int proc_image__start_of(const char *proc_root, __u32 pid, __u64 *start)
{
	char path[64], buf[STAT_MAX];
	ssize_t n = 0;
	int err;

	snprintf(path, sizeof(path), "%s/%u/stat", proc_root, pid);
	err = strcmp(proc_root, "/proc") ? 1 : read_held(path, pid, buf, &n);
	if (err > 0)
		err = read_stat(path, buf, &n);
	if (err)
		return err;
	return proc_image__parse_stat(buf, (size_t)n, start);
}

bool proc_image__lives(const char *proc_root, const struct proc_image *img)
{
	__u64 start;
	int err = proc_image__start_of(proc_root, img->pid, &start);

	/* a process we may not read (another namespace's /proc): say it lives, keep its state */
	if (err && err != -ESRCH)
		return true;
	return !err && start == img->start;
}
