/* bpf_util.c -- map and program chores the CPU sampler and the off-CPU tracer share */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "bpf_util.h"

int bpf_util__clear_map(int fd, size_t key_size)
{
	char key[64], next[64];
	int err = 0;

	if (key_size > sizeof(key))
		return -EINVAL;
	if (bpf_map_get_next_key(fd, NULL, key))
		return errno == ENOENT ? 0 : -errno;
	for (;;) {
		int more = !bpf_map_get_next_key(fd, key, next);

		if (bpf_map_delete_elem(fd, key) && errno != ENOENT)
			err = -errno;
		if (!more)
			break;
		memcpy(key, next, key_size);
	}
	return err;
}

int bpf_util__grace_period(int outer_fd, int inner_fd)
{
	int zero = 0;

	return bpf_map_update_elem(outer_fd, &zero, &inner_fd, BPF_ANY) ? -errno : 0;
}

int bpf_util__sum_percpu(int fd, __u32 n_keys, int n_cpus, __u64 *out)
{
	__u64 *vals = calloc(n_cpus, sizeof(*vals));

	if (!vals)
		return -ENOMEM;
	for (__u32 i = 0; i < n_keys; i++) {
		out[i] = 0;
		if (bpf_map_lookup_elem(fd, &i, vals))
			continue;
		for (int c = 0; c < n_cpus; c++)
			out[i] += vals[c];
	}
	free(vals);
	return 0;
}

int bpf_util__prog_runtime(int prog_fd, __u64 *run_ns, __u64 *run_cnt)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	*run_ns = info.run_time_ns;
	*run_cnt = info.run_cnt;
	return 0;
}
