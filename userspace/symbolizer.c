/* symbolizer.c -- names kernel and user addresses: per-pid maps snapshots over a per-file symbol cache */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include "clock.h"
#include "binary.h"
#include "log.h"
#include "elf_syms.h"
#include "hashmap.h"
#include "kallsyms.h"
#include "perfmap.h"
#include "proc_maps.h"
#include "procfs.h"
#include "symbolizer.h"
#include "array.h"

/*
 * Not thread-safe: one thread owns a symbolizer.
 *
 * Lifetimes: a struct mapping belongs to one pid, in its current snapshot or,
 * once a re-read of the maps replaced it, in the pid's stale list, so a
 * re-read never frees a sym_mapping a caller holds. symbolizer__forget_pid()
 * frees both; symbolizer__trim() frees the stale lists. The kernel mapping
 * lives until symbolizer__free().
 *
 * References: a mapping holds one on its interned path, one on its file
 * (symbol table) and one on the file identity it was found under. A file no
 * mapping uses stays cached, on an LRU list, until symbolizer__trim() evicts
 * it. An identity no mapping uses is dropped at once unless it is its file's
 * last, kept so the next process of the file finds it without a build-ID read.
 * So paths and identities are bounded by the live mappings plus the cached
 * files, and cached files by trim's budget.
 *
 * Ids: a freed mapping's id is retired, not reused, until the next trim (at
 * which callers hold no id-indexed arrays); then it is free. A free id is
 * taken before a new one is made, so the largest id stays bounded by the most
 * mappings alive or retired at one time.
 */

#define KERNEL_NOTES_PATH "/sys/kernel/notes"
#define KERNEL_NOTES_CAP (64 * 1024)
#define REREAD_INTERVAL_NS 1000000000ULL	/* at most one maps re-read a second per pid */
#define VDSO_SIZE_MAX (1 << 20)
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

