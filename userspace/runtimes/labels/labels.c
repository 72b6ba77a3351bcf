/* labels.c -- where a process keeps its own labels (Go pprof labels, custom labels, OpenTelemetry thread context), handed to BPF */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "lib/bpf_util.h"
#include "lib/clock.h"
#include "lib/proc_cpu.h"
#include "lib/file_memo.h"
#include "lib/proc_mem.h"
#include "symbolize/proc_maps.h"
#include "symbolize/procfs.h"
#include "runtimes/thread_local.h"
#include "go_layout.h"
#include "labels_elf.h"
#include "labels_runtime.h"
#include "otel_ctx.h"

#define MAX_PIDS 1024
#define EXES_MAX 512	/* executables whose ELF answer is kept */
#define TLS_G_INTERNAL (-8)	/* internal linking: g at -8(FS), runtime.tlsg's slot */
#define OTEL_TLS_SYMBOL "otel_thread_ctx_v1"	/* OTEP 4947: a pointer to the thread's record */
#define CL_TLS_V0 "custom_labels_thread_local_data"	/* the thread's table */
#define CL_TLS_V1 "custom_labels_current_set"	/* a pointer to the thread's table */
#define CL_LIBRARY "customlabels"	/* in the name of a library publishing custom labels */
#define WAITS_MAX 1024	/* images without labels whose process context is looked for again */
#define WAIT_NS 1000000000ULL	/* ... in rounds a second apart; an image's first look a second in */
#define WAIT_MAX_NS (64 * WAIT_NS)	/* ... then twice as far each time, up to this */
#define WAIT_SCAN 128	/* ... of at most this many CPU times read a round */
#define WAIT_BATCH 32	/* ... and at most this many looks a round in all */

struct label_pid {
	struct proc_image img;
	bool superseded;	/* a later image holds the pid: its BPF table is not ours */
	bool dead;		/* gone at the last sweep: freed at the next */
	bool fresh;		/* just made: its verdict not given yet */
	int refused;		/* not 0: labels we cannot read (its -errno), counted once */
	int n_keys;		/* OpenTelemetry key names it has in otel_keys */
};

/*
 * An image in which no label source was found: an OpenTelemetry process
 * context (OTEP 4719) may be published later, by an SDK set up after the
 * process started. It is looked for again while the process runs.
 */
struct label_wait {
	struct proc_image img;
	__u64 cpu_ns;		/* its CPU time at the last look: unchanged, no sample, no look */
	__u64 next_ns;		/* CLOCK_MONOTONIC of its next look */
	__u64 gap_ns;		/* from its last look to the next */
};

struct labels_rt {
	struct runtime_opts o;
	int keys_fd;		/* otel_keys */
	struct otel_keys keys;	/* scratch of one process context's read */
	struct label_pid pids[MAX_PIDS];
	int n_pids;
	struct file_memo *exes;	/* what each executable's ELF file said: read once, not per process */
	struct label_wait waits[WAITS_MAX];
	int n_waits;
	int next_wait;		/* where the next round of looks starts: each gets its turn */
	__u64 next_wait_ns;	/* CLOCK_MONOTONIC of the next round */
	struct labels_stats stats;
};

#define CL_ABI_V0 0	/* custom_labels_abi_version's values for the layouts BPF reads */
#define CL_ABI_V1 1

