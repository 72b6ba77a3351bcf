/* bpf_util.c -- map and program chores the CPU sampler and the off-CPU tracer share */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include "bpf_util.h"

#define BATCH_BYTES (64u << 10)	/* keys and values read per batch syscall */

/* Key and value sizes and type of the map open at FD. */
static int map_info(int fd, struct bpf_map_info *info)
{
	__u32 len = sizeof(*info);

	memset(info, 0, len);
	return bpf_obj_get_info_by_fd(fd, info, &len) ? -errno : 0;
}

/* Batch operations exist for hash maps only (5.6+); stack trace maps and old kernels walk keys. */
static bool batch_ok(const struct bpf_map_info *info)
{
	return info->type == BPF_MAP_TYPE_HASH || info->type == BPF_MAP_TYPE_LRU_HASH;
}

static __u32 batch_len(const struct bpf_map_info *info)
{
	__u32 n = BATCH_BYTES / (info->key_size + info->value_size);

	return n < 8 ? 8 : n;
}

/*
 * One batch syscall after another; *handled counts the entries passed to
 * fn. Returns 0 at the end, -ENOTSUP when the kernel has no batches here
 * (nothing handled yet: the caller walks keys instead), or a negative errno.
 */
static int batches(int fd, const struct bpf_map_info *info, bool delete, bpf_util_fn fn,
		   void *ctx, size_t *handled)
{
	__u32 n = batch_len(info), in = 0, out = 0, count;
	char *keys = malloc((size_t)n * info->key_size), *vals = malloc((size_t)n * info->value_size);
	bool first = true, last = false;
	int err = keys && vals ? 0 : -ENOMEM;

	while (!err && !last) {
		count = n;
		err = delete ? bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in, &out, keys,
							       vals, &count, NULL)
			     : bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &count,
						    NULL);
		err = err ? -errno : 0;
		if (err == -ENOENT) {	/* the last batch, maybe with entries */
			last = true;
			err = 0;
		}
		if (err && first && (err == -EINVAL || err == -ENOTSUP || err == -EOPNOTSUPP))
			err = -ENOTSUP;
		for (__u32 i = 0; !err && fn && i < count; i++, (*handled)++)
			err = fn(keys + (size_t)i * info->key_size,
				 vals + (size_t)i * info->value_size, ctx);
		in = out;
		first = false;
	}
	free(keys);
	free(vals);
	return err;
}

/* Keys read one ahead, so deleting the current one cannot end the walk. */
static int walk_keys(int fd, const struct bpf_map_info *info, bool delete, bpf_util_fn fn,
		     void *ctx)
{
	char *key = malloc(info->key_size), *next = malloc(info->key_size);
	char *val = malloc(info->value_size);
	int err = key && next && val ? 0 : -ENOMEM, more, end;

	if (!err && bpf_map_get_next_key(fd, NULL, key))
		err = errno == ENOENT ? 1 : -errno;
	while (!err) {
		more = !bpf_map_get_next_key(fd, key, next);
		end = more ? 0 : errno;
		if (fn && !bpf_map_lookup_elem(fd, key, val))	/* else deleted meanwhile */
			err = fn(key, val, ctx);
		if (!err && delete && bpf_map_delete_elem(fd, key) && errno != ENOENT)
			err = -errno;
		if (!err && !more)
			err = end == ENOENT ? 1 : -end;
		memcpy(key, next, info->key_size);
	}
	free(key);
	free(next);
	free(val);
	return err > 0 ? 0 : err;
}

static int each(int fd, bool delete, bpf_util_fn fn, void *ctx)
{
	struct bpf_map_info info;
	size_t handled = 0;
	int err = map_info(fd, &info);

	if (err)
		return err;
	if (fn && (info.type == BPF_MAP_TYPE_PERCPU_HASH || info.type == BPF_MAP_TYPE_LRU_PERCPU_HASH ||
		   info.type == BPF_MAP_TYPE_PERCPU_ARRAY))
		return -EINVAL;	/* a value per CPU: not what fn is given */
	if (batch_ok(&info)) {
		err = batches(fd, &info, delete, fn, ctx, &handled);
		if (err != -ENOTSUP || handled)
			return err;
	}
	return walk_keys(fd, &info, delete, fn, ctx);
}

int bpf_util__clear_map(int fd)
{
	return each(fd, true, NULL, NULL);
}

int bpf_util__for_each(int fd, bpf_util_fn fn, void *ctx)
{
	return each(fd, false, fn, ctx);
}

int bpf_util__grace_period(int outer_fd, int inner_fd)
{
	int zero = 0;

	return bpf_map_update_elem(outer_fd, &zero, &inner_fd, BPF_ANY) ? -errno : 0;
}