struct pid_state {
	__u32 pid;
	int err;				/* result of the first snapshot */
	bool gone;				/* /proc/PID is gone: never read again */
	bool snapshotted;			/* one snapshot at least succeeded */
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

/* --- interned strings: a path shared by many processes is stored once --- */

static int str_eq(__u32 id, const void *key, const void *ctx)
{
	const struct symbolizer *s = ctx;

	return !strcmp(s->strs[id - 1].str, key);
}

/* STR with one more reference: its strs index + 1, or 0 on ENOMEM */
static __u32 intern(struct symbolizer *s, const char *str)
{
	__u64 h = hash_bytes(str, strlen(str), 0);
	__u32 id = hmap__find(s->str_index, h, str_eq, str, s);
	bool reuse = s->free_strs != 0;
	char *copy;

	if (id) {
		s->strs[id - 1].refs++;
		return id;
	}
	id = reuse ? s->free_strs : s->n_strs + 1;
	if (!reuse && ARRAY_RESERVE(s->strs, s->cap_strs, s->n_strs + 1))
		return 0;
	copy = strdup(str);
	if (!copy)
		return 0;
	if (hmap__insert(s->str_index, h, id)) {
		free(copy);
		return 0;
	}
	if (reuse)
		s->free_strs = s->strs[id - 1].next_free;
	else
		s->n_strs++;
	s->strs[id - 1] = (struct istr){ .str = copy, .refs = 1 };
	return id;
}

static const char *str_of(const struct symbolizer *s, __u32 id)
{
	return s->strs[id - 1].str;
}

static void str_put(struct symbolizer *s, __u32 id)
{
	struct istr *is = &s->strs[id - 1];

	if (--is->refs)
		return;
	hmap__remove(s->str_index, hash_bytes(is->str, strlen(is->str), 0), id);
	free(is->str);
	*is = (struct istr){ .next_free = s->free_strs };
	s->free_strs = id;
}

/* --- mapping ids: retired when freed, free again after the next trim --- */

/* a free id, else a new one; 0 on ENOMEM */
static __u32 get_id(struct symbolizer *s)
{
	__u32 id = s->free_ids;

	if (id) {
		s->free_ids = s->id_next[id - 1];
		return id;
	}
	if (ARRAY_RESERVE(s->id_next, s->cap_ids, s->n_ids + 1))
		return 0;
	return ++s->n_ids;
}

static void retire_id(struct symbolizer *s, __u32 id)
{
	s->id_next[id - 1] = s->retired_ids;
	s->retired_ids = id;
}

/* at a trim callers hold no ids, so a retired id names nothing anywhere */
static void recycle_ids(struct symbolizer *s)
{
	while (s->retired_ids) {
		__u32 id = s->retired_ids;

		s->retired_ids = s->id_next[id - 1];
		s->id_next[id - 1] = s->free_ids;
		s->free_ids = id;
	}
}

/* --- the file cache: identity (dev, inode, size, mtime), then build ID --- */

static __u64 ident_hash(const struct file_ident *k)
{
	__u64 h = hash_u64(k->dev, 0);

	h = hash_u64(k->ino, h);
	h = hash_u64(k->size, h);
	h = hash_u64(k->mtime_sec, h);
	return hash_u64(k->mtime_nsec, h);
}

static int ident_eq(__u32 id, const void *key, const void *ctx)
{
	const struct symbolizer *s = ctx;
	const struct file_ident *a = &s->idents[id - 1], *b = key;

	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec;
}

static __u64 build_id_hash(const struct build_id_key *k)
{
	return hash_u64(k->size, hash_bytes(k->build_id, strlen(k->build_id), 0));
}

static int build_id_eq(__u32 id, const void *key, const void *ctx)
{
	const struct symbolizer *s = ctx;
	const struct sym_file *f = &s->files[id - 1];
	const struct build_id_key *k = key;

	return f->build_id && f->size == k->size && !strcmp(str_of(s, f->build_id), k->build_id);
}

static void lru_unlink(struct symbolizer *s, __u32 id)
{
	struct sym_file *f = &s->files[id - 1];

	if (f->prev)
		s->files[f->prev - 1].next = f->next;
	else
		s->lru_head = f->next;
	if (f->next)
		s->files[f->next - 1].prev = f->prev;
	else
		s->lru_tail = f->prev;
	f->prev = f->next = 0;
}

static void lru_append(struct symbolizer *s, __u32 id)
{
	struct sym_file *f = &s->files[id - 1];

	f->prev = s->lru_tail;
	f->next = 0;
	if (s->lru_tail)
		s->files[s->lru_tail - 1].next = id;
	else
		s->lru_head = id;
	s->lru_tail = id;
}

static void file_get(struct symbolizer *s, __u32 id)
{
	if (!s->files[id - 1].refs++)
		lru_unlink(s, id);
}

/* the last user gone: the file becomes the most recently used evictable one */
static void file_put(struct symbolizer *s, __u32 id)
{
	if (!--s->files[id - 1].refs)
		lru_append(s, id);
}

/* a new identity of FILE, used by no mapping yet: its idents index + 1, 0 on ENOMEM */
static __u32 add_ident(struct symbolizer *s, const struct file_ident *key, __u32 file)
{
	bool reuse = s->free_idents != 0;
	__u32 id = reuse ? s->free_idents : s->n_idents + 1;
	struct file_ident *fi;

	if (!reuse && ARRAY_RESERVE(s->idents, s->cap_idents, s->n_idents + 1))
		return 0;
	if (hmap__insert(s->ident_index, ident_hash(key), id))
		return 0;
	fi = &s->idents[id - 1];
	if (reuse)
		s->free_idents = fi->next;
	else
		s->n_idents++;
	*fi = *key;
	fi->file = file;
	fi->refs = 0;
	fi->next = s->files[file - 1].idents;
	s->files[file - 1].idents = id;
	return id;
}

static void drop_ident(struct symbolizer *s, __u32 id)
{
	struct file_ident *fi = &s->idents[id - 1];
	__u32 *link = &s->files[fi->file - 1].idents;

	/* the identity is on its file's chain: the walk ends at it */
	while (*link != id)
		link = &s->idents[*link - 1].next;
	*link = fi->next;
	hmap__remove(s->ident_index, ident_hash(fi), id);
	fi->next = s->free_idents;
	s->free_idents = id;
}

/* an identity no mapping uses goes, unless it is its file's last */
static void ident_put(struct symbolizer *s, __u32 id)
{
	struct file_ident *fi = &s->idents[id - 1];

	if (--fi->refs)
		return;
	if (s->files[fi->file - 1].idents == id && !fi->next)
		return;
	drop_ident(s, id);
}

/* F's symbol table is ES (NULL: remembered as unreadable); takes ES */
static void file_set_binary(struct symbolizer *s, struct sym_file *f, struct binary *es)
{
	f->bin = es;
	if (!es)
		return;
	f->bytes += binary__mem_size(es);
	f->dwarf = binary__dwarf_bytes(es);
	s->stats.bytes += binary__mem_size(es);
	s->stats.dwarf_bytes += f->dwarf;
	s->stats.files_loaded++;
	s->stats.symbols += binary__symbol_count(es);
}

/*
 * A new file with build ID BUILD_ID ("": none) and no symbol table yet: its
 * files index + 1, 0 on ENOMEM. The file starts unused, on the LRU list.
 */
static __u32 add_file(struct symbolizer *s, const char *build_id, __u64 size)
{
	struct build_id_key key = { build_id, size };
	bool reuse = s->free_files != 0;
	__u32 id = reuse ? s->free_files : s->n_files + 1;
	__u32 bid = 0;
	struct sym_file *f;

	if (!reuse && ARRAY_RESERVE(s->files, s->cap_files, s->n_files + 1))
		return 0;
	if (*build_id) {
		bid = intern(s, build_id);
		if (!bid)
			return 0;
		if (hmap__insert(s->build_id_index, build_id_hash(&key), id)) {
			str_put(s, bid);
			return 0;
		}
	}
	f = &s->files[id - 1];
	if (reuse)
		s->free_files = f->next;
	else
		s->n_files++;
	*f = (struct sym_file){ .build_id = bid, .size = size, .bytes = sizeof(*f),
				.fd = -1, .root_fd = -1 };
	lru_append(s, id);
	s->stats.bytes += f->bytes;
	s->stats.files_cached++;
	return id;
}

/* a pending file is not to be read any more: its descriptors go */
static void file_unpend(struct symbolizer *s, struct sym_file *f)
{
	if (!f->pending)
		return;
	close(f->fd);
	if (f->root_fd >= 0)
		close(f->root_fd);
	str_put(s, f->path);
	f->pending = false;
	f->fd = f->root_fd = -1;
	f->path = 0;
	s->n_pending--;
}

/* reads the file open at FD as a process with root ROOT ("/proc/PID/root"; NULL: ours) saw PATH */
static struct binary *read_binary(struct symbolizer *s, int fd, const char *root, const char *path)
{
	struct binary_opts bo = {
		.root = root,
		.path = path,
		.debuginfod = s->debuginfod,
		.dwarf_max = s->dwarf_budget > s->stats.dwarf_bytes ?
				     s->dwarf_budget - s->stats.dwarf_bytes : 0,
	};

