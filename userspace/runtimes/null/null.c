/* null.c -- the test-only null runtime: finds its interpreter by two symbols, names frames by function id */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "nullrt.h"
#include "lib/hashmap.h"
#include "lib/proc_mem.h"
#include "symbolize/elf_find.h"
#include "symbolize/proc_maps.h"
#include "symbolize/procfs.h"
#include "null_runtime.h"
#include "runtimes/rt_images.h"

/* the interpreter's layout (tests/fixtures/null/null_interp.c), checked by its magic */
#define ST_MAGIC 0
#define ST_TOP 8
#define ST_NAMES 16
#define FR_PREV 0
#define FR_FUNC 8

enum { SYM_STATE, SYM_EVAL, SYM_COUNT };
static const char *const wanted[SYM_COUNT] = { "null_runtime_state", "null_eval" };

struct null_pid {
	RT_IMAGE_HEAD;		/* img, superseded, dead: rt_images.h */
	__u64 state;
	char names[NULL_FUNCS_MAX][NULL_NAME_MAX + 6];	/* "null:" + name; "" not read */
};

struct null_rt {
	struct runtime_opts o;
	struct rt_images pids;
	struct null_stats stats;
};

/* The state of image IMG (rt_images__find): never another image's at its pid */
static struct null_pid *find_image(struct null_rt *r, const struct proc_image *img)
{
	return (struct null_pid *)rt_images__find(&r->pids, img);
}

static void *null_new(const struct runtime_opts *o)
{
	struct null_rt *r = calloc(1, sizeof(*r));

	if (r)
		r->o = *o;
	return r;
}

static void free_pid(void *rt, struct rt_image *h)
{
	free(h);
}

static void null_free(void *rt)
{
	struct null_rt *r = rt;

	if (r)
		rt_images__release(&r->pids, free_pid, r);
	free(r);
}

/* The table of the executable mapped at M, if it is a null interpreter: 0 or -ENOENT. */
static int probe_file(struct null_rt *r, __u32 pid, const struct proc_map *m, struct null_proc *np)
{
	struct elf_found f[SYM_COUNT];
	struct stat st;
	__u64 vaddr, magic, bias;
	int fd, err = procfs__open_mapped(r->o.proc_root, pid, m, &fd, &st);

	if (err)
		return err;
	err = elf_find__symbols(fd, m->pgoff, wanted, SYM_COUNT, f, &vaddr);
	close(fd);
	if (err || !f[SYM_STATE].value || !f[SYM_EVAL].value || !f[SYM_EVAL].size)
		return -ENOENT;
	bias = m->start - vaddr;
	*np = (struct null_proc){
		.state = f[SYM_STATE].value + bias,
		.eval_start = f[SYM_EVAL].value + bias,
		.eval_end = f[SYM_EVAL].value + bias + f[SYM_EVAL].size,
		.st_top = ST_TOP, .fr_prev = FR_PREV, .fr_func = FR_FUNC,
	};
	/* never trusted: the state must say it is one */
	if (proc_mem__read(pid, np->state + ST_MAGIC, &magic, sizeof(magic)) || magic != NULL_STATE_MAGIC)
		return -ENOENT;
	return 0;
}

/* Its first file mapping (the executable) only: a null interpreter is a program, not a library. */
static int null_add_image(void *rt, const struct proc_image *img)
{
	__u32 pid = img->pid;
	struct null_rt *r = rt;
	struct proc_map *maps = NULL;
	struct null_proc np;
	struct null_pid *p;
	bool counted;
	size_t n = 0, i;
	int err = runtime__read_maps(r->o.proc_root, pid, &maps, &n);

	if (err)
		return err;	/* gone: its state stays (runtime__read_maps) */
	for (i = 0; i < n && (!maps[i].inode || maps[i].path[0] != '/'); i++)
		;
	err = i < n ? probe_file(r, pid, &maps[i], &np) : -ENOENT;
	proc_maps__free(maps);
	p = (struct null_pid *)rt_images__current(&r->pids, pid);
	counted = runtime__counted(p ? &p->img : NULL, p != NULL, img);
	if (p && !proc_image__eq(&p->img, img)) {
		/* an exec, a recycled pid: its names stay for its own samples until the second sweep */
		p->superseded = true;
		if (err)
			bpf_map_delete_elem(r->o.procs_fd, &pid);
		p = NULL;
	}
	if (err)
		return err;
	if (p && !p->dead && p->state == np.state)
		return 0;	/* known already: a re-read of the maps found the same */
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p || rt_images__add(&r->pids, &p->head, img)) {
			free(p);
			return -ENOMEM;
		}
	}
	memset(p->names, 0, sizeof(p->names));
	p->dead = false;
	p->state = np.state;
	err = runtime__set_table(r->o.pids_fd, r->o.procs_fd, UNWIND_RT_NULL, pid, &np);
	if (!err)
		r->stats.procs += !counted;
	return err;
}

