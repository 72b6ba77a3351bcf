/* ruby.c -- CRuby processes: detection, the BPF table, and the state kept per process image */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "lib/bpf_util.h"
#include "lib/clock.h"
#include "lib/hashmap.h"
#include "lib/log.h"
#include "lib/proc_mem.h"
#include "symbolize/proc_maps.h"
#include "ruby_int.h"

/* The state of image IMG (runtime__is_image): never another image's at its pid */
struct rb_pid *ruby__find_image(const struct ruby_rt *r, const struct proc_image *img)
{
	for (size_t i = 0; i < r->n_pids; i++)
		if (proc_image__eq(&r->pids[i]->img, img))
			return r->pids[i];
	for (size_t i = 0; i < r->n_pids; i++)
		if (!r->pids[i]->superseded && runtime__is_image(&r->pids[i]->img, img))
			return r->pids[i];
	return NULL;
}

/* The state of the image BPF's table of PID is of, if any */
static struct rb_pid *find_current(struct ruby_rt *r, __u32 pid)
{
	for (size_t i = 0; i < r->n_pids; i++)
		if (r->pids[i]->img.pid == pid && !r->pids[i]->superseded)
			return r->pids[i];
	return NULL;
}

void ruby__free_pid(struct rb_pid *p)
{
	for (size_t i = 0; p && i < p->n_codes; i++)
		rb_code__free(&p->codes[i]);
	for (size_t i = 0; p && i < p->n_names; i++)
		free(p->names[i].full);
	if (p) {
		free(p->codes);
		hmap__free(p->index);
		free(p->names);
		hmap__free(p->name_index);
	}
	free(p);
}

static struct rb_pid *new_pid(struct ruby_rt *r, const struct proc_image *img)
{
	struct rb_pid *p;

	if (r->n_pids == r->cap_pids) {
		size_t cap = r->cap_pids ? 2 * r->cap_pids : 16;
		struct rb_pid **pids = realloc(r->pids, cap * sizeof(*pids));

		if (!pids)
			return NULL;
		r->pids = pids;
		r->cap_pids = cap;
	}
	p = calloc(1, sizeof(*p));
	if (p && (!(p->index = hmap__new()) || !(p->name_index = hmap__new()))) {
		ruby__free_pid(p);
		p = NULL;
	}
	if (p) {
		p->img = *img;
		r->pids[r->n_pids++] = p;
	}
	return p;
}

static void drop_pid(struct ruby_rt *r, struct rb_pid *p)
{
	for (size_t i = 0; i < r->n_pids; i++)
		if (r->pids[i] == p) {
			r->stats.cache_bytes -= p->bytes;
			r->pids[i] = r->pids[--r->n_pids];
			ruby__free_pid(p);
			return;
		}
}

/* Which mapped file to probe: libruby, or an executable named ruby* that may have it linked in. */
static bool worth_probing(const struct proc_map *m, bool first)
{
	const char *base = strrchr(m->path, '/');

	if (!m->inode || !base)
		return false;
	base++;
	return (!strncmp(base, "libruby", 7) && strstr(base, ".so")) || (first && !strncmp(base, "ruby", 4));
}

static int read_tls(__u32 pid, const struct rb_found *f, struct rb_proc *proc)
{
	__u64 index[2];

	if (!f->tls_index) {	/* the executable's own: no module to find */
		proc->tls_module = 0;
		proc->tls_offset = (__u64)f->tls_static;
		return 0;
	}
	if (proc_mem__read(pid, f->tls_index, index, sizeof(index)) || !index[0] || index[0] > 0xffff ||
	    index[1] + f->tls_add > 0x100000)
		return -ENOTSUP;
	proc->tls_module = index[0];
	proc->tls_offset = index[1] + f->tls_add;
	return 0;
}

#define JIT_MIN (1u << 20)	/* the least of YJIT's code region: --yjit-exec-mem-size is in MiB */
#define RETRY_NS 1000000000ULL		/* a process without YJIT's code yet is looked at again each second */
#define RETRY_FOR_NS (60 * RETRY_NS)	/* ... for a minute: YJIT starts with the VM, after libruby is mapped */

static bool anonymous(const struct proc_map *m)
{
	return !m->inode && !m->path[0];
}

