/* symbolizer.c -- names kernel and user addresses: per-pid maps snapshots over a per-file symbol cache */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include "elf_syms.h"
#include "hashmap.h"
#include "kallsyms.h"
#include "proc_maps.h"
#include "procfs.h"
#include "symbolizer.h"
#include "array.h"

/*
 * Not thread-safe: one thread owns a symbolizer.
 *
 * Lifetimes: every struct mapping ever made stays in by_id until
 * symbolizer__free(), so a re-read of a process's maps replaces only its
 * snapshot array, never a sym_mapping a caller holds. Symbol tables
 * (files[]) and interned strings live as long.
 */

#define KERNEL_NOTES_PATH "/sys/kernel/notes"
#define KERNEL_NOTES_CAP (64 * 1024)
#define REREAD_INTERVAL_NS 1000000000ULL	/* at most one maps re-read a second per pid */
#define STR_BLOCK_SIZE (64 * 1024)
#define VDSO_SIZE_MAX (1 << 20)
#define VDSO_IMAGES_MAX 4			/* 64-bit, x32, ia32: a kernel has few */

struct mapping {
	struct sym_mapping pub;			/* first, so &pub converts back */
	const struct elf_syms *syms;		/* NULL: no symbols */
	__u64 inode;				/* of the maps line, to reuse equal mappings */
	__u32 dev_major, dev_minor;
};

struct pid_state {
	__u32 pid;
	int err;				/* result of the first snapshot */
	bool gone;				/* /proc/PID is gone: never read again */
	bool snapshotted;			/* one snapshot at least succeeded */
	__u64 last_reread_ns;			/* 0: never re-read since add_pid */
	struct mapping **maps;			/* current snapshot, sorted by start */
	size_t n;
};

/* what fstat(2) says of a file: a file replaced in place differs in size or mtime */
struct file_ident {
	__u64 dev, ino, size;
	__s64 mtime_sec, mtime_nsec;
	__u32 file;				/* files[file - 1] */
};

/*
 * One symbol table. A stripped copy keeps the build ID of its original, so
 * the build-ID index also keys on the file size: only a byte-identical copy
 * (the same library in another container's layer) shares a table.
 */
struct sym_file {
	struct elf_syms *syms;			/* NULL: not readable as ELF */
	__u64 size;
};

struct build_id_key {
	const char *build_id;
	__u64 size;
};

struct vdso_image {
	void *bytes;
	size_t size;
	struct elf_syms *syms;
};

struct str_block {
	struct str_block *next;
	size_t used, size;
	char data[];
};

struct symbolizer {
	char *proc_root;
	bool real_proc;				/* proc_root is the live /proc */
	struct ksyms *ksyms;
	int kernel_err;
	struct mapping *kernel;

	struct mapping **by_id;			/* by_id[id - 1]: every mapping ever made */
	size_t n_maps, cap_maps;

	struct pid_state *pids;			/* pid_index ids are index + 1 */
	size_t n_pids, cap_pids;
	struct hmap *pid_index;

	struct sym_file *files;
	size_t n_files, cap_files;
	struct file_ident *idents;
	size_t n_idents, cap_idents;
	struct hmap *ident_index;		/* file_ident -> idents index + 1 */
	struct hmap *build_id_index;		/* (build ID, size) -> files index + 1 */

	const char **strs;			/* interned strings, str_index ids are index + 1 */
	size_t n_strs, cap_strs;
	struct hmap *str_index;
	struct str_block *blocks;

	struct vdso_image vdsos[VDSO_IMAGES_MAX];
	size_t n_vdsos;