/*
 * What the last read of a bit map's value said, by map id: a bit set there
 * is set in the map, since no one clears one, so setting it again needs no
 * read of the value (16 KiB, copied in and out, for each new process).
 */
#define SHADOWS 4

struct shadow {
	__u32 id;		/* 0: free */
	__u32 size;
	__u8 *bits;
};

static struct shadow shadows[SHADOWS];
static unsigned int shadow_next;	/* the slot a new map takes when all are used */
static pthread_mutex_t shadow_lock = PTHREAD_MUTEX_INITIALIZER;

/* Under shadow_lock: the shadow of map ID kept, or NULL */
static struct shadow *shadow_find(__u32 id, __u32 size)
{
	for (int i = 0; i < SHADOWS; i++)
		if (shadows[i].id == id && shadows[i].size == size)
			return &shadows[i];
	return NULL;
}

/* Under shadow_lock: the shadow of map ID, a new one all clear if not kept; NULL: out of memory. */
static struct shadow *shadow_of(__u32 id, __u32 size)
{
	struct shadow *sh = shadow_find(id, size);

	if (sh)
		return sh;
	sh = &shadows[shadow_next++ % SHADOWS];
	free(sh->bits);
	*sh = (struct shadow){ .id = id, .size = size, .bits = calloc(1, size) };
	if (!sh->bits)
		sh->id = 0;
	return sh->bits ? sh : NULL;
}

/*
 * Bit arrays written in place (bpf_util__map_bits): a set is an atomic or
 * on the map's memory, where the shadow's way reads and writes the whole
 * value (16 KiB each way, three system calls) for each new process.
 */
#define MAPPED_MAX 4

struct mapped_bits {
	int fd;			/* -1: free */
	__u32 size;		/* the value's bytes */
	size_t len;		/* mmap'ed */
	__u8 *bits;
};

static struct mapped_bits mapped[MAPPED_MAX] = { [0 ... MAPPED_MAX - 1] = { .fd = -1 } };

/* Under shadow_lock: the bits mapped for FD, or NULL */
static struct mapped_bits *mapped_of(int fd)
{
	for (int i = 0; fd >= 0 && i < MAPPED_MAX; i++)
		if (mapped[i].fd == fd)
			return &mapped[i];
	return NULL;
}

int bpf_util__map_bits(int fd)
{
	long page = sysconf(_SC_PAGESIZE);
	struct mapped_bits *m = NULL;
	struct bpf_map_info info;
	int err = map_info(fd, &info);
	size_t len;
	void *p;

	if (err)
		return err;
	if (info.type != BPF_MAP_TYPE_ARRAY || !info.value_size || !info.max_entries ||
	    !(info.map_flags & BPF_F_MMAPABLE))
		return -EINVAL;
	len = ((size_t)(info.value_size + 7) / 8 * 8 * info.max_entries + page - 1) / page * page;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	pthread_mutex_lock(&shadow_lock);
	for (int i = 0; !m && i < MAPPED_MAX; i++)
		if (mapped[i].fd < 0)
			m = &mapped[i];
	if (m)
		*m = (struct mapped_bits){ .fd = fd, .size = info.value_size, .len = len, .bits = p };
	pthread_mutex_unlock(&shadow_lock);
	if (!m)
		munmap(p, len);
	return m ? 0 : -ENOSPC;
}

void bpf_util__unmap_bits(int fd)
{
	struct mapped_bits *m;

	pthread_mutex_lock(&shadow_lock);
	m = mapped_of(fd);
	if (m) {
		munmap(m->bits, m->len);
		*m = (struct mapped_bits){ .fd = -1 };
	}
	pthread_mutex_unlock(&shadow_lock);
}

/* 1 or 0 when FD's bits are mapped (setting bit first when SET), else -ENOENT */
static int mapped_bit(int fd, __u32 bit, bool set)
{
	struct mapped_bits *m;
	int ret = -ENOENT;

	pthread_mutex_lock(&shadow_lock);
	m = mapped_of(fd);
	if (m) {
		__u8 *byte = &m->bits[bit % (m->size * 8) / 8], mask = 1u << (bit % 8);

		if (set)
			__atomic_fetch_or(byte, mask, __ATOMIC_SEQ_CST);
		ret = !!(__atomic_load_n(byte, __ATOMIC_SEQ_CST) & mask);
	}
	pthread_mutex_unlock(&shadow_lock);
	return ret;
}

/* FD's map, checked to be an array with a value; BIT taken modulo the value's bits */
static int bits_of(int fd, struct bpf_map_info *info, __u32 *bit)
{
	int err = map_info(fd, info);

	if (err)
		return err;
	if (info->type != BPF_MAP_TYPE_ARRAY || !info->value_size)
		return -EINVAL;
	*bit %= info->value_size * 8;
	return 0;
}

