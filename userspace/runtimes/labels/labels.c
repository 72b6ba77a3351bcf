/* labels.c -- where a process keeps its own labels (Go pprof labels, custom-labels ABI v0), handed to BPF */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "lib/bpf_util.h"
#include "lib/file_memo.h"
#include "lib/proc_mem.h"
#include "symbolize/proc_maps.h"
#include "symbolize/procfs.h"
#include "go_layout.h"
#include "labels_elf.h"
#include "labels_runtime.h"

#define MAX_PIDS 1024
#define EXES_MAX 512	/* executables whose ELF answer is kept */
#define TLS_G_INTERNAL (-8)	/* internal linking: g at -8(FS), runtime.tlsg's slot */

struct label_pid {
	struct proc_image img;
	bool superseded;	/* a later image holds the pid: its BPF table is not ours */
	bool dead;		/* gone at the last sweep: freed at the next */
	bool fresh;		/* just made: its verdict not given yet */
	int refused;		/* not 0: labels we cannot read (its -errno), counted once */
};

struct labels_rt {
	struct runtime_opts o;
	struct label_pid pids[MAX_PIDS];
	int n_pids;
	struct file_memo *exes;	/* what each executable's ELF file said: read once, not per process */
	struct labels_stats stats;
};

#define CL_ABI_V0 0	/* custom_labels_abi_version's value for the layout BPF reads */

static void *labels_new(const struct runtime_opts *o)
{
	struct labels_rt *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->o = *o;
	r->exes = file_memo__new(EXES_MAX, sizeof(struct labels_exe));
	if (!r->exes) {
		free(r);
		return NULL;
	}
	return r;
}

static void labels_free(void *rt)
{
	struct labels_rt *r = rt;

	if (!r)
		return;
	file_memo__free(r->exes);
	free(r);
}

/* What the executable mapped at M says of its labels: 0, or -errno (gone, not an ELF file). */
static int probe_file(struct labels_rt *r, __u32 pid, const struct proc_map *m,
		      struct labels_exe *x)
{
	const struct labels_exe *known;
	struct stat st;
	int fd, err = procfs__open_mapped(r->o.proc_root, pid, m, &fd, &st);

	if (err)
		return err;
	/* the 100th process of one executable: its file said the same 99 times */
	known = file_memo__get(r->exes, &st, m->pgoff);
	if (known) {
		*x = *known;
	} else {
		err = labels_elf__read(fd, m->pgoff, x);
		if (!err)
			file_memo__put(r->exes, &st, m->pgoff, x);	/* failure: read again next time */
	}
	close(fd);
	return err;
}

static struct label_pid *find_current(struct labels_rt *r, __u32 pid)
{
	for (int i = 0; i < r->n_pids; i++)
		if (r->pids[i].img.pid == pid && !r->pids[i].superseded)
			return &r->pids[i];
	return NULL;
}

/*
 * Where the executable X of PID keeps its labels, into LP: a Go version we
 * know, or custom labels of ABI v0 (read from the process, not the file).
 * -ENOENT: neither; -ENOTSUP: a version we do not know (counted, never
 * guessed); -EINVAL: one we cannot read.
 */
static int label_source(__u32 pid, const struct proc_map *m, const struct labels_exe *x,
			struct label_proc *lp)
{
	__u32 version;
	int err;

	if (x->go != -ENOENT) {
		err = x->go ? x->go : go_layout__offsets(x->go_version, lp);
		/* internal linking keeps g at -8; external linking puts runtime.tlsg first in PT_TLS */
		lp->tls = x->tls_block ? -(__s64)x->tls_block : TLS_G_INTERNAL;
		return err;
	}
	if (!x->custom)
		return -ENOENT;
	if (proc_mem__read(pid, m->start - x->map_vaddr + x->cl_version, &version, sizeof(version)))
		return -EINVAL;
	if (version != CL_ABI_V0)
		return -ENOTSUP;
	lp->source = LABELS_CUSTOM_V0;
	/* x86-64 (variant II): the executable's block ends at the thread pointer */
	lp->tls = (__s64)x->cl_data - (__s64)x->tls_block;
	return 0;
}

/* Where image IMG's state goes: its slot, kept or new; NULL when full. */
static struct label_pid *slot_of(struct labels_rt *r, const struct proc_image *img, bool *same)
{
	struct label_pid *p = find_current(r, img->pid);

	if (p && runtime__is_image(&p->img, img))
		return p;
	if (p) {
		/* an exec, a recycled pid: its table goes, replaced or deleted */
		p->superseded = true;
		*same = runtime__same_process(&p->img, img);
		bpf_map_delete_elem(r->o.procs_fd, &img->pid);
	}
	if (r->n_pids == MAX_PIDS)
		return NULL;
	p = &r->pids[r->n_pids++];
	*p = (struct label_pid){ .img = *img, .fresh = true };
	return p;
}

