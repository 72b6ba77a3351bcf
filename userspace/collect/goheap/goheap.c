/* goheap.c -- a Go process's heap profile records, read from outside: per-image finds, checked reads */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "goheap_find.h"
#include "lib/array.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/proc_mem.h"

/* What was found of one image: its variables' addresses in the process, or why there are none. */
struct image_entry {
	struct proc_image img;
	int status;		/* 0 or what goheap__read returns for it each time */
	__u64 mbuckets, rate;	/* process addresses; rate 0: assumed */
	bool checked;		/* mbuckets' candidate was seen to hold a memory bucket (or symtab) */
	dev_t dev;		/* the executable, to notice an exec during a read */
	ino_t ino;
	__u64 stack_mark;	/* where its stack starts: new at each exec (ASLR), the same binary too */
	char version[32];
};

struct goheap {
	const char *proc_root;
	struct image_entry *imgs;
	size_t n_imgs, cap_imgs;
	struct goheap_stats st;
};

const struct stat_desc goheap_stat_descs[] = {
	STAT_COUNT("reads_total", "Go processes whose heap records were read", offsetof(struct goheap_stats, reads)),
	STAT_COUNT("buckets_total", "heap profile buckets read", offsetof(struct goheap_stats, buckets)),
	STAT_NS_AS_SECONDS("read_seconds_total", "time spent reading bucket lists", STAT_TYPE_COUNTER, offsetof(struct goheap_stats, read_ns)),
	STAT_COUNT_BY("skipped_total", "processes whose heap was not read, by why", "reason=\"unknown_version\"", offsetof(struct goheap_stats, unknown_version)),
	STAT_COUNT_BY("skipped_total", NULL, "reason=\"not_found\"", offsetof(struct goheap_stats, not_found)),
	STAT_COUNT_BY("skipped_total", NULL, "reason=\"profiling_off\"", offsetof(struct goheap_stats, disabled)),
	STAT_COUNT_BY("skipped_total", NULL, "reason=\"exec_or_exit\"", offsetof(struct goheap_stats, stale)),
	STAT_COUNT_BY("skipped_total", NULL, "reason=\"error\"", offsetof(struct goheap_stats, errors)),
	STAT_COUNT("rate_assumed_total", "reads that assumed MemProfileRate 524288 (not found)", offsetof(struct goheap_stats, rate_assumed)),
	STAT_COUNT_BY("lost_total", "heap records cut short, by why", "reason=\"bucket_cap\"", offsetof(struct goheap_stats, bucket_cap)),
	STAT_COUNT_BY("lost_total", NULL, "reason=\"depth_cap\"", offsetof(struct goheap_stats, depth_cap)),
	STAT_COUNT_BY("lost_total", NULL, "reason=\"cycle\"", offsetof(struct goheap_stats, cycles)),
	STAT_COUNT_BY("lost_total", NULL, "reason=\"bad_bucket\"", offsetof(struct goheap_stats, bad_buckets)),
};
const int n_goheap_stat_descs = sizeof(goheap_stat_descs) / sizeof(goheap_stat_descs[0]);

struct goheap *goheap__new(const char *proc_root)
{
	struct goheap *h = calloc(1, sizeof(*h));

	if (h)
		h->proc_root = proc_root ? proc_root : "/proc";
	return h;
}

void goheap__free(struct goheap *h)
{
	if (!h)
		return;
	free(h->imgs);
	free(h);
}

void goheap_snapshot__reset(struct goheap_snapshot *s)
{
	s->n = 0;
	s->n_pcs = 0;
	s->rate = 0;
	s->version[0] = '\0';
	s->expanded = false;
}

void goheap_snapshot__fini(struct goheap_snapshot *s)
{
	free(s->recs);
	free(s->pcs);
	memset(s, 0, sizeof(*s));
}

static int read_pid(void *ctx, __u64 addr, void *buf, size_t len)
{
	return proc_mem__read(*(const __u32 *)ctx, addr, buf, len);
}