	return binary__open(fd, &bo);
}

/* a pending file is read now, at its first lookup; out of memory leaves it pending */
static void file_load(struct symbolizer *s, __u32 id)
{
	struct sym_file *f = &s->files[id - 1];
	char root[32];
	struct binary *b;

	if (!f->pending)
		return;
	/* the mapper may be gone: its root stays reachable through our descriptor */
	if (f->root_fd >= 0)
		snprintf(root, sizeof(root), "/proc/self/fd/%d", f->root_fd);
	b = read_binary(s, f->fd, f->root_fd >= 0 ? root : NULL, str_of(s, f->path));
	if (!b && errno == ENOMEM)
		return;
	file_unpend(s, f);
	file_set_binary(s, f, b);
}

/* only an unused file is evicted: no mapping points at it or its identities */
static void evict_file(struct symbolizer *s, __u32 id)
{
	struct sym_file *f = &s->files[id - 1];

	lru_unlink(s, id);
	while (f->idents)
		drop_ident(s, f->idents);
	if (f->build_id) {
		struct build_id_key key = { str_of(s, f->build_id), f->size };

		hmap__remove(s->build_id_index, build_id_hash(&key), id);
		str_put(s, f->build_id);
	}
	file_unpend(s, f);
	s->stats.dwarf_bytes -= f->dwarf;
	binary__free(f->bin);
	s->stats.bytes -= f->bytes;
	s->stats.files_cached--;
	s->stats.files_evicted++;
	*f = (struct sym_file){ .next = s->free_files };
	s->free_files = id;
}

/*
 * Counts a read that privileges refused, and says once per kind which
 * capability would have allowed it: running without one is a deployment's
 * choice, so it is explained, not repeated per process.
 */
static void note_denied(struct symbolizer *s, int err, __u32 pid, const char *path, bool deleted)
{
	char ebuf[64], root[64];
	const char *msg;

	if (err != -EACCES && err != -EPERM)
		return;
	msg = strerror_r(-err, ebuf, sizeof(ebuf));
	if (!path) {
		s->stats.maps_denied++;
		if (!s->warned_maps)
			p_warn("cannot read %s/%u/maps: %s; frames of processes we may not trace stay unnamed (needs CAP_PERFMON or CAP_SYS_PTRACE)",
			       s->proc_root, pid, msg);
		s->warned_maps = true;
		return;
	}
	s->stats.files_denied++;
	if (s->warned_files)
		return;
	s->warned_files = true;
	/* the process's root is behind a ptrace check; the file itself behind its mode */
	snprintf(root, sizeof(root), "%s/%u/root/", s->proc_root, pid);
	if (deleted)
		p_warn("cannot open the deleted file %s mapped by pid %u through map_files: %s; frames in deleted or replaced files stay unnamed (needs CAP_CHECKPOINT_RESTORE)",
		       path, pid, msg);
	else if (faccessat(AT_FDCWD, root, X_OK, AT_EACCESS))
		p_warn("cannot open %s mapped by pid %u: %s; frames in other users' processes stay unnamed (needs CAP_SYS_PTRACE)",
		       path, pid, msg);
	else
		p_warn("cannot open %s mapped by pid %u: %s; frames in files we may not read stay unnamed (needs CAP_DAC_READ_SEARCH)",
		       path, pid, msg);
}

/* ROOT ("/proc/PID/root") as a descriptor, -1 in *FD when it is our own root */
static int open_root(const char *root, int *fd)
{
	struct stat ours, theirs;

	*fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (*fd < 0)
		return -errno;
	if (!fstat(*fd, &theirs) && !stat("/", &ours) && theirs.st_dev == ours.st_dev &&
	    theirs.st_ino == ours.st_ino) {
		close(*fd);
		*fd = -1;
	}
	return 0;
}

/* F is read at its first lookup: it takes FD, ROOT_FD and a reference on PATH */
static void file_pend(struct symbolizer *s, struct sym_file *f, int fd, int root_fd, __u32 path)
{
	f->fd = fd;
	f->root_fd = root_fd;
	f->path = path;
	f->pending = true;
	s->n_pending++;
}

/*
 * A file not seen before, open at *FD: held open to be read at its first
 * lookup (*FD taken), or read now. Its files index + 1, 0 on ENOMEM.
 */
static __u32 new_file(struct symbolizer *s, int *fd, __u32 pid, const struct proc_map *pm,
		      const char *build_id, __u64 size)
{
	struct binary *loaded = NULL;
	__u32 file, path = 0;
	int root_fd = -1;
	char root[96];

	snprintf(root, sizeof(root), "%s/%u/root", s->proc_root, pid);
	/* the mapper may be gone when the file is read: its root is held open */
	if (s->n_pending < s->pending_max && !open_root(root, &root_fd)) {
		path = intern(s, pm->path);
		if (!path && root_fd >= 0)
			close(root_fd);
	}
	if (!path) {
		loaded = read_binary(s, *fd, root, pm->path);
		/* out of memory is not a property of the file: do not remember it */
		if (!loaded && errno == ENOMEM)
			return 0;
	}
	file = add_file(s, build_id, size);
	if (!file)
		goto out_free;
	if (path) {
		file_pend(s, &s->files[file - 1], *fd, root_fd, path);
		*fd = -1;
	} else {
		file_set_binary(s, &s->files[file - 1], loaded);
	}
	return file;

out_free:
	binary__free(loaded);
	if (path) {
		str_put(s, path);
		if (root_fd >= 0)
			close(root_fd);
	}
	return 0;
}

/*
 * Gives M the symbol table of the file PID maps at PM, read once per file
 * (now, or at its first lookup with lazy_files), and M's references on it
 * and on the identity it was found under.
 */
static void attach_file(struct symbolizer *s, __u32 pid, const struct proc_map *pm,
			struct mapping *m)
{
	char bid[ELF_BUILD_ID_HEX_SIZE] = "";
	struct build_id_key bkey = { bid };
	struct file_ident key = {};
	__u32 ident, file = 0;
	struct stat st;
	int fd, err;

