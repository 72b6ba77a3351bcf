/* unwinder.c -- feeds the BPF unwinder: each process's executable mappings and their CFI tables */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "lib/clock.h"
#include "lib/array.h"
#include "lib/bpf_util.h"
#include "lib/hashmap.h"
#include "lib/proc_image.h"
#include "lib/proc_mem.h"
#include "symbolize/symbolize.h"
#include "unwind.h"
#include "unwinder.h"

/*
 * At most one rebuild a minute: when the live processes' tables together do
 * not fit, rebuilding on every new process would parse everything again and
 * again. In between, what does not fit unwinds with frame pointers.
 */
#define RESET_INTERVAL_NS (60 * 1000000000ULL)

/* an entry of the BPF map of processes, as reset and sweep list them */
struct known_proc {
	struct proc_image img;
	bool announced;
};

/* a process written while tables of its files were built aside, and the maps it was written from */
struct waiting {
	struct known_proc kp;
	struct proc_map *maps;
	size_t n;
};

struct unwinder {
	struct unwinder_opts o;
	struct unwind_cache *cache;
	struct unwind_proc *proc;	/* scratch: one BPF map value */
	struct unwinder_stats stats;
	__u64 last_reset_ns;
	__u32 gen;		/* the last struct unwind_proc.gen written */
	bool resetting;		/* no room: load what fits, frame pointers for the rest */
	struct waiting *waiting;	/* written while tables of theirs were built aside */
	size_t n_waiting, cap_waiting;
};

static void free_waiting(struct waiting *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		proc_maps__free(w[i].maps);
	free(w);
}

struct unwinder *unwinder__new(const struct unwinder_opts *opts)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->o = *opts;
	if (!u->o.proc_root)
		u->o.proc_root = "/proc";
	u->cache = unwind_cache__new(u->o.proc_root, opts->rows_fd, opts->rows, opts->pages_fd,
				     opts->pages);
	u->proc = malloc(sizeof(*u->proc));
	if (!u->cache || !u->proc) {
		unwinder__free(u);
		errno = ENOMEM;
		return NULL;
	}
	return u;
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	unwind_cache__free(u->cache);
	free_waiting(u->waiting, u->n_waiting);
	free(u->proc);
	free(u);
}

/* what tells one executable mapping from another across two reads of the maps */
static __u64 mapping_hash(__u64 h, const struct proc_map *m)
{
	h = hash_u64(m->start ^ h, m->end);
	h = hash_u64(m->pgoff ^ h, m->inode);
	return hash_u64(h, (__u64)m->dev_major << 32 | m->dev_minor);
}

/* PID's executable mappings, hashed: 0 or a negative errno */
static int maps_hash(const struct unwinder *u, __u32 pid, __u64 *h)
{
	struct proc_map *maps;
	size_t n;
	int err = proc_maps__read(u->o.proc_root, pid, &maps, &n);

	if (err)
		return err;
	*h = 0;
	for (size_t i = 0; i < n; i++)
		if (maps[i].perms[2] == 'x' && maps[i].start < PROC_MEM_USER_END)
			*h = mapping_hash(*h, &maps[i]);
	proc_maps__free(maps);
	return 0;
}

/*
 * One entry per executable mapping of MAPS, sorted by address as /proc
 * lists them. Mappings without a table stay in, so BPF knows their code is
 * code (and unwinds it with frame pointers); an address in none of them is
 * news. *H: the mappings, hashed (maps_hash); *INCOMPLETE: a table of theirs
 * is being built aside.
 */
static int fill(struct unwinder *u, __u32 pid, const struct proc_map *maps, size_t n, __u64 *h,
		bool *incomplete)
{
	struct unwind_proc *p = u->proc;
	int err = 0;

	p->n = 0;
	*h = 0;
	*incomplete = false;
	for (size_t i = 0; i < n && !err; i++) {
		struct unwind_mapping *e = &p->m[p->n];
		struct unwind_slice slice;

		if (maps[i].perms[2] != 'x' || maps[i].start >= PROC_MEM_USER_END)
			continue;	/* not code, or [vsyscall] */
		*h = mapping_hash(*h, &maps[i]);
		if (p->n == UNWIND_MAX_MAPPINGS) {
			u->stats.mappings_dropped++;
			continue;
		}
		*e = (struct unwind_mapping){ .start = maps[i].start, .end = maps[i].end };
		err = unwind_cache__get(u->cache, pid, &maps[i], &slice, &e->bias);
		if (err == -ENOSPC && !u->resetting)
			break;	/* the caller makes room and tries again */
		*incomplete |= err == -EINPROGRESS;	/* written again once it is built */
		err = 0;	/* any other failure: this mapping unwinds with frame pointers */
		e->table_start = slice.start;
		e->table_len = slice.len;
		e->page_start = slice.page_start;
		e->n_pages = slice.n_pages;
		e->base_pc = slice.base_pc;
		p->n++;
	}
	return err;
}

