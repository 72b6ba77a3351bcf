/* symbolizer_int.h -- the symbolizer's state, shared by symbolizer.c and its file cache, symbolizer_files.c */
#ifndef EBPFPROF_SYMBOLIZER_INT_H
#define EBPFPROF_SYMBOLIZER_INT_H

#include <stdbool.h>
#include <linux/types.h>
#include "binary.h"
#include "lib/hashmap.h"
#include "kallsyms.h"
#include "perfmap.h"
#include "proc_maps.h"
#include "symbolizer.h"

#define VDSO_IMAGES_MAX 4			/* 64-bit, x32, ia32: a kernel has few */
#define PENDING_FILES_MAX 256			/* files held open, unread (lazy_files) */
#define PENDING_FD_SHARE 4			/* of RLIMIT_NOFILE, at most a quarter */

struct mapping {
	struct sym_mapping pub;			/* first, so &pub converts back */
	const struct binary *bin;		/* NULL: no symbols */
	__u64 inode;				/* of the maps line, to reuse equal mappings */
	__u32 dev_major, dev_minor;
	__u32 path;				/* strs index + 1 of pub.path; 0: not interned */
	__u32 file;				/* files index + 1; 0: no cached file */
	__u32 ident;				/* idents index + 1; 0: none */
	bool carried;				/* snapshot(): taken over from the last one */
};

/*
 * One process image (struct proc_image). A pid's images chain from the
 * newest (pid_index's) through older: each older one is superseded (an
 * exec, a recycled pid), never read again, and kept to name its samples
 * until the next trim. The newest is superseded too when an exec made a
 * later image not added yet.
 */
struct pid_state {
	struct proc_image img;
	__u32 older;				/* the pid's previous image: pids index + 1, 0: none */
	int err;				/* result of the first snapshot */
	bool gone;				/* its process no longer holds the pid: never read again */
	bool snapshotted;			/* one snapshot at least succeeded */
	bool superseded;			/* a later image holds the pid */
	bool handed;				/* its maps were read just after its exec: again at its next add */
	__s64 read_start_ns;			/* when the last snapshot's read began (CLOCK_MONOTONIC) */
	__s64 read_ns;				/* and when it ended */
	__u64 last_reread_ns;			/* 0: never re-read since add_pid */
	struct mapping **maps;			/* current snapshot, sorted by start */
	size_t n;
	struct mapping **stale;			/* replaced by re-reads; freed by trim */
	size_t n_stale, cap_stale;
	struct perfmap *perfmap;		/* a JIT's /tmp/perf-PID.map, opened on first need */
	bool no_perfmap;			/* it has none: do not look again */
	__u64 perfmap_read_ns;			/* last refresh, to re-read at most once a second */
	__u32 next_free;			/* free slots' chain (pids index + 1) */
};

/* what fstat(2) says of a file: a file replaced in place differs in size or mtime */
struct file_ident {
	__u64 dev, ino, size;
	__s64 mtime_sec, mtime_nsec;
	__u32 file;				/* files[file - 1] */
	__u32 refs;				/* mappings found through this identity */
	__u32 next;				/* the file's next identity, or next free slot */
};

/*
 * One symbol table. A stripped copy keeps the build ID of its original, so
 * the build-ID index also keys on the file size: only a byte-identical copy
 * (the same library in another container's layer) shares a table.
 */
struct sym_file {
	struct binary *bin;			/* NULL: not readable as ELF, or pending */
	__u32 build_id;				/* interned, the build-ID index's key; 0: none */
	bool pending;				/* not read yet: fd is open, read at first lookup */
	int fd;					/* pending: the mapped file */
	int root_fd;				/* pending: its mapper's root if not ours, else -1 */
	__u32 path;				/* pending: interned path the mapper saw (debuglink) */
	__u64 size;
	size_t bytes;				/* its part of stats.bytes */
	size_t dwarf;				/* its part of stats.dwarf_bytes, at load */
	__u32 refs;				/* mappings using it; 0: on the LRU list */
	__u32 idents;				/* first identity, file_ident.next the rest */
	__u32 prev, next;			/* LRU neighbours; next also chains free slots */
};

