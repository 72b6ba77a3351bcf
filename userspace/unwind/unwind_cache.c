/* unwind_cache.c -- CFI tables of mapped files, built once per file and copied into the BPF row array */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include "lib/clock.h"
#include "lib/array.h"
#include "symbolize/symbolize.h"
#include "lib/hashmap.h"
#include "lib/proc_mem.h"
#include "unwind.h"
#include "table_builder.h"
#include "unwind_cache.h"
#include "unwind_table.h"

#define MAX_LOADS 8		/* PT_LOAD segments remembered per file */
#define BATCH_ROWS 8192		/* rows per bpf(BPF_MAP_UPDATE_BATCH) */
#define MOVE_WINDOW (512u << 10)	/* bytes of the array mapped at once by a compaction */
#define VDSO_BYTES_MAX (1u << 20)	/* a [vdso] mapping larger than this is not read */
#define VDSO_IMAGES_MAX 8		/* distinct vDSO images kept (one per kernel, a few rewritten) */
#define VDSO_DEV (~0ull)		/* no file's device: a vDSO image's, its inode its slot + 1 */

/* A file, by the device and inode the maps line names. */
struct cached_file {
	__u64 dev;
	__u64 ino;
	struct unwind_slice slice;
	bool no_room;		/* did not fit: -ENOSPC until the next reset, without parsing again */
	__u64 used;		/* the cache's clock at its last get: a compaction keeps the recent */
	char build_id[ELF_BUILD_ID_HEX_SIZE];	/* "" when the file has none */
	int n_loads;
	struct unwind_load loads[MAX_LOADS];
};

struct unwind_cache {
	const char *proc_root;
	int rows_fd;
	__u32 capacity;
	__u32 used;
	int pages_fd;
	__u32 page_capacity;
	__u32 pages_used;
	struct cached_file *files;
	size_t n_files, cap_files;
	struct hmap *index;	/* hash of (dev, ino) -> files[] index + 1 */
	struct hmap *by_build_id;	/* the same file seen again under another inode (containers) */
	/* vDSO images seen, compared byte for byte: a process may rewrite its own copy */
	struct {
		void *bytes;
		size_t len;
	} vdsos[VDSO_IMAGES_MAX];
	size_t n_vdsos;
	__u32 *keys;		/* BATCH_ROWS array indexes for batch updates */
	__u64 clock;		/* gets so far */
	struct unwind_cache_stats stats;
	struct table_builder *builder;	/* NULL: every table is built in unwind_cache__get */
	off_t aside_bytes;	/* files of at least this size go to the builder */
	struct cached_file **aside;	/* files at the builder: their identity and build ID */
	size_t n_aside, cap_aside;
};

struct file_id {
	__u64 dev;
	__u64 ino;
};

