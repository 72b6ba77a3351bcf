/* go.c -- the Go runtime: finds a Go binary's version and TLS layout, hands BPF its label offsets */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "lib/bpf_util.h"
#include "symbolize/proc_maps.h"
#include "symbolize/procfs.h"
#include "go_layout.h"
#include "go_runtime.h"

#define MAX_PIDS 1024
#define BUILDINFO_READ 512	/* the header and the version string: the rest is not needed */
#define GO_VERSION_MAX 64
#define TLS_G_INTERNAL (-8)	/* internal linking: g at -8(FS), runtime.tlsg's slot */

struct go_pid {
	struct proc_image img;
	bool superseded;	/* a later image holds the pid: its BPF table is not ours */
	bool dead;		/* gone at the last sweep: freed at the next */
	bool fresh;		/* just made: its verdict not given yet */
	int refused;		/* not 0: a Go binary whose labels are not read (its -errno) */
};

struct go_rt {
	struct runtime_opts o;
	struct go_pid pids[MAX_PIDS];
	int n_pids;
	struct go_stats stats;
};

/* What one binary says: its Go version, and g's offset from the thread pointer. */
struct go_binary {
	char version[GO_VERSION_MAX];
	__s64 tls_g;
};

static void *go_new(const struct runtime_opts *o)
{
	struct go_rt *r = calloc(1, sizeof(*r));

	if (r)
		r->o = *o;
	return r;
}

static void go_free(void *rt)
{
	free(rt);
}

/*
 * The version in .go.buildinfo, whose first bytes are read from the file
 * at its offset (its size from the file only bounds the read). 0, -ENOENT
 * (none: not Go) or -EINVAL (one we cannot read).
 */
static int read_version(int fd, Elf *e, struct go_binary *gb)
{
	unsigned char buf[BUILDINFO_READ];
	Elf_Scn *scn = NULL;
	size_t shstrndx, n;
	const char *name;
	GElf_Shdr sh;
	ssize_t got;

	if (elf_getshdrstrndx(e, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".go.buildinfo"))
			continue;
		n = sh.sh_size < sizeof(buf) ? sh.sh_size : sizeof(buf);
		got = pread(fd, buf, n, sh.sh_offset);
		if (got <= 0)
			return -ENOENT;
		return go_layout__version(buf, got, gb->version, sizeof(gb->version)) ? -EINVAL : 0;
	}
	return -ENOENT;
}

/*
 * g's offset from the thread pointer. Internal linking keeps it at -8;
 * external linking (cgo) puts runtime.tlsg first in the executable's
 * PT_TLS block, which on x86-64 ends at the thread pointer.
 */
static __s64 tls_g(Elf *e)
{
	size_t n;
	GElf_Phdr ph;
	__u64 align, size;

	if (elf_getphdrnum(e, &n))
		return TLS_G_INTERNAL;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_TLS)
			continue;
		align = ph.p_align > 1 && ph.p_align <= 4096 ? ph.p_align : 1;
		size = (ph.p_memsz + align - 1) & ~(align - 1);
		return size && size <= 65536 ? -(__s64)size : TLS_G_INTERNAL;
	}
	return TLS_G_INTERNAL;
}

/* The executable mapped at M, if a Go binary: 0, -ENOENT (not Go), -EINVAL, or -errno. */
static int probe_file(struct go_rt *r, __u32 pid, const struct proc_map *m, struct go_binary *gb)
{
	struct stat st;
	Elf *e;
	int fd, err = procfs__open_mapped(r->o.proc_root, pid, m, &fd, &st);

	if (err)
		return err;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);	/* pread, not mmap: a truncated file cannot SIGBUS us */
	err = e && elf_kind(e) == ELF_K_ELF ? read_version(fd, e, gb) : -ENOENT;
	if (!err)
		gb->tls_g = tls_g(e);
	elf_end(e);
	close(fd);
	return err;
}

static struct go_pid *find_current(struct go_rt *r, __u32 pid)
{
	for (int i = 0; i < r->n_pids; i++)
		if (r->pids[i].img.pid == pid && !r->pids[i].superseded)
			return &r->pids[i];
	return NULL;
}

