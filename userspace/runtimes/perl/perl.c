/* perl.c -- perl processes: found by their interpreter's symbols, the BPF table, names read per image */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/proc_mem.h"
#include "runtimes/thread_local.h"
#include "symbolize/elf_find.h"
#include "symbolize/proc_maps.h"
#include "symbolize/procfs.h"
#include "perl_int.h"

#define FUNCS_MAX 65536		/* names one process may cache: a run-time sub factory stops here, counted */

enum { S_CURINTERP, S_RUNOPS, S_RUNOPS_DEBUG, S_VERSION, S_COUNT };
static const char *const sym_names[S_COUNT] = {
	"PL_curinterp", "Perl_runops_standard", "Perl_runops_debug", "PL_version",
};

/* The one place an image's state is found (rt_images__find) */
static struct perl_pid *find_image(struct perl_rt *r, const struct proc_image *img)
{
	return (struct perl_pid *)rt_images__find(&r->pids, img);
}

void perl__free_pid(void *rt, struct rt_image *h)
{
	struct perl_pid *p = (struct perl_pid *)h;
	struct perl_rt *r = rt;

	r->stats.func_bytes -= p->bytes;
	for (size_t i = 0; i < p->n_funcs; i++) {
		free(p->funcs[i].name);
		free(p->funcs[i].file);
	}
	free(p->funcs);
	hmap__free(p->index);
	free(p);
}

static struct perl_pid *new_pid(struct perl_rt *r, const struct proc_image *img)
{
	struct perl_pid *p = calloc(1, sizeof(*p));

	if (p && rt_images__add(&r->pids, &p->head, img)) {
		free(p);
		p = NULL;
	}
	return p;
}

static void drop_pid(struct perl_rt *r, struct perl_pid *p)
{
	rt_images__remove(&r->pids, &p->head);
	perl__free_pid(r, &p->head);
}

/* A file that may hold the interpreter: perl itself (static, as Debian's) or libperl.so */
static bool candidate(const struct proc_map *m)
{
	const char *base = strrchr(m->path, '/');

	if (!m->inode || !base)
		return false;
	base++;
	return !strncmp(base, "libperl.so", 10) || !strncmp(base, "perl", 4);
}

/* The interpreter's symbols in the file mapped at M: 0, -ENOENT (not there), or -errno */
static int read_syms(struct perl_rt *r, __u32 pid, const struct proc_map *m, struct elf_found *f,
		     __u64 *bias, __s32 *tls_off)
{
	struct stat st;
	struct thread_local t;
	__u64 vaddr;
	int fd, err = procfs__open_mapped(r->o.proc_root, pid, m, &fd, &st);

	if (err)
		return err;
	err = elf_find__symbols(fd, m->pgoff, sym_names, S_COUNT, f, &vaddr);
	/* each thread's interpreter, where the executable has it in its own block */
	*tls_off = 0;
	if (!err && !thread_local__elf(fd, m->pgoff, false, "PL_current_context",
				       THREAD_LOCAL_SYMTAB | THREAD_LOCAL_BY_INTERP, &t) &&
	    t.kind == THREAD_LOCAL_STATIC && t.value >= INT32_MIN && t.value <= INT32_MAX)
		*tls_off = (__s32)t.value;
	close(fd);
	if (err)
		return err;
	if (!f[S_CURINTERP].value || !f[S_RUNOPS].value || !f[S_RUNOPS].size || !f[S_VERSION].value)
		return -ENOENT;
	*bias = m->start - vaddr;
	return 0;
}

/*
 * PID's table for BPF: 0; -ENOENT: no perl; -ENOTSUP: a perl whose version
 * (PL_version, read from the process) we do not know.
 */
static int probe(struct perl_rt *r, __u32 pid, struct perl_proc *proc,
		 const struct perl_layout **lp)
{
	struct elf_found f[S_COUNT];
	struct proc_map *maps = NULL;
	const struct perl_layout *l;
	__u64 bias = 0;
	__s32 tls_off = 0;
	__u8 version;
	size_t n = 0, i;
	int err = runtime__read_maps(r->o.proc_root, pid, &maps, &n);

	if (err)
		return err;
	err = -ENOENT;
	for (i = 0; i < n && err == -ENOENT; i++) {
		/* each file's first mapping: elf_find__symbols maps its offset to a vaddr */
		if (!candidate(&maps[i]) || (i > 0 && !strcmp(maps[i - 1].path, maps[i].path)))
			continue;
		err = read_syms(r, pid, &maps[i], f, &bias, &tls_off);
	}
	if (err)
		goto out;
	err = proc_mem__read(pid, f[S_VERSION].value + bias, &version, sizeof(version));
	if (err)
		goto out;
	l = perl_layout__of(version);
	if (!l) {
		err = -ENOTSUP;
		goto out;
	}
	*lp = l;
	*proc = l->bpf;
	proc->curinterp = f[S_CURINTERP].value + bias;
	proc->tls_off = tls_off;
	proc->runops_start[0] = f[S_RUNOPS].value + bias;
	proc->runops_end[0] = proc->runops_start[0] + f[S_RUNOPS].size;
	if (f[S_RUNOPS_DEBUG].value && f[S_RUNOPS_DEBUG].size) {
		proc->runops_start[1] = f[S_RUNOPS_DEBUG].value + bias;
		proc->runops_end[1] = proc->runops_start[1] + f[S_RUNOPS_DEBUG].size;
	}
out:
	proc_maps__free(maps);
	return err;
}