struct unwind_cache *unwind_cache__new(const char *proc_root, int rows_fd, __u32 capacity,
				       int pages_fd, __u32 page_capacity)
{
	struct unwind_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->proc_root = proc_root ? proc_root : "/proc";
	c->rows_fd = rows_fd;
	c->capacity = capacity;
	c->pages_fd = pages_fd;
	c->page_capacity = page_capacity;
	c->index = hmap__new();
	c->by_build_id = hmap__new();
	c->keys = malloc(BATCH_ROWS * sizeof(*c->keys));
	if (!c->index || !c->by_build_id || !c->keys) {
		unwind_cache__free(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

void unwind_cache__free(struct unwind_cache *c)
{
	if (!c)
		return;
	table_builder__free(c->builder, free);
	free(c->aside);
	hmap__free(c->index);
	hmap__free(c->by_build_id);
	for (size_t i = 0; i < c->n_vdsos; i++)
		free(c->vdsos[i].bytes);
	free(c->files);
	free(c->keys);
	free(c);
}

static __u64 id_hash(const struct file_id *id)
{
	return hash_u64(id->ino, id->dev);
}

static int same_build_id(__u32 id, const void *key, const void *ctx)
{
	const struct unwind_cache *c = ctx;

	return !strcmp(c->files[id - 1].build_id, key);
}

static int same_file(__u32 id, const void *key, const void *ctx)
{
	const struct unwind_cache *c = ctx;
	const struct file_id *k = key;

	return c->files[id - 1].dev == k->dev && c->files[id - 1].ino == k->ino;
}

/*
 * T, a file's or the vDSO's table (NULL with errno: none), with its PT_LOAD
 * segments kept in F so any mapping of it can be turned into a bias.
 */
static struct unwind_table *keep_loads(struct unwind_table *t, struct cached_file *f)
{
	const struct unwind_load *loads;
	size_t n;

	if (!t)
		return NULL;
	loads = unwind_table__loads(t, &n);
	f->n_loads = n < MAX_LOADS ? n : MAX_LOADS;
	memcpy(f->loads, loads, f->n_loads * sizeof(*loads));
	return t;
}

/* A mapping of elements [at, at + n) of the mmapable BPF array fd, of stride bytes each. */
struct mapped_range {
	void *base;
	size_t len;
	char *first;		/* element at */
};

static int map_range(int fd, __u32 at, __u32 n, size_t stride, struct mapped_range *r)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t from = (size_t)at * stride, off = from & ~(page - 1);

	r->len = from + (size_t)n * stride - off;
	r->base = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	if (r->base == MAP_FAILED)
		return -EOPNOTSUPP;
	r->first = (char *)r->base + (from - off);
	return 0;
}

/* the kernel lays an array's values out 8-byte aligned (a __u32 takes 8) */
static size_t stride_of(size_t elem)
{
	return (elem + 7) & ~(size_t)7;
}

/*
 * Copies n values of elem bytes into the mmapable BPF array fd from index
 * at: its pages mapped for the copy only, so they do not stay in our RSS.
 * -EOPNOTSUPP where the array cannot be mapped.
 */
static int load_mapped(int fd, __u32 at, const void *values, __u32 n, size_t elem)
{
	size_t stride = stride_of(elem);
	struct mapped_range r;

	if (map_range(fd, at, n, stride, &r))
		return -EOPNOTSUPP;
	if (stride == elem)
		memcpy(r.first, values, (size_t)n * elem);
	else
		for (__u32 i = 0; i < n; i++)
			memcpy(r.first + (size_t)i * stride, (const char *)values + (size_t)i * elem, elem);
	munmap(r.base, r.len);
	return 0;
}

/*
 * Moves n values of the mmapable BPF array fd from index from down to index
 * to (to < from), MOVE_WINDOW bytes at a time, so the move adds about that
 * much to our RSS, not the array. Where a window's source and destination
 * overlap (a short move) one mapping covers both; else each has its own: a
 * mapping a window, not a mapping per gap's worth of values.
 */
static int move_mapped(int fd, __u32 to, __u32 from, __u32 n, size_t elem)
{
	size_t stride = stride_of(elem);
	__u32 step = MOVE_WINDOW / stride, gap = from - to, count;
	struct mapped_range src, dst;

	for (__u32 done = 0; done < n; done += count) {
		count = n - done < step ? n - done : step;
		if (gap < count) {
			if (map_range(fd, to + done, gap + count, stride, &dst))
				return -EOPNOTSUPP;
			memmove(dst.first, dst.first + (size_t)gap * stride, (size_t)count * stride);
			munmap(dst.base, dst.len);
			continue;
		}
		if (map_range(fd, from + done, count, stride, &src))
			return -EOPNOTSUPP;
		if (map_range(fd, to + done, count, stride, &dst)) {
			munmap(src.base, src.len);
			return -EOPNOTSUPP;
		}
		memcpy(dst.first, src.first, (size_t)count * stride);
		munmap(src.base, src.len);
		munmap(dst.base, dst.len);
	}
	return 0;
}

/* Copies n values of elem bytes into the BPF array fd from index at: mapped, else in batches. */
static int load_batch(struct unwind_cache *c, int fd, __u32 at, const void *values, __u32 n,
		      size_t elem)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);

	if (!load_mapped(fd, at, values, n, elem))
		return 0;
	for (__u32 done = 0; done < n;) {
		__u32 count = n - done < BATCH_ROWS ? n - done : BATCH_ROWS;

		for (__u32 i = 0; i < count; i++)
			c->keys[i] = at + done + i;
		if (bpf_map_update_batch(fd, c->keys, (const char *)values + done * elem, &count,
					 &opts))
			return -errno;
		done += count;
	}
	return 0;
}