/*
 * Tables for an image whose exec count is not known (PROC_EXEC_ANY) hold
 * until the next exec drops them; one that came between our read of the
 * maps and the write would keep the old image's. Read again: the same
 * executable mappings are the same tables, whatever ran the exec.
 */
static int check_unchanged(struct unwinder *u, const struct proc_image *img, __u64 h)
{
	__u64 now;
	int err = maps_hash(u, img->pid, &now);

	if (!err && now == h)
		return 0;
	bpf_map_delete_elem(u->o.procs_fd, &img->pid);
	u->stats.procs_changed++;
	return err ? err : -ESTALE;
}

/*
 * IMG was just written from *MAPS: with tables still being built (WAIT) it
 * is written again from the same maps when they are, so that what it maps
 * meanwhile is news to BPF as ever (*MAPS is then kept: NULL). An older
 * image of its pid is not written again.
 */
static void wait_for_tables(struct unwinder *u, const struct proc_image *img, bool announced,
			    bool wait, struct proc_map **maps, size_t n)
{
	struct waiting w = { .kp = { .img = *img, .announced = announced }, .maps = *maps, .n = n };
	size_t i;

	for (i = 0; i < u->n_waiting && u->waiting[i].kp.img.pid != img->pid; i++)
		;
	if (i < u->n_waiting) {
		proc_maps__free(u->waiting[i].maps);
		u->waiting[i] = u->waiting[--u->n_waiting];
	}
	if (wait && !ARRAY_RESERVE(u->waiting, u->cap_waiting, u->n_waiting + 1)) {
		u->waiting[u->n_waiting++] = w;
		*maps = NULL;
	}	/* else frame pointers there, as before */
}

/* Writes IMG's entry from *MAPS (N of them); *MAPS is taken (NULL) when it is to be written again. */
static int put_maps(struct unwinder *u, const struct proc_image *img, bool announced,
		    struct proc_map **maps, size_t n)
{
	__u64 start, h = 0;
	bool incomplete;
	int err = fill(u, img->pid, *maps, n, &h, &incomplete);

	/* the maps read were IMG's process's only if it holds the pid still, after the read */
	if (!err)
		err = proc_image__start_of(u->o.proc_root, img->pid, &start);
	if (!err && start != img->start)
		err = -ESRCH;
	u->proc->announced = announced;
	u->proc->start = img->start;
	u->proc->exec = img->exec;
	u->proc->gen = ++u->gen ? u->gen : ++u->gen;
	/* the bit first: an exec drops the tables only of the pids it has */
	if (!err)
		err = bpf_util__set_bit(u->o.pids_fd, unwind_pid_bits__bit(img->pid, UNWIND_RT_NATIVE));
	if (!err && bpf_map_update_elem(u->o.procs_fd, &img->pid, u->proc, BPF_ANY))
		err = -errno;
	if (!err && img->exec == PROC_EXEC_ANY)
		err = check_unchanged(u, img, h);
	if (!err)
		wait_for_tables(u, img, announced, incomplete, maps, n);
	return err;
}

/* IMG's entry, from its maps read now */
static int put(struct unwinder *u, const struct proc_image *img, bool announced)
{
	struct proc_map *maps = NULL;	/* left as is by a failed read */
	size_t n = 0;
	int err = proc_maps__read(u->o.proc_root, img->pid, &maps, &n);

	if (!err)
		err = put_maps(u, img, announced, &maps, n);
	proc_maps__free(maps);
	return err;
}

