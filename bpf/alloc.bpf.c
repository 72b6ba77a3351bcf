// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* alloc.bpf.c -- uprobes on one process's allocator: allocations sampled by bytes (Poisson), their stacks, their frees */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "alloc.h"

#define EEXIST 17	/* errno values are not in BTF */

/* BPF_KPROBE and BPF_KRETPROBE read the arguments of a uprobe the same way */

const volatile __u32 target_tgid = 0;

/* Draws of an exponential of mean rate bytes: the bytes until the next sample (userspace fills it). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ALLOC_EXP_TABLE);
	__type(key, __u32);
	__type(value, __u64);
} exp_table SEC(".maps");

/* Bytes left before the next sample, per CPU: a Poisson process over the bytes allocated there. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __s64);
} left SEC(".maps");

/* A sampled call between its entry and its return, per thread. */
struct pending {
	__u64 stack;
	__u64 size;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct pending);
} pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ALLOC_STACKS_MAX);
	__type(key, __u64);
	__type(value, struct alloc_stack);
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ALLOC_STACKS_MAX);
	__type(key, __u64);
	__type(value, struct alloc_counts);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ALLOC_LIVE_MAX);
	__type(key, __u64);
	__type(value, struct alloc_live);
} live SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ALLOC_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct alloc_stack);
} scratch SEC(".maps");

static __always_inline void add(__u32 i, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &i);

	if (v)
		*v += n;
}

static __always_inline void count(__u32 i)
{
	add(i, 1);
}

/* Whether this call of SIZE bytes is sampled: the bytes left run out, and are drawn anew. */
static __always_inline bool sample(__u64 size)
{
	__u32 zero = 0, r = bpf_get_prandom_u32() % ALLOC_EXP_TABLE;
	__s64 *l = bpf_map_lookup_elem(&left, &zero);
	__u64 *draw;

	if (!l)
		return false;
	*l -= (__s64)size;
	if (*l > 0)
		return false;
	draw = bpf_map_lookup_elem(&exp_table, &r);
	*l = draw ? (__s64)*draw : 0;
	return true;
}

/*
 * The stack at an allocator's entry: the allocator has not pushed a frame
 * yet, so the frame-pointer walk skips its caller; the return address at
 * the stack pointer is the caller's, put first. Stored by content.
 */
static __always_inline __u64 take_stack(struct pt_regs *ctx)
{
	__u32 zero = 0;
	struct alloc_stack *st = bpf_map_lookup_elem(&scratch, &zero);
	__u64 ips[ALLOC_STACK_DEPTH - 1], h = 0xcbf29ce484222325ull;
	long n;

	if (!st)
		return 0;
	__builtin_memset(st, 0, sizeof(*st));
	if (bpf_probe_read_user(&st->ips[0], 8, (void *)PT_REGS_SP(ctx)))
		return 0;
	n = bpf_get_stack(ctx, ips, sizeof(ips), BPF_F_USER_STACK);
	if (n < 0)
		n = 0;
	n /= 8;
	/* ips[0] is the allocator itself: the walk's callers follow the return address */
	for (int i = 1; i < ALLOC_STACK_DEPTH - 1; i++) {
		if (i >= n)
			break;
		st->ips[i] = ips[i];
		st->n = i + 1;
	}
	if (!st->n)
		st->n = 1;
	for (int i = 0; i < ALLOC_STACK_DEPTH; i++)
		h = (h ^ st->ips[i]) * 0x100000001b3ull;
	h = h ? h : 1;
	n = bpf_map_update_elem(&stacks, &h, st, BPF_NOEXIST);
	if (n && n != -EEXIST) {
		count(ALLOC_STAT_STACKS_FULL);
		return 0;
	}
	return h;
}