/*
 * Its first file mapping, the executable: a Go program, or one that
 * publishes custom labels itself (libcustomlabels.so is not read yet). One
 * whose labels we cannot read is kept too, refused, so it is counted once
 * per process and not at each re-read.
 */
static int labels_add_image(void *rt, const struct proc_image *img)
{
	struct label_proc lp = { .start = img->start, .exec = img->exec };
	struct labels_exe x;
	struct proc_map *maps = NULL;
	struct labels_rt *r = rt;
	struct label_pid *p;
	bool same = false;	/* an image of a process counted already */
	size_t n = 0, i;
	int err = proc_maps__read(r->o.proc_root, img->pid, &maps, &n);

	if (err)
		return err;
	for (i = 0; i < n && (!maps[i].inode || maps[i].path[0] != '/'); i++)
		;
	err = i < n ? probe_file(r, img->pid, &maps[i], &x) : -ENOENT;
	if (!err)
		err = label_source(img->pid, &maps[i], &x, &lp);
	proc_maps__free(maps);
	if (err && err != -EINVAL && err != -ENOTSUP)
		return err;	/* neither, or gone: nothing kept */
	p = slot_of(r, img, &same);
	if (!p)
		return -ENOSPC;
	if (!p->fresh && !p->dead)
		return p->refused;	/* known already: a re-read found the same */
	p->fresh = false;
	p->refused = err;
	if (err) {
		r->stats.unknown_version += err == -ENOTSUP && !same;
		r->stats.unreadable += err != -ENOTSUP && !same;
		return err;
	}
	if (lp.source == LABELS_CUSTOM_V0)
		r->stats.custom_procs += !same;
	else
		r->stats.go_procs += !same;
	/* the table first, then the bit: BPF looks up only the pids it has */
	if (bpf_map_update_elem(r->o.procs_fd, &img->pid, &lp, BPF_ANY))
		return -errno;
	return bpf_util__set_bit(r->o.pids_fd, unwind_pid_bits__bit(img->pid, UNWIND_RT_LABELS));
}

/* Labels are no frames: BPF tags none of this runtime's, so these are never asked. */
static void labels_event(void *rt, const struct rt_event *e)
{
}

static int labels_frame(void *rt, const struct proc_image *img, __u64 a, __u64 b,
		    struct src_line *out, int max, __u64 *loc)
{
	if (max < 1)
		return 0;
	*loc = a;
	out[0] = (struct src_line){ .function = "[unknown labels frame]" };
	return 1;
}

static const char *labels_mark(void *rt, __u64 slot)
{
	return NULL;
}

/* An image ended at two sweeps in a row: it goes, with its BPF table if still its own. */
static void labels_sweep(void *rt)
{
	struct labels_rt *r = rt;

	for (int i = 0; i < r->n_pids;) {
		struct label_pid *p = &r->pids[i];

		if (!runtime__gone_twice(r->o.proc_root, &p->img, p->superseded, &p->dead)) {
			i++;
			continue;
		}
		if (!p->superseded && !p->refused)
			bpf_map_delete_elem(r->o.procs_fd, &p->img.pid);
		r->pids[i] = r->pids[--r->n_pids];
	}
}

static void labels_stats_read(const void *rt, void *out)
{
	const struct labels_rt *r = rt;

	memcpy(out, &r->stats, sizeof(r->stats));
}

#define LS(field) offsetof(struct labels_stats, field)

static const struct stat_desc labels_stats[] = {
	STAT_COUNT_BY("processes_total", "Process images whose own labels BPF reads, by source",
		      "source=\"go\"", LS(go_procs)),
	STAT_COUNT_BY("processes_total", NULL, "source=\"custom_labels\"", LS(custom_procs)),
	STAT_COUNT("unknown_version_total",
		  "Go binaries without a checked label layout, or custom-labels ABIs of a version we do not know: no labels",
		  LS(unknown_version)),
	STAT_COUNT("unreadable_total",
		  "Go binaries whose version, or custom-labels tables whose place, could not be read",
		  LS(unreadable)),
};

const struct runtime_ops labels_runtime = {
	.name = "labels",
	.id = UNWIND_RT_LABELS,
	.procs_map = "label_procs",
	.new = labels_new,
	.free = labels_free,
	.add_image = labels_add_image,
	.event = labels_event,
	.frame = labels_frame,
	.mark = labels_mark,
	.sweep = labels_sweep,
	.stats = labels_stats,
	.n_stats = sizeof(labels_stats) / sizeof(labels_stats[0]),
	.stats_size = sizeof(struct labels_stats),
	.stats_read = labels_stats_read,
};
