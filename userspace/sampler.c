/* sampler.c -- loads the BPF sampler, attaches it to a perf event on every online CPU, reads its maps */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "sampler.h"
#include "cpus.h"
#include "profile.skel.h"

#define DEFAULT_STACK_ENTRIES 16384
#define DEFAULT_COUNT_ENTRIES 40960

struct sampler {
	struct profile_bpf *skel;
	struct bpf_link **links;
	int *cpus;
	int n_cpus;
	int n_links;
	int n_attached;		/* CPUs sampled, kept after sampler__stop for reports */
	int frequency;
	int n_possible_cpus;
};

static int set_pid_filter(struct sampler *s, const __u32 *pids, int n)
{
	int fd = bpf_map__fd(s->skel->maps.pids);
	__u8 one = 1;

	for (int i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, &pids[i], &one, BPF_ANY))
			return -errno;
	return 0;
}

static int configure(struct profile_bpf *skel, const struct sampler_opts *o)
{
	__u32 stacks = o->stack_entries ? o->stack_entries : DEFAULT_STACK_ENTRIES;
	__u32 counts = o->count_entries ? o->count_entries : DEFAULT_COUNT_ENTRIES;
	int err;

	skel->rodata->filter_pid = o->n_pids > 0;
	skel->rodata->include_idle = o->include_idle;
	skel->rodata->collect_kernel = !o->no_kernel;
	skel->rodata->collect_user = !o->no_user;
	skel->rodata->per_thread = o->per_thread;

	err = bpf_map__set_max_entries(skel->maps.stacks, stacks);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.counts, counts);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.pids, o->n_pids > 0 ? o->n_pids : 1);
	return err;
}

struct sampler *sampler__new(const struct sampler_opts *opts)
{
	struct sampler *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
	s->frequency = opts->frequency;
	s->n_possible_cpus = libbpf_num_possible_cpus();
	if (s->n_possible_cpus <= 0) {
		err = s->n_possible_cpus ? s->n_possible_cpus : -EINVAL;
		goto err_free;
	}
	s->skel = profile_bpf__open();
	if (!s->skel) {
		err = -errno;
		goto err_free;
	}
	err = configure(s->skel, opts);
	if (err)
		goto err_free;
	err = profile_bpf__load(s->skel);
	if (err)
		goto err_free;
	err = set_pid_filter(s, opts->pids, opts->n_pids);
	if (err)
		goto err_free;
	return s;

err_free:
	sampler__free(s);
	errno = -err;
	return NULL;
}

static int open_cpu_clock(int cpu, int frequency)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = frequency,
		.freq = 1,
	};
	int fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int sampler__start(struct sampler *s)
{
	int err;

	err = cpus__online(&s->cpus, &s->n_cpus);
	if (err)
		return err;
	s->links = calloc(s->n_cpus, sizeof(*s->links));
	if (!s->links)
		return -ENOMEM;
	for (int i = 0; i < s->n_cpus; i++) {
		int fd = open_cpu_clock(s->cpus[i], s->frequency);

		if (fd == -ENODEV)	/* went offline since we read the list */
			continue;
		if (fd < 0)
			return fd;
		s->links[s->n_links] = bpf_program__attach_perf_event(s->skel->progs.do_sample, fd);
		if (!s->links[s->n_links]) {
			err = -errno;
			close(fd);
			return err;
		}
		s->n_links++;
	}
	s->n_attached = s->n_links;
	return s->n_links ? 0 : -ENODEV;
}

void sampler__stop(struct sampler *s)
{
	/* destroying a perf_event link also closes its perf event fd */
	for (int i = 0; i < s->n_links; i++)
		bpf_link__destroy(s->links[i]);
	s->n_links = 0;
}

int sampler__cpus(const struct sampler *s)
{
	return s->n_attached;
}

int sampler__for_each(struct sampler *s, sampler_fn fn, void *ctx)
{
	int fd = bpf_map__fd(s->skel->maps.counts);
	struct sample_key key, next;
	void *prev = NULL;
	__u64 count;
	int ret;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &count))
			continue;	/* deleted since get_next_key */
		ret = fn(&key, count, ctx);
		if (ret)
			return ret;
	}
	return errno == ENOENT ? 0 : -errno;
}

int sampler__stack(struct sampler *s, __s32 id, __u64 *ips, int max)
{
	__u64 buf[MAX_STACK_DEPTH] = {};
	int n = 0;

	if (id < 0)
		return 0;
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.stacks), &id, buf))
		return -errno;
	/* the stack map zero-fills unused slots */
	while (n < MAX_STACK_DEPTH && n < max && buf[n]) {
		ips[n] = buf[n];
		n++;
	}
	return n;
}

int sampler__stats(struct sampler *s, __u64 out[STAT_MAX])
{
	int fd = bpf_map__fd(s->skel->maps.stats);
	__u64 *vals = calloc(s->n_possible_cpus, sizeof(*vals));

	if (!vals)
		return -ENOMEM;
	for (__u32 i = 0; i < STAT_MAX; i++) {
		out[i] = 0;
		if (bpf_map_lookup_elem(fd, &i, vals))
			continue;
		for (int c = 0; c < s->n_possible_cpus; c++)
			out[i] += vals[c];
	}
	free(vals);
	return 0;
}

int sampler__bpf_runtime(struct sampler *s, __u64 *run_ns, __u64 *run_cnt)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int err;

	err = bpf_obj_get_info_by_fd(bpf_program__fd(s->skel->progs.do_sample), &info, &len);
	if (err)
		return -errno;
	*run_ns = info.run_time_ns;
	*run_cnt = info.run_cnt;
	return 0;
}

void sampler__free(struct sampler *s)
{
	if (!s)
		return;
	sampler__stop(s);
	free(s->links);
	free(s->cpus);
	profile_bpf__destroy(s->skel);
	free(s);
}
