/* labels.c -- where a process keeps its own labels (Go pprof labels, custom-labels ABI v0), handed to BPF */
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
#include "lib/proc_mem.h"
#include "symbolize/elf_find.h"
#include "symbolize/proc_maps.h"
#include "symbolize/procfs.h"
#include "go_layout.h"
#include "labels_runtime.h"

#define MAX_PIDS 1024
#define BUILDINFO_READ 512	/* the header and the version string: the rest is not needed */
#define GO_VERSION_MAX 64
#define TLS_G_INTERNAL (-8)	/* internal linking: g at -8(FS), runtime.tlsg's slot */

struct label_pid {
	struct proc_image img;
	bool superseded;	/* a later image holds the pid: its BPF table is not ours */
	bool dead;		/* gone at the last sweep: freed at the next */
	bool fresh;		/* just made: its verdict not given yet */
	int refused;		/* not 0: a Go binary whose labels are not read (its -errno) */
};

struct labels_rt {
	struct runtime_opts o;
	struct label_pid pids[MAX_PIDS];
	int n_pids;
	struct labels_stats stats;
};

/* What one executable says: its Go version, or its custom-labels symbols, and its TLS block. */
struct exe_info {
	char version[GO_VERSION_MAX];
	__s64 tls_g;		/* g's offset from the thread pointer */
	__u64 tls_block;	/* the executable's PT_TLS memsz, rounded up to its alignment; 0: none */
};

/* custom-labels ABI v0 (github.com/polarsignals/custom-labels, custom-labels-v0.md) */
enum { CL_VERSION, CL_DATA, CL_COUNT };
static const char *const cl_symbols[CL_COUNT] = { "custom_labels_abi_version",
						  "custom_labels_thread_local_data" };
#define CL_ABI_V0 0

static void *labels_new(const struct runtime_opts *o)
{
	struct labels_rt *r = calloc(1, sizeof(*r));

	if (r)
		r->o = *o;
	return r;
}

static void labels_free(void *rt)
{
	free(rt);
}

/*
 * The version in .go.buildinfo, whose first bytes are read from the file
 * at its offset (its size from the file only bounds the read). 0, -ENOENT
 * (none: not Go) or -EINVAL (one we cannot read).
 */
static int read_version(int fd, Elf *e, struct exe_info *gb)
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
 * The executable's TLS block, which on x86-64 ends at the thread pointer
 * (variant II), and so g's offset from it. Internal linking keeps g at -8;
 * external linking (cgo) puts runtime.tlsg first in the PT_TLS block.
 */
static void read_tls(Elf *e, struct exe_info *gb)
{
	size_t n;
	GElf_Phdr ph;
	__u64 align, size;

	gb->tls_g = TLS_G_INTERNAL;
	if (elf_getphdrnum(e, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_TLS)
			continue;
		align = ph.p_align > 1 && ph.p_align <= 4096 ? ph.p_align : 1;
		size = (ph.p_memsz + align - 1) & ~(align - 1);
		if (!size || size > 65536)
			return;	/* no block we would trust an offset into */
		gb->tls_block = size;
		gb->tls_g = -(__s64)size;
		return;
	}
}

/* The executable mapped at M, if a Go binary: 0, -ENOENT (not Go), -EINVAL, or -errno. */
static int probe_file(struct labels_rt *r, __u32 pid, const struct proc_map *m, struct exe_info *gb)
{
	struct stat st;
	Elf *e;
	int fd, err = procfs__open_mapped(r->o.proc_root, pid, m, &fd, &st);

	if (err)
		return err;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);	/* pread, not mmap: a truncated file cannot SIGBUS us */
	err = e && elf_kind(e) == ELF_K_ELF ? read_version(fd, e, gb) : -ENOENT;
	if (e && elf_kind(e) == ELF_K_ELF)
		read_tls(e, gb);
	elf_end(e);
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
 * The executable mapped at M, if it publishes custom labels (ABI v0): the
 * table's offset from the thread pointer. The version is read from the
 * process, not the file: a value we do not know is counted, never read.
 */
static int probe_custom(struct labels_rt *r, __u32 pid, const struct proc_map *m,
			const struct exe_info *gb, struct label_proc *lp)
{
	struct elf_found f[CL_COUNT];
	__u64 vaddr;
	__u32 version;
	struct stat st;
	int fd, err = procfs__open_mapped(r->o.proc_root, pid, m, &fd, &st);

	if (err)
		return err;
	err = elf_find__symbols(fd, m->pgoff, cl_symbols, CL_COUNT, f, &vaddr);
	close(fd);
	if (err || !f[CL_VERSION].value || f[CL_VERSION].size != 4 || f[CL_DATA].size < 16)
		return -ENOENT;
	/* a TLS symbol's value is its offset in the block; the table must fit in it */
	if (!gb->tls_block || f[CL_DATA].value + 16 > gb->tls_block)
		return -EINVAL;
	if (proc_mem__read(pid, m->start - vaddr + f[CL_VERSION].value, &version, sizeof(version)))
		return -EINVAL;
	if (version != CL_ABI_V0)
		return -ENOTSUP;
	lp->source = LABELS_CUSTOM_V0;
	lp->tls = (__s64)f[CL_DATA].value - (__s64)gb->tls_block;
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
	struct exe_info gb = { .version = "" };
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
	err = i < n ? probe_file(r, img->pid, &maps[i], &gb) : -ENOENT;
	if (!err)
		err = go_layout__offsets(gb.version, &lp);
	lp.tls = gb.tls_g;
	if (err == -ENOENT && i < n)
		err = probe_custom(r, img->pid, &maps[i], &gb, &lp);
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