	struct symbolizer_stats stats;
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* --- interned strings: a path shared by many processes is stored once --- */

static int str_eq(__u32 id, const void *key, const void *ctx)
{
	const struct symbolizer *s = ctx;

	return !strcmp(s->strs[id - 1], key);
}

static char *arena_alloc(struct symbolizer *s, size_t len)
{
	struct str_block *b = s->blocks;

	if (!b || b->size - b->used < len) {
		size_t size = len > STR_BLOCK_SIZE ? len : STR_BLOCK_SIZE;

		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->size = size;
		b->used = 0;
		b->next = s->blocks;
		s->blocks = b;
	}
	b->used += len;
	return b->data + b->used - len;
}

static const char *intern(struct symbolizer *s, const char *str)
{
	size_t len = strlen(str);
	__u64 h = hash_bytes(str, len, 0);
	__u32 id;
	char *copy;

	id = hmap__find(s->str_index, h, str_eq, str, s);
	if (id)
		return s->strs[id - 1];
	if (ARRAY_RESERVE(s->strs, s->cap_strs, s->n_strs + 1))
		return NULL;
	copy = arena_alloc(s, len + 1);
	if (!copy)
		return NULL;
	memcpy(copy, str, len + 1);
	if (hmap__insert(s->str_index, h, s->n_strs + 1))
		return NULL;	/* the copy stays in the arena, unused */
	s->strs[s->n_strs++] = copy;
	return copy;
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

	return f->syms && f->size == k->size && !strcmp(elf_syms__build_id(f->syms), k->build_id);
}

static int add_ident(struct symbolizer *s, const struct file_ident *key, __u32 file)
{
	int err;

	if (ARRAY_RESERVE(s->idents, s->cap_idents, s->n_idents + 1))
		return -ENOMEM;
	err = hmap__insert(s->ident_index, ident_hash(key), s->n_idents + 1);
	if (err)
		return err;
	s->idents[s->n_idents] = *key;
	s->idents[s->n_idents].file = file;
	s->n_idents++;
	return 0;
}

/* takes ES (may be NULL: remembered as unreadable); returns its files index + 1, 0 on ENOMEM */
static __u32 add_file(struct symbolizer *s, struct elf_syms *es, __u64 size)
{
	struct build_id_key key = { es ? elf_syms__build_id(es) : "", size };

	if (ARRAY_RESERVE(s->files, s->cap_files, s->n_files + 1))
		goto out_free;
	if (*key.build_id &&
	    hmap__insert(s->build_id_index, build_id_hash(&key), s->n_files + 1))
		goto out_free;
	s->files[s->n_files].syms = es;
	s->files[s->n_files].size = size;
	s->n_files++;
	if (es) {
		s->stats.files_loaded++;
		s->stats.symbols += elf_syms__count(es);
	}
	return s->n_files;

out_free:
	elf_syms__free(es);
	return 0;
}

/* the symbol table of the file PID maps at PM, read once per file */
static const struct elf_syms *file_syms(struct symbolizer *s, __u32 pid, const struct proc_map *pm)
{
	char bid[ELF_BUILD_ID_HEX_SIZE];
	struct build_id_key bkey = { bid };
	struct file_ident key = {};
	const struct elf_syms *es = NULL;
	struct stat st;
	__u32 id;
	int fd;

	if (procfs__open_mapped(s->proc_root, pid, pm, &fd, &st))
		return NULL;
	key.dev = st.st_dev;
	key.ino = st.st_ino;
	key.size = st.st_size;
	key.mtime_sec = st.st_mtim.tv_sec;
	key.mtime_nsec = st.st_mtim.tv_nsec;
	id = hmap__find(s->ident_index, ident_hash(&key), ident_eq, &key, s);
	if (id) {
		s->stats.file_cache_hits++;
		es = s->files[s->idents[id - 1].file - 1].syms;
		goto out_close;
	}
	/* a new identity may still be a copy we read (another container's layer) */
	bkey.size = key.size;
	if (!elf_read_build_id(fd, bid, sizeof(bid)))
		id = hmap__find(s->build_id_index, build_id_hash(&bkey), build_id_eq, &bkey, s);
	if (id) {
		s->stats.file_cache_hits++;
	} else {
		struct elf_syms *loaded = elf_syms__read_fd(fd);

		/* out of memory is not a property of the file: do not remember it */
		if (!loaded && errno == ENOMEM)
			goto out_close;
		id = add_file(s, loaded, key.size);
		if (!id)
			goto out_close;
	}
	es = s->files[id - 1].syms;
	/* without the identity the next process would read the file again; harmless */
	add_ident(s, &key, id);
out_close:
	close(fd);
	return es;
}

/* --- the vDSO: not a file, so read from the process and keyed by its bytes --- */

static const struct elf_syms *vdso_syms(struct symbolizer *s, __u32 pid, const struct proc_map *pm)
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
			return v->syms;
		}
	}
	if (s->n_vdsos == VDSO_IMAGES_MAX)
		goto out_free;
	v = &s->vdsos[s->n_vdsos++];
	v->bytes = bytes;
	v->size = size;
	v->syms = elf_syms__read_mem(bytes, size);
	if (v->syms)
		s->stats.symbols += elf_syms__count(v->syms);
	return v->syms;

out_free:
	free(bytes);
	return NULL;
}

/* --- mappings and per-pid snapshots --- */

static struct mapping *new_mapping(struct symbolizer *s)
{
	struct mapping *m;

	if (ARRAY_RESERVE(s->by_id, s->cap_maps, s->n_maps + 1))
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	s->by_id[s->n_maps++] = m;
	m->pub.id = s->n_maps;
	m->pub.build_id = "";
	return m;
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
	const char *path = intern(s, display_path(pm));
	struct mapping *m;