/* Where image IMG's state goes: its slot, kept or new; NULL when full. */
static struct go_pid *slot_of(struct go_rt *r, const struct proc_image *img, bool *same)
{
	struct go_pid *p = find_current(r, img->pid);

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
	*p = (struct go_pid){ .img = *img, .fresh = true };
	return p;
}

/*
 * Its first file mapping, the executable: a Go program, not a library. A
 * Go binary we cannot read labels of is kept too, refused, so it is
 * counted once per process and not at each re-read.
 */
static int go_add_image(void *rt, const struct proc_image *img)
{
	struct go_labels_proc gp = { .start = img->start, .exec = img->exec };
	struct go_binary gb = { .version = "" };
	struct proc_map *maps = NULL;
	struct go_rt *r = rt;
	struct go_pid *p;
	bool same = false;	/* an image of a process counted already */
	size_t n = 0, i;
	int err = proc_maps__read(r->o.proc_root, img->pid, &maps, &n);

	if (err)
		return err;
	for (i = 0; i < n && (!maps[i].inode || maps[i].path[0] != '/'); i++)
		;
	err = i < n ? probe_file(r, img->pid, &maps[i], &gb) : -ENOENT;
	proc_maps__free(maps);
	if (err && err != -EINVAL)
		return err;	/* not Go, or gone: nothing kept */
	if (!err)
		err = go_layout__offsets(gb.version, &gp);
	gp.tls_g = gb.tls_g;
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
	r->stats.procs += !same;
	/* the table first, then the bit: BPF looks up only the pids it has */
	if (bpf_map_update_elem(r->o.procs_fd, &img->pid, &gp, BPF_ANY))
		return -errno;
	return bpf_util__set_bit(r->o.pids_fd, unwind_pid_bits__bit(img->pid, UNWIND_RT_GO));
}

/* Go has no frames of its own for BPF to tag: these are never asked. */
static void go_event(void *rt, const struct rt_event *e)
{
}

static int go_frame(void *rt, const struct proc_image *img, __u64 a, __u64 b,
		    struct src_line *out, int max, __u64 *loc)
{
	if (max < 1)
		return 0;
	*loc = a;
	out[0] = (struct src_line){ .function = "[unknown go frame]" };
	return 1;
}

static const char *go_mark(void *rt, __u64 slot)
{
	return NULL;
}

/* An image ended at two sweeps in a row: it goes, with its BPF table if still its own. */
static void go_sweep(void *rt)
{
	struct go_rt *r = rt;

	for (int i = 0; i < r->n_pids;) {
		struct go_pid *p = &r->pids[i];

		if (!runtime__gone_twice(r->o.proc_root, &p->img, p->superseded, &p->dead)) {
			i++;
			continue;
		}
		if (!p->superseded && !p->refused)
			bpf_map_delete_elem(r->o.procs_fd, &p->img.pid);
		r->pids[i] = r->pids[--r->n_pids];
	}
}

static void go_stats_read(const void *rt, void *out)
{
	const struct go_rt *r = rt;

	memcpy(out, &r->stats, sizeof(r->stats));
}

#define GS(field) offsetof(struct go_stats, field)

static const struct stat_desc go_stats[] = {
	STAT_COUNT("processes_total", "Go process images whose pprof labels BPF reads", GS(procs)),
	STAT_COUNT("unknown_version_total",
		  "Go binaries of a version without a checked label layout: no labels",
		  GS(unknown_version)),
	STAT_COUNT("unreadable_total", "Go binaries whose version could not be read",
		  GS(unreadable)),
};

const struct runtime_ops go_runtime = {
	.name = "go",
	.id = UNWIND_RT_GO,
	.procs_map = "go_procs",
	.new = go_new,
	.free = go_free,
	.add_image = go_add_image,
	.event = go_event,
	.frame = go_frame,
	.mark = go_mark,
	.sweep = go_sweep,
	.stats = go_stats,
	.n_stats = sizeof(go_stats) / sizeof(go_stats[0]),
	.stats_size = sizeof(struct go_stats),
	.stats_read = go_stats_read,
};