/* The images BPF holds tables for, and whether each was announced; *out is malloc'ed. */
static int known_procs(const struct unwinder *u, struct known_proc **out, size_t *n)
{
	__u32 key, next;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	while (!bpf_map_get_next_key(u->o.procs_fd, *n ? &key : NULL, &next)) {
		key = next;
		if (bpf_map_lookup_elem(u->o.procs_fd, &key, u->proc))
			continue;	/* gone meanwhile */
		if (ARRAY_RESERVE(*out, cap, *n + 1)) {
			free(*out);
			*out = NULL;
			return -ENOMEM;
		}
		(*out)[(*n)++] = (struct known_proc){
			.img = proc_image__of(key, u->proc->start, u->proc->exec),
			.announced = u->proc->announced,
		};
	}
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/* a process's entry kept across a reset: its mappings alone, not the whole value */
struct saved_proc {
	struct known_proc kp;
	__u32 n;
	struct unwind_mapping *m;
};

static void free_saved(struct saved_proc *procs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(procs[i].m);
	free(procs);
}

/* P's mappings into S, and the starts of its tables appended to *moves */
static int save_one(const struct unwind_proc *p, struct saved_proc *s, struct unwind_move **moves,
		    size_t *n_moves, size_t *cap)
{
	s->n = p->n < UNWIND_MAX_MAPPINGS ? p->n : UNWIND_MAX_MAPPINGS;
	s->m = malloc((s->n ? s->n : 1) * sizeof(*s->m));
	if (!s->m)
		return -ENOMEM;
	memcpy(s->m, p->m, s->n * sizeof(*s->m));
	for (__u32 i = 0; i < s->n; i++) {
		if (!s->m[i].table_len)
			continue;
		if (ARRAY_RESERVE(*moves, *cap, *n_moves + 1))
			return -ENOMEM;
		(*moves)[(*n_moves)++] = (struct unwind_move){ .start = s->m[i].table_start };
	}
	return 0;
}

/* Every entry BPF holds, saved, and the tables they use; both malloc'ed. */
static int save_procs(const struct unwinder *u, struct saved_proc **out, size_t *n,
		      struct unwind_move **moves, size_t *n_moves)
{
	size_t cap = 0, cap_moves = 0;
	__u32 key, next;
	int err = 0;

	*out = NULL;
	*moves = NULL;
	*n = *n_moves = 0;
	while (!err && !bpf_map_get_next_key(u->o.procs_fd, *n ? &key : NULL, &next)) {
		key = next;
		if (bpf_map_lookup_elem(u->o.procs_fd, &key, u->proc))
			continue;	/* gone meanwhile */
		if (ARRAY_RESERVE(*out, cap, *n + 1)) {
			err = -ENOMEM;
			break;
		}
		(*out)[*n] = (struct saved_proc){ .kp = {
			.img = proc_image__of(key, u->proc->start, u->proc->exec),
			.announced = u->proc->announced,
		} };
		err = save_one(u->proc, &(*out)[(*n)++], moves, n_moves, &cap_moves);
	}
	if (err) {
		free_saved(*out, *n);
		free(*moves);
		*out = NULL;
		*moves = NULL;
	}
	return err;
}

/*
 * Writes S's entry back with its tables where the compaction MOVES put
 * them: what was read for its image holds still, nothing is read again.
 * -ENOENT when a table of it is not among them (then it is read anew).
 */
static int give_back(struct unwinder *u, const struct saved_proc *s,
		     const struct unwind_move *moves, size_t n_moves)
{
	struct unwind_proc *p = u->proc;

	p->n = s->n;
	p->announced = s->kp.announced;
	p->start = s->kp.img.start;
	p->exec = s->kp.img.exec;
	p->gen = ++u->gen ? u->gen : ++u->gen;	/* BPF's cached rows are of the old places */
	for (__u32 i = 0; i < s->n; i++) {
		const struct unwind_move *mv;

		p->m[i] = s->m[i];
		if (!p->m[i].table_len)
			continue;
		mv = bsearch(&p->m[i].table_start, moves, n_moves, sizeof(*moves), cmp_u32);
		if (!mv || mv->to == UNWIND_MOVE_NONE)
			return -ENOENT;
		p->m[i].table_start = mv->to;
		p->m[i].page_start = mv->page_to;
	}
	if (bpf_util__set_bit(u->o.pids_fd, unwind_pid_bits__bit(s->kp.img.pid, UNWIND_RT_NATIVE)) ||
	    bpf_map_update_elem(u->o.procs_fd, &s->kp.img.pid, p, BPF_ANY))
		return -errno;
	return 0;
}

/*
 * Empties the BPF side and waits for running walks to end, drops the tables
 * of processes gone and moves the others together, then gives every entry
 * back with its tables' new places. Nothing is parsed or read from /proc
 * again, so BPF falls back to frame pointers only for the time of the
 * move; an entry read before any announcement, which an exec meanwhile
 * would have voided, is read anew. Where the array cannot be mapped, every
 * table is dropped and the processes are read again.
 */
static int reset(struct unwinder *u)
{
	struct saved_proc *procs;
	struct unwind_move *moves;
	size_t n, n_moves;
	bool compacted = false;
	int err;

	unwinder__sweep(u);	/* the tables of processes gone need no room */
	err = save_procs(u, &procs, &n, &moves, &n_moves);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(u->o.procs_fd, &procs[i].kp.img.pid);
	err = bpf_util__grace_period(u->o.sync_outer_fd, u->o.sync_inner_fd);
	if (!err)
		compacted = !unwind_cache__compact(u->cache, moves, n_moves);
	if (!err && !compacted)
		err = unwind_cache__reset(u->cache);
	u->stats.resets++;
	u->last_reset_ns = clock_ns(CLOCK_MONOTONIC);
	u->resetting = true;
	for (size_t i = 0; i < n && !err; i++) {
		const struct known_proc *kp = &procs[i].kp;

		/* a process gone since is simply not read again */
		if (!compacted || kp->img.exec == PROC_EXEC_ANY ||
		    give_back(u, &procs[i], moves, n_moves))
			put(u, &kp->img, kp->announced);
	}
	u->resetting = false;
	free_saved(procs, n);
	free(moves);
	return err;
}

/* IMG's entry, from MAPS (see put_maps) or, when MAPS is NULL, from its maps read now */
static int attempt(struct unwinder *u, const struct proc_image *img, bool announced,
		   struct proc_map **maps, size_t n)
{
	return maps ? put_maps(u, img, announced, maps, n) : put(u, img, announced);
}

/* attempt(), making room when the array is full (once a RESET_INTERVAL_NS at most) */
static int load(struct unwinder *u, const struct proc_image *img, bool announced,
		struct proc_map **maps, size_t n)
{
	__u64 since_reset = clock_ns(CLOCK_MONOTONIC) - u->last_reset_ns;
	int err;

	u->resetting = u->last_reset_ns && since_reset < RESET_INTERVAL_NS;
	err = attempt(u, img, announced, maps, n);
	if (err == -E2BIG && unwinder__sweep(u) > 0)	/* the map of processes was full of dead ones */
		err = attempt(u, img, announced, maps, n);
	if (err == -ENOSPC) {
		err = reset(u);
		if (!err) {
			u->resetting = true;
			err = attempt(u, img, announced, maps, n);
		}
	}
	u->resetting = false;
	return err;
}

static int add(struct unwinder *u, const struct proc_image *img, bool announced)
{
	int err = load(u, img, announced, NULL, 0);

	if (err)
		u->stats.procs_failed++;
	else
		u->stats.procs++;
	return err;
}

int unwinder__add_pid(struct unwinder *u, __u32 pid)
{
	struct proc_image img = { .pid = pid, .exec = PROC_EXEC_ANY };
	int err = proc_image__start_of(u->o.proc_root, pid, &img.start);

	return err ? err : add(u, &img, false);
}

int unwinder__add_announced(struct unwinder *u, const struct proc_image *img)
{
	return add(u, img, true);
}

int unwinder__add_fork(struct unwinder *u, const struct proc_image *img,
		       const struct proc_image *parent)
{
	struct unwind_proc *p = u->proc;
	int err;

	/* the parent's entry, of the very image the child was forked from */
	if (bpf_map_lookup_elem(u->o.procs_fd, &parent->pid, p) || p->start != parent->start ||
	    (p->exec != parent->exec && p->exec != PROC_EXEC_ANY))
		return -ENOENT;
	p->announced = true;
	p->start = img->start;
	p->exec = img->exec;
	p->gen = ++u->gen ? u->gen : ++u->gen;
	err = bpf_util__set_bit(u->o.pids_fd, unwind_pid_bits__bit(img->pid, UNWIND_RT_NATIVE));
	if (!err && bpf_map_update_elem(u->o.procs_fd, &img->pid, p, BPF_ANY))
		err = -errno;
	return err;
}

int unwinder__sweep(struct unwinder *u)
{
	struct known_proc *procs;
	size_t n;
	int gone = 0, err = known_procs(u, &procs, &n);

	if (err)
		return err;
	/* the tables of a process gone, or of the last holder of a recycled pid */
	for (size_t i = 0; i < n; i++)
		if (!proc_image__lives(u->o.proc_root, &procs[i].img) &&
		    !bpf_map_delete_elem(u->o.procs_fd, &procs[i].img.pid))
			gone++;
	free(procs);
	return gone;
}

int unwinder__build_aside(struct unwinder *u, off_t min_bytes)
{
	return unwind_cache__build_aside(u->cache, min_bytes);
}

int unwinder__collect(struct unwinder *u)
{
	struct waiting *w = u->waiting;
	size_t n = u->n_waiting;
	int built = unwind_cache__collect(u->cache);

	if (built <= 0 || !n)
		return built;
	/* each written again from its maps: with every table built by now, or waiting again */
	u->waiting = NULL;
	u->n_waiting = u->cap_waiting = 0;
	for (size_t i = 0; i < n; i++)	/* failure: gone, or frame pointers */
		load(u, &w[i].kp.img, w[i].kp.announced, &w[i].maps, w[i].n);
	free_waiting(w, n);
	return built;
}

int unwinder__building(const struct unwinder *u)
{
	return unwind_cache__building(u->cache);
}

void unwinder__stats(const struct unwinder *u, struct unwinder_stats *out)
{
	*out = u->stats;
	unwind_cache__stats(u->cache, &out->cache);
}