/*
 * YJIT's code: one anonymous region mapped when YJIT starts (256 MiB in
 * 3.1, 48 MiB from 3.3), executable as it fills; a page being written is
 * made writable for a while, which splits the mapping. The run of
 * anonymous mappings around the largest executable one, if 1 MiB or more:
 * nothing else of a Ruby process maps that much code without a file.
 */
void rb_maps__jit_range(const struct proc_map *maps, size_t n, __u64 exec_start, struct rb_proc *proc)
{
	size_t best = n, lo, hi;

	for (size_t i = 0; i < n; i++)
		if (maps[i].start <= exec_start && exec_start < maps[i].end) {
			proc->text_start = maps[i].start;
			proc->text_end = maps[i].end;
		}
	for (size_t i = 0; i < n; i++)
		if (anonymous(&maps[i]) && maps[i].perms[2] == 'x' &&
		    (best == n || maps[i].end - maps[i].start > maps[best].end - maps[best].start))
			best = i;
	if (best == n)
		return;
	for (lo = best; lo > 0 && anonymous(&maps[lo - 1]) && maps[lo - 1].end == maps[lo].start; lo--)
		;
	for (hi = best; hi + 1 < n && anonymous(&maps[hi + 1]) && maps[hi + 1].start == maps[hi].end; hi++)
		;
	if (maps[hi].end - maps[lo].start < JIT_MIN)
		return;
	proc->jit_start = maps[lo].start;
	proc->jit_end = maps[hi].end;
}

/* Finds CRuby in PID's maps: *proc and *layout filled; 0, -ENOENT, -ENOTSUP. */
static int probe(struct ruby_rt *r, __u32 pid, struct rb_proc *proc, const struct rb_layout **layout,
		 __u64 *symbols)
{
	struct proc_map *maps = NULL;
	struct rb_found f = { 0 };
	size_t n = 0, i;
	bool first = true;
	int err = runtime__read_maps(r->o.proc_root, pid, &maps, &n);

	if (err)
		return err;
	err = -ENOENT;
	for (i = 0; i < n && err == -ENOENT; i++) {
		if (!maps[i].inode || maps[i].path[0] != '/')
			continue;
		if (worth_probing(&maps[i], first))
			err = rb_elf__probe(r->o.proc_root, pid, &maps[i], &f);
		first = false;
	}
	if (!err)
		rb_maps__jit_range(maps, n, f.exec_start, proc);
	proc_maps__free(maps);
	proc->version = f.version;	/* for what is said of an unknown one */
	if (!err && !(*layout = rb_layout__find(f.version)))
		err = -ENOTSUP;
	if (!err)
		err = read_tls(pid, &f, proc);
	if (err)
		return err;
	proc->exec_start = f.exec_start;
	proc->exec_end = f.exec_end;
	proc->ec_vm_stack = 0;	/* rb_execution_context_t and rb_control_frame_t: the same in 3.1-3.4 */
	proc->ec_vm_stack_size = 8;
	proc->ec_cfp = 16;
	proc->cfp_size = (*layout)->cfp_size;
	proc->cfp_pc = 0;
	proc->cfp_iseq = 16;
	proc->cfp_ep = 32;
	proc->me_called_id = RB_ME_CALLED_ID;
	*symbols = f.symbols;
	return 0;
}

/* Once per minor version a run: a fleet of one Ruby says it once. */
static void say_unknown(struct ruby_rt *r, __u32 pid, __u32 version)
{
	__u8 *said = &r->said[(version >> 8) & 63];

	r->stats.unknown_versions++;
	if (*said)
		return;
	*said = 1;
	if (version)
		p_warn("pid %u: CRuby %u.%u.%u is a version we do not walk: its processes get native frames only",
		       pid, version >> 16, (version >> 8) & 0xff, version & 0xff);
	else
		p_warn("pid %u: a CRuby whose version or code we cannot read: native frames only", pid);
}

