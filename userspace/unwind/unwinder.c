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
#include "symbolize/symbolize.h"
#include "unwind.h"
#include "unwinder.h"

#define USER_ADDR_END 0x800000000000ULL
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

struct unwinder {
	struct unwinder_opts o;
	struct unwind_cache *cache;
	struct unwind_proc *proc;	/* scratch: one BPF map value */
	struct unwinder_stats stats;
	__u64 last_reset_ns;
	__u32 gen;		/* the last struct unwind_proc.gen written */
	bool resetting;		/* no room: load what fits, frame pointers for the rest */
};

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
		if (maps[i].perms[2] == 'x' && maps[i].start < USER_ADDR_END)
			*h = mapping_hash(*h, &maps[i]);
	proc_maps__free(maps);
	return 0;
}

/*
 * One entry per executable mapping, sorted by address as /proc lists them.
 * Mappings without a table stay in, so BPF knows their code is code (and
 * unwinds it with frame pointers); an address in none of them is news.
 * *H: the mappings read, hashed (maps_hash).
 */
static int fill(struct unwinder *u, __u32 pid, __u64 *h)
{
	struct unwind_proc *p = u->proc;
	struct proc_map *maps;
	size_t n;
	int err = proc_maps__read(u->o.proc_root, pid, &maps, &n);

	if (err)
		return err;
	p->n = 0;
	*h = 0;
	for (size_t i = 0; i < n && !err; i++) {
		struct unwind_mapping *e = &p->m[p->n];
		struct unwind_slice slice;

		if (maps[i].perms[2] != 'x' || maps[i].start >= USER_ADDR_END)
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
		err = 0;	/* any other failure: this mapping unwinds with frame pointers */
		e->table_start = slice.start;
		e->table_len = slice.len;
		e->page_start = slice.page_start;
		e->n_pages = slice.n_pages;
		e->base_pc = slice.base_pc;
		p->n++;
	}
	proc_maps__free(maps);
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

static int put(struct unwinder *u, const struct proc_image *img, bool announced)
{
	__u64 start, h = 0;
	int err = fill(u, img->pid, &h);

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

/* Empties the BPF side, waits for running walks to end, then reloads the processes known. */
static int reset(struct unwinder *u)
{
	struct known_proc *procs;
	size_t n;
	int err = known_procs(u, &procs, &n);

	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(u->o.procs_fd, &procs[i].img.pid);
	err = bpf_util__grace_period(u->o.sync_outer_fd, u->o.sync_inner_fd);
	if (!err)
		err = unwind_cache__reset(u->cache);
	u->stats.resets++;
	u->last_reset_ns = clock_ns(CLOCK_MONOTONIC);
	u->resetting = true;
	for (size_t i = 0; i < n && !err; i++)	/* a process gone since is simply not reloaded */
		put(u, &procs[i].img, procs[i].announced);
	u->resetting = false;
	free(procs);
	return err;
}

static int add(struct unwinder *u, const struct proc_image *img, bool announced)
{
	__u64 since_reset = clock_ns(CLOCK_MONOTONIC) - u->last_reset_ns;
	int err;

	u->resetting = u->last_reset_ns && since_reset < RESET_INTERVAL_NS;
	err = put(u, img, announced);
	if (err == -E2BIG && unwinder__sweep(u) > 0)
		err = put(u, img, announced);	/* the map of processes was full of dead ones */
	if (err == -ENOSPC) {
		err = reset(u);
		if (!err) {
			u->resetting = true;
			err = put(u, img, announced);
		}
	}
	u->resetting = false;
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

void unwinder__stats(const struct unwinder *u, struct unwinder_stats *out)
{
	*out = u->stats;
	unwind_cache__stats(u->cache, &out->cache);
}