/* The page index of sorted rows (see struct unwind_mapping); *n_pages + 1 entries. */
static __u32 *page_index(const struct unwind_row *rows, __u32 n, __u32 *base, __u32 *n_pages)
{
	__u32 *pages, r = 0;

	*base = rows[0].pc & ~(UNWIND_PAGE_SIZE - 1);
	*n_pages = ((rows[n - 1].pc - *base) >> UNWIND_PAGE_SHIFT) + 1;
	pages = malloc((*n_pages + 1) * sizeof(*pages));
	if (!pages)
		return NULL;
	for (__u32 i = 0; i <= *n_pages; i++) {
		__u64 page_pc = *base + ((__u64)i << UNWIND_PAGE_SHIFT);

		while (r < n && rows[r].pc < page_pc)
			r++;
		pages[i] = r;
	}
	return pages;
}

/* Loads rows and their page index into the arrays; -ENOSPC when either is full. */
static int load(struct unwind_cache *c, const struct unwind_row *rows, __u32 n,
		struct unwind_slice *slice)
{
	__u32 base, n_pages, *pages = page_index(rows, n, &base, &n_pages);
	int err = 0;

	if (!pages)
		return -ENOMEM;
	if (n > c->capacity - c->used || n_pages + 1 > c->page_capacity - c->pages_used)
		err = -ENOSPC;
	if (!err)
		err = load_batch(c, c->rows_fd, c->used, rows, n, sizeof(*rows));
	if (!err)
		err = load_batch(c, c->pages_fd, c->pages_used, pages, n_pages + 1, sizeof(*pages));
	if (!err) {
		*slice = (struct unwind_slice){
			.start = c->used, .len = n,
			.page_start = c->pages_used, .n_pages = n_pages, .base_pc = base,
		};
		c->used += n;
		c->pages_used += n_pages + 1;
	}
	free(pages);
	return err;
}

/* Loads the table T (NULL: none) built for f, and frees it; an empty slice when it has no rows. */
static int build(struct unwind_cache *c, struct unwind_table *t, struct cached_file *f)
{
	const struct unwind_row *rows;
	size_t n;
	int err = 0;

	if (!t) {
		c->stats.files_without_cfi++;
		return 0;
	}
	rows = unwind_table__rows(t, &n);
	if (!n) {
		c->stats.files_without_cfi++;
	} else {
		err = load(c, rows, n, &f->slice);
		if (!err)
			c->stats.files++;
		else if (err == -ENOSPC)
			c->stats.full++;
	}
	unwind_table__free(t);
	return err;
}

/* Remembers f under its identity and build ID; -ENOSPC when it is a table that did not fit. */
static int remember(struct unwind_cache *c, const struct cached_file *f, struct cached_file **out)
{
	__u64 h = id_hash(&(struct file_id){ f->dev, f->ino });
	int err;

	if (ARRAY_RESERVE(c->files, c->cap_files, c->n_files + 1))
		return -ENOMEM;
	c->files[c->n_files++] = *f;
	err = hmap__insert(c->index, h, c->n_files);
	if (!err && f->build_id[0])
		err = hmap__insert(c->by_build_id, hash_bytes(f->build_id, strlen(f->build_id), 0),
				   c->n_files);
	if (err) {
		hmap__remove(c->index, h, c->n_files);
		c->n_files--;
		return err;
	}
	*out = &c->files[c->n_files - 1];
	return f->no_room ? -ENOSPC : 0;
}

/* Whether the file ID, or one with BUILD_ID (may be NULL or ""), is at the builder. */
static bool at_builder(const struct unwind_cache *c, const struct file_id *id, const char *build_id)
{
	for (size_t i = 0; i < c->n_aside; i++) {
		const struct cached_file *a = c->aside[i];

		if ((a->dev == id->dev && a->ino == id->ino) ||
		    (build_id && build_id[0] && !strcmp(a->build_id, build_id)))
			return true;
	}
	return false;
}

/* Hands the file open at FD, F's, to the builder, which then owns FD. 0 or a negative errno. */
static int build_aside(struct unwind_cache *c, int fd, off_t size, const struct cached_file *f)
{
	struct cached_file *a = malloc(sizeof(*a));
	int err = a ? 0 : -ENOMEM;

	if (!err && ARRAY_RESERVE(c->aside, c->cap_aside, c->n_aside + 1))
		err = -ENOMEM;
	if (!err) {
		*a = *f;
		err = table_builder__submit(c->builder, fd, size, a);
	}
	if (err) {
		free(a);
		return err;
	}
	c->aside[c->n_aside++] = a;
	return 0;
}

/*
 * Opens and builds the file of m, unless a file with its build ID was built
 * already: the same binary in another container shares that table. A large
 * file goes to the builder when there is one (-EINPROGRESS), so its build
 * delays no other process's tables.
 */