	err = procfs__open_mapped(s->proc_root, pid, pm, &fd, &st);
	if (err) {
		note_denied(s, err, pid, pm->path, pm->deleted);
		return;
	}
	key.dev = st.st_dev;
	key.ino = st.st_ino;
	key.size = st.st_size;
	key.mtime_sec = st.st_mtim.tv_sec;
	key.mtime_nsec = st.st_mtim.tv_nsec;
	ident = hmap__find(s->ident_index, ident_hash(&key), ident_eq, &key, s);
	if (ident) {
		s->stats.file_cache_hits++;
		file = s->idents[ident - 1].file;
		goto out_attach;
	}
	/* a new identity may still be a copy we read (another container's layer) */
	bkey.size = key.size;
	if (elf_read_build_id(fd, bid, sizeof(bid)))
		bid[0] = '\0';
	else
		file = hmap__find(s->build_id_index, build_id_hash(&bkey), build_id_eq, &bkey, s);
	if (file)
		s->stats.file_cache_hits++;
	else
		file = new_file(s, &fd, pid, pm, bid, key.size);
	if (!file)
		goto out_close;
	/* without the identity the next process would read the build ID again; harmless */
	ident = add_ident(s, &key, file);
out_attach:
	m->file = file;
	m->ident = ident;
	m->bin = s->files[file - 1].bin;
	if (s->files[file - 1].build_id)
		m->pub.build_id = str_of(s, s->files[file - 1].build_id);
	file_get(s, file);
	if (ident)
		s->idents[ident - 1].refs++;
out_close:
	if (fd >= 0)
		close(fd);
}

/* what pprof's Mapping says of M's symbols, once M has them */
static void set_mapping_flags(struct mapping *m)
{
	m->pub.has_symbols = true;
	if (*binary__build_id(m->bin))
		m->pub.build_id = binary__build_id(m->bin);
	m->pub.has_filenames = m->pub.has_line_numbers = binary__has_lines(m->bin);
	m->pub.has_inline_frames = binary__has_inline(m->bin);
}

/* M's symbol table: a pending file is read at its first lookup */
static const struct binary *mapping_bin(struct symbolizer *s, struct mapping *m)
{
	if (m->bin || !m->file)
		return m->bin;
	file_load(s, m->file);
	m->bin = s->files[m->file - 1].bin;
	if (m->bin)
		set_mapping_flags(m);
	return m->bin;
}

/* --- the vDSO: not a file, so read from the process and keyed by its bytes --- */

static const struct binary *vdso_syms(struct symbolizer *s, __u32 pid, const struct proc_map *pm)
{
	size_t size = pm->end - pm->start;
	struct vdso_image *v;
	struct iovec local, remote;
	void *bytes;

	/* pids under a fake proc root are not live processes */
	if (!s->real_proc || size > VDSO_SIZE_MAX)
		return NULL;
	bytes = malloc(size);
	if (!bytes)
		return NULL;
	local.iov_base = bytes;
	local.iov_len = size;
	remote.iov_base = (void *)(unsigned long)pm->start;
	remote.iov_len = size;
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)size)
		goto out_free;
	for (size_t i = 0; i < s->n_vdsos; i++) {
		v = &s->vdsos[i];
		if (v->size == size && !memcmp(v->bytes, bytes, size)) {
			s->stats.file_cache_hits++;
			free(bytes);
			return v->bin;
		}
	}
	/* the images are never evicted: VDSO_IMAGES_MAX bounds them */
	if (s->n_vdsos == VDSO_IMAGES_MAX)
		goto out_free;
	v = &s->vdsos[s->n_vdsos++];
	v->bytes = bytes;
	v->size = size;
	v->bin = binary__from_syms(elf_syms__read_mem(bytes, size));
	s->stats.bytes += size;
	if (v->bin) {
		s->stats.symbols += binary__symbol_count(v->bin);
		s->stats.bytes += binary__mem_size(v->bin);
	}
	return v->bin;

