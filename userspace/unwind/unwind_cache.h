/* unwind_cache.h -- CFI tables of mapped files, built once per file and copied into the BPF row array */
#ifndef EBPFPROF_UNWIND_CACHE_H
#define EBPFPROF_UNWIND_CACHE_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

struct proc_map;
struct unwind_cache;

/* Where a file's rows live in the BPF array, and how to turn a mapping into a bias. */
struct unwind_slice {
	__u32 start;
	__u32 len;		/* 0: the file has no usable CFI (frame pointers for it) */
	__u32 page_start;	/* its page index (see struct unwind_mapping) */
	__u32 n_pages;
	__u32 base_pc;
};

struct unwind_cache_stats {
	__u64 files;		/* files with a table in the array */
	__u64 files_without_cfi;
	__u64 shared;		/* files that reused the table of another with their build ID */
	__u64 rows;		/* rows in use */
	__u64 capacity;		/* rows the array holds */
	__u64 pages;		/* page index entries in use */
	__u64 page_capacity;
	__u64 build_ns;		/* CPU time spent opening, parsing and loading tables */
	__u64 builds;		/* files parsed (again after a reset) */
	__u64 full;		/* tables that did not fit */
	__u64 compactions;	/* resets that kept the live tables without parsing them again */
};

/*
 * rows_fd: the BPF array of struct unwind_row with capacity entries;
 * pages_fd: the BPF array of __u32 page index entries with page_capacity
 * entries. NULL with errno set.
 */
struct unwind_cache *unwind_cache__new(const char *proc_root, int rows_fd, __u32 capacity,
				       int pages_fd, __u32 page_capacity);
void unwind_cache__free(struct unwind_cache *c);

/*
 * The slice and load bias for the file that process pid maps at m, building
 * and loading its table on first sight. The file is opened the way
 * procfs__open_mapped does, never through a path the process controls.
 * Returns 0, -ENOSPC when the array is full, -EINPROGRESS while the file's
 * table is built aside (unwind_cache__build_aside), or another negative
 * errno (*slice is then empty and the mapping unwinds with frame pointers).
 */
int unwind_cache__get(struct unwind_cache *c, __u32 pid, const struct proc_map *m,
		      struct unwind_slice *slice, __u64 *bias);

/*
 * From now on the tables of files of at least MIN_BYTES are built on a
 * thread of their own (a large library takes a tenth of a second to a
 * second), so their builds delay no other process's tables; each is loaded
 * by unwind_cache__collect(). 0 or a negative errno.
 */
int unwind_cache__build_aside(struct unwind_cache *c, off_t min_bytes);

/* Loads the tables built aside since the last call into the arrays: how many. */
int unwind_cache__collect(struct unwind_cache *c);

/* Files whose tables are being built aside, not yet collected. */
int unwind_cache__building(const struct unwind_cache *c);

/* Forgets every table: the array is free again. Callers must first stop BPF using it. */
int unwind_cache__reset(struct unwind_cache *c);

/* A live table's start before a compaction, and where it and its page index are after. */
#define UNWIND_MOVE_NONE 0xffffffffu	/* to: the start named no table */
struct unwind_move {
	__u32 start;
	__u32 to;
	__u32 page_to;
};

/*
 * Keeps the tables whose start is one of MOVES[0, n).start, and of the
 * others the most recently used while all kept fill at most half the array;
 * forgets the rest, moving the kept ones together to the array's start without
 * parsing anything again; sorts MOVES by start and fills in each one's to
 * and page_to. Files without CFI stay known; files that did not fit are
 * tried again. Callers must first stop BPF using the array, then give each
 * process its tables at their new places. 0, or a negative errno
 * (-EOPNOTSUPP: the arrays cannot be mapped) after which the cache is reset
 * as by unwind_cache__reset().
 */
int unwind_cache__compact(struct unwind_cache *c, struct unwind_move *moves, size_t n);

void unwind_cache__stats(const struct unwind_cache *c, struct unwind_cache_stats *out);

#endif /* EBPFPROF_UNWIND_CACHE_H */