static int add_file(struct unwind_cache *c, __u32 pid, const struct proc_map *m,
		    const struct file_id *id, struct cached_file **out)
{
	struct cached_file f = { .dev = id->dev, .ino = id->ino };
	__u64 t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);	/* the cost, not the waits of a busy host */
	struct stat st;
	__u32 same;
	int fd, err;

	err = procfs__open_mapped(c->proc_root, pid, m, &fd, &st);
	if (err)
		return err;	/* not remembered: another process may be able to show it */
	if (elf_read_build_id(fd, f.build_id, sizeof(f.build_id)))
		f.build_id[0] = '\0';
	same = f.build_id[0] ? hmap__find(c->by_build_id,
					  hash_bytes(f.build_id, strlen(f.build_id), 0),
					  same_build_id, f.build_id, c) : 0;
	if (same) {
		f = c->files[same - 1];
		f.dev = id->dev;
		f.ino = id->ino;
		c->stats.shared++;
	} else if (at_builder(c, id, f.build_id)) {
		err = -EINPROGRESS;	/* its twin's table is on the way */
	} else if (c->builder && st.st_size >= c->aside_bytes &&
		   !build_aside(c, fd, st.st_size, &f)) {
		c->stats.build_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
		return -EINPROGRESS;	/* the builder closes fd */
	} else {
		c->stats.builds++;
		err = build(c, keep_loads(unwind_table__build(fd), &f), &f);
		f.no_room = err == -ENOSPC;
	}
	close(fd);
	c->stats.build_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	if (err && !f.no_room)
		return err;
	return remember(c, &f, out);
}

/*
 * The vDSO is no file: its image is read from the process and known by its
 * bytes (one kernel's vDSO is the same in every process), under a device no
 * file has; its image is kept for add_image.
 */
static int read_vdso(struct unwind_cache *c, __u32 pid, const struct proc_map *m,
		     struct file_id *id)
{
	size_t len = m->end - m->start;
	void *bytes;

	/* pids under a fake proc root (tests) are not live processes */
	if (strcmp(m->path, "[vdso]") || strcmp(c->proc_root, "/proc") ||
	    !(bytes = proc_mem__copy(pid, m->start, len, VDSO_BYTES_MAX)))
		return -ENOENT;
	for (size_t i = 0; i < c->n_vdsos; i++) {
		if (c->vdsos[i].len == len && !memcmp(c->vdsos[i].bytes, bytes, len)) {
			*id = (struct file_id){ VDSO_DEV, i + 1 };
			free(bytes);
			return 0;
		}
	}
	if (c->n_vdsos == VDSO_IMAGES_MAX) {
		free(bytes);
		return -ENOENT;	/* frame pointers there, as before */
	}
	c->vdsos[c->n_vdsos] = (typeof(c->vdsos[0])){ bytes, len };
	*id = (struct file_id){ VDSO_DEV, ++c->n_vdsos };
	return 0;
}

static int add_image(struct unwind_cache *c, const void *image, size_t len,
		     const struct file_id *id, struct cached_file **out)
{
	struct cached_file f = { .dev = id->dev, .ino = id->ino };
	__u64 t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	int err;

	c->stats.builds++;
	err = build(c, keep_loads(unwind_table__from_image(image, len), &f), &f);
	f.no_room = err == -ENOSPC;
	c->stats.build_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	if (err && !f.no_room)
		return err;
	return remember(c, &f, out);
}

/* bias such that pc - bias is the file's virtual address for pc */
static int bias_of(const struct cached_file *f, const struct proc_map *m, __u64 *bias)
{
	__s64 delta;
	int err = unwind_loads__vaddr_delta(f->loads, f->n_loads, m->pgoff, &delta);

	if (!err)
		*bias = m->start - m->pgoff - delta;
	return err;
}

int unwind_cache__get(struct unwind_cache *c, __u32 pid, const struct proc_map *m,
		      struct unwind_slice *slice, __u64 *bias)
{
	struct file_id id = { makedev(m->dev_major, m->dev_minor), m->inode };
	struct cached_file *f = NULL;
	__u32 idx;
	int err;