	if (!path)
		return NULL;
	m = find_equal(ps->maps, ps->n, pm, path);
	if (m)
		return m;
	m = new_mapping(s);
	if (!m)
		return NULL;
	m->pub.start = pm->start;
	m->pub.limit = pm->end;
	m->pub.file_offset = pm->pgoff;
	m->pub.path = path;
	m->inode = pm->inode;
	m->dev_major = pm->dev_major;
	m->dev_minor = pm->dev_minor;
	if (!strcmp(pm->path, "[vdso]"))
		m->syms = vdso_syms(s, ps->pid, pm);
	else if (pm->path[0] && pm->path[0] != '[')
		/* [vsyscall], [anon:name], [stack]: no file behind them */
		m->syms = file_syms(s, ps->pid, pm);
	if (m->syms) {
		m->pub.has_symbols = true;
		m->pub.build_id = elf_syms__build_id(m->syms);
	}
	return m;
}

static int cmp_mapping(const void *a, const void *b)
{
	const struct mapping *x = *(struct mapping *const *)a, *y = *(struct mapping *const *)b;

	if (x->pub.start != y->pub.start)
		return x->pub.start < y->pub.start ? -1 : 1;
	return 0;
}

/* reads PID's maps and replaces its snapshot; the old one stays if this fails */
static int snapshot(struct symbolizer *s, struct pid_state *ps)
{
	struct mapping **maps = NULL;
	struct proc_map *pm;
	size_t n, k = 0;
	int err;

	err = proc_maps__read(s->proc_root, ps->pid, &pm, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		k += pm[i].perms[2] == 'x';
	maps = malloc((k ? k : 1) * sizeof(*maps));
	if (!maps) {
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
			goto out;
		}
		k++;
	}
	/* the kernel lists mappings in order; a fake proc tree may not */
	qsort(maps, k, sizeof(*maps), cmp_mapping);
	free(ps->maps);
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

static int pid_eq(__u32 id, const void *key, const void *ctx)
{
	const struct symbolizer *s = ctx;

	return s->pids[id - 1].pid == *(const __u32 *)key;
}

static struct pid_state *find_pid(const struct symbolizer *s, __u32 pid)
{
	__u32 id = hmap__find(s->pid_index, hash_u64(pid, 0), pid_eq, &pid, s);

	return id ? &s->pids[id - 1] : NULL;
}

int symbolizer__add_pid(struct symbolizer *s, __u32 pid)
{
	struct pid_state *ps = find_pid(s, pid);
	int err;

	if (ps)
		return ps->snapshotted ? 0 : ps->err;
	if (ARRAY_RESERVE(s->pids, s->cap_pids, s->n_pids + 1))
		return -ENOMEM;
	err = hmap__insert(s->pid_index, hash_u64(pid, 0), s->n_pids + 1);
	if (err)
		return err;
	ps = &s->pids[s->n_pids++];
	memset(ps, 0, sizeof(*ps));
	ps->pid = pid;
	err = snapshot(s, ps);
	ps->err = err;
	ps->gone = err == -ESRCH;
	return err;
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
static struct mapping *reread_and_find(struct symbolizer *s, struct pid_state *ps, __u64 addr)
{
	__u64 now = now_ns();
	int err;

	if (ps->gone || (ps->last_reread_ns && now - ps->last_reread_ns < REREAD_INTERVAL_NS))
		return NULL;
	ps->last_reread_ns = now;
	err = snapshot(s, ps);
	if (err == -ESRCH)
		ps->gone = true;
	return err ? NULL : find_mapping(ps, addr);
}

int symbolizer__user(struct symbolizer *s, __u32 pid, __u64 addr, struct sym_frame *out)
{
	struct pid_state *ps;
	struct mapping *m;
	__u64 vaddr;

	memset(out, 0, sizeof(*out));
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
	if (!m)
		return -ENOENT;
	out->mapping = &m->pub;
	if (m->syms &&
	    !elf_syms__offset_to_vaddr(m->syms, addr - m->pub.start + m->pub.file_offset, &vaddr))
		out->name = elf_syms__lookup(m->syms, vaddr, &out->offset);
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
	if (!elf_parse_build_id_notes(buf, len, 4, hex, sizeof(hex)))
		id = intern(s, hex);
	free(buf);
	return id ? id : "";
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
	}
	s->kernel = m;
	return 0;
}

int symbolizer__kernel(struct symbolizer *s, __u64 addr, struct sym_frame *out)
{
	const struct ksym *sym;

	memset(out, 0, sizeof(*out));
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
	err = init_kernel(s, opts);
	if (err)
		goto out_free;
	return s;

out_free:
	symbolizer__free(s);
	errno = -err;
	return NULL;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_maps; i++)
		free(s->by_id[i]);
	free(s->by_id);
	for (size_t i = 0; i < s->n_pids; i++)
		free(s->pids[i].maps);
	free(s->pids);
	for (size_t i = 0; i < s->n_files; i++)
		elf_syms__free(s->files[i].syms);
	free(s->files);
	free(s->idents);
	for (size_t i = 0; i < s->n_vdsos; i++) {
		free(s->vdsos[i].bytes);
		elf_syms__free(s->vdsos[i].syms);
	}
	while (s->blocks) {
		struct str_block *next = s->blocks->next;

		free(s->blocks);
		s->blocks = next;
	}
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
}