int perl__add_image(void *rt, const struct proc_image *img)
{
	struct perl_rt *r = rt;
	__u32 pid = img->pid;
	struct perl_pid *p = (struct perl_pid *)rt_images__current(&r->pids, pid);
	const struct perl_layout *l = NULL;
	struct perl_proc proc;
	int err = probe(r, pid, &proc, &l);
	bool said = false, counted = runtime__counted(p ? &p->img : NULL, p && !p->unknown, img);

	if (err == -ESRCH)
		return err;	/* gone: what it held names its samples (runtime__read_maps) */
	if (p && !proc_image__eq(&p->img, img)) {
		/* the same process told unknown before (found running, or before its exec): once */
		said = p->unknown && runtime__same_process(&p->img, img);
		/* an exec, a recycled pid: its names stay for its own samples until the second sweep */
		p->superseded = true;
		bpf_map_delete_elem(r->o.procs_fd, &pid);
		p = NULL;
	}
	if (err) {
		if (p && err != -ENOTSUP) {
			bpf_map_delete_elem(r->o.procs_fd, &pid);
			drop_pid(r, p);	/* the same image, its perl gone from its maps */
		}
		if (err == -ENOTSUP && !p && (p = new_pid(r, img))) {
			p->unknown = true;
			if (said)
				return err;
			r->stats.unknown_versions++;
			p_info("pid %u: a perl of a version we do not know: native frames only", pid);
		}
		return err;
	}
	if (p && p->unknown) {
		drop_pid(r, p);
		p = NULL;
	}
	if (p && !p->dead && !memcmp(&p->proc, &proc, sizeof(proc)))
		return 0;	/* known already: a re-read of the maps found the same */
	if (!p) {
		p = new_pid(r, img);
		if (!p)
			return -ENOMEM;
		r->stats.procs += !counted;
	}
	p->dead = false;
	p->l = l;
	p->proc = proc;
	err = runtime__set_table(r->o.pids_fd, r->o.procs_fd, UNWIND_RT_PERL, pid, &proc);
	if (!err)
		p_debug("pid %u: perl 5.%u, its frames walked in BPF (%s)", pid, proc.version & 0xff,
			proc.tls_off ? "every thread's interpreter" : "the main thread's");
	return err;
}

static int read_pid(void *ctx, __u64 addr, void *buf, size_t len)
{
	return proc_mem__read(*(const __u32 *)ctx, addr, buf, len);
}

struct func_key {
	__u64 addr;
	__u32 gen;
	__u32 kind;
};

static __u64 func_hash(const struct func_key *k)
{
	return hash_u64(k->addr, (__u64)k->gen << 8 | k->kind);
}

static int func_eq(__u32 id, const void *key, const void *ctx)
{
	const struct perl_pid *p = ctx;
	const struct func_key *k = key;
	const struct perl_func *f = &p->funcs[id - 1];

	return f->addr == k->addr && f->gen == k->gen && f->kind == k->kind;
}

static const struct perl_func *find_func(const struct perl_pid *p, const struct func_key *k)
{
	__u32 id = p->index ? hmap__find(p->index, func_hash(k), func_eq, k, p) : 0;

	return id ? &p->funcs[id - 1] : NULL;
}

