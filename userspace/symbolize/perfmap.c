/* perfmap.c -- JIT symbols from /tmp/perf-PID.map files (Node.js, JVM agents, .NET, LuaJIT) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include "lib/hexdigit.h"
#include "lib/array.h"
#include "lib/clock.h"
#include "lib/proc_image.h"
#include "perfmap.h"
#include "procfs.h"

#define STATUS_CAP (64 * 1024)
#define NSPID_LEVELS_MAX 33	/* the kernel nests at most 32 pid namespaces below the root */
#define TAIL_LEN 64		/* bytes kept from before the read offset, to notice a rewrite */
#define POOL_MAX PERFMAP_FILE_CAP	/* names are a subset of the file; also keeps offsets in __u32 */
/*
 * A file last written this long before its process started is an earlier
 * holder's of the pid. The start is known to a clock tick and converted to
 * the wall clock, which NTP may have moved since; a pid comes round again
 * only after tens of thousands of others, far more than a second apart.
 */
#define STALE_SLACK_NS 1000000000LL

/*
 * Overlapping lines: the table is a sorted list of disjoint segments, each
 * naming the symbol that owns it; a symbol partly hidden by later lines owns
 * what is left of it, possibly in several pieces. A batch of new lines is
 * first resolved within itself by a sweep over its starts with a max-heap on
 * line order (O(k log k)), then laid over the old segments in one merge
 * (O(n + k)), the new winning wherever they meet. A lookup is then one
 * binary search with no candidates to compare, and an appended batch needs
 * nothing of the old lines but their segments.
 */
struct seg {
	__u64 start;		/* [start, end) */
	__u64 end;
	__u32 name_off;		/* into pool */
	__u32 delta;		/* start minus the symbol's start; < PERFMAP_SYM_SIZE_MAX */
};

struct segv {
	struct seg *s;
	size_t n, cap;
};

/* a line of a batch being added */
struct ent {
	__u64 start;
	__u64 end;
	__u32 name_off;
	__u32 seq;		/* order in the batch */
};

/* what a batch of lines changes; applied to the table only when all went well */
struct batch {
	struct ent *e;
	size_t n, cap;
	__u64 malformed;
	__u64 dropped;
	bool skipping;
};

struct perfmap {
	/* the table */
	struct segv segs;
	char *pool;
	size_t pool_len, pool_cap;
	size_t n_lines;
	bool skipping;		/* inside an over-long line: drop up to its newline */
	/* the file, when tied to one (proc_root != NULL) */
	char *proc_root;
	__u32 pid;
	__u32 nspid;
	uid_t uids[4];		/* real, effective, saved, filesystem */
	__s64 born_ns;		/* the process's start, CLOCK_REALTIME ns; 0: unknown */
	bool seen;		/* dev..mtime describe the file as last read */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	__u64 offset;		/* end of the last line taken */
	unsigned char tail[TAIL_LEN];	/* the tail_len bytes before offset */
	size_t tail_len;
	struct perfmap_stats stats;
};