int bpf_util__set_bit(int fd, __u32 bit)
{
	struct bpf_map_info info;
	struct shadow *sh;
	__u32 key = 0;
	__u8 *val;
	int err = mapped_bit(fd, bit, true);

	if (err >= 0)
		return 0;
	err = bits_of(fd, &info, &bit);
	if (err)
		return err;
	pthread_mutex_lock(&shadow_lock);
	sh = shadow_of(info.id, info.value_size);
	if (sh && sh->bits[bit / 8] & 1u << (bit % 8)) {
		pthread_mutex_unlock(&shadow_lock);
		return 0;	/* a process read again, a pid sharing the bit */
	}
	val = malloc(info.value_size);
	err = val ? 0 : -ENOMEM;
	if (!err)
		err = bpf_map_lookup_elem(fd, &key, val) ? -errno : 0;
	/* set already by another writer: no write */
	if (!err && !(val[bit / 8] & 1u << (bit % 8))) {
		val[bit / 8] |= 1u << (bit % 8);
		err = bpf_map_update_elem(fd, &key, val, BPF_ANY) ? -errno : 0;
	}
	if (!err && sh)
		memcpy(sh->bits, val, info.value_size);
	pthread_mutex_unlock(&shadow_lock);
	free(val);
	return err;
}

int bpf_util__test_bit(int fd, __u32 bit)
{
	struct bpf_map_info info;
	struct shadow *sh;
	__u32 key = 0;
	__u8 *val;
	int err = mapped_bit(fd, bit, false);

	if (err >= 0)
		return err;
	err = bits_of(fd, &info, &bit);
	if (err)
		return err;
	pthread_mutex_lock(&shadow_lock);
	sh = shadow_find(info.id, info.value_size);
	/* every bit set went through the shadow's set_bit, which copied the whole value */
	err = sh ? !!(sh->bits[bit / 8] & 1u << (bit % 8)) : 0;
	pthread_mutex_unlock(&shadow_lock);
	if (sh)
		return err;
	val = malloc(info.value_size);
	if (!val)
		return -ENOMEM;
	err = bpf_map_lookup_elem(fd, &key, val) ? -errno : !!(val[bit / 8] & 1u << (bit % 8));
	free(val);
	return err;
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

int bpf_util__count_keys(int fd, __u32 limit, __u32 *out)
{
	__u8 key[64], next[64];	/* the keys counted here are 4 to 8 bytes */
	struct bpf_map_info info;
	void *prev = NULL;
	int err = map_info(fd, &info);

	*out = 0;
	if (err)
		return err;
	if (info.key_size > sizeof(key))
		return -EINVAL;
	while (*out < limit && !bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, info.key_size);
		prev = key;
		(*out)++;
	}
	return 0;
}

/* Loads a perf_event program that names the map at MAP_FD: r1 = map; r0 = 0; exit. */
static bool perf_event_takes_map(int map_fd)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = map_fd },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, NULL, "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

bool bpf_util__perf_event_no_prealloc(void)
{
	static int ok = -1;	/* the kernel does not change under us: probe once */
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = BPF_F_NO_PREALLOC);
	int map_fd;

	if (ok >= 0)
		return ok;
	map_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "prealloc_probe", 8, 8, 1, &mo);
	if (map_fd < 0)
		return false;	/* cannot tell: preallocate, which every kernel takes */
	ok = perf_event_takes_map(map_fd);
	close(map_fd);
	return ok;
}

int bpf_util__warm_map(int fd, const int *cpus, int n_cpus)
{
	struct bpf_map_info info;
	cpu_set_t old, one;
	void *kv;	/* an all-zero key, then the value */
	int err = map_info(fd, &info);

	if (err)
		return err;
	kv = calloc(1, info.key_size + info.value_size);
	if (!kv)
		return -ENOMEM;
	if (sched_getaffinity(0, sizeof(old), &old)) {
		err = -errno;
		goto out_free;
	}
	for (int i = 0; i < n_cpus; i++) {
		CPU_ZERO(&one);
		CPU_SET(cpus[i], &one);
		/* a CPU we may not run on (a cpuset) stays cold: its first samples may lose a stack */
		if (sched_setaffinity(0, sizeof(one), &one))
			continue;
		if (!bpf_map_update_elem(fd, kv, (char *)kv + info.key_size, BPF_NOEXIST))
			bpf_map_delete_elem(fd, kv);
	}
	if (sched_setaffinity(0, sizeof(old), &old))
		err = -errno;
out_free:
	free(kv);
	return err;
}

__s64 bpf_util__pthread_self_off(void)
{
	return (__s64)((uintptr_t)pthread_self() - (uintptr_t)__builtin_thread_pointer());
}
