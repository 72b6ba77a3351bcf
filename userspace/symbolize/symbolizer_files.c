/* symbolizer_files.c -- the symbolizer's file cache: symbol tables by identity and build ID, read lazily, and interned strings */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "elf_syms.h"
#include "lib/log.h"
#include "procfs.h"
#include "symbolizer_int.h"
#include "lib/array.h"

/* --- interned strings: a path shared by many processes is stored once --- */

static int str_eq(__u32 id, const void *key, const void *ctx)
{
	const struct symbolizer *s = ctx;

	return !strcmp(s->strs[id - 1].str, key);
}

/* STR with one more reference: its strs index + 1, or 0 on ENOMEM */
__u32 sym_intern(struct symbolizer *s, const char *str)
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

const char *sym_str_of(const struct symbolizer *s, __u32 id)
{
	return s->strs[id - 1].str;
}

void sym_str_put(struct symbolizer *s, __u32 id)
{
	struct istr *is = &s->strs[id - 1];

	if (--is->refs)
		return;
	hmap__remove(s->str_index, hash_bytes(is->str, strlen(is->str), 0), id);
	free(is->str);
	*is = (struct istr){ .next_free = s->free_strs };
	s->free_strs = id;
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

	return f->build_id && f->size == k->size && !strcmp(sym_str_of(s, f->build_id), k->build_id);
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

void sym_file_get(struct symbolizer *s, __u32 id)
{
	if (!s->files[id - 1].refs++)
		lru_unlink(s, id);
}

/* the last user gone: the file becomes the most recently used evictable one */
void sym_file_put(struct symbolizer *s, __u32 id)
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
void sym_ident_put(struct symbolizer *s, __u32 id)
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
		bid = sym_intern(s, build_id);
		if (!bid)
			return 0;
		if (hmap__insert(s->build_id_index, build_id_hash(&key), id)) {
			sym_str_put(s, bid);
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
	sym_str_put(s, f->path);
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
	b = read_binary(s, f->fd, f->root_fd >= 0 ? root : NULL, sym_str_of(s, f->path));
	if (!b && errno == ENOMEM)
		return;
	file_unpend(s, f);
	file_set_binary(s, f, b);
}

/* only an unused file is evicted: no mapping points at it or its identities */
void sym_evict_file(struct symbolizer *s, __u32 id)
{
	struct sym_file *f = &s->files[id - 1];

	lru_unlink(s, id);
	while (f->idents)
		drop_ident(s, f->idents);
	if (f->build_id) {
		struct build_id_key key = { sym_str_of(s, f->build_id), f->size };

		hmap__remove(s->build_id_index, build_id_hash(&key), id);
		sym_str_put(s, f->build_id);
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
void sym_note_denied(struct symbolizer *s, int err, __u32 pid, const char *path, bool deleted)
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
static int open_root(const struct symbolizer *s, const char *root, int *fd)
{
	struct stat theirs;

	*fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (*fd < 0)
		return -errno;
	if (s->our_root_known && !fstat(*fd, &theirs) && theirs.st_dev == s->our_root_dev &&
	    theirs.st_ino == s->our_root_ino) {
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
	if (s->n_pending < s->pending_max && !open_root(s, root, &root_fd)) {
		path = sym_intern(s, pm->path);
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
		sym_str_put(s, path);
		if (root_fd >= 0)
			close(root_fd);
	}
	return 0;
}

/* the identity of the file ST describes, into *KEY: its idents index + 1, or 0 if new */
static __u32 find_ident(struct symbolizer *s, const struct stat *st, struct file_ident *key)
{
	*key = (struct file_ident){ .dev = st->st_dev, .ino = st->st_ino, .size = st->st_size,
				    .mtime_sec = st->st_mtim.tv_sec,
				    .mtime_nsec = st->st_mtim.tv_nsec };
	return hmap__find(s->ident_index, ident_hash(key), ident_eq, key, s);
}

/*
 * Gives M the symbol table of the file PID maps at PM, read once per file
 * (now, or at its first lookup with lazy_files), and M's references on it
 * and on the identity it was found under.
 */
void sym_attach_file(struct symbolizer *s, __u32 pid, const struct proc_map *pm,
			struct mapping *m)
{
	char bid[ELF_BUILD_ID_HEX_SIZE] = "";
	struct build_id_key bkey = { bid };
	struct file_ident key;
	__u32 ident, file = 0;
	struct stat st;
	int fd = -1, err;

	/* a file known by its identity is not opened: most of a new process's files are */
	err = procfs__stat_mapped(s->proc_root, pid, pm, &st);
	if (!err) {
		ident = find_ident(s, &st, &key);
		if (ident)
			goto out_hit;
	}
	err = procfs__open_mapped(s->proc_root, pid, pm, &fd, &st);
	if (err) {
		sym_note_denied(s, err, pid, pm->path, pm->deleted);
		return;
	}
	ident = find_ident(s, &st, &key);	/* replaced since the stat, or its stat failed */
	if (ident)
		goto out_hit;
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
	goto out_attach;
out_hit:
	s->stats.file_cache_hits++;
	file = s->idents[ident - 1].file;
out_attach:
	m->file = file;
	m->ident = ident;
	m->bin = s->files[file - 1].bin;
	if (s->files[file - 1].build_id)
		m->pub.build_id = sym_str_of(s, s->files[file - 1].build_id);
	sym_file_get(s, file);
	if (ident)
		s->idents[ident - 1].refs++;
out_close:
	if (fd >= 0)
		close(fd);
}

/* what pprof's Mapping says of M's symbols, once M has them */
void sym_set_mapping_flags(struct mapping *m)
{
	m->pub.has_symbols = true;
	if (*binary__build_id(m->bin))
		m->pub.build_id = binary__build_id(m->bin);
	m->pub.has_filenames = m->pub.has_line_numbers = binary__has_lines(m->bin);
	m->pub.has_inline_frames = binary__has_inline(m->bin);
}

/* M's symbol table: a pending file is read at its first lookup */
const struct binary *sym_mapping_bin(struct symbolizer *s, struct mapping *m)
{
	if (m->bin || !m->file)
		return m->bin;
	file_load(s, m->file);
	m->bin = s->files[m->file - 1].bin;
	if (m->bin)
		sym_set_mapping_flags(m);
	return m->bin;
}

void sym_files_free(struct symbolizer *s)
{
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
	for (size_t i = 0; i < s->n_strs; i++)
		free(s->strs[i].str);
	free(s->strs);
}