static void *labels_new(const struct runtime_opts *o)
{
	struct labels_rt *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->o = *o;
	r->keys_fd = o->maps_fd[0];
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

/* What the file mapped at M (the executable, a library) says of its labels: 0, or -errno (gone, not ELF). */
static int probe_file(struct labels_rt *r, __u32 pid, const struct proc_map *m,
		      struct labels_exe *x)
{
	const struct labels_exe *known;
	struct stat st;
	int fd, err = procfs__stat_mapped(r->o.proc_root, pid, m, &st);

	if (err)
		return err;
	/* the 100th process of one executable: its file said the same 99 times, and is not opened */
	known = file_memo__get(r->exes, &st, m->pgoff);
	if (known) {
		*x = *known;
		return 0;
	}
	err = procfs__open_mapped(r->o.proc_root, pid, m, &fd, &st);
	if (err)
		return err;
	known = file_memo__get(r->exes, &st, m->pgoff);	/* replaced since the stat */
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
 * The custom-labels table of the file X mapped at M, by its ABI version
 * read in PID (never guessed from the symbols): its source and the offset
 * of its thread-local in the file's block into LP. -ENOTSUP: a version we
 * do not know; -EINVAL: unreadable, or the version's thread-local missing.
 */
static int cl_table(__u32 pid, const struct proc_map *m, const struct labels_exe *x,
		    struct label_proc *lp, __u64 *offset)
{
	__u32 version;

	if (proc_mem__read(pid, m->start - x->map_vaddr + x->cl_version, &version, sizeof(version)))
		return -EINVAL;
	if (version == CL_ABI_V0 && (x->cl_tables & LABELS_CL_V0)) {
		lp->source = LABELS_CUSTOM_V0;
		*offset = x->cl_data;
	} else if (version == CL_ABI_V1 && (x->cl_tables & LABELS_CL_V1)) {
		lp->source = LABELS_CUSTOM_V1;
		*offset = x->cl_set;
	} else {
		return version == CL_ABI_V0 || version == CL_ABI_V1 ? -EINVAL : -ENOTSUP;
	}
	return 0;
}

/*
 * Where the executable X of PID keeps its labels, into LP: a Go version we
 * know, or custom labels of ABI v0 or v1 (the version read from the
 * process, not the file). -ENOENT: neither; -ENOTSUP: a version we do not
 * know (counted, never guessed); -EINVAL: one we cannot read.
 */
static int label_source(__u32 pid, const struct proc_map *m, const struct labels_exe *x,
			struct label_proc *lp)
{
	__u64 offset;
	int err;

	if (x->go != -ENOENT) {
#if !defined(__x86_64__)
		return -ENOTSUP;	/* arm64's Go keeps g in x28, at no thread-pointer offset */
#endif
		err = x->go ? x->go : go_layout__offsets(x->go_version, lp);
		/* internal linking keeps g at -8; external linking puts runtime.tlsg first in PT_TLS */
		lp->tls = x->tls_block ? x->tls_base : TLS_G_INTERNAL;
		return err;
	}
	if (!x->custom)
		return -ENOENT;
	err = cl_table(pid, m, x, lp, &offset);
	if (err)
		return err;
	lp->tls = x->tls_base + (__s64)offset;
	return 0;
}

/* MAPS[i] is the executable (EXE) or the first mapping of a library: its ELF headers are there */
static bool file_start(const struct proc_map *maps, size_t i, size_t exe)
{
	const struct proc_map *m = &maps[i];

	return m->inode && m->path[0] == '/' && strncmp(m->path, "/memfd:", 7) &&
	       (i == exe || (i > exe && !m->pgoff && strcmp(m->path, maps[i - 1].path)));
}

/* The thread-pointer offset of PID's otel_thread_ctx_v1: in its executable, else the first library that has it. */
static int otel_tls(struct labels_rt *r, __u32 pid, const struct proc_map *maps, size_t n,
		    size_t exe, __s64 *tls)
{
	int err = -ENOENT;

	for (size_t i = exe; i < n && err == -ENOENT; i++)
		if (file_start(maps, i, exe))
			err = thread_local__offset(r->o.proc_root, pid, &maps[i], i == exe,
						   OTEL_TLS_SYMBOL, 0, tls);
	return err;
}

/*
 * Custom labels published by a library, libcustomlabels.so or another
 * whose file name says customlabels (only those are opened: other
 * processes pay nothing for it): its ABI version read in the process, its
 * table through the GOT. Errors as label_source's; -ENOSYS: dynamic TLS.
 */
static int custom_lib_source(struct labels_rt *r, __u32 pid, const struct proc_map *maps,
			     size_t n, size_t exe, struct label_proc *lp)
{
	struct labels_exe x;
	__u64 offset;
	int err;

	for (size_t i = exe + 1; i < n; i++) {
		const char *base = strrchr(maps[i].path, '/');

		if (!file_start(maps, i, exe) || !base || !strstr(base, CL_LIBRARY) ||
		    probe_file(r, pid, &maps[i], &x) || !x.custom)
			continue;
		err = cl_table(pid, &maps[i], &x, lp, &offset);
		if (!err)
			err = thread_local__offset(r->o.proc_root, pid, &maps[i], false,
						   lp->source == LABELS_CUSTOM_V1 ? CL_TLS_V1 : CL_TLS_V0, 0,
						   &lp->tls);
		return err == -ENOENT ? -EINVAL : err;
	}
	return -ENOENT;
}

/*
 * An OpenTelemetry thread context (OTEP 4947): a process context whose
 * schema is tls_v1 (its key map into r->keys) and the variable's place.
 * -ENOENT: none (or no thread context in it, yet); -ENOTSUP: another
 * schema; -ENOSYS: dynamic TLS; -EINVAL: unreadable or malformed.
 */
static int otel_source(struct labels_rt *r, __u32 pid, const struct proc_map *maps, size_t n,
		       size_t exe, struct label_proc *lp)
{
	int err = otel_ctx__read(pid, maps, n, &r->keys);

	if (err == -ENOENT || err == -EAGAIN)
		return -ENOENT;
	if (err)
		return err == -ENOTSUP ? err : -EINVAL;
	if (r->keys.schema != OTEL_SCHEMA_TLS_V1)
		return r->keys.schema == OTEL_SCHEMA_NONE ? -ENOENT : -ENOTSUP;
	err = otel_tls(r, pid, maps, n, exe, &lp->tls);
	if (!err)
		lp->source = LABELS_OTEL;
	return err;
}

/* PID's key names into otel_keys (N of them), and those of indexes up to OLD_N gone. */
static void keys_update(struct labels_rt *r, __u32 pid, int n, int old_n)
{
	struct otel_key_id id = { .pid = pid };

	for (id.index = 0; id.index < (__u32)n; id.index++)
		bpf_map_update_elem(r->keys_fd, &id, &r->keys.key[id.index], BPF_ANY);
	for (; id.index < (__u32)old_n; id.index++)
		bpf_map_delete_elem(r->keys_fd, &id);
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
		keys_update(r, img->pid, 0, p->n_keys);
		p->n_keys = 0;
	}
	if (r->n_pids == MAX_PIDS)
		return NULL;
	p = &r->pids[r->n_pids++];
	*p = (struct label_pid){ .img = *img, .fresh = true };
	return p;
}

/*
 * Its first file mapping, the executable: a Go program, or one that
 * publishes custom labels itself; else custom labels of a library
 * (libcustomlabels.so); else an OpenTelemetry thread context, in the
 * executable or a library.
 * One whose labels we cannot read is kept too, refused, so it is counted
 * once per process and not at each re-read.
 */
static int add_image(struct labels_rt *r, const struct proc_image *img)
{
	struct label_proc lp = { .start = img->start, .exec = img->exec };
	struct labels_exe x;
	struct proc_map *maps = NULL;
	struct label_pid *p;
	bool same = false;	/* an image of a process counted already */
	size_t n = 0, i;
	int err;

	p = find_current(r, img->pid);
	if (p && runtime__outdated(&p->img, img))
		return -ESTALE;	/* a wait of an image that exec'd since */
	err = proc_maps__read(r->o.proc_root, img->pid, &maps, &n);
	if (err)
		return err;
	for (i = 0; i < n && (!maps[i].inode || maps[i].path[0] != '/'); i++)
		;
	err = i < n ? probe_file(r, img->pid, &maps[i], &x) : -ENOENT;
	if (!err)
		err = label_source(img->pid, &maps[i], &x, &lp);
	if (err == -ENOENT && i < n)
		err = custom_lib_source(r, img->pid, maps, n, i, &lp);
	if (err == -ENOENT && i < n)
		err = otel_source(r, img->pid, maps, n, i, &lp);
	proc_maps__free(maps);
	if (err && err != -EINVAL && err != -ENOTSUP && err != -ENOSYS)
		return err;	/* none, or gone: nothing kept */
	p = slot_of(r, img, &same);
	if (!p)
		return -ENOSPC;
	if (!p->fresh && !p->dead)
		return p->refused;	/* known already: a re-read found the same */
	p->fresh = false;
	p->refused = err;
	if (err) {
		r->stats.unknown_version += err == -ENOTSUP && !same;
		r->stats.dynamic_tls += err == -ENOSYS && !same;
		r->stats.unreadable += err == -EINVAL && !same;
		return err;
	}
	if (lp.source == LABELS_OTEL) {
		/* the names before the table: BPF names a record's keys as soon as it reads one */
		keys_update(r, img->pid, r->keys.n, 0);
		p->n_keys = r->keys.n;
		r->stats.otel_procs += !same;
	} else if (lp.source == LABELS_CUSTOM_V0 || lp.source == LABELS_CUSTOM_V1) {
		r->stats.custom_procs[lp.source == LABELS_CUSTOM_V1] += !same;
	} else {
		r->stats.go_procs += !same;
	}
	/* the table first, then the bit: BPF looks up only the pids it has */
	if (bpf_map_update_elem(r->o.procs_fd, &img->pid, &lp, BPF_ANY))
		return -errno;
	return bpf_util__set_bit(r->o.pids_fd, unwind_pid_bits__bit(img->pid, UNWIND_RT_LABELS));
}

/*
 * The CPU time the process of PID has used, all its threads, in ns; 0 if
 * gone or unreadable. Its process clock is one system call, where
 * schedstat's open of a new pid's /proc entry cost ten times as much and
 * counted the main thread only. Another /proc than ours is another pid
 * namespace's: its schedstat then.
 */
static __u64 cpu_ns_of(const char *proc_root, __u32 pid)
{
	unsigned long long ns = 0;
	__u64 clock;
	char path[64];
	FILE *f;

	if (!strcmp(proc_root, "/proc"))
		return proc_cpu__ns(pid, &clock) ? 0 : clock;
	snprintf(path, sizeof(path), "%s/%u/schedstat", proc_root, pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	fclose(f);
	return ns;
}

/* IMG's pid waits (NONE) for a process context, or no longer; an earlier image's wait goes. */
static void wait_set(struct labels_rt *r, const struct proc_image *img, bool none)
{
	int i;

	for (i = 0; i < r->n_waits && r->waits[i].img.pid != img->pid; i++)
		;
	if (i < r->n_waits && !none) {
		r->waits[i] = r->waits[--r->n_waits];
	} else if (i < r->n_waits) {
		r->waits[i].img = *img;
	} else if (none && r->n_waits == WAITS_MAX) {
		r->stats.waits_full++;
	} else if (none) {
		r->waits[r->n_waits++] = (struct label_wait){
			.img = *img,
			.cpu_ns = cpu_ns_of(r->o.proc_root, img->pid),
			.next_ns = (__u64)clock_ns(CLOCK_MONOTONIC) + WAIT_NS,
			.gap_ns = WAIT_NS,
		};
	}
}

/*
 * One read of image IMG; an image with no labels found waits for a process
 * context published later (looked for again by labels_retry).
 */
static int labels_add_image(void *rt, const struct proc_image *img)
{
	struct labels_rt *r = rt;
	int err = add_image(r, img);

	wait_set(r, img, err == -ENOENT);
	return err;
}

/*
 * Looks again for the process context of the images that had none, in
 * rounds a second apart of at most WAIT_SCAN images and WAIT_BATCH looks,
 * each image in turn; only at one that is due and ran since its last look
 * (so it may have been sampled, and may have published since). An image
 * is due a second after it was read, then twice as long after each look
 * that found nothing, up to WAIT_MAX_NS (idle when due: the same wait
 * again, with no /proc read): an SDK set up late is found within
 * a second or two of its start, and a long-lived process without one, which
 * most are, costs a read of its maps a minute, not a second. Its process
 * gone, it waits no more. Counted: looks, and contexts found so.
 */
static void labels_retry(void *rt)
{
	struct labels_rt *r = rt;
	__u64 now = (__u64)clock_ns(CLOCK_MONOTONIC), cpu;
	int looks = 0, scans = 0, k;

	if (now < r->next_wait_ns || !r->n_waits)
		return;
	r->next_wait_ns = now + WAIT_NS;
	for (k = 0; k < r->n_waits && scans < WAIT_SCAN && looks < WAIT_BATCH; k++) {
		int i = (r->next_wait + k) % r->n_waits;
		struct label_wait *w = &r->waits[i];
		struct proc_image img = w->img;

		if (w->next_ns > now)
			continue;	/* not due: no system call */
		scans++;
		cpu = cpu_ns_of(r->o.proc_root, img.pid);
		if (!cpu || (cpu != w->cpu_ns && !proc_image__lives(r->o.proc_root, &img))) {
			r->waits[i] = r->waits[--r->n_waits];	/* gone: its slot takes the last one */
			k--;
			continue;
		}
		if (cpu == w->cpu_ns) {
			w->next_ns = now + w->gap_ns;	/* idle since: no sample to label, the same wait */
			continue;
		}
		w->cpu_ns = cpu;
		w->gap_ns = w->gap_ns * 2 < WAIT_MAX_NS ? w->gap_ns * 2 : WAIT_MAX_NS;
		w->next_ns = now + w->gap_ns;
		looks++;
		r->stats.context_looks++;
		if (!labels_add_image(r, &img))	/* removes i: found */
			r->stats.context_late++;
	}
	r->next_wait = r->n_waits ? (r->next_wait + k) % r->n_waits : 0;
}

void labels__tidy(struct label_set *set)
{
	__u32 n = 0;

	if (set->n > LABELS_MAX)
		set->n = LABELS_MAX;
	for (__u32 i = 0; i < set->n; i++) {
		struct label_kv *kv = &set->kv[i];
		__u32 k;

		kv->key[LABEL_KEY_MAX - 1] = kv->value[LABEL_VALUE_MAX - 1] = '\0';
		for (k = 0; k < n && strcmp(set->kv[k].key, kv->key); k++)
			;
		if (k == n)
			set->kv[n++] = *kv;
	}
	set->n = n;
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
		if (!p->superseded && !p->refused) {
			bpf_map_delete_elem(r->o.procs_fd, &p->img.pid);
			keys_update(r, p->img.pid, 0, p->n_keys);
		}
		r->pids[i] = r->pids[--r->n_pids];
	}
}

static void labels_stats_read(const void *rt, void *out)
{
	const struct labels_rt *r = rt;

	memcpy(out, &r->stats, sizeof(r->stats));
}

#define LS(field) offsetof(struct labels_stats, field)

static const char *const labels_maps[] = { "otel_keys", NULL };

static const struct stat_desc labels_stats[] = {
	STAT_COUNT_BY("processes_total", "Process images whose own labels BPF reads, by source",
		      "source=\"go\"", LS(go_procs)),
	STAT_COUNT_BY("processes_total", NULL, "source=\"custom_labels\"", LS(custom_procs[0])),
	STAT_COUNT_BY("processes_total", NULL, "source=\"custom_labels_v1\"", LS(custom_procs[1])),
	STAT_COUNT_BY("processes_total", NULL, "source=\"otel\"", LS(otel_procs)),
	STAT_COUNT("unknown_version_total",
		  "Go binaries without a checked label layout, custom-labels ABIs or OpenTelemetry thread-context schemas of a version we do not know: no labels",
		  LS(unknown_version)),
	STAT_COUNT("unreadable_total",
		  "Go binaries whose version, or custom-labels tables or thread contexts whose place, could not be read",
		  LS(unreadable)),
	STAT_COUNT("context_looks_total",
		  "Looks again, a second apart at most, for the OpenTelemetry process context of a running process that had none",
		  LS(context_looks)),
	STAT_COUNT("context_late_total",
		  "Label sources found by such a look: a process context published after the process was first read",
		  LS(context_late)),
	STAT_COUNT("context_waits_full_total",
		  "Processes without labels not looked at again: the list of those waiting was full",
		  LS(waits_full)),
	STAT_COUNT("dynamic_tls_total",
		  "OpenTelemetry thread-context variables in dynamic TLS (a dlopen'd library without static TLS room, __tls_get_addr): not read",
		  LS(dynamic_tls)),
};

const struct runtime_ops labels_runtime = {
	.name = "labels",
	.id = UNWIND_RT_LABELS,
	.procs_map = "label_procs",
	.maps = labels_maps,
	.new = labels_new,
	.free = labels_free,
	.add_image = labels_add_image,
	.retry = labels_retry,
	.event = labels_event,
	.frame = labels_frame,
	.mark = labels_mark,
	.sweep = labels_sweep,
	.stats = labels_stats,
	.n_stats = sizeof(labels_stats) / sizeof(labels_stats[0]),
	.stats_size = sizeof(struct labels_stats),
	.stats_read = labels_stats_read,
};