struct build_id_key {
	const char *build_id;
	__u64 size;
};

struct vdso_image {
	void *bytes;
	size_t size;
	struct binary *bin;
};

struct istr {
	char *str;				/* NULL: a free slot */
	__u32 refs;
	__u32 next_free;
};

struct symbolizer {
	char *proc_root;
	bool real_proc;				/* proc_root is the live /proc */
	bool debuginfod;			/* may download debug info (opted in) */
	__u32 n_pending;			/* files pending */
	__u32 pending_max;			/* each holds two descriptors at most */
	bool our_root_known;			/* our_root_*: what stat("/") said at new */
	__u64 our_root_dev, our_root_ino;
	bool warned_maps, warned_files;		/* a denial was explained once */
	size_t dwarf_budget;
	struct ksyms *ksyms;
	int kernel_err;
	struct mapping *kernel;

	__u32 *id_next;				/* [id - 1]: chains free and retired ids */
	size_t cap_ids;
	__u32 n_ids;				/* ids made so far: 1 .. n_ids */
	__u32 free_ids, retired_ids;		/* chain heads, 0: empty */

	struct pid_state *pids;			/* pid_index ids are index + 1 */
	size_t n_pids, cap_pids;
	__u32 free_pids;
	struct hmap *pid_index;

	struct sym_file *files;
	size_t n_files, cap_files;
	__u32 free_files;
	__u32 lru_head, lru_tail;		/* unused files, least recently used first */
	struct file_ident *idents;
	size_t n_idents, cap_idents;
	__u32 free_idents;
	struct hmap *ident_index;		/* file_ident -> idents index + 1 */
	struct hmap *build_id_index;		/* (build ID, size) -> files index + 1 */

	struct istr *strs;			/* interned; str_index ids are index + 1 */
	size_t n_strs, cap_strs;
	__u32 free_strs;
	struct hmap *str_index;

	struct vdso_image vdsos[VDSO_IMAGES_MAX];
	size_t n_vdsos;

	struct symbolizer_stats stats;
	__u64 next_serial;			/* sym_mapping.serial of the next mapping */
};

/* --- symbolizer_files.c: interned strings --- */

/* STR with one more reference: its strs index + 1, or 0 on ENOMEM */
__u32 sym_intern(struct symbolizer *s, const char *str);
const char *sym_str_of(const struct symbolizer *s, __u32 id);
void sym_str_put(struct symbolizer *s, __u32 id);

/* --- symbolizer_files.c: the file cache --- */

/*
 * Gives M the symbol table of the file PID maps at PM, read once per file
 * (now, or at its first lookup with lazy_files), and M's references on it
 * and on the identity it was found under.
 */
void sym_attach_file(struct symbolizer *s, __u32 pid, const struct proc_map *pm,
		     struct mapping *m);
/* M's symbol table: a pending file is read at its first lookup */
const struct binary *sym_mapping_bin(struct symbolizer *s, struct mapping *m);
/* what pprof's Mapping says of M's symbols, once M has them */
void sym_set_mapping_flags(struct mapping *m);
/* one more user of file ID: it is not evicted meanwhile */
void sym_file_get(struct symbolizer *s, __u32 id);
/* the last user gone: the file becomes the most recently used evictable one */
void sym_file_put(struct symbolizer *s, __u32 id);
/* an identity no mapping uses goes, unless it is its file's last */
void sym_ident_put(struct symbolizer *s, __u32 id);
/* only an unused file is evicted: no mapping points at it or its identities */
void sym_evict_file(struct symbolizer *s, __u32 id);
/* frees every file at once, references or not (symbolizer__free) */
void sym_files_free(struct symbolizer *s);
/* counts a read privileges refused, and says once which capability would allow it */
void sym_note_denied(struct symbolizer *s, int err, __u32 pid, const char *path, bool deleted);

#endif /* EBPFPROF_SYMBOLIZER_INT_H */
