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
#include "lib/clock.h"
#include "binary.h"
#include "lib/log.h"
#include "lib/proc_image.h"
#include "lib/proc_mem.h"
#include "elf_syms.h"
#include "lib/hashmap.h"
#include "kallsyms.h"
#include "perfmap.h"
#include "proc_maps.h"
#include "procfs.h"
#include "symbolizer_int.h"
#include "lib/array.h"

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
/*
 * An exec's new memory map is in place before its tracepoint, which gives
 * the exec's time: the loader maps the program and ld.so meanwhile (0.1 to
 * 1 ms here). Maps read less than this before that time may be the new
 * image's already.
 */
#define EXEC_LOAD_NS 10000000LL


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

/* --- the vDSO: not a file, so read from the process and keyed by its bytes --- */

static const struct binary *vdso_syms(struct symbolizer *s, __u32 pid, const struct proc_map *pm)
{
	size_t size = pm->end - pm->start;
	struct vdso_image *v;
	void *bytes;

	/* pids under a fake proc root are not live processes */
	if (!s->real_proc || !(bytes = proc_mem__copy(pid, pm->start, size, VDSO_SIZE_MAX)))
		return NULL;
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
		sym_ident_put(s, m->ident);
	if (m->file)
		sym_file_put(s, m->file);
	if (m->path)
		sym_str_put(s, m->path);
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
	__u32 path = sym_intern(s, display_path(pm));
	struct mapping *m;

	if (!path)
		return NULL;
	m = find_equal(ps->maps, ps->n, pm, sym_str_of(s, path));
	/* not twice: a duplicated line (a fake maps file) gets its own object */
	if (m && !m->carried) {
		m->carried = true;
		sym_str_put(s, path);
		return m;
	}
	m = new_mapping(s);
	if (!m) {
		sym_str_put(s, path);
		return NULL;
	}
	m->path = path;
	m->pub.start = pm->start;
	m->pub.limit = pm->end;
	m->pub.file_offset = pm->pgoff;
	m->pub.path = sym_str_of(s, path);
	m->inode = pm->inode;
	m->dev_major = pm->dev_major;
	m->dev_minor = pm->dev_minor;
	if (!strcmp(pm->path, "[vdso]"))
		m->bin = vdso_syms(s, ps->img.pid, pm);
	else if (pm->path[0] && pm->path[0] != '[')
		/* [vsyscall], [anon:name], [stack]: no file behind them */
		sym_attach_file(s, ps->img.pid, pm, m);
	if (m->bin)
		sym_set_mapping_flags(m);
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

/*
 * Whether the maps just read were PS's process's: it holds the pid still,
 * after the read, and held it before (a sample or an announcement showed
 * it), so through the read. -ESRCH: another process, or none, has it.
 */
static int still_holds(const struct symbolizer *s, const struct pid_state *ps)
{
	__u64 start;
	int err;

	if (!s->real_proc)
		return 0;	/* a fake proc tree has no processes to recycle */
	err = proc_image__start_of(s->proc_root, ps->img.pid, &start);
	if (!err && start != ps->img.start)
		err = -ESRCH;
	return err;
}

/* reads PID's maps and replaces its snapshot; the old one stays if this fails */
static int snapshot(struct symbolizer *s, struct pid_state *ps)
{
	__s64 t0 = clock_ns(CLOCK_MONOTONIC);
	struct mapping **maps = NULL;
	struct proc_map *pm;
	size_t n, k = 0;
	int err;

	err = proc_maps__read(s->proc_root, ps->img.pid, &pm, &n);
	if (err) {
		sym_note_denied(s, err, ps->img.pid, NULL, false);
		return err;
	}
	err = still_holds(s, ps);
	if (err)
		goto out;
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
	ps->read_start_ns = t0;
	ps->read_ns = clock_ns(CLOCK_MONOTONIC);
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

/* frees what PS named with; the state stays, knowing nothing */
static void free_maps(struct symbolizer *s, struct pid_state *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		free_mapping(s, ps->maps[i]);
	free_stale(s, ps);
	free(ps->maps);
	ps->maps = NULL;
	ps->n = 0;
	perfmap__free(ps->perfmap);
	ps->perfmap = NULL;
	ps->snapshotted = false;
}

static int pid_eq(__u32 id, const void *key, const void *ctx)
{
	const struct symbolizer *s = ctx;

	return s->pids[id - 1].img.pid == *(const __u32 *)key;
}

/* the newest image known of PID: pids index + 1, or 0 */
static __u32 find_head(const struct symbolizer *s, __u32 pid)
{
	return hmap__find(s->pid_index, hash_u64(pid, 0), pid_eq, &pid, s);
}

/* the state of IMG exactly: pids index + 1, or 0 */
static __u32 find_image_id(const struct symbolizer *s, const struct proc_image *img)
{
	__u32 id = find_head(s, img->pid);

	while (id && !proc_image__eq(&s->pids[id - 1].img, img))
		id = s->pids[id - 1].older;
	return id;
}

static struct pid_state *find_image(const struct symbolizer *s, const struct proc_image *img)
{
	__u32 id = find_image_id(s, img);

	return id ? &s->pids[id - 1] : NULL;
}

/* a new state for IMG: pids index + 1, or 0 on ENOMEM; may move s->pids */
static __u32 new_state(struct symbolizer *s, const struct proc_image *img)
{
	bool reuse = s->free_pids != 0;
	__u32 id = reuse ? s->free_pids : s->n_pids + 1;
	struct pid_state *ps;

	if (!reuse && ARRAY_RESERVE(s->pids, s->cap_pids, s->n_pids + 1))
		return 0;
	ps = &s->pids[id - 1];
	if (reuse)
		s->free_pids = ps->next_free;
	else
		s->n_pids++;
	memset(ps, 0, sizeof(*ps));
	ps->img = *img;
	s->stats.pids_live++;
	return id;
}

/* frees state ID, out of every chain already */
static void free_state(struct symbolizer *s, __u32 id)
{
	struct pid_state *ps = &s->pids[id - 1];

	free_maps(s, ps);
	free(ps->stale);
	*ps = (struct pid_state){ .next_free = s->free_pids };
	s->free_pids = id;
	s->stats.pids_live--;
}

static void supersede(struct symbolizer *s, struct pid_state *ps)
{
	if (!ps->superseded)
		s->stats.images_superseded++;
	ps->superseded = true;
}

/*
 * Makes state ID the newest image of its pid: the one before, if any,
 * is superseded (kept, never read again, until the next trim). 0 or ENOMEM.
 */
static int push_head(struct symbolizer *s, __u32 id)
{
	__u32 pid = s->pids[id - 1].img.pid, head = find_head(s, pid);

	if (head) {
		hmap__remove(s->pid_index, hash_u64(pid, 0), head);
		supersede(s, &s->pids[head - 1]);
	}
	s->pids[id - 1].older = head;
	return hmap__insert(s->pid_index, hash_u64(pid, 0), id);
}

/*
 * IMG is older than the newest image known of its pid, and was never read:
 * too late now (its process exec'd or exited). A state that names nothing
 * keeps it from being read, and counts it once.
 */
static int add_too_late(struct symbolizer *s, const struct proc_image *img, __u32 head)
{
	__u32 id = new_state(s, img);
	struct pid_state *h, *ps;

	if (!id)
		return -ENOMEM;
	h = &s->pids[head - 1];
	ps = &s->pids[id - 1];
	ps->err = -ESTALE;
	ps->superseded = true;
	ps->older = h->older;
	h->older = id;
	s->stats.images_unread++;
	return -ESTALE;
}

static int read_state(struct symbolizer *s, struct pid_state *ps)
{
	int err = snapshot(s, ps);

	ps->err = err;
	ps->gone = err == -ESRCH;
	s->stats.pids_gone += ps->gone;
	return err;
}

/* whether PS's maps may be read now: its process runs it still, as far as we know */
static bool readable(const struct pid_state *ps)
{
	return !ps->gone && !ps->superseded && ps->err != -ESTALE;
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

int symbolizer__add_image(struct symbolizer *s, const struct proc_image *img)
{
	__u32 head = find_head(s, img->pid), id = find_image_id(s, img);
	int err;

	if (id && s->pids[id - 1].handed && readable(&s->pids[id - 1])) {
		/*
		 * Its maps were read just after its exec (for the image before
		 * it, or at a sample inside the exec), maybe before ld.so mapped
		 * the libraries: read again at its first sample or its hand-on,
		 * the read the unwinder shares, so both know the same mappings.
		 */
		s->pids[id - 1].handed = false;
		reread(s, &s->pids[id - 1], clock_ns(CLOCK_MONOTONIC));
	}
	if (id)
		return s->pids[id - 1].snapshotted ? 0 : s->pids[id - 1].err;
	if (head && !proc_image__after(&s->pids[head - 1].img, img))
		return add_too_late(s, img, head);
	id = new_state(s, img);
	if (!id)
		return -ENOMEM;
	err = push_head(s, id);
	if (err) {
		free_state(s, id);
		return err;
	}
	return read_state(s, &s->pids[id - 1]);
}

/* a copy of M for another process: the same file, identity and symbols, an id of its own */
static struct mapping *copy_mapping(struct symbolizer *s, const struct mapping *m)
{
	struct mapping *c = new_mapping(s);
	struct sym_mapping pub;

	if (!c)
		return NULL;
	pub = c->pub;
	*c = *m;
	c->pub.id = pub.id;
	c->pub.serial = pub.serial;
	c->carried = false;
	if (c->path)
		s->strs[c->path - 1].refs++;
	if (c->file)
		sym_file_get(s, c->file);
	if (c->ident)
		s->idents[c->ident - 1].refs++;
	return c;
}

int symbolizer__add_fork(struct symbolizer *s, const struct proc_image *img,
			 const struct proc_image *parent)
{
	struct pid_state *pp = find_image(s, parent);
	__u32 head = find_head(s, img->pid), id;
	struct mapping **maps;
	struct pid_state *ps;
	size_t k;

	if (find_image_id(s, img) || (head && !proc_image__after(&s->pids[head - 1].img, img)))
		return -ENOENT;	/* known already, or older than what is */
	if (!pp || !pp->snapshotted) {
		s->stats.forks_parent_unknown++;
		return -ENOENT;
	}
	/*
	 * A parent read as its exec ran may lack what ld.so mapped since: its
	 * re-read, due at its next add, is done now, once for all its children
	 * (a parent that is not sampled again would otherwise never be copied).
	 */
	if (pp->handed && readable(pp)) {
		pp->handed = false;
		reread(s, pp, clock_ns(CLOCK_MONOTONIC));
	}
	if (!readable(pp) || !pp->snapshotted) {
		s->stats.forks_parent_unsettled++;
		return -ENOENT;
	}
	maps = malloc((pp->n ? pp->n : 1) * sizeof(*maps));
	for (k = 0; maps && k < pp->n; k++) {
		maps[k] = copy_mapping(s, pp->maps[k]);
		if (!maps[k])
			break;
	}
	id = maps && k == pp->n ? new_state(s, img) : 0;	/* moves s->pids: pp is stale */
	if (!id) {
		undo_snapshot(s, maps, maps ? k : 0);
		free(maps);
		return -ENOMEM;
	}
	ps = &s->pids[id - 1];
	ps->maps = maps;
	ps->n = k;
	ps->snapshotted = true;
	ps->handed = true;	/* its tables' hand-on reads it, as the unwinder does */
	/* read_ns 0: nothing was read across an exec of it (symbolizer__image_began) */
	if (push_head(s, id)) {
		free_state(s, id);
		return -ENOMEM;
	}
	s->stats.pids++;
	return 0;
}

/*
 * The maps of H, read after its exec made IMG (its announcement came late):
 * IMG's, so they move to a new state of IMG. 0 or -ENOMEM.
 */
static int hand_maps_on(struct symbolizer *s, __u32 head, const struct proc_image *img)
{
	__u32 id = new_state(s, img);
	struct pid_state *h, *ps;

	if (!id)
		return -ENOMEM;
	if (push_head(s, id)) {
		free_state(s, id);
		return -ENOMEM;
	}
	h = &s->pids[head - 1];
	ps = &s->pids[id - 1];
	ps->maps = h->maps;
	ps->n = h->n;
	ps->snapshotted = true;
	ps->handed = true;
	ps->read_start_ns = h->read_start_ns;
	ps->read_ns = h->read_ns;
	h->maps = NULL;
	h->n = 0;
	return 0;
}

void symbolizer__image_began(struct symbolizer *s, const struct proc_image *img, __s64 ns)
{
	__u32 head = find_head(s, img->pid);
	struct pid_state *h = head ? &s->pids[head - 1] : NULL;

	/*
	 * IMG itself, read already: a sample inside its exec (after the kernel
	 * counted the exec, before it announced it) came first, and the maps
	 * were read before ld.so mapped the libraries. Read again at its next
	 * add (the exec's hand-on), as maps handed on are.
	 */
	if (h && proc_image__eq(&h->img, img) && h->snapshotted)
		h->handed = true;
	/* nothing known of the pid, or news older than what is known: nothing to keep apart */
	if (!h || !proc_image__after(&h->img, img))
		return;
	/*
	 * Maps read since the exec began are not the old image's: read wholly
	 * after its end they are the new one's; read across it, nobody's.
	 */
	if (h->snapshotted && h->img.start == img->start && h->read_ns + EXEC_LOAD_NS >= ns) {
		if (h->read_start_ns <= ns || hand_maps_on(s, head, img))
			free_maps(s, &s->pids[head - 1]);
		h = &s->pids[head - 1];
		h->snapshotted = false;
		h->err = -ESTALE;
		s->stats.images_read_late++;
	}
	/* the newest known still, superseded: never read again; IMG is read when added */
	supersede(s, h);
}

void symbolizer__forget_pid(struct symbolizer *s, __u32 pid)
{
	__u32 id = find_head(s, pid);

	if (!id)
		return;
	hmap__remove(s->pid_index, hash_u64(pid, 0), id);
	while (id) {
		__u32 older = s->pids[id - 1].older;

		free_state(s, id);
		id = older;
	}
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

static struct mapping *reread_and_find(struct symbolizer *s, struct pid_state *ps, __u64 addr)
{
	__u64 now = clock_ns(CLOCK_MONOTONIC);

	if (!readable(ps) || (ps->last_reread_ns && now - ps->last_reread_ns < REREAD_INTERVAL_NS))
		return NULL;
	return reread(s, ps, now) ? NULL : find_mapping(ps, addr);
}

int symbolizer__refresh_image(struct symbolizer *s, const struct proc_image *img)
{
	struct pid_state *ps = find_image(s, img);

	if (!ps)
		return symbolizer__add_image(s, img);
	return readable(ps) ? reread(s, ps, clock_ns(CLOCK_MONOTONIC)) : -ESRCH;
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

	/* the map is the pid's: a later image's, once superseded (read from then on, not before) */
	if (ps->no_perfmap || !s->real_proc || (!ps->perfmap && !readable(ps)))
		return NULL;
	if (!ps->perfmap) {
		ps->perfmap = perfmap__open(s->proc_root, ps->img.pid);
		if (!ps->perfmap) {
			ps->no_perfmap = errno != ENOMEM;
			/* no map, no process, out of memory: nothing refused */
			if (errno != ENOENT && errno != ESRCH && errno != ENOMEM)
				s->stats.perfmaps_refused++;
			return NULL;
		}
	} else {
		name = perfmap__lookup(ps->perfmap, addr, offset);
	}
	now = clock_ns(CLOCK_MONOTONIC);
	if (!name && readable(ps) && now - ps->perfmap_read_ns >= REREAD_INTERVAL_NS) {
		ps->perfmap_read_ns = now;
		if (!perfmap__refresh(ps->perfmap))
			name = perfmap__lookup(ps->perfmap, addr, offset);
	}
	return name;
}

int symbolizer__user(struct symbolizer *s, const struct proc_image *img, __u64 addr,
		     struct sym_frame *out)
{
	struct pid_state *ps;
	struct mapping *m;

	out->mapping = NULL;
	out->name = out->module = NULL;
	out->offset = 0;
	out->n_lines = 0;
	ps = find_image(s, img);
	if (!ps) {
		symbolizer__add_image(s, img);
		ps = find_image(s, img);
		if (!ps)
			return -ENOENT;
	}
	m = find_mapping(ps, addr);
	if (!m)
		m = reread_and_find(s, ps, addr);
	if (!m || !sym_mapping_bin(s, m))
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
		__u32 str = sym_intern(s, hex);

		if (str)
			id = sym_str_of(s, str);
	}
	free(buf);
	return id;
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
		m->pub.start = ksyms__addr(s->ksyms, 0);
		m->pub.has_symbols = true;
		s->stats.symbols += ksyms__count(s->ksyms);
		s->stats.bytes += ksyms__bytes(s->ksyms);
	}
	s->kernel = m;
	return 0;
}

int symbolizer__kernel(struct symbolizer *s, __u64 addr, struct sym_frame *out)
{
	size_t bytes;
	ssize_t i;

	/* not memset: lines[] is large and never filled for the kernel */
	out->mapping = NULL;
	out->name = out->module = NULL;
	out->offset = 0;
	out->n_lines = 0;
	out->mapping = &s->kernel->pub;
	if (!s->ksyms)
		return 0;
	i = ksyms__find(s->ksyms, addr, &out->offset);
	if (i < 0)
		return 0;
	/* a name is decoded and kept the first time a sample hits its symbol */
	bytes = ksyms__bytes(s->ksyms);
	out->name = ksyms__name(s->ksyms, i);
	out->module = ksyms__module(s->ksyms, i);
	s->stats.bytes += ksyms__bytes(s->ksyms) - bytes;
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
	struct stat root;
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
	if (!stat("/", &root)) {	/* a pending file mapped under it needs no root descriptor */
		s->our_root_known = true;
		s->our_root_dev = root.st_dev;
		s->our_root_ino = root.st_ino;
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

/*
 * Frees the older images of every pid: superseded before this trim, so
 * their samples (all taken before the news of what superseded them) were
 * named by the harvest that came before it.
 */
static void free_superseded(struct symbolizer *s)
{
	for (size_t i = 0; i < s->n_pids; i++) {
		struct pid_state *ps = &s->pids[i];
		__u32 id = ps->older;

		if (!ps->older || find_head(s, ps->img.pid) != i + 1)
			continue;	/* not a newest image: freed with its chain */
		ps->older = 0;
		while (id) {
			__u32 older = s->pids[id - 1].older;

			free_state(s, id);
			id = older;
		}
	}
}

void symbolizer__trim(struct symbolizer *s, size_t max_bytes)
{
	free_superseded(s);
	for (size_t i = 0; i < s->n_pids; i++)
		free_stale(s, &s->pids[i]);
	recycle_ids(s);
	while (s->lru_head && s->stats.bytes > max_bytes)
		sym_evict_file(s, s->lru_head);
	/* the pages of mapped tables a window's lookups touched: page cache again, not our RSS */
	for (size_t i = 0; i < s->n_files; i++)
		binary__release_pages(s->files[i].bin);
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
	sym_files_free(s);
	for (size_t i = 0; i < s->n_vdsos; i++) {
		free(s->vdsos[i].bytes);
		binary__free(s->vdsos[i].bin);
	}
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