out_free:
	free(bytes);
	return NULL;
}

/* --- mappings and per-pid snapshots --- */

static struct mapping *new_mapping(struct symbolizer *s)
{
	struct mapping *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->pub.id = get_id(s);
	if (!m->pub.id) {
		free(m);
		return NULL;
	}
	m->pub.build_id = "";
	m->pub.serial = ++s->next_serial;
	s->stats.mappings_live++;
	return m;
}

/* drops M's references and retires its id; nobody may point at M any more */
static void free_mapping(struct symbolizer *s, struct mapping *m)
{
	if (m->ident)
		ident_put(s, m->ident);
	if (m->file)
		file_put(s, m->file);
	if (m->path)
		str_put(s, m->path);
	retire_id(s, m->pub.id);
	s->stats.mappings_live--;
	free(m);
}

/*
 * The name a mapping is shown under: the maps path, except anonymous
 * executable memory (JIT code, usually) which is "[anon]".
 */
static const char *display_path(const struct proc_map *pm)
{
	return pm->path[0] ? pm->path : "[anon]";
}

/* the mapping of OLD (sorted by start) equal to PM, to reuse across re-reads */
static struct mapping *find_equal(struct mapping **old, size_t n, const struct proc_map *pm,
				  const char *path)
{
	size_t lo = 0, hi = n;

	/* find the first start >= pm->start: starts below lo are smaller, from hi on not */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (old[mid]->pub.start < pm->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n)
		return NULL;
	if (old[lo]->pub.start != pm->start || old[lo]->pub.limit != pm->end ||
	    old[lo]->pub.file_offset != pm->pgoff || old[lo]->pub.path != path ||
	    old[lo]->inode != pm->inode || old[lo]->dev_major != pm->dev_major ||
	    old[lo]->dev_minor != pm->dev_minor)
		return NULL;
	return old[lo];
}

static struct mapping *make_mapping(struct symbolizer *s, struct pid_state *ps,
				    const struct proc_map *pm)
{
	__u32 path = intern(s, display_path(pm));
	struct mapping *m;

	if (!path)
		return NULL;
	m = find_equal(ps->maps, ps->n, pm, str_of(s, path));
	/* not twice: a duplicated line (a fake maps file) gets its own object */
	if (m && !m->carried) {
		m->carried = true;
		str_put(s, path);
		return m;
	}
	m = new_mapping(s);
	if (!m) {
		str_put(s, path);
		return NULL;
	}
	m->path = path;
	m->pub.start = pm->start;
	m->pub.limit = pm->end;
	m->pub.file_offset = pm->pgoff;
	m->pub.path = str_of(s, path);
	m->inode = pm->inode;
	m->dev_major = pm->dev_major;
	m->dev_minor = pm->dev_minor;
	if (!strcmp(pm->path, "[vdso]"))
		m->bin = vdso_syms(s, ps->pid, pm);
	else if (pm->path[0] && pm->path[0] != '[')
		/* [vsyscall], [anon:name], [stack]: no file behind them */
		attach_file(s, ps->pid, pm, m);
	if (m->bin)
		set_mapping_flags(m);
	return m;
}