/* Keeps a name read: 0 or -errno; NAME and FILE are taken */
static int add_func(struct perl_rt *r, struct perl_pid *p, const struct func_key *k, char *name,
		    char *file)
{
	if (!p->index && !(p->index = hmap__new()))
		return -ENOMEM;
	if (p->n_funcs == p->cap_funcs) {
		size_t cap = p->cap_funcs ? 2 * p->cap_funcs : 64;
		struct perl_func *n = realloc(p->funcs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->funcs = n;
		p->cap_funcs = cap;
	}
	if (hmap__insert(p->index, func_hash(k), (__u32)p->n_funcs + 1))
		return -ENOMEM;
	p->funcs[p->n_funcs++] = (struct perl_func){ .addr = k->addr, .gen = k->gen, .kind = k->kind,
						    .name = name, .file = file };
	p->bytes += sizeof(struct perl_func) + (name ? strlen(name) + 1 : 0) +
		    (file ? strlen(file) + 1 : 0);
	r->stats.func_bytes += sizeof(struct perl_func) + (name ? strlen(name) + 1 : 0) +
			       (file ? strlen(file) + 1 : 0);
	return 0;
}

/* A CV or a file name BPF saw first: read now, while the process lives */
void perl__event(void *rt, const struct rt_event *e)
{
	struct perl_rt *r = rt;
	struct proc_image img = rt_event__image(e);
	struct perl_pid *p = find_image(r, &img);
	struct func_key k = { .addr = e->addr, .gen = e->gen, .kind = e->kind };
	char name[PERL_NAME_MAX], file[PERL_NAME_MAX];
	struct perl_mem m;
	__u64 t0;
	int err;

	/* a superseded image's memory is another's now: not read */
	if (!p || p->superseded || p->unknown || !p->l || find_func(p, &k))
		return;
	if (p->n_funcs >= FUNCS_MAX) {
		r->stats.func_cache_full++;
		return;
	}
	m = (struct perl_mem){ .read = read_pid, .ctx = &img.pid, .l = p->l };
	t0 = (__u64)clock_ns(CLOCK_MONOTONIC);
	if (e->kind == PERL_EVENT_CV)
		err = perl_mem__sub(&m, e->addr, e->gen, name, sizeof(name), file, sizeof(file));
	else
		err = perl_mem__string(&m, e->addr, file, sizeof(file));
	r->stats.read_ns += (__u64)clock_ns(CLOCK_MONOTONIC) - t0;
	if (err) {
		r->stats.funcs_failed++;
		return;
	}
	if (add_func(r, p, &k, e->kind == PERL_EVENT_CV ? strdup(name) : NULL,
		     file[0] ? strdup(file) : NULL)) {
		r->stats.funcs_failed++;
		return;
	}
	r->stats.funcs++;
}

int perl__frame(void *rt, const struct proc_image *img, __u64 a, __u64 b,
		struct src_line *out, int max, __u64 *loc)
{
	struct perl_rt *r = rt;
	bool sub = FRAME_TAG(a) == PERL_TAG_SUB;
	struct func_key k = { .addr = a & FRAME_ADDR_MASK, .gen = sub ? (__u32)b : 0,
			      .kind = sub ? PERL_EVENT_CV : PERL_EVENT_FILE };
	struct perl_pid *p = find_image(r, img);
	const struct perl_func *f = p ? find_func(p, &k) : NULL;
	__u32 line = (__u32)(b >> 32);

	if (max < 1)
		return 0;
	/* one Location per (image, what ran, line): pprof's lines are per Location */
	*loc = hash_u64(a, hash_u64(b, proc_image__hash(img))) | 1ull << 63;
	if (!f) {
		r->stats.frames_unnamed++;
		out[0] = (struct src_line){ .function = sub ? "[unknown perl sub]" : "[unknown perl file]" };
		return 1;
	}
	r->stats.frames_named++;
	if (sub)
		out[0] = (struct src_line){ .function = f->name, .file = f->file, .line = line };
	else
		out[0] = (struct src_line){ .function = (__u32)b == PERL_FILE_EVAL ? "(eval)" : "(main)",
					    .file = f->file, .line = line };
	return 1;
}

const char *perl__mark(void *rt, __u64 slot)
{
	struct perl_rt *r = rt;
	__u64 why = slot & FRAME_ADDR_MASK;

	if (why < sizeof(r->stats.frames_lost) / sizeof(r->stats.frames_lost[0]))
		r->stats.frames_lost[why]++;
	switch (why) {
	case PERL_LOST_NO_INTERP:
		return "[perl frames lost: no interpreter]";
	case PERL_LOST_RUN:
		return "[perl frames lost: too deep]";
	case PERL_LOST_THREAD:
		return "[perl frames lost: no interpreter for this thread]";
	default:
		return "[perl frames lost: unreadable context]";
	}
}

/* An image ended at two sweeps in a row: its names go, with its BPF table if still its own. */
void perl__sweep(void *rt)
{
	struct perl_rt *r = rt;

	rt_images__sweep(&r->pids, r->o.proc_root, r->o.procs_fd, perl__free_pid, r);
}