/* A function id first seen: its name, read now (names[id], a bounded string of the process). */
static void null_event(void *rt, const struct rt_event *e)
{
	struct null_rt *r = rt;
	struct proc_image img = rt_event__image(e);
	struct null_pid *p = find_image(r, &img);
	char name[NULL_NAME_MAX];
	__u64 ptr;
	size_t len;

	/* a superseded image's memory is another's now: not read */
	if (!p || p->superseded || e->addr >= NULL_FUNCS_MAX || p->names[e->addr][0])
		return;
	if (proc_mem__read(e->pid, p->state + ST_NAMES + 8 * e->addr, &ptr, sizeof(ptr)) ||
	    proc_mem__read_some(e->pid, ptr, name, sizeof(name)) <= 0) {
		r->stats.funcs_failed++;
		return;
	}
	len = strnlen(name, sizeof(name));
	for (size_t i = 0; i < len; i++)
		if (name[i] < 0x21 || name[i] > 0x7e)
			len = 0;	/* printable ASCII only, or no name */
	if (!len || len == sizeof(name)) {
		r->stats.funcs_failed++;
		return;
	}
	snprintf(p->names[e->addr], sizeof(p->names[e->addr]), "null:%.*s", (int)len, name);
	r->stats.funcs++;
}

static int null_frame(void *rt, const struct proc_image *img, __u64 a, __u64 b,
		      struct src_line *out, int max, __u64 *loc)
{
	struct null_rt *r = rt;
	struct null_pid *p = find_image(r, img);
	__u64 func = a & FRAME_ADDR_MASK;

	if (max < 1)
		return 0;
	*loc = hash_u64(func, proc_image__hash(img)) | 1ull << 63;
	if (!p || func >= NULL_FUNCS_MAX || !p->names[func][0]) {
		r->stats.frames_unnamed++;
		out[0] = (struct src_line){ .function = "[unknown null function]" };
		return 1;
	}
	r->stats.frames_named++;
	out[0] = (struct src_line){ .function = p->names[func] };
	return 1;
}

static const char *null_mark(void *rt, __u64 slot)
{
	struct null_rt *r = rt;

	r->stats.frames_lost++;
	return "[null frames lost: unreadable frame]";
}

/* An image ended at two sweeps in a row: its names go, with its BPF table if still its own. */
static void null_sweep(void *rt)
{
	struct null_rt *r = rt;

	rt_images__sweep(&r->pids, r->o.proc_root, r->o.procs_fd, free_pid, r);
}

static void null_stats_read(const void *rt, void *out)
{
	const struct null_rt *r = rt;

	memcpy(out, &r->stats, sizeof(r->stats));
}

#define NS(field) offsetof(struct null_stats, field)

static const struct stat_desc null_stats[] = {
	STAT_COUNT("processes_total", "Null interpreters whose frames BPF walks", NS(procs)),
	STAT_COUNT("functions_total", "Function names read", NS(funcs)),
	STAT_COUNT("functions_failed_total",
		  "Function names that could not be read", NS(funcs_failed)),
	STAT_COUNT("frames_named_total", "Null frames named", NS(frames_named)),
	STAT_COUNT("frames_unnamed_total", "Null frames left unnamed", NS(frames_unnamed)),
	STAT_COUNT("frames_lost_total", "Marks of null frames BPF could not read", NS(frames_lost)),
};

const struct runtime_ops null_runtime = {
	.name = "null",
	.id = UNWIND_RT_NULL,
	.procs_map = "null_procs",
	.new = null_new,
	.free = null_free,
	.add_image = null_add_image,
	.event = null_event,
	.frame = null_frame,
	.mark = null_mark,
	.sweep = null_sweep,
	.stats = null_stats,
	.n_stats = sizeof(null_stats) / sizeof(null_stats[0]),
	.stats_size = sizeof(struct null_stats),
	.stats_read = null_stats_read,
};