static int cmp_mapping(const void *a, const void *b)
{
	const struct mapping *x = *(struct mapping *const *)a, *y = *(struct mapping *const *)b;

	if (x->pub.start != y->pub.start)
		return x->pub.start < y->pub.start ? -1 : 1;
	return 0;
}

/* a new snapshot replaces PS's: mappings not taken over go to the stale list (reserved) */
static void retire_snapshot(struct pid_state *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		if (ps->maps[i]->carried)
			ps->maps[i]->carried = false;
		else
			ps->stale[ps->n_stale++] = ps->maps[i];
	}
	free(ps->maps);
}

/* a snapshot failed: the K mappings it took over stay as they were, new ones go */
static void undo_snapshot(struct symbolizer *s, struct mapping **maps, size_t k)
{
	for (size_t i = 0; i < k; i++) {
		if (maps[i]->carried)
			maps[i]->carried = false;
		else
			free_mapping(s, maps[i]);
	}
}

/* reads PID's maps and replaces its snapshot; the old one stays if this fails */
static int snapshot(struct symbolizer *s, struct pid_state *ps)
{
	struct mapping **maps = NULL;
	struct proc_map *pm;
	size_t n, k = 0;
	int err;

	err = proc_maps__read(s->proc_root, ps->pid, &pm, &n);
	if (err) {
		note_denied(s, err, ps->pid, NULL, false);
		return err;
	}
	for (size_t i = 0; i < n; i++)
		k += pm[i].perms[2] == 'x';
	maps = malloc((k ? k : 1) * sizeof(*maps));
	/* room to retire every current mapping, so that cannot fail later */
	if (!maps || ARRAY_RESERVE(ps->stale, ps->cap_stale, ps->n_stale + ps->n)) {
		err = -ENOMEM;
		goto out;
	}
	k = 0;
	for (size_t i = 0; i < n; i++) {
		if (pm[i].perms[2] != 'x')
			continue;
		maps[k] = make_mapping(s, ps, &pm[i]);
		if (!maps[k]) {
			err = -ENOMEM;
			undo_snapshot(s, maps, k);
			goto out;
		}
		k++;
	}
	/* the kernel lists mappings in order; a fake proc tree may not */
	qsort(maps, k, sizeof(*maps), cmp_mapping);
	retire_snapshot(ps);
	ps->maps = maps;
	ps->n = k;
	maps = NULL;
	if (!ps->snapshotted)
		s->stats.pids++;
	ps->snapshotted = true;
out:
	free(maps);
	proc_maps__free(pm);
	return err;
}

/* frees the mappings re-reads of PS replaced: the caller holds none of them */
static void free_stale(struct symbolizer *s, struct pid_state *ps)
{
	for (size_t i = 0; i < ps->n_stale; i++)
		free_mapping(s, ps->stale[i]);
	ps->n_stale = 0;
}

static int pid_eq(__u32 id, const void *key, const void *ctx)
{
	const struct symbolizer *s = ctx;

	return s->pids[id - 1].pid == *(const __u32 *)key;
}

static __u32 find_pid_id(const struct symbolizer *s, __u32 pid)
{
	return hmap__find(s->pid_index, hash_u64(pid, 0), pid_eq, &pid, s);
}

static struct pid_state *find_pid(const struct symbolizer *s, __u32 pid)
{
	__u32 id = find_pid_id(s, pid);

	return id ? &s->pids[id - 1] : NULL;
}

int symbolizer__add_pid(struct symbolizer *s, __u32 pid)
{
	struct pid_state *ps = find_pid(s, pid);
	bool reuse = s->free_pids != 0;
	__u32 id = reuse ? s->free_pids : s->n_pids + 1;
	int err;

	if (ps)
		return ps->snapshotted ? 0 : ps->err;
	if (!reuse && ARRAY_RESERVE(s->pids, s->cap_pids, s->n_pids + 1))
		return -ENOMEM;
	err = hmap__insert(s->pid_index, hash_u64(pid, 0), id);
	if (err)
		return err;
	ps = &s->pids[id - 1];
	if (reuse)
		s->free_pids = ps->next_free;
	else
		s->n_pids++;
	memset(ps, 0, sizeof(*ps));
	ps->pid = pid;
	s->stats.pids_live++;
	err = snapshot(s, ps);
	ps->err = err;
	ps->gone = err == -ESRCH;
	return err;
}

void symbolizer__forget_pid(struct symbolizer *s, __u32 pid)
{
	__u32 id = find_pid_id(s, pid);
	struct pid_state *ps;

	if (!id)
		return;
	ps = &s->pids[id - 1];
	for (size_t i = 0; i < ps->n; i++)
		free_mapping(s, ps->maps[i]);
	free_stale(s, ps);
	free(ps->maps);
	free(ps->stale);
	perfmap__free(ps->perfmap);
	hmap__remove(s->pid_index, hash_u64(pid, 0), id);
	*ps = (struct pid_state){ .next_free = s->free_pids };
	s->free_pids = id;
	s->stats.pids_live--;
}

