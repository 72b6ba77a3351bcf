/* runtimes.c -- the table of runtimes, and the set of them one profile runs: each call goes to all, or to a tag's owner */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include "lib/bpf_util.h"
#include "symbolize/proc_maps.h"
#include "runtime.h"

/* The table, from the list in include/frametypes.h (RUNTIMES): adding a runtime changes nothing here. */
#define RUNTIME_DECLARE(id, name) extern const struct runtime_ops name##_runtime;
#define RUNTIME_ENTRY(id, name) [id] = &name##_runtime,
RUNTIMES(RUNTIME_DECLARE)
RUNTIMES_TEST(RUNTIME_DECLARE)

const struct runtime_ops *const runtimes[UNWIND_RT_MAX] = {
	RUNTIMES(RUNTIME_ENTRY)
	RUNTIMES_TEST(RUNTIME_ENTRY)
};

bool runtime__gone_twice(const char *proc_root, const struct proc_image *img, bool superseded,
			 bool *gone_before)
{
	bool gone = superseded || !proc_image__lives(proc_root, img);

	if (gone && *gone_before)
		return true;
	*gone_before = gone;
	return false;
}

int runtime__read_maps(const char *proc_root, __u32 pid, struct proc_map **maps, size_t *n)
{
	int err = proc_maps__read(proc_root, pid, maps, n);

	if (!err && !*n) {
		proc_maps__free(*maps);
		*maps = NULL;
		err = -ESRCH;
	}
	return err;
}

int runtime__set_table(int pids_fd, int procs_fd, enum unwind_runtime id, __u32 pid,
		       const void *table)
{
	int err = bpf_util__set_bit(pids_fd, unwind_pid_bits__bit(pid, id));

	if (!err && bpf_map_update_elem(procs_fd, &pid, table, BPF_ANY))
		err = -errno;
	return err;
}

struct runtime_set {
	void *rt[UNWIND_RT_MAX];	/* each runtime's object; NULL where none is built in */
	int pids_fd;			/* runtime_pids */
};

struct runtime_set *runtime_set__new(const struct runtime_set_opts *o)
{
	struct runtime_set *s = calloc(1, sizeof(*s));
	int err = s ? 0 : -ENOMEM;

	if (s)
		s->pids_fd = o->pids_fd;
	for (int i = 0; !err && i < UNWIND_RT_MAX; i++) {
		const struct runtime_ops *ops = runtimes[i];
		struct runtime_opts ro = { .proc_root = o->proc_root ? o->proc_root : "/proc",
					   .pids_fd = o->pids_fd };

		if (!ops)
			continue;
		ro.procs_fd = o->map_fd(o->ctx, ops->procs_map);
		if (ro.procs_fd < 0) {
			err = ro.procs_fd;
			break;
		}
		for (int k = 0; !err && ops->maps && ops->maps[k]; k++) {
			ro.maps_fd[k] = k < RUNTIME_MAPS_MAX ? o->map_fd(o->ctx, ops->maps[k]) : -E2BIG;
			err = ro.maps_fd[k] < 0 ? ro.maps_fd[k] : 0;
		}
		if (err)
			break;
		s->rt[i] = ops->new(&ro);
		if (!s->rt[i])
			err = -errno;
	}
	if (err) {
		runtime_set__free(s);
		errno = -err;
		return NULL;
	}
	return s;
}

void runtime_set__free(struct runtime_set *s)
{
	if (!s)
		return;
	for (int i = 0; i < UNWIND_RT_MAX; i++)
		if (s->rt[i])
			runtimes[i]->free(s->rt[i]);
	free(s);
}

void runtime_set__add_image(struct runtime_set *s, const struct proc_image *img)
{
	for (int i = 0; s && i < UNWIND_RT_MAX; i++)
		if (s->rt[i])
			runtimes[i]->add_image(s->rt[i], img);	/* failure: native frames only, counted there */
}

bool runtime_set__may_hold(const struct runtime_set *s, __u32 pid)
{
	for (int i = 0; s && i < UNWIND_RT_MAX; i++)
		if (s->rt[i] && bpf_util__test_bit(s->pids_fd, unwind_pid_bits__bit(pid, i)))
			return true;	/* set, maybe by another pid sharing the bit, or unknown */
	return false;
}

void runtime_set__add_pid(struct runtime_set *s, const char *proc_root, __u32 pid)
{
	struct proc_image img = { .pid = pid, .exec = PROC_EXEC_ANY };

	if (s && !proc_image__start_of(proc_root ? proc_root : "/proc", pid, &img.start))
		runtime_set__add_image(s, &img);
}

void runtime_set__retry(struct runtime_set *s)
{
	for (int i = 0; s && i < UNWIND_RT_MAX; i++)
		if (s->rt[i] && runtimes[i]->retry)
			runtimes[i]->retry(s->rt[i]);
}

int runtime_set__on_event(void *ctx, void *data, size_t size)
{
	struct runtime_set *s = ctx;
	const struct rt_event *e = data;
	int rt;

	if (size < sizeof(*e))
		return 0;
	rt = rt_event__runtime(e->kind);
	if (rt >= 0 && rt < UNWIND_RT_MAX && s->rt[rt])
		runtimes[rt]->event(s->rt[rt], e);
	return 0;
}

void runtime_set__sweep(struct runtime_set *s)
{
	for (int i = 0; s && i < UNWIND_RT_MAX; i++)
		if (s->rt[i])
			runtimes[i]->sweep(s->rt[i]);
}

int runtime_set__name(struct runtime_set *s, const struct proc_image *img, const __u64 *ips, int n,
		      struct src_line *out, int max, int *n_out, const char **name, __u64 *loc)
{
	int slots, rt;

	/* an address's top byte is 0: most slots are decided here */
	if (!s || n <= 0 || FRAME_TAG(ips[0]) < FRAME_TAG_MIN)
		return 0;
	rt = frame_tag__runtime(FRAME_TAG(ips[0]), &slots);
	if (rt < 0 || !s->rt[rt] || slots > n)
		return 0;	/* not a tag we know, or cut off: named as an address, unnamed */
	*n_out = 0;
	*loc = ips[0];
	if (slots == 1) {
		*name = runtimes[rt]->mark(s->rt[rt], ips[0]);
		return 1;
	}
	*n_out = runtimes[rt]->frame(s->rt[rt], img, ips[0], ips[1], out, max, loc);
	*name = *n_out > 0 ? out[0].function : NULL;
	return 2;
}

void runtime_set__each_stats(const struct runtime_set *s, runtime_stats_fn fn, void *ctx)
{
	for (int i = 0; s && i < UNWIND_RT_MAX; i++) {
		const struct runtime_ops *ops = runtimes[i];
		void *buf;

		if (!s->rt[i] || !ops->stats_size)
			continue;
		buf = calloc(1, ops->stats_size);
		if (!buf)
			continue;
		ops->stats_read(s->rt[i], buf);
		fn(ops, buf, ctx);
		free(buf);
	}
}
