/* proc_maps.c -- parses /proc/PID/maps text into address ranges, offsets and file identities */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/clock.h"
#include "proc_maps.h"
#include "procfs.h"

#define DELETED_SUFFIX " (deleted)"

/* parses 1..MAX_DIGITS hex digits; returns the position after them or NULL */
static const char *parse_hex(const char *p, const char *end, int max_digits, __u64 *v)
{
	const char *start = p;
	__u64 x = 0;

	while (p < end && p - start < max_digits) {
		char c = *p;
		int d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		x = x << 4 | d;
		p++;
	}
	/* no digits, or more digits than fit */
	if (p == start || (p < end && p - start == max_digits && isxdigit((unsigned char)*p)))
		return NULL;
	*v = x;
	return p;
}

static const char *parse_dec(const char *p, const char *end, __u64 *v)
{
	const char *start = p;
	__u64 x = 0;

	while (p < end && *p >= '0' && *p <= '9') {
		unsigned d = *p - '0';

		if (x > (~0ULL - d) / 10)
			return NULL;
		x = x * 10 + d;
		p++;
	}
	if (p == start)
		return NULL;
	*v = x;
	return p;
}

static const char *expect(const char *p, const char *end, char c)
{
	return p && p < end && *p == c ? p + 1 : NULL;
}

static bool valid_perms(const char *p)
{
	return (p[0] == 'r' || p[0] == '-') && (p[1] == 'w' || p[1] == '-') &&
	       (p[2] == 'x' || p[2] == '-') && (p[3] == 'p' || p[3] == 's');
}

/*
 * One line, [p, end) without its newline:
 *   start-end perms pgoff major:minor inode [spaces path]
 * Fills M except path, and the path's bounds. 0 or -EINVAL.
 */
static int parse_line(const char *p, const char *end, struct proc_map *m, const char **path,
		      size_t *path_len)
{
	__u64 major, minor;

	if (end - p > PROC_MAPS_LINE_MAX || memchr(p, '\0', end - p))
		return -EINVAL;
	p = parse_hex(p, end, 16, &m->start);
	p = expect(p, end, '-');
	if (p)
		p = parse_hex(p, end, 16, &m->end);
	p = expect(p, end, ' ');
	if (!p || end - p < 5 || !valid_perms(p) || p[4] != ' ')
		return -EINVAL;
	memcpy(m->perms, p, 4);
	m->perms[4] = '\0';
	p = parse_hex(p + 5, end, 16, &m->pgoff);
	p = expect(p, end, ' ');
	if (p)
		p = parse_hex(p, end, 8, &major);
	p = expect(p, end, ':');
	if (p)
		p = parse_hex(p, end, 8, &minor);
	p = expect(p, end, ' ');
	if (p)
		p = parse_dec(p, end, &m->inode);
	if (!p || m->start >= m->end || major > 0xffffffffULL || minor > 0xffffffffULL)
		return -EINVAL;
	m->dev_major = major;
	m->dev_minor = minor;
	if (p < end && *p != ' ')
		return -EINVAL;
	while (p < end && *p == ' ')
		p++;
	m->deleted = false;
	if ((size_t)(end - p) > sizeof(DELETED_SUFFIX) - 1 &&
	    !memcmp(end - (sizeof(DELETED_SUFFIX) - 1), DELETED_SUFFIX, sizeof(DELETED_SUFFIX) - 1)) {
		m->deleted = true;
		end -= sizeof(DELETED_SUFFIX) - 1;
	}
	*path = p;
	*path_len = end - p;
	return 0;
}