/* where the executable's lowest segment sits in the process (PIE), from its maps */
static int load_bias(const struct goheap *h, __u32 pid, const struct goheap_layout *l,
		     const struct stat *exe, __u64 *bias)
{
	char path[64], line[512];
	FILE *f;
	int err = -ENOENT;

	*bias = 0;
	if (!l->pie)
		return 0;
	snprintf(path, sizeof(path), "%s/%u/maps", h->proc_root, pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, off, ino;
		unsigned maj, min;

		if (sscanf(line, "%llx-%*[0-9a-f] %*4s %llx %x:%x %llu", &start, &off, &maj, &min, &ino) != 5)
			continue;
		if (ino == exe->st_ino && off == 0) {
			*bias = start - l->first_load;
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

/*
 * The start of PID's stack (/proc/PID/stat field 28): randomized anew by
 * every exec, so it tells an exec of the same binary apart; 0 when unreadable.
 */
static __u64 stack_mark(const struct goheap *h, __u32 pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%u/stat", h->proc_root, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* the name may hold spaces and parentheses */
	/* after ") ": field 3 (state) on; field 28 is the 26th */
	for (int field = 3; p && field < 28; field++)
		p = strchr(p + 1, ' ');
	if (p)
		sscanf(p + 1, "%llu", &v);
	return v;
}

/* the executable of PID, open, and its identity */
static int open_exe(const struct goheap *h, __u32 pid, struct stat *st)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "%s/%u/exe", h->proc_root, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -errno;	/* a kernel thread, or gone */
	if (fstat(fd, st)) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* mbuckets found by the code scan must hold nil or a memory bucket before it is trusted */
static int check_mbuckets(__u32 pid, __u64 addr)
{
	__u64 head, w[GO_BUCKET_WORDS];
	int err = proc_mem__read(pid, addr, &head, 8);

	if (err)
		return err;
	if (!head)
		return -EAGAIN;	/* nothing sampled yet: cannot tell, look again next time */
	if (proc_mem__read(pid, head, w, sizeof(w)) || !goheap_bucket_ok(w))
		return -ESRCH;
	return 0;
}

/* Finds IMG's variables once; the entry keeps the verdict. */
static int find_image(struct goheap *h, struct image_entry *e)
{
	struct goheap_layout l;
	struct stat st;
	__u64 bias;
	int fd = open_exe(h, e->img.pid, &st), err;

	if (fd < 0)
		return fd;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	e->stack_mark = stack_mark(h, e->img.pid);
	err = goheap_layout__find(fd, &l);
	close(fd);
	snprintf(e->version, sizeof(e->version), "%s", l.version);
	if (err == -ENOTSUP)
		p_info("go heap: pid %u runs %s, whose heap profile layout we do not know: skipped",
		       e->img.pid, l.version);
	if (err)
		return err;
	err = load_bias(h, e->img.pid, &l, &st, &bias);
	if (err)
		return err;
	e->mbuckets = l.mbuckets + bias;
	e->rate = l.rate ? l.rate + bias : 0;
	e->checked = !l.mbuckets_from_code;
	return 0;
}

static struct image_entry *entry_of(struct goheap *h, const struct proc_image *img)
{
	struct image_entry *e;

	for (size_t i = 0; i < h->n_imgs; i++)
		if (proc_image__eq(&h->imgs[i].img, img))
			return &h->imgs[i];
	if (ARRAY_RESERVE(h->imgs, h->cap_imgs, h->n_imgs + 1))
		return NULL;
	e = &h->imgs[h->n_imgs++];
	*e = (struct image_entry){ .img = *img };
	e->status = find_image(h, e);
	return e;
}

/* Whether the process is still the image whose records were read: same start, stack, executable. */
static bool still_image(const struct goheap *h, const struct image_entry *e)
{
	char path[64];
	struct stat st;
	__u64 start;

	snprintf(path, sizeof(path), "%s/%u/exe", h->proc_root, e->img.pid);
	if (proc_image__start_of(h->proc_root, e->img.pid, &start) || start != e->img.start)
		return false;
	if (stack_mark(h, e->img.pid) != e->stack_mark)
		return false;	/* an exec, of the same binary maybe */
	return !stat(path, &st) && st.st_dev == e->dev && st.st_ino == e->ino;
}

static void count_status(struct goheap *h, int err, bool first)
{
	switch (err) {
	case 0: break;
	case -ENOENT: h->st.not_go += first; break;
	case -ENOTSUP: h->st.unknown_version += first; break;
	case -ESRCH: h->st.not_found += first; break;
	case -ENODATA: h->st.disabled++; break;
	case -ESTALE: h->st.stale++; break;
	default: h->st.errors++;
	}
}

/* the rate and the list; 0 or a negative errno */
static int read_records(struct goheap *h, struct image_entry *e, struct goheap_snapshot *out)
{
	struct goheap_walk_stats ws = {};
	__u32 pid = e->img.pid;
	__u64 head, rate = GOHEAP_DEFAULT_RATE;
	int err;

	if (e->rate && proc_mem__read(pid, e->rate, &rate, 8))
		return -ESTALE;
	if (!e->rate)
		h->st.rate_assumed++;
	if (proc_mem__read(pid, e->mbuckets, &head, 8))
		return -ESTALE;
	/* rate 0 and nothing recorded: the linker saw no use of the profile and turned it off */
	if ((__s64)rate <= 0 && !head)
		return -ENODATA;
	out->rate = (__s64)rate > 0 ? (__s64)rate : 0;	/* 0: runtime/pprof leaves counts unscaled */
	snprintf(out->version, sizeof(out->version), "%s", e->version);
	out->expanded = true;	/* the runtime's callers(): a PC per inlined call too */
	if (!e->checked) {
		err = check_mbuckets(pid, e->mbuckets);
		if (err)
			return err == -EAGAIN ? 0 : err;	/* nothing sampled yet: empty, checked later */
		e->checked = true;
	}
	err = goheap_walk(head, read_pid, &pid, GOHEAP_MAX_BUCKETS, out, &ws);
	h->st.buckets += ws.buckets;
	h->st.bucket_cap += ws.bucket_cap;
	h->st.depth_cap += ws.depth_cap;
	h->st.cycles += ws.cycles;
	h->st.bad_buckets += ws.bad;
	return err;
}

int goheap__read(struct goheap *h, const struct proc_image *img, struct goheap_snapshot *out)
{
	size_t before = h->n_imgs;
	struct image_entry *e = entry_of(h, img);
	__s64 t0 = clock_ns(CLOCK_MONOTONIC);
	int err;

	goheap_snapshot__reset(out);
	if (!e)
		return -ENOMEM;
	if (e->status) {
		count_status(h, e->status, h->n_imgs > before);
		return e->status;
	}
	err = read_records(h, e, out);
	if (!err && !still_image(h, e))
		err = -ESTALE;	/* exec'd or gone while we read: its records may be another's */
	h->st.read_ns += clock_ns(CLOCK_MONOTONIC) - t0;
	if (err == -ESRCH && !e->checked)
		e->status = err;	/* the candidate did not check out: never read there again */
	count_status(h, err, true);
	if (err)
		goheap_snapshot__reset(out);
	else
		h->st.reads++;
	return err;
}

void goheap__sweep(struct goheap *h)
{
	size_t k = 0;

	for (size_t i = 0; i < h->n_imgs; i++)
		if (proc_image__lives(h->proc_root, &h->imgs[i].img))
			h->imgs[k++] = h->imgs[i];
	h->n_imgs = k;
}

void goheap__stats(const struct goheap *h, struct goheap_stats *out)
{
	*out = h->st;
}