/* the mapping of PS holding ADDR, or NULL */
static struct mapping *find_mapping(const struct pid_state *ps, __u64 addr)
{
	size_t lo = 0, hi = ps->n;

	/*
	 * find the largest start <= addr: maps is sorted by start, starts below
	 * lo are <= addr and from hi on > addr, so the candidate is lo - 1;
	 * mappings do not overlap, so no earlier one can hold addr instead.
	 */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ps->maps[mid]->pub.start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= ps->maps[lo - 1]->pub.limit)
		return NULL;
	return ps->maps[lo - 1];
}

/* one re-read of a live process's maps, at most once a second */
static int reread(struct symbolizer *s, struct pid_state *ps, __u64 now)
{
	int err;

	ps->last_reread_ns = now;
	err = snapshot(s, ps);
	if (err == -ESRCH)
		ps->gone = true;
	return err;
}

static struct mapping *reread_and_find(struct symbolizer *s, struct pid_state *ps, __u64 addr)
{
	__u64 now = clock_ns(CLOCK_MONOTONIC);

	if (ps->gone || (ps->last_reread_ns && now - ps->last_reread_ns < REREAD_INTERVAL_NS))
		return NULL;
	return reread(s, ps, now) ? NULL : find_mapping(ps, addr);
}

int symbolizer__refresh_pid(struct symbolizer *s, __u32 pid)
{
	struct pid_state *ps = find_pid(s, pid);

	if (!ps)
		return symbolizer__add_pid(s, pid);
	return ps->gone ? -ESRCH : reread(s, ps, clock_ns(CLOCK_MONOTONIC));
}

/*
 * JIT code lives in anonymous memory: its runtime may name it in a perf map.
 * The map grows as code is compiled, so a miss re-reads it (once a second).
 */
static const char *jit_name(struct symbolizer *s, struct pid_state *ps, __u64 addr,
			    __u64 *offset)
{
	const char *name = NULL;
	__u64 now;

	if (ps->no_perfmap || !s->real_proc)
		return NULL;
	if (!ps->perfmap) {
		ps->perfmap = perfmap__open(s->proc_root, ps->pid);
		if (!ps->perfmap) {
			ps->no_perfmap = errno != ENOMEM;
			return NULL;
		}
	} else {
		name = perfmap__lookup(ps->perfmap, addr, offset);
	}
	now = clock_ns(CLOCK_MONOTONIC);
	if (!name && now - ps->perfmap_read_ns >= REREAD_INTERVAL_NS) {
		ps->perfmap_read_ns = now;
		if (!perfmap__refresh(ps->perfmap))
			name = perfmap__lookup(ps->perfmap, addr, offset);
	}
	return name;
}

int symbolizer__user(struct symbolizer *s, __u32 pid, __u64 addr, struct sym_frame *out)
{
	struct pid_state *ps;
	struct mapping *m;

	out->mapping = NULL;
	out->name = out->module = NULL;
	out->offset = 0;
	out->n_lines = 0;
	ps = find_pid(s, pid);
	if (!ps) {
		symbolizer__add_pid(s, pid);
		ps = find_pid(s, pid);
		if (!ps)
			return -ENOENT;
	}
	m = find_mapping(ps, addr);
	if (!m)
		m = reread_and_find(s, ps, addr);
	if (!m || !mapping_bin(s, m))
		out->name = jit_name(s, ps, addr, &out->offset);
	if (!m)
		return out->name ? 0 : -ENOENT;
	out->mapping = &m->pub;
	if (m->bin)
		out->n_lines = binary__lookup(m->bin, addr - m->pub.start + m->pub.file_offset,
					      &out->name, &out->offset, out->lines, SRC_LINES_MAX);
	return 0;
}

/* --- the kernel --- */

static const char *kernel_build_id(struct symbolizer *s)
{
	char hex[ELF_BUILD_ID_HEX_SIZE];
	const char *id = "";
	size_t len;
	char *buf;

	if (procfs__read_file(AT_FDCWD, KERNEL_NOTES_PATH, KERNEL_NOTES_CAP, &buf, &len, NULL))
		return "";
	/* the reference is never dropped: the kernel mapping lives as long as we do */
	if (!elf_parse_build_id_notes(buf, len, 4, hex, sizeof(hex))) {
		__u32 str = intern(s, hex);

		if (str)
			id = str_of(s, str);
	}
	free(buf);
	return id;
}

/* kallsyms.h keeps no account: 16 bytes a symbol plus its name, as documented there */
static size_t ksyms_bytes(const struct ksyms *ks)
{
	size_t n = ksyms__count(ks), bytes = n * sizeof(struct ksym);

	for (size_t i = 0; i < n; i++)
		bytes += strlen(ksyms__at(ks, i)->name) + 1;
	return bytes;
}