/* calls parse_line on each line; with MAPS NULL it only counts entries and path bytes */
static void scan(const char *buf, size_t len, struct proc_map *maps, char *pool, size_t *n,
		 size_t *pool_len)
{
	const char *p = buf, *end = buf + len;

	*n = 0;
	*pool_len = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		const char *eol = nl ? nl : end;
		struct proc_map m;
		const char *path;
		size_t path_len;

		if (!parse_line(p, eol, &m, &path, &path_len)) {
			if (maps) {
				memcpy(pool + *pool_len, path, path_len);
				pool[*pool_len + path_len] = '\0';
				m.path = pool + *pool_len;
				maps[*n] = m;
			}
			(*n)++;
			*pool_len += path_len + 1;
		}
		p = nl ? nl + 1 : end;
	}
}

/* the entries and their paths in one allocation of *bytes */
static int parse(const char *buf, size_t len, struct proc_map **out, size_t *n, size_t *bytes)
{
	size_t count, pool_len, count2, pool_len2;
	struct proc_map *maps;

	/* two passes: count, then fill one exact allocation (entries, then paths) */
	scan(buf, len, NULL, NULL, &count, &pool_len);
	*bytes = count * sizeof(*maps) + pool_len + 1;
	maps = malloc(*bytes);
	if (!maps)
		return -ENOMEM;
	scan(buf, len, maps, (char *)(maps + count), &count2, &pool_len2);
	*out = maps;
	*n = count2;
	return 0;
}

int proc_maps__parse(const char *buf, size_t len, struct proc_map **out, size_t *n)
{
	size_t bytes;

	return parse(buf, len, out, n, &bytes);
}

/*
 * The symbolizer, the unwinder and each runtime read a new process's maps
 * one after the other when it is handed on, and the kernel's walk of a
 * process's mappings was the agent's largest cost under process churn.
 * Between proc_maps__share() and proc_maps__unshare() they share the first
 * one's read. Reads of processes not shared always go to the kernel.
 */
#define SHARE_SLOTS 16
#define SHARE_BYTES_MAX (1u << 20)	/* larger parses are read each time */
#define SHARE_NS 1000000000LL		/* a share never unshared ends after this */
#define SHARE_ROOT_MAX 64

struct share {
	__u32 pid;
	__s64 at;		/* CLOCK_MONOTONIC ns of proc_maps__share(); 0: slot free */
	char root[SHARE_ROOT_MAX];
	struct proc_map *maps;	/* the first read, parsed (one allocation); NULL: not read yet */
	size_t n, bytes;
	bool gone;		/* the first read found no process: so do the next readers */
	int refs;		/* shares not unshared yet: two images of one pid in a burst */
};

static struct share shares[SHARE_SLOTS];
static pthread_mutex_t share_lock = PTHREAD_MUTEX_INITIALIZER;

static void share_drop(struct share *sh)
{
	free(sh->maps);
	*sh = (struct share){ 0 };
}

/* Under share_lock: the live share of (root, pid), shares past SHARE_NS ended on the way. */
static struct share *share_find(const char *root, __u32 pid, __s64 now)
{
	struct share *hit = NULL;

	for (int i = 0; i < SHARE_SLOTS; i++) {
		struct share *sh = &shares[i];

		if (sh->at && now - sh->at >= SHARE_NS)
			share_drop(sh);
		else if (sh->at && sh->pid == pid && !strcmp(sh->root, root))
			hit = sh;
	}
	return hit;
}

void proc_maps__share(const char *proc_root, __u32 pid)
{
	const char *root = proc_root ? proc_root : "/proc";
	__s64 now = clock_ns(CLOCK_MONOTONIC);
	struct share *sh;
	int refs = 0;

	if (strlen(root) >= SHARE_ROOT_MAX)
		return;
	pthread_mutex_lock(&share_lock);
	sh = share_find(root, pid, now);
	if (sh) {	/* shared again (its next image): read anew, unshared as often */
		refs = sh->refs;
	} else {	/* a free slot, or the oldest share ends early */
		sh = &shares[0];
		for (int i = 1; i < SHARE_SLOTS && sh->at; i++)
			if (!shares[i].at || shares[i].at < sh->at)
				sh = &shares[i];
	}
	share_drop(sh);
	*sh = (struct share){ .pid = pid, .at = now, .refs = refs + 1 };
	strcpy(sh->root, root);
	pthread_mutex_unlock(&share_lock);
}