	*slice = (struct unwind_slice){};
	*bias = 0;
	if (!m->inode && (err = read_vdso(c, pid, m, &id)))
		return err;
	idx = hmap__find(c->index, id_hash(&id), same_file, &id, c);
	if (idx)
		f = &c->files[idx - 1];
	else if (at_builder(c, &id, NULL))
		return -EINPROGRESS;
	if (!f) {
		/* a vDSO seen before a reset is built again from its kept image */
		err = id.dev == VDSO_DEV ? add_image(c, c->vdsos[id.ino - 1].bytes,
						     c->vdsos[id.ino - 1].len, &id, &f)
					 : add_file(c, pid, m, &id, &f);
		if (err)
			return err;
	}
	f->used = ++c->clock;
	if (f->no_room)
		return -ENOSPC;
	if (!f->slice.len)
		return 0;
	err = bias_of(f, m, bias);
	if (!err)
		*slice = f->slice;
	return err;
}

int unwind_cache__reset(struct unwind_cache *c)
{
	struct hmap *index = hmap__new(), *by_build_id = hmap__new();

	if (!index || !by_build_id) {
		hmap__free(index);
		hmap__free(by_build_id);
		return -ENOMEM;
	}
	hmap__free(c->index);
	hmap__free(c->by_build_id);
	c->index = index;
	c->by_build_id = by_build_id;
	c->n_files = 0;
	c->used = 0;
	c->pages_used = 0;
	c->stats.files = 0;
	c->stats.files_without_cfi = 0;
	return 0;
}

/* a table's place before and after a compaction */
struct moved {
	struct unwind_slice slice;	/* before */
	__u64 used;		/* the latest get of a file with this table */
	__u32 to;		/* after; its page index's too, in page_to */
	__u32 page_to;
	bool live;
};

static int cmp_start(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;	/* each struct's first member */

	return x < y ? -1 : x > y;
}

static int cmp_recent(const void *a, const void *b)
{
	const struct moved *x = *(const struct moved *const *)a, *y = *(const struct moved *const *)b;

	return x->used > y->used ? -1 : x->used < y->used;
}

/*
 * Also keeps tables no process uses, the most recently used first, while
 * all that is kept fills at most half the array: the next compiler or test
 * binary of a build finds its table, and new files still find room.
 */
static int keep_recent(const struct unwind_cache *c, struct moved *t, size_t n)
{
	struct moved **dead = malloc((n ? n : 1) * sizeof(*dead));
	__u64 rows = 0;
	size_t n_dead = 0;

	if (!dead)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (t[i].live)
			rows += t[i].slice.len;
		else
			dead[n_dead++] = &t[i];
	}
	qsort(dead, n_dead, sizeof(*dead), cmp_recent);
	for (size_t i = 0; i < n_dead && rows + dead[i]->slice.len <= c->capacity / 2; i++) {
		dead[i]->live = true;
		rows += dead[i]->slice.len;
	}
	free(dead);
	return 0;
}

/*
 * The tables in the array, once each (files sharing one by build ID share
 * its start), in the array's order, marked live when one of MOVES (sorted)
 * names them, or when keep_recent keeps them. *out is malloc'ed.
 */
static int tables_in_order(const struct unwind_cache *c, const struct unwind_move *moves,
			   size_t n, struct moved **out, size_t *n_out)
{
	struct moved *t = malloc((c->n_files ? c->n_files : 1) * sizeof(*t));
	size_t k = 0;
	int err;

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_files; i++)
		if (c->files[i].slice.len && !c->files[i].no_room)
			t[k++] = (struct moved){ .slice = c->files[i].slice, .used = c->files[i].used };
	qsort(t, k, sizeof(*t), cmp_start);
	*n_out = 0;
	for (size_t i = 0; i < k; i++) {
		if (*n_out && t[*n_out - 1].slice.start == t[i].slice.start) {
			if (t[i].used > t[*n_out - 1].used)
				t[*n_out - 1].used = t[i].used;
			continue;
		}
		t[i].live = n && bsearch(&t[i].slice.start, moves, n, sizeof(*moves), cmp_start);
		t[(*n_out)++] = t[i];
	}
	err = keep_recent(c, t, *n_out);
	if (err)
		free(t);
	else
		*out = t;
	return err;
}

/* Moves the live tables of T down to the array's start, in order: nothing moves up. */
static int pack(struct unwind_cache *c, struct moved *t, size_t n)
{
	__u32 rows = 0, pages = 0;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		const struct unwind_slice *sl = &t[i].slice;

		if (!t[i].live)
			continue;
		t[i].to = rows;
		t[i].page_to = pages;
		if (sl->start != rows)
			err = move_mapped(c->rows_fd, rows, sl->start, sl->len, sizeof(struct unwind_row));
		if (!err && sl->page_start != pages)
			err = move_mapped(c->pages_fd, pages, sl->page_start, sl->n_pages + 1,
					  sizeof(__u32));
		rows += sl->len;
		pages += sl->n_pages + 1;
	}
	c->used = rows;
	c->pages_used = pages;
	return err;
}