/* one well-formed line; name points into the input */
struct line {
	__u64 start;
	__u64 size;
	const char *name;
	size_t name_len;
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* a hex number (optional 0x, at most 16 digits) and the blanks after it, in [*pp, end) */
static int parse_hex(const char **pp, const char *end, __u64 *v)
{
	const char *p = *pp, *digits;
	int d;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	digits = p;
	*v = 0;
	for (; p < end && (d = hexval(*p)) >= 0; p++) {
		if (p - digits == 16)
			return -EINVAL;
		*v = *v << 4 | d;
	}
	if (p == digits || p == end || !is_blank(*p))
		return -EINVAL;
	while (p < end && is_blank(*p))
		p++;
	*pp = p;
	return 0;
}

/* "START SIZE name" in [p, end), no newline; 0, or -EINVAL for a line to skip */
static int parse_line(const char *p, const char *end, struct line *l)
{
	if (end - p > PERFMAP_LINE_MAX)
		return -EINVAL;
	if (parse_hex(&p, end, &l->start) || parse_hex(&p, end, &l->size))
		return -EINVAL;
	while (end > p && (is_blank(end[-1]) || end[-1] == '\r'))
		end--;
	if (p == end)
		return -EINVAL;
	/* names end up in reports and terminals: no NULs, no control characters */
	for (const char *q = p; q < end; q++)
		if (((unsigned char)*q < 0x20 && *q != '\t') || *q == 0x7f)
			return -EINVAL;
	if (!l->size || l->size > PERFMAP_SYM_SIZE_MAX || l->start > UINT64_MAX - l->size)
		return -EINVAL;
	l->name = p;
	l->name_len = end - p;
	return 0;
}

/* queues L in B, its name in the pool; past the caps it is counted and dropped */
static int add_line(struct perfmap *m, struct batch *b, const struct line *l)
{
	struct ent *e;

	if (m->n_lines + b->n >= PERFMAP_ENTRIES_MAX || m->pool_len + l->name_len + 1 > POOL_MAX) {
		b->dropped++;
		return 0;
	}
	if (ARRAY_RESERVE(b->e, b->cap, b->n + 1) ||
	    ARRAY_RESERVE(m->pool, m->pool_cap, m->pool_len + l->name_len + 1))
		return -ENOMEM;
	e = &b->e[b->n];
	e->start = l->start;
	e->end = l->start + l->size;
	e->name_off = m->pool_len;
	e->seq = b->n++;
	memcpy(m->pool + m->pool_len, l->name, l->name_len);
	m->pool[m->pool_len + l->name_len] = '\0';
	m->pool_len += l->name_len + 1;
	return 0;
}

/* queues the newline-terminated lines of BUF[0, LEN); *used: bytes up to the last newline */
static int parse_lines(struct perfmap *m, struct batch *b, const char *buf, size_t len,
		       size_t *used)
{
	const char *p = buf, *end = buf + len, *nl;
	struct line l;
	int err;

	while (p < end && (nl = memchr(p, '\n', end - p))) {
		if (b->skipping)
			b->skipping = false;
		else if (parse_line(p, nl, &l))
			b->malformed++;
		else if ((err = add_line(m, b, &l)))
			return err;
		p = nl + 1;
	}
	*used = p - buf;
	return 0;
}

/* appends [start, end) to V, or extends the last segment when it is the same symbol's */
static int emit(struct segv *v, __u64 start, __u64 end, __u32 name_off, __u64 delta)
{
	struct seg *last = v->n ? &v->s[v->n - 1] : NULL;

	if (last && last->end == start && last->name_off == name_off &&
	    last->start - last->delta == start - delta) {
		last->end = end;
		return 0;
	}
	if (ARRAY_RESERVE(v->s, v->cap, v->n + 1))
		return -ENOMEM;
	v->s[v->n++] = (struct seg){ .start = start, .end = end, .name_off = name_off,
				     .delta = (__u32)delta };
	return 0;
}

static int cmp_ent(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* heap H[0, *n) of indices into E, the latest line (highest seq) on top */
static void heap_push(__u32 *h, size_t *n, const struct ent *e, __u32 i)
{
	size_t c = (*n)++;

	while (c && e[h[(c - 1) / 2]].seq < e[i].seq) {
		h[c] = h[(c - 1) / 2];
		c = (c - 1) / 2;
	}
	h[c] = i;
}

static void heap_pop(__u32 *h, size_t *n, const struct ent *e)
{
	__u32 last = h[--*n];
	size_t c = 0, k;

	while ((k = 2 * c + 1) < *n) {
		if (k + 1 < *n && e[h[k + 1]].seq > e[h[k]].seq)
			k++;
		if (e[h[k]].seq <= e[last].seq)
			break;
		h[c] = h[k];
		c = k;
	}
	h[c] = last;
}

/*
 * The segments of batch E[0, N), later lines winning. Sweeping up the
 * address space, the heap holds every line begun so far; lines already
 * ended are dropped lazily when they reach the top. The owner changes only
 * where a line starts or where the top line ends, so each step emits
 * [x, min(next start, top end)) for the top line.
 */
static int resolve(struct ent *e, size_t n, struct segv *out)
{
	size_t i = 0, hn = 0;
	__u64 x = 0, next;
	__u32 *heap;
	int err = 0;

	if (!n)
		return 0;
	qsort(e, n, sizeof(*e), cmp_ent);
	heap = malloc(n * sizeof(*heap));
	if (!heap)
		return -ENOMEM;
	while (i < n || hn) {
		const struct ent *top;

		if (!hn)
			x = e[i].start;
		while (i < n && e[i].start == x)
			heap_push(heap, &hn, e, i++);
		while (hn && e[heap[0]].end <= x)
			heap_pop(heap, &hn, e);
		if (!hn)
			continue;
		top = &e[heap[0]];
		next = top->end;
		if (i < n && e[i].start < next)
			next = e[i].start;
		err = emit(out, x, next, top->name_off, x - top->start);
		if (err)
			break;
		x = next;
	}
	free(heap);
	return err;
}

/* NEW laid over OLD into OUT; all sorted and disjoint, NEW wins where they meet */
static int overlay(const struct segv *old, const struct segv *new, struct segv *out)
{
	__u64 covered = 0;	/* end of the last new segment emitted */
	size_t j = 0;
	int err;

	for (size_t i = 0; i < old->n; i++) {
		const struct seg *o = &old->s[i];
		__u64 s = o->start, end;

		for (;;) {
			if (s < covered)
				s = covered;
			if (s >= o->end)
				break;
			if (j < new->n && new->s[j].start <= s) {
				const struct seg *ns = &new->s[j++];

				err = emit(out, ns->start, ns->end, ns->name_off, ns->delta);
				if (err)
					return err;
				covered = ns->end;
				continue;
			}
			end = o->end;
			if (j < new->n && new->s[j].start < end)
				end = new->s[j].start;
			err = emit(out, s, end, o->name_off, o->delta + (s - o->start));
			if (err)
				return err;
			s = end;
		}
	}
	for (; j < new->n; j++) {
		err = emit(out, new->s[j].start, new->s[j].end, new->s[j].name_off,
			   new->s[j].delta);
		if (err)
			return err;
	}
	return 0;
}

/* applies batch B (whose names are already in the pool) to the table */
static int commit(struct perfmap *m, struct batch *b)
{
	struct segv fresh = { 0 }, out = { 0 };
	int err = 0;

	if (b->n) {
		err = resolve(b->e, b->n, &fresh);
		if (err)
			goto out;
		if (m->segs.n) {
			err = overlay(&m->segs, &fresh, &out);
			if (err)
				goto out;
		} else {
			out = fresh;
			fresh = (struct segv){ 0 };
		}
		free(m->segs.s);
		m->segs = out;
		out = (struct segv){ 0 };
	}
	m->n_lines += b->n;
	m->skipping = b->skipping;
	m->stats.malformed += b->malformed;
	m->stats.dropped += b->dropped;
out:
	free(fresh.s);
	free(out.s);
	return err;
}

int perfmap__parse(struct perfmap *m, const char *buf, size_t len)
{
	struct batch b = { .skipping = m->skipping };
	size_t pool_len = m->pool_len, used;
	int err;

	if (!len)
		return 0;
	err = parse_lines(m, &b, buf, len, &used);
	if (!err)
		err = commit(m, &b);
	if (err)
		m->pool_len = pool_len;
	free(b.e);
	return err;
}

/* the numbers after KEY ("Uid:") on its line of status text, at most MAX; count or -errno */
static int status_nums(const char *buf, size_t len, const char *key, __u32 *v, int max)
{
	const char *p = buf, *end = buf + len, *eol;
	size_t klen = strlen(key);
	int n = 0;

	for (; p < end; p = eol + 1) {
		eol = memchr(p, '\n', end - p);
		if (!eol)
			eol = end;
		if ((size_t)(eol - p) >= klen && !memcmp(p, key, klen))
			break;
	}
	if (p >= end)
		return -ENOENT;
	for (p += klen; p < eol;) {
		__u64 x = 0;
		const char *d;

		while (p < eol && is_blank(*p))
			p++;
		if (p == eol)
			break;
		for (d = p; p < eol && *p >= '0' && *p <= '9'; p++) {
			x = x * 10 + (*p - '0');
			if (x > UINT32_MAX)
				return -EINVAL;
		}
		if (p == d || (p < eol && !is_blank(*p)) || n == max)
			return -EINVAL;
		v[n++] = x;
	}
	return n;
}

/* the innermost pid and the uids of the process, from PROC_ROOT/PID/status */
static int read_status(struct perfmap *m)
{
	__u32 ns[NSPID_LEVELS_MAX], uids[4];
	char path[PATH_MAX], *buf;
	size_t len;
	int n, err;

	n = snprintf(path, sizeof(path), "%s/%u/status", m->proc_root, m->pid);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	err = procfs__read_file(AT_FDCWD, path, STATUS_CAP, &buf, &len, NULL);
	if (err)
		return err;
	n = status_nums(buf, len, "Uid:", uids, 4);
	if (n != 4) {
		err = n < 0 ? n : -EINVAL;
		goto out;
	}
	for (int i = 0; i < 4; i++)
		m->uids[i] = uids[i];
	/* no NSpid: line before Linux 4.1; the pid is then the one it writes */
	n = status_nums(buf, len, "NSpid:", ns, NSPID_LEVELS_MAX);
	if (n == -ENOENT) {
		m->nspid = m->pid;
	} else if (n <= 0 || !ns[n - 1]) {
		err = n < 0 ? n : -EINVAL;
		goto out;
	} else {
		m->nspid = ns[n - 1];
	}
	err = 0;
out:
	free(buf);
	return err;
}

/*
 * The process's start on the wall clock, the clock of a file's mtime: its
 * start in clock ticks since boot, moved by the boot's wall-clock time. Not
 * known (0) where PROC_ROOT shows no stat, as a crafted root in tests.
 */
static void read_born(struct perfmap *m)
{
	long hz = sysconf(_SC_CLK_TCK);
	__u64 ticks;

	m->born_ns = 0;
	if (hz <= 0 || proc_image__start_of(m->proc_root, m->pid, &ticks))
		return;
	m->born_ns = (__s64)(ticks * (1000000000ull / (__u64)hz)) +
		     (clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_BOOTTIME));
}

/* whether the process could have written a file owned by UID */
static bool owner_ok(const struct perfmap *m, uid_t uid)
{
	if (uid == 0)
		return true;
	for (int i = 0; i < 4; i++)
		if (m->uids[i] == uid)
			return true;
	return false;
}

/*
 * /tmp/perf-NSPID.map under ROOT_FD; the last component may not be a
 * symlink. openat2(2) keeps any symlink or ".." of the path inside the root.
 * Without it (Linux < 5.6, valgrind) the path is walked one component at a
 * time following no symlink at all, so a container whose /tmp is a symlink
 * is refused rather than trusted. The fd, or -errno.
 */
static int open_in_root(int root_fd, __u32 nspid)
{
	const int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW;
	struct open_how how = {
		.flags = flags,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char name[64];
	int fd, tmp_fd;

	snprintf(name, sizeof(name), "/tmp/perf-%u.map", nspid);
	fd = syscall(SYS_openat2, root_fd, name, &how, sizeof(how));
	if (fd >= 0 || errno != ENOSYS)
		return fd < 0 ? -errno : fd;
	tmp_fd = openat(root_fd, "tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (tmp_fd < 0)
		return -errno;
	fd = openat(tmp_fd, name + strlen("/tmp/"), flags);
	if (fd < 0)
		fd = -errno;
	close(tmp_fd);
	return fd;
}

/* opens and vets the process's perf map; the fd, or -errno */
static int open_map(const struct perfmap *m, struct stat *st)
{
	char path[PATH_MAX];
	int n, root_fd, fd, err;

	n = snprintf(path, sizeof(path), "%s/%u/root", m->proc_root, m->pid);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		return -errno;
	fd = open_in_root(root_fd, m->nspid);
	close(root_fd);
	if (fd < 0)
		return fd;
	if (fstat(fd, st)) {
		err = -errno;
		goto out_close;
	}
	if (!S_ISREG(st->st_mode) || st->st_nlink != 1) {
		err = -EINVAL;
		goto out_close;
	}
	if (!owner_ok(m, st->st_uid)) {
		err = -EPERM;
		goto out_close;
	}
	if (m->born_ns && (__s64)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec <
			  m->born_ns - STALE_SLACK_NS) {
		err = -ESTALE;	/* written before the process was: a pid's earlier holder's */
		goto out_close;
	}
	return fd;

out_close:
	close(fd);
	return err;
}

/* pread(2) of up to LEN bytes at OFF, stopping early only at EOF */
static int pread_full(int fd, char *buf, size_t len, __u64 off, size_t *got)
{
	size_t done = 0;
	ssize_t r;

	while (done < len) {
		r = pread(fd, buf + done, len - done, off + done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		done += r;
	}
	*got = done;
	return 0;
}

/* whether the bytes before m->offset are still those we parsed (only appends since) */
static bool tail_matches(const struct perfmap *m, int fd)
{
	char now[TAIL_LEN];
	size_t got;

	if (!m->tail_len)
		return true;
	if (pread_full(fd, now, m->tail_len, m->offset - m->tail_len, &got))
		return false;
	return got == m->tail_len && !memcmp(now, m->tail, got);
}

/* remembers the last TAIL_LEN bytes taken, BUF[0, USED) being the newest */
static void keep_tail(struct perfmap *m, const char *buf, size_t used)
{
	size_t keep;

	if (!used)
		return;
	if (used >= TAIL_LEN) {
		memcpy(m->tail, buf + used - TAIL_LEN, TAIL_LEN);
		m->tail_len = TAIL_LEN;
		return;
	}
	keep = m->tail_len < TAIL_LEN - used ? m->tail_len : TAIL_LEN - used;
	memmove(m->tail, m->tail + m->tail_len - keep, keep);
	memcpy(m->tail + keep, buf, used);
	m->tail_len = keep + used;
}

/* reads from m->offset to the size in ST (at most PERFMAP_FILE_CAP) and adds the lines */
static int read_new(struct perfmap *m, int fd, const struct stat *st)
{
	__u64 limit = (__u64)st->st_size < PERFMAP_FILE_CAP ? (__u64)st->st_size : PERFMAP_FILE_CAP;
	size_t want = limit > m->offset ? limit - m->offset : 0, got = 0, used;
	struct batch b = { .skipping = m->skipping };
	size_t pool_len = m->pool_len;
	char *buf = NULL;
	int err = 0;

	if (want) {
		buf = malloc(want);
		if (!buf)
			return -ENOMEM;
		err = pread_full(fd, buf, want, m->offset, &got);
		if (err)
			goto out;
	}
	used = 0;
	if (got) {
		err = parse_lines(m, &b, buf, got, &used);
		if (err)
			goto out;
	}
	/* a tail longer than any good line will not parse: skip it up to its newline */
	if (b.skipping || got - used > PERFMAP_LINE_MAX) {
		if (!b.skipping)
			b.malformed++;
		b.skipping = true;
		used = got;
	}
	err = commit(m, &b);
	if (err)
		goto out;
	keep_tail(m, buf, used);
	m->offset += used;
	m->stats.bytes_read += got;
	m->stats.truncated = (__u64)st->st_size > PERFMAP_FILE_CAP;
	m->seen = true;
	m->dev = st->st_dev;
	m->ino = st->st_ino;
	m->size = st->st_size;
	m->mtime = st->st_mtim;
out:
	if (err)
		m->pool_len = pool_len;
	free(buf);
	free(b.e);
	return err;
}

/* reads the whole file into a new table, which replaces the old one on success */
static int reload(struct perfmap *m, int fd, const struct stat *st)
{
	struct perfmap t = *m;
	int err;

	t.segs = (struct segv){ 0 };
	t.pool = NULL;
	t.pool_len = t.pool_cap = 0;
	t.n_lines = 0;
	t.skipping = false;
	t.offset = 0;
	t.tail_len = 0;
	t.stats.malformed = t.stats.dropped = 0;
	err = read_new(&t, fd, st);
	if (err) {
		free(t.segs.s);
		free(t.pool);
		return err;
	}
	t.stats.reloads++;
	free(m->segs.s);
	free(m->pool);
	*m = t;
	return 0;
}

int perfmap__refresh(struct perfmap *m)
{
	struct stat st;
	bool same, unchanged;
	int fd, err;

	if (!m->proc_root)
		return -EINVAL;
	fd = open_map(m, &st);
	if (fd < 0)
		return fd;
	/*
	 * Appended to only if it is the same file, no shorter, and what we took
	 * is still there: mtime alone is too coarse (a jiffy) to notice a quick
	 * rewrite, so the bytes before the offset are compared too.
	 */
	same = m->seen && st.st_dev == m->dev && st.st_ino == m->ino;
	if (same && (__u64)st.st_size >= m->offset && tail_matches(m, fd)) {
		unchanged = st.st_size == m->size && st.st_mtim.tv_sec == m->mtime.tv_sec &&
			    st.st_mtim.tv_nsec == m->mtime.tv_nsec;
		err = unchanged ? 0 : read_new(m, fd, &st);
	} else {
		err = reload(m, fd, &st);
	}
	close(fd);
	return err;
}

struct perfmap *perfmap__new(void)
{
	return calloc(1, sizeof(struct perfmap));
}

struct perfmap *perfmap__open(const char *proc_root, __u32 pid)
{
	struct perfmap *m;
	struct stat st;
	int fd, err;

	if (!pid) {
		errno = EINVAL;
		return NULL;
	}
	m = perfmap__new();
	if (!m)
		return NULL;
	m->pid = pid;
	m->proc_root = strdup(proc_root ? proc_root : "/proc");
	if (!m->proc_root) {
		err = -ENOMEM;
		goto out_free;
	}
	err = read_status(m);
	if (err)
		goto out_free;
	read_born(m);
	fd = open_map(m, &st);
	if (fd < 0) {
		err = fd;
		goto out_free;
	}
	close(fd);
	return m;

out_free:
	perfmap__free(m);
	errno = -err;
	return NULL;
}

/* find the last segment with start <= addr; segments are sorted and disjoint */
const char *perfmap__lookup(const struct perfmap *m, __u64 addr, __u64 *offset)
{
	size_t lo = 0, hi, mid;
	const struct seg *s;

	if (!m)
		return NULL;
	hi = m->segs.n;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->segs.s[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &m->segs.s[lo - 1];
	if (addr >= s->end)
		return NULL;
	if (offset)
		*offset = addr - s->start + s->delta;
	return m->pool + s->name_off;
}

size_t perfmap__count(const struct perfmap *m)
{
	return m ? m->n_lines : 0;
}

size_t perfmap__mem_size(const struct perfmap *m)
{
	if (!m)
		return 0;
	return sizeof(*m) + m->segs.cap * sizeof(struct seg) + m->pool_cap +
	       (m->proc_root ? strlen(m->proc_root) + 1 : 0);
}

void perfmap__stats(const struct perfmap *m, struct perfmap_stats *st)
{
	*st = m ? m->stats : (struct perfmap_stats){ 0 };
}

void perfmap__free(struct perfmap *m)
{
	if (!m)
		return;
	free(m->segs.s);
	free(m->pool);
	free(m->proc_root);
	free(m);
}