void proc_maps__unshare(__u32 pid)
{
	pthread_mutex_lock(&share_lock);
	for (int i = 0; i < SHARE_SLOTS; i++)
		if (shares[i].at && shares[i].pid == pid && --shares[i].refs <= 0)
			share_drop(&shares[i]);
	pthread_mutex_unlock(&share_lock);
}

bool proc_maps__gone(const char *proc_root, __u32 pid)
{
	struct share *sh;
	bool gone;

	pthread_mutex_lock(&share_lock);
	sh = share_find(proc_root ? proc_root : "/proc", pid, clock_ns(CLOCK_MONOTONIC));
	gone = sh && sh->gone;
	pthread_mutex_unlock(&share_lock);
	return gone;
}

static int read_text(const char *root, __u32 pid, char **buf, size_t *len)
{
	char path[PATH_MAX];
	bool truncated;
	int err;

	err = snprintf(path, sizeof(path), "%s/%u/maps", root, pid);
	if (err < 0 || (size_t)err >= sizeof(path))
		return -ENAMETOOLONG;
	err = procfs__read_file(AT_FDCWD, path, PROC_MAPS_READ_CAP, buf, len, &truncated);
	if (err == -ENOENT)
		return -ESRCH;
	if (err)
		return err;
	if (truncated) {
		/* drop the line the cap cut in two */
		char *nl = memrchr(*buf, '\n', *len);

		*len = nl ? (size_t)(nl - *buf) + 1 : 0;
	}
	return 0;
}

/* a copy of N entries in one allocation of BYTES, their path pointers moved into it */
static struct proc_map *dup_maps(const struct proc_map *src, size_t n, size_t bytes)
{
	struct proc_map *maps = malloc(bytes);

	if (!maps)
		return NULL;
	memcpy(maps, src, bytes);
	for (size_t i = 0; i < n; i++)
		maps[i].path = (const char *)maps + (src[i].path - (const char *)src);
	return maps;
}

static int share_copy(const struct share *sh, struct proc_map **out, size_t *n)
{
	*out = dup_maps(sh->maps, sh->n, sh->bytes);
	*n = sh->n;
	return *out ? 0 : -ENOMEM;
}

int proc_maps__read(const char *proc_root, __u32 pid, struct proc_map **out, size_t *n)
{
	const char *root = proc_root ? proc_root : "/proc";
	struct share *sh;
	size_t len, bytes;
	char *buf;
	int err;

	pthread_mutex_lock(&share_lock);
	sh = share_find(root, pid, clock_ns(CLOCK_MONOTONIC));
	err = sh && sh->gone ? -ESRCH : sh && sh->maps ? share_copy(sh, out, n) : 1;
	pthread_mutex_unlock(&share_lock);
	if (err <= 0)
		return err;
	err = read_text(root, pid, &buf, &len);
	if (err == -ESRCH) {
		pthread_mutex_lock(&share_lock);
		sh = share_find(root, pid, clock_ns(CLOCK_MONOTONIC));
		if (sh)
			sh->gone = true;
		pthread_mutex_unlock(&share_lock);
	}
	if (err)
		return err;
	err = parse(buf, len, out, n, &bytes);
	free(buf);
	if (err)
		return err;
	pthread_mutex_lock(&share_lock);
	sh = share_find(root, pid, clock_ns(CLOCK_MONOTONIC));
	/* the share keeps a copy: the next readers neither read nor parse */
	if (sh && !sh->maps && bytes <= SHARE_BYTES_MAX) {
		sh->maps = dup_maps(*out, *n, bytes);
		sh->n = *n;
		sh->bytes = bytes;
	}
	pthread_mutex_unlock(&share_lock);
	return 0;
}

void proc_maps__free(struct proc_map *maps)
{
	free(maps);
}