/* Keeps the files whose table was live (at its new place) and those without CFI; reindexes. */
static int keep_files(struct unwind_cache *c, const struct moved *t, size_t n)
{
	struct hmap *index = hmap__new(), *by_build_id = hmap__new();
	size_t kept = 0;
	int err = index && by_build_id ? 0 : -ENOMEM;

	c->stats.files = c->stats.files_without_cfi = 0;
	for (size_t i = 0; i < c->n_files && !err; i++) {
		struct cached_file f = c->files[i];
		const struct moved *m = NULL;

		if (f.no_room)
			continue;	/* tried again: it may fit now */
		if (f.slice.len) {
			m = bsearch(&f.slice.start, t, n, sizeof(*t), cmp_start);
			if (!m || !m->live)
				continue;
			f.slice.start = m->to;
			f.slice.page_start = m->page_to;
			c->stats.files++;
		} else {
			c->stats.files_without_cfi++;
		}
		c->files[kept++] = f;
		err = hmap__insert(index, id_hash(&(struct file_id){ f.dev, f.ino }), kept);
		if (!err && f.build_id[0])
			err = hmap__insert(by_build_id, hash_bytes(f.build_id, strlen(f.build_id), 0),
					   kept);
	}
	if (err) {
		hmap__free(index);
		hmap__free(by_build_id);
		return err;
	}
	hmap__free(c->index);
	hmap__free(c->by_build_id);
	c->index = index;
	c->by_build_id = by_build_id;
	c->n_files = kept;
	return 0;
}

int unwind_cache__compact(struct unwind_cache *c, struct unwind_move *moves, size_t n)
{
	struct moved *t;
	size_t n_tables;
	int err;

	if (n)	/* no live table: MOVES may be NULL */
		qsort(moves, n, sizeof(*moves), cmp_start);
	err = tables_in_order(c, moves, n, &t, &n_tables);
	if (err)
		return err;
	err = pack(c, t, n_tables);
	if (!err)
		err = keep_files(c, t, n_tables);
	for (size_t i = 0; i < n && !err; i++) {
		const struct moved *m = bsearch(&moves[i].start, t, n_tables, sizeof(*t), cmp_start);

		moves[i].to = m ? m->to : UNWIND_MOVE_NONE;
		moves[i].page_to = m ? m->page_to : 0;
	}
	free(t);
	if (err)
		unwind_cache__reset(c);	/* half moved: nothing in the array is trusted */
	else
		c->stats.compactions++;
	return err;
}

int unwind_cache__build_aside(struct unwind_cache *c, off_t min_bytes)
{
	if (!c->builder && !(c->builder = table_builder__new()))
		return -errno;
	c->aside_bytes = min_bytes;
	return 0;
}

/* Forgets A, at the builder no more. */
static void aside_done(struct unwind_cache *c, const struct cached_file *a)
{
	for (size_t i = 0; i < c->n_aside; i++) {
		if (c->aside[i] == a) {
			c->aside[i] = c->aside[--c->n_aside];
			break;
		}
	}
}

int unwind_cache__collect(struct unwind_cache *c)
{
	struct built_table bt;
	int n = 0;

	while (c->builder && table_builder__take(c->builder, &bt)) {
		struct cached_file f = *(struct cached_file *)bt.arg, *out;
		int err;

		aside_done(c, bt.arg);
		free(bt.arg);
		c->stats.builds++;
		c->stats.build_ns += bt.cpu_ns;
		/* loaded here: the arrays are this thread's alone */
		err = build(c, keep_loads(bt.table, &f), &f);
		f.no_room = err == -ENOSPC;
		if (!err || f.no_room)
			remember(c, &f, &out);	/* else built again at the next get */
		n++;
	}
	return n;
}

int unwind_cache__building(const struct unwind_cache *c)
{
	return (int)c->n_aside;
}

void unwind_cache__stats(const struct unwind_cache *c, struct unwind_cache_stats *out)
{
	*out = c->stats;
	out->rows = c->used;
	out->capacity = c->capacity;
	out->pages = c->pages_used;
	out->page_capacity = c->page_capacity;
}