static int init_kernel(struct symbolizer *s, const struct symbolizer_opts *opts)
{
	struct mapping *m;

	if (opts->no_kernel) {
		s->kernel_err = -ENODEV;
	} else {
		s->ksyms = ksyms__load(opts->kallsyms_path);
		s->kernel_err = s->ksyms ? 0 : -errno;
		if (!s->ksyms && errno == ENOMEM)
			return -ENOMEM;
	}
	m = new_mapping(s);
	if (!m)
		return -ENOMEM;
	m->pub.path = "[kernel.kallsyms]";
	m->pub.is_kernel = true;
	m->pub.limit = ~0ULL;
	m->pub.build_id = kernel_build_id(s);
	if (s->ksyms) {
		m->pub.start = ksyms__at(s->ksyms, 0)->addr;
		m->pub.has_symbols = true;
		s->stats.symbols += ksyms__count(s->ksyms);
		s->stats.bytes += ksyms_bytes(s->ksyms);
	}
	s->kernel = m;
	return 0;
}

int symbolizer__kernel(struct symbolizer *s, __u64 addr, struct sym_frame *out)
{
	const struct ksym *sym;

	/* not memset: lines[] is large and never filled for the kernel */
	out->mapping = NULL;
	out->name = out->module = NULL;
	out->offset = 0;
	out->n_lines = 0;
	out->mapping = &s->kernel->pub;
	if (!s->ksyms)
		return 0;
	sym = ksyms__map_addr(s->ksyms, addr, &out->offset);
	if (sym) {
		out->name = sym->name;
		out->module = ksyms__module(s->ksyms, sym);
	}
	return 0;
}

int symbolizer__kernel_status(const struct symbolizer *s)
{
	return s->kernel_err;
}

/* --- life cycle --- */

struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts)
{
	static const struct symbolizer_opts defaults;
	struct rlimit nofile;
	struct symbolizer *s;
	int err;

	if (!opts)
		opts = &defaults;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->proc_root = strdup(opts->proc_root ? opts->proc_root : "/proc");
	s->pid_index = hmap__new();
	s->ident_index = hmap__new();
	s->build_id_index = hmap__new();
	s->str_index = hmap__new();
	if (!s->proc_root || !s->pid_index || !s->ident_index || !s->build_id_index ||
	    !s->str_index) {
		err = -ENOMEM;
		goto out_free;
	}
	s->real_proc = !strcmp(s->proc_root, "/proc");
	s->debuginfod = opts->debuginfod;
	if (opts->lazy_files && !getrlimit(RLIMIT_NOFILE, &nofile)) {
		rlim_t max = nofile.rlim_cur / PENDING_FD_SHARE / 2;

		s->pending_max = max < PENDING_FILES_MAX ? max : PENDING_FILES_MAX;
	}
	s->dwarf_budget = opts->dwarf_budget;
	err = init_kernel(s, opts);
	if (err)
		goto out_free;
	return s;

out_free:
	symbolizer__free(s);
	errno = -err;
	return NULL;
}

void symbolizer__trim(struct symbolizer *s, size_t max_bytes)
{
	for (size_t i = 0; i < s->n_pids; i++)
		free_stale(s, &s->pids[i]);
	recycle_ids(s);
	while (s->lru_head && s->stats.bytes > max_bytes)
		evict_file(s, s->lru_head);
}

static void free_pid_state(struct pid_state *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		free(ps->maps[i]);
	for (size_t i = 0; i < ps->n_stale; i++)
		free(ps->stale[i]);
	free(ps->maps);
	free(ps->stale);
	perfmap__free(ps->perfmap);
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	/* everything goes at once: no reference counting needed */
	for (size_t i = 0; i < s->n_pids; i++)
		free_pid_state(&s->pids[i]);
	free(s->pids);
	free(s->kernel);
	free(s->id_next);
	for (size_t i = 0; i < s->n_files; i++) {
		binary__free(s->files[i].bin);
		if (s->files[i].pending) {
			close(s->files[i].fd);
			if (s->files[i].root_fd >= 0)
				close(s->files[i].root_fd);
		}
	}
	free(s->files);
	free(s->idents);
	for (size_t i = 0; i < s->n_vdsos; i++) {
		free(s->vdsos[i].bytes);
		binary__free(s->vdsos[i].bin);
	}
	for (size_t i = 0; i < s->n_strs; i++)
		free(s->strs[i].str);
	free(s->strs);
	hmap__free(s->pid_index);
	hmap__free(s->ident_index);
	hmap__free(s->build_id_index);
	hmap__free(s->str_index);
	ksyms__free(s->ksyms);
	free(s->proc_root);
	free(s);
}

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *out)
{
	*out = s->stats;
	out->mapping_ids = s->n_ids;
	out->files_pending = s->n_pending;
}
