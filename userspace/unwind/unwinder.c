/* unwinder.c -- feeds the BPF unwinder: each process's executable mappings and their CFI tables */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "lib/clock.h"
#include "lib/array.h"
#include "lib/bpf_util.h"
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

/*
 * One entry per executable mapping, sorted by address as /proc lists them.
 * Mappings without a table stay in, so BPF knows their code is code (and
 * unwinds it with frame pointers); an address in none of them is news.
 */
static int fill(struct unwinder *u, __u32 pid)
{
	struct unwind_proc *p = u->proc;
	struct proc_map *maps;
	size_t n;
	int err = proc_maps__read(u->o.proc_root, pid, &maps, &n);

	if (err)
		return err;
	p->n = 0;
	for (size_t i = 0; i < n && !err; i++) {
		struct unwind_mapping *e = &p->m[p->n];
		struct unwind_slice slice;

		if (maps[i].perms[2] != 'x' || maps[i].start >= USER_ADDR_END)
			continue;	/* not code, or [vsyscall] */
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

static int put(struct unwinder *u, __u32 pid, bool announced)
{
	int err = fill(u, pid);

	u->proc->announced = announced;
	u->proc->gen = ++u->gen ? u->gen : ++u->gen;
	/* the bit first: an exec drops the tables only of the pids it has */
	if (!err)
		err = bpf_util__set_bit(u->o.pids_fd, unwind_pid_bits__bit(pid, UNWIND_RT_NATIVE));
	if (!err && bpf_map_update_elem(u->o.procs_fd, &pid, u->proc, BPF_ANY))
		err = -errno;
	return err;
}

/* The pids BPF holds tables for; *pids is malloc'ed. */
static int known_pids(const struct unwinder *u, __u32 **pids, size_t *n)
{
	__u32 key, next;
	size_t cap = 0;

	*pids = NULL;
	*n = 0;
	while (!bpf_map_get_next_key(u->o.procs_fd, *n ? &key : NULL, &next)) {
		if (ARRAY_RESERVE(*pids, cap, *n + 1)) {
			free(*pids);
			*pids = NULL;
			return -ENOMEM;
		}
		(*pids)[(*n)++] = key = next;
	}
	return 0;
}

/* PID's entry says userspace was told of it (it stays so across a reset) */
static bool was_announced(const struct unwinder *u, __u32 pid)
{
	return !bpf_map_lookup_elem(u->o.procs_fd, &pid, u->proc) && u->proc->announced;
}

/* Empties the BPF side, waits for running walks to end, then reloads the processes known. */
static int reset(struct unwinder *u)
{
	__u32 *pids;
	size_t n;
	int err = known_pids(u, &pids, &n);

	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		/* the top bit, free in a pid (at most 2^22), keeps its announced flag */
		if (was_announced(u, pids[i]))
			pids[i] |= 1u << 31;
		bpf_map_delete_elem(u->o.procs_fd, &(__u32){ pids[i] & ~(1u << 31) });
	}
	err = bpf_util__grace_period(u->o.sync_outer_fd, u->o.sync_inner_fd);
	if (!err)
		err = unwind_cache__reset(u->cache);
	u->stats.resets++;
	u->last_reset_ns = clock_ns(CLOCK_MONOTONIC);
	u->resetting = true;
	for (size_t i = 0; i < n && !err; i++)	/* a process gone since is simply not reloaded */
		put(u, pids[i] & ~(1u << 31), pids[i] >> 31);
	u->resetting = false;
	free(pids);
	return err;
}

static int add(struct unwinder *u, __u32 pid, bool announced)
{
	__u64 since_reset = clock_ns(CLOCK_MONOTONIC) - u->last_reset_ns;
	int err;

	u->resetting = u->last_reset_ns && since_reset < RESET_INTERVAL_NS;
	err = put(u, pid, announced);
	if (err == -E2BIG && unwinder__sweep(u) > 0)
		err = put(u, pid, announced);	/* the map of processes was full of dead ones */
	if (err == -ENOSPC) {
		err = reset(u);
		if (!err) {
			u->resetting = true;
			err = put(u, pid, announced);
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
	return add(u, pid, false);
}

int unwinder__add_announced(struct unwinder *u, __u32 pid)
{
	return add(u, pid, true);
}

static bool process_gone(const struct unwinder *u, __u32 pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%u", u->o.proc_root, pid);
	return stat(path, &st) && errno == ENOENT;
}

int unwinder__sweep(struct unwinder *u)
{
	__u32 *pids;
	size_t n;
	int gone = 0, err = known_pids(u, &pids, &n);

	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		if (process_gone(u, pids[i]) && !bpf_map_delete_elem(u->o.procs_fd, &pids[i]))
			gone++;
	free(pids);
	return gone;
}

void unwinder__stats(const struct unwinder *u, struct unwinder_stats *out)
{
	*out = u->stats;
	unwind_cache__stats(u->cache, &out->cache);
}
