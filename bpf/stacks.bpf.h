/* stacks.bpf.h -- kernel and frame-pointer user stacks taken with bpf_get_stack and stored by content */
#ifndef EBPFPROF_STACKS_BPF_H
#define EBPFPROF_STACKS_BPF_H

#include "profile.h"	/* MAX_STACK_DEPTH, STACK_ID_HASHED */

#ifndef EFAULT
#define EFAULT 14
#endif
#ifndef EEXIST
#define EEXIST 17
#endif
#ifndef E2BIG
#define E2BIG 7
#endif

/*
 * A stack map keyed by a 64-bit hash of the frames, value the frames leaf
 * first, zero-filled past the last (as BPF_MAP_TYPE_STACK_TRACE's were).
 * Unlike a stack trace map's buckets, two stacks never share a slot: a full
 * map (or an allocation that fails) is the only loss, and it is counted.
 * Allocated as used where the kernel allows it in perf_event programs
 * (6.1+); userspace clears BPF_F_NO_PREALLOC where it does not
 * (bpf_util__perf_event_no_prealloc).
 */
#define STACKS_MAP(name)                                                        \
	struct {                                                                \
		__uint(type, BPF_MAP_TYPE_HASH);                                \
		__type(key, __u64);                                             \
		__type(value, struct stack_frames);                             \
		__uint(max_entries, 16384);                                     \
		__uint(map_flags, BPF_F_NO_PREALLOC);                           \
	} name SEC(".maps")

/* The stacks of the run on this CPU, kernel and user, between their capture and their store. */
struct stack_scratch {
	struct stack_frames kern;
	struct stack_frames user;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct stack_scratch);
	__uint(max_entries, 1);
} stack_scratch SEC(".maps");

/*
 * The same mix as the CFI walker's hash (walk_push), over the N frames
 * bpf_get_stack wrote: a bounded loop, as 5.10 verifies it. 0 is reserved
 * for "no stack" in a key.
 */
static __always_inline __u64 stack_hash(const __u64 *ips, __u32 n)
{
	__u64 h = 0xcbf29ce484222325ULL;

	for (__u32 i = 0; i < MAX_STACK_DEPTH; i++) {
		if (i >= n)
			break;
		h = (h ^ ips[i]) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	h ^= n;
	return h ? h : 1;
}

/*
 * Takes the current task's kernel stack, or with BPF_F_USER_STACK in FLAGS
 * its user stack by frame pointers, into this CPU's scratch and hashes it.
 * Returns 0 with *hash set, or the helper's -errno: -EFAULT when there is
 * no such stack (a sample in user mode has no kernel stack).
 */
static __always_inline int stack_take(void *ctx, __u64 flags, __u64 *hash)
{
	struct stack_scratch *sc;
	struct stack_frames *f;
	__u32 zero = 0;
	long n;

	sc = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!sc)
		return -EFAULT;
	f = flags & BPF_F_USER_STACK ? &sc->user : &sc->kern;
	/* the helper zero-fills the buffer past what it wrote */
	n = bpf_get_stack(ctx, f->ips, sizeof(f->ips), flags);
	if (n < 0)
		return n;
	if (n == 0)
		return -EFAULT;	/* an empty stack, as bpf_get_stackid says it */
	*hash = stack_hash(f->ips, n / sizeof(__u64));
	return 0;
}

/*
 * Stores the stack stack_take last took on this CPU (USER: the user one)
 * under HASH, unless a stack of that content is there already. Returns 0,
 * or the -errno to record in place of the stack: -E2BIG when the map is full.
 */
static __always_inline int stack_store(void *map, bool user, __u64 hash)
{
	struct stack_scratch *sc;
	__u32 zero = 0;
	int err;	/* a map op's result: 6.1 sets only the low 32 bits (-EEXIST) */

	sc = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!sc)
		return -EFAULT;
	err = bpf_map_update_elem(map, &hash, user ? &sc->user : &sc->kern, BPF_NOEXIST);
	return err == -EEXIST ? 0 : err;
}

#endif /* EBPFPROF_STACKS_BPF_H */
