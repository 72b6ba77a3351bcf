/* alloc.c -- one process's native allocations, sampled by bytes through uprobes on its allocator */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "alloc.h"
#include "alloc.skel.h"
#include "lib/array.h"
#include "lib/log.h"
#include "symbolize/elf_find.h"

#define MAX_LIBS 4

struct alloc_tracer {
	struct alloc_bpf *skel;
	struct bpf_link *links[MAX_LIBS * 7];
	int n_links;
	__s64 rate;
	char libs[1024];
	int ncpus;
};

/* Whether the executable open at FD has an allocator of its own (jemalloc or mimalloc linked in, a static program) */
static bool defines_malloc(int fd)
{
	static const char *const names[] = { "malloc", "free" };
	struct elf_found found[2] = {};
	__u64 vaddr;

	return !elf_find__symbols(fd, 0, names, 2, found, &vaddr) && found[0].value && found[1].value;
}

/* PID's executable, by its path in the process's root, when it defines malloc itself */
static int find_exe(__u32 pid, char path[512])
{
	char link[64];
	ssize_t len;
	bool own;
	int fd;

	snprintf(link, sizeof(link), "/proc/%u/exe", pid);
	fd = open(link, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;	/* a kernel thread, or gone: the maps say so next */
	own = defines_malloc(fd);
	close(fd);
	len = own ? readlink(link, path, 511) : -1;
	if (len <= 0 || path[0] != '/')
		return 0;
	path[len] = '\0';
	return 1;
}

/* The allocators PID maps, by path: its executable's own, glibc, jemalloc, tcmalloc. */
static int find_libs(__u32 pid, char paths[MAX_LIBS][512])
{
	static const char *const names[] = { "/libc.so.6", "/libjemalloc.so", "/libtcmalloc" };
	char maps[64], line[1024];
	int n = find_exe(pid, paths[0]);
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%u/maps", pid);
	f = fopen(maps, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f) && n < MAX_LIBS) {
		char *path = strchr(line, '/');
		bool seen = false;

		if (!path)
			continue;
		path[strcspn(path, "\n")] = '\0';
		for (int i = 0; i < n; i++)
			seen |= !strcmp(paths[i], path);
		for (size_t k = 0; !seen && k < sizeof(names) / sizeof(names[0]); k++) {
			if (!strstr(path, names[k]))
				continue;
			snprintf(paths[n++], 512, "%s", path);
			break;
		}
	}
	fclose(f);
	return n;
}

static int attach(struct alloc_tracer *t, struct bpf_program *prog, __u32 pid, const char *lib,
		  const char *func, bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = func, .retprobe = ret);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, pid, lib, 0, &o);

	if (!l)
		return -errno;
	t->links[t->n_links++] = l;
	return 0;
}

/* every allocator function of LIB, entry and (for those that return a block) return */
static int attach_lib(struct alloc_tracer *t, __u32 pid, const char *lib)
{
	struct alloc_bpf *s = t->skel;
	int err = attach(t, s->progs.malloc_enter, pid, lib, "malloc", false);

	if (!err)
		err = attach(t, s->progs.alloc_exit, pid, lib, "malloc", true);
	if (!err)
		err = attach(t, s->progs.calloc_enter, pid, lib, "calloc", false);
	if (!err)
		err = attach(t, s->progs.alloc_exit, pid, lib, "calloc", true);
	if (!err)
		err = attach(t, s->progs.realloc_enter, pid, lib, "realloc", false);
	if (!err)
		err = attach(t, s->progs.alloc_exit, pid, lib, "realloc", true);
	if (!err)
		err = attach(t, s->progs.free_enter, pid, lib, "free", false);
	return err;
}

/* the bytes until each next sample: exponential draws of mean RATE, for BPF to pick at random */
static int fill_exp(struct alloc_tracer *t)
{
	int fd = bpf_map__fd(t->skel->maps.exp_table);
	unsigned short seed[3];
	__u64 v;

	memcpy(seed, &(__u64){ (__u64)time(NULL) ^ getpid() }, sizeof(seed));
	for (__u32 i = 0; i < ALLOC_EXP_TABLE; i++) {
		double u = erand48(seed);

		v = (__u64)(-log(1.0 - u) * t->rate) + 1;
		if (bpf_map_update_elem(fd, &i, &v, BPF_ANY))
			return -errno;
	}
	return 0;
}

static int attach_all(struct alloc_tracer *t, __u32 pid)
{
	char paths[MAX_LIBS][512];
	int n = find_libs(pid, paths), err = 0;

	if (n <= 0)
		return n ? n : -ENOENT;
	for (int i = 0; i < n && !err; i++) {
		char in_root[600];

		/* through the process's root: its own library, in a container too */
		snprintf(in_root, sizeof(in_root), "/proc/%u/root%.511s", pid, paths[i]);
		err = attach_lib(t, pid, in_root);
		snprintf(t->libs + strlen(t->libs), sizeof(t->libs) - strlen(t->libs), "%s%s",
			 i ? ", " : "", paths[i]);
	}
	return err;
}