static __always_inline int on_alloc(struct pt_regs *ctx, __u64 size)
{
	struct pending p = { .size = size };
	__u64 id = bpf_get_current_pid_tgid(), t0;
	__u32 tid = (__u32)id;

	if (id >> 32 != target_tgid)
		return 0;
	t0 = bpf_ktime_get_ns();	/* the cost of each path, told apart */
	count(ALLOC_STAT_CALLS);
	if (!size || !sample(size)) {
		add(ALLOC_STAT_NS_UNSAMPLED, bpf_ktime_get_ns() - t0);
		return 0;
	}
	count(ALLOC_STAT_SAMPLED);
	p.stack = take_stack(ctx);
	if (!p.stack) {
		count(ALLOC_STAT_NO_STACK);
		return 0;
	}
	if (bpf_map_update_elem(&pending, &tid, &p, BPF_ANY))
		count(ALLOC_STAT_RET_MISSED);
	add(ALLOC_STAT_NS_SAMPLED, bpf_ktime_get_ns() - t0);
	return 0;
}

static __always_inline void on_free(__u64 ptr)
{
	struct alloc_live *b;
	struct alloc_counts *c;

	if (!ptr)
		return;
	b = bpf_map_lookup_elem(&live, &ptr);
	if (!b)
		return;	/* not sampled: the common case */
	c = bpf_map_lookup_elem(&counts, &b->stack);
	if (c) {
		__sync_fetch_and_add(&c->frees, 1);
		__sync_fetch_and_add(&c->free_bytes, b->size);
	}
	bpf_map_delete_elem(&live, &ptr);
}

SEC("uprobe")
int BPF_KPROBE(malloc_enter, __u64 size)
{
	return on_alloc(ctx, size);
}

SEC("uprobe")
int BPF_KPROBE(calloc_enter, __u64 n, __u64 size)
{
	return on_alloc(ctx, n * size);
}

/* realloc: the old block is freed, the new one allocated (a sampled one whose address holds) */
SEC("uprobe")
int BPF_KPROBE(realloc_enter, __u64 ptr, __u64 size)
{
	if (bpf_get_current_pid_tgid() >> 32 != target_tgid)
		return 0;
	on_free(ptr);
	return on_alloc(ctx, size);
}

SEC("uprobe")
int BPF_KPROBE(free_enter, __u64 ptr)
{
	if (bpf_get_current_pid_tgid() >> 32 != target_tgid)
		return 0;
	count(ALLOC_STAT_FREES);
	on_free(ptr);
	return 0;
}

/* any allocator's return: a pending sample of this thread gets its block's address */
SEC("uretprobe")
int BPF_KRETPROBE(alloc_exit, __u64 ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct pending *p;
	struct alloc_counts *c, zero = {};
	struct alloc_live b;

	if (id >> 32 != target_tgid)
		return 0;
	p = bpf_map_lookup_elem(&pending, &tid);
	if (!p)
		return 0;
	b = (struct alloc_live){ .stack = p->stack, .size = p->size };
	bpf_map_delete_elem(&pending, &tid);
	if (!ret)
		return 0;	/* failed: nothing allocated */
	c = bpf_map_lookup_elem(&counts, &b.stack);
	if (!c) {
		bpf_map_update_elem(&counts, &b.stack, &zero, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&counts, &b.stack);
	}
	if (!c) {
		count(ALLOC_STAT_STACKS_FULL);
		return 0;
	}
	__sync_fetch_and_add(&c->allocs, 1);
	__sync_fetch_and_add(&c->alloc_bytes, b.size);
	if (bpf_map_update_elem(&live, &ret, &b, BPF_ANY)) {
		/*
		 * No room to watch for its free: counted as freed at once, so
		 * inuse_* leave it out rather than keep it in use for ever
		 * (a leak that is not there); alloc_* still count it.
		 */
		__sync_fetch_and_add(&c->frees, 1);
		__sync_fetch_and_add(&c->free_bytes, b.size);
		count(ALLOC_STAT_LIVE_FULL);
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