int ruby__add_image(struct ruby_rt *r, const struct proc_image *img)
{
	__u32 pid = img->pid;
	struct rb_pid *p = find_current(r, pid);
	const struct rb_layout *layout = NULL;
	struct rb_proc proc = { 0 };
	__u64 symbols = 0;
	int err = probe(r, pid, &proc, &layout, &symbols);
	bool said = false, counted = runtime__counted(p ? &p->img : NULL, p && !p->unknown, img);
	bool jit_counted = counted && p->proc.jit_start;

	if (err == -ESRCH)
		return err;	/* gone: what it held names its samples (runtime__read_maps) */
	if (p && !proc_image__eq(&p->img, img)) {
		said = p->unknown && runtime__same_process(&p->img, img);
		/* an exec, a recycled pid: its names stay for its own samples until the second sweep */
		p->superseded = true;
		bpf_map_delete_elem(r->o.procs_fd, &pid);
		p = NULL;
	}
	if (err) {
		if (p && err != -ENOTSUP) {
			bpf_map_delete_elem(r->o.procs_fd, &pid);
			drop_pid(r, p);
		}
		if (err == -ENOTSUP && !p && (p = new_pid(r, img))) {
			p->unknown = true;
			if (!said)
				say_unknown(r, pid, proc.version);
		}
		return err;
	}
	if (p && !p->unknown && !memcmp(&p->proc, &proc, sizeof(proc))) {
		p->dead = false;
		return 0;	/* known already: a re-read found the same */
	}
	if (p)
		drop_pid(r, p);
	p = new_pid(r, img);
	if (!p)
		return -ENOMEM;
	p->layout = layout;
	p->proc = proc;
	p->found_ns = (__u64)clock_ns(CLOCK_MONOTONIC);
	p->symbols = symbols;
	r->stats.procs += !counted;
	r->stats.jit_procs += proc.jit_start != 0 && !jit_counted;
	/* the bit first: BPF looks up only the pids it has */
	err = bpf_util__set_bit(r->o.pids_fd, unwind_pid_bits__bit(pid, UNWIND_RT_RUBY));
	if (!err && bpf_map_update_elem(r->o.procs_fd, &pid, &proc, BPF_ANY))
		err = -errno;
	if (!err)
		p_debug("pid %u: CRuby %u.%u.%u, its frames walked in BPF%s%s", pid, proc.version >> 16,
			(proc.version >> 8) & 0xff, proc.version & 0xff,
			proc.jit_start ? ", YJIT's code marked" : "",
			symbols ? "" : " (no symbol table found: C functions unnamed)");
	return err;
}

/* YJIT's code region of P, if it has one now: told to BPF */
static void look_for_jit(struct ruby_rt *r, struct rb_pid *p)
{
	struct proc_map *maps = NULL;
	struct rb_proc proc = p->proc;
	size_t n = 0;

	if (proc_maps__read(r->o.proc_root, p->img.pid, &maps, &n))
		return;
	rb_maps__jit_range(maps, n, proc.exec_start, &proc);
	proc_maps__free(maps);
	if (!proc.jit_start || bpf_map_update_elem(r->o.procs_fd, &p->img.pid, &proc, BPF_EXIST))
		return;
	p->proc = proc;
	r->stats.jit_procs++;
	p_debug("pid %u: YJIT's code found, marked", p->img.pid);
}

void ruby__retry(struct ruby_rt *r)
{
	__u64 now = (__u64)clock_ns(CLOCK_MONOTONIC);

	if (now < r->next_retry_ns)
		return;
	r->next_retry_ns = now + RETRY_NS;
	for (size_t i = 0; i < r->n_pids; i++) {
		struct rb_pid *p = r->pids[i];

		if (!p->dead && !p->unknown && !p->superseded && !p->proc.jit_start &&
		    now - p->found_ns < RETRY_FOR_NS)
			look_for_jit(r, p);
	}
}

/* An image ended at two sweeps in a row: its names go, with its BPF table if still its own. */
void ruby__sweep(struct ruby_rt *r)
{
	for (size_t i = 0; i < r->n_pids;) {
		struct rb_pid *p = r->pids[i];

		if (!runtime__gone_twice(r->o.proc_root, &p->img, p->superseded, &p->dead)) {
			i++;
			continue;
		}
		if (!p->superseded)
			bpf_map_delete_elem(r->o.procs_fd, &p->img.pid);
		drop_pid(r, p);
	}
}