struct alloc_tracer *alloc_tracer__new(const struct alloc_tracer_opts *o)
{
	struct alloc_tracer *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return NULL;
	t->rate = o->rate > 0 ? o->rate : ALLOC_DEFAULT_RATE;
	t->ncpus = libbpf_num_possible_cpus();
	/* open, set the target and the live map's size, load */
	t->skel = alloc_bpf__open();
	err = t->skel ? 0 : -errno;
	if (!err) {
		t->skel->rodata->target_tgid = o->pid;
		err = bpf_map__set_max_entries(t->skel->maps.live,
					       o->live_max ? o->live_max : ALLOC_LIVE_MAX);
	}
	if (!err)
		err = alloc_bpf__load(t->skel);
	/* the draws before any probe runs: a CPU's first call samples at once otherwise */
	if (!err)
		err = fill_exp(t);
	if (!err)
		err = attach_all(t, o->pid);
	if (err) {
		alloc_tracer__free(t);
		errno = -err;
		return NULL;
	}
	return t;
}

void alloc_tracer__free(struct alloc_tracer *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->n_links; i++)
		bpf_link__destroy(t->links[i]);
	alloc_bpf__destroy(t->skel);
	free(t);
}

const char *alloc_tracer__libs(const struct alloc_tracer *t)
{
	return t->libs;
}

/* one stack's counts as a record, its frames (return addresses, the caller's first) appended */
static int add_record(struct goheap_snapshot *out, __u64 key, const struct alloc_counts *c,
		      const struct alloc_stack *st)
{
	__u32 n = st->n < ALLOC_STACK_DEPTH ? st->n : ALLOC_STACK_DEPTH;

	if (ARRAY_RESERVE(out->recs, out->cap, out->n + 1) ||
	    ARRAY_RESERVE(out->pcs, out->cap_pcs, out->n_pcs + n))
		return -ENOMEM;
	out->recs[out->n++] = (struct goheap_record){
		.addr = key, .allocs = c->allocs, .frees = c->frees, .alloc_bytes = c->alloc_bytes,
		.free_bytes = c->free_bytes, .pc_off = out->n_pcs, .n_pcs = n };
	memcpy(out->pcs + out->n_pcs, st->ips, n * 8);
	out->n_pcs += n;
	return 0;
}

int alloc_tracer__read(struct alloc_tracer *t, struct goheap_snapshot *out)
{
	int counts = bpf_map__fd(t->skel->maps.counts), stacks = bpf_map__fd(t->skel->maps.stacks);
	__u64 key, *prev = NULL;
	struct alloc_counts c;
	struct alloc_stack st;
	int err = 0;

	goheap_snapshot__reset(out);
	out->rate = t->rate;
	snprintf(out->version, sizeof(out->version), "native");
	while (!err && !bpf_map_get_next_key(counts, prev, &key)) {
		prev = &key;
		if (bpf_map_lookup_elem(counts, &key, &c) || bpf_map_lookup_elem(stacks, &key, &st))
			continue;
		err = add_record(out, key, &c, &st);
	}
	return err;
}

void alloc_tracer__stats(struct alloc_tracer *t, __u64 out[ALLOC_STAT_MAX])
{
	int fd = bpf_map__fd(t->skel->maps.stats);
	__u64 *v = calloc(t->ncpus, sizeof(*v));

	memset(out, 0, ALLOC_STAT_MAX * sizeof(*out));
	for (__u32 i = 0; v && i < ALLOC_STAT_MAX; i++)
		if (!bpf_map_lookup_elem(fd, &i, v))
			for (int c = 0; c < t->ncpus; c++)
				out[i] += v[c];
	free(v);
}

static void prog_cost(const struct bpf_program *p, __u64 *ns, __u64 *cnt)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (!bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len)) {
		*ns += info.run_time_ns;
		*cnt += info.run_cnt;
	}
}

void alloc_tracer__cost(struct alloc_tracer *t, __u64 *enter_ns, __u64 *enter_cnt, __u64 *exit_ns,
			__u64 *exit_cnt)
{
	struct alloc_bpf *s = t->skel;

	*enter_ns = *enter_cnt = *exit_ns = *exit_cnt = 0;
	prog_cost(s->progs.malloc_enter, enter_ns, enter_cnt);
	prog_cost(s->progs.calloc_enter, enter_ns, enter_cnt);
	prog_cost(s->progs.realloc_enter, enter_ns, enter_cnt);
	prog_cost(s->progs.alloc_exit, exit_ns, exit_cnt);
}
