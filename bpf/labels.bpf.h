/* labels.bpf.h -- reads the labels a thread runs under at a sample: Go's, custom labels, OpenTelemetry's (include/labels.h) */
#ifndef EBPFPROF_LABELS_BPF_H
#define EBPFPROF_LABELS_BPF_H

#include "labels.h"
#include "walk.bpf.h"
#include "otel_ctx.bpf.h"

/* runtime/map.go (Go 1.19): a map[string]string bucket is 8 tophash bytes, 8 keys, 8 values, overflow */
#define GO_BUCKET_SIZE (8 + 8 * 16 + 8 * 16 + 8)
#define GO_BUCKET_KEYS 8
#define GO_BUCKET_VALUES (8 + 8 * 16)
#define GO_HMAP_B 9		/* hmap.B: log2 of the bucket count */
#define GO_HMAP_BUCKETS 16
#define GO_MIN_TOPHASH 5	/* below it a slot is empty or evacuated */
#define GO_BUCKETS_READ 8	/* a label map with more buckets is read in part, counted */
#define LABEL_SIZE 32		/* Go 1.24's label, custom_labels_label_t: two string headers */

/* pid -> its image's label source (runtimes/labels); its runtime_pids bit spares the others the lookup */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct label_proc);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} label_procs SEC(".maps");

/* a slot's label sets by content hash, emptied with its counts (as the stack maps) */
#define LABELS_MAP(name)                                                        \
	struct {                                                                \
		__uint(type, BPF_MAP_TYPE_HASH);                                \
		__type(key, __u64);                                             \
		__type(value, struct label_set);                                \
		__uint(max_entries, 4096);                                      \
		__uint(map_flags, BPF_F_NO_PREALLOC);                           \
	} name SEC(".maps")

/* the set of the sample on this CPU, between its read and its store */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct label_set);
	__uint(max_entries, 1);
} label_scratch SEC(".maps");

/* Copies a Go string of LEN bytes at PTR into DST of CAP bytes, NUL-ended; a cut is flagged. */
static __always_inline void label_str(char *dst, __u32 cap, __u64 ptr, __u64 len, __u32 *flags)
{
	__u32 n = len < cap - 1 ? (__u32)len : cap - 1;

	if (len > cap - 1)
		*flags |= LABEL_SET_TRUNCATED;
	if (bpf_probe_read_user(dst, n & (cap - 1), (const void *)ptr))
		*flags |= LABEL_SET_TRUNCATED;
}

/*
 * Adds the label whose key and value string headers are at KEY and VALUE:
 * {ptr, len} (Go's), or {len, ptr} with LEN_FIRST (custom_labels_string_t).
 * A custom label without a key (NULL) is no label: skipped, not an error.
 */
static __always_inline int label_add(struct label_set *set, __u64 key, __u64 value, bool len_first)
{
	/* one header read at a time, into one place: the reader's stack is small (see labels_read) */
	struct { __u64 ptr, len; } h;
	struct label_kv *kv = &set->kv[set->n & (LABELS_MAX - 1)];
	__u64 t;

	if (bpf_probe_read_user(&h, sizeof(h), (const void *)key))
		return -1;
	if (len_first)
		t = h.ptr, h.ptr = h.len, h.len = t;
	if (!h.ptr)
		return 0;
	__builtin_memset(kv, 0, sizeof(*kv));
	label_str(kv->key, LABEL_KEY_MAX, h.ptr, h.len, &set->flags);
	if (bpf_probe_read_user(&h, sizeof(h), (const void *)value))
		return -1;
	if (len_first)
		t = h.ptr, h.ptr = h.len, h.len = t;
	if (!h.ptr)
		return 0;
	label_str(kv->value, LABEL_VALUE_MAX, h.ptr, h.len, &set->flags);
	set->n++;
	return 0;
}

/* Go 1.19's map[string]string at HMAP: its first GO_BUCKETS_READ buckets, overflow left out. */
static __always_inline void go_labels_map(struct label_set *set, __u64 hmap)
{
	__u64 count, buckets, top = 0, b;
	__u8 lg;

	if (walk_read(&count, hmap) || bpf_probe_read_user(&lg, 1, (const void *)(hmap + GO_HMAP_B)) ||
	    walk_read(&buckets, hmap + GO_HMAP_BUCKETS) || !buckets)
		return;
	for (__u32 i = 0; i < GO_BUCKETS_READ * 8; i++) {
		__u32 j = i & 7;

		if ((i >> 3) >= (1u << (lg & 7)) || set->n >= LABELS_MAX)
			break;
		b = buckets + (i >> 3) * GO_BUCKET_SIZE;
		if (j == 0 && walk_read(&top, b))
			break;
		if (((top >> (8 * j)) & 0xff) < GO_MIN_TOPHASH)
			continue;
		if (label_add(set, b + GO_BUCKET_KEYS + 16 * j, b + GO_BUCKET_VALUES + 16 * j, false))
			break;
	}
	if (count > set->n)
		set->flags |= LABEL_SET_TRUNCATED;
}

/*
 * An array of labels: Go 1.24's []label at LIST (a slice header {ptr, len}),
 * or custom-labels' tls_t {storage, count}, whose labels are {len, ptr}.
 * Past LABELS_MAX entries the set is cut, counted.
 */
static __always_inline void labels_array(struct label_set *set, __u64 list, bool len_first)
{
	struct { __u64 ptr, len; } s;
	__u32 i;

	if (bpf_probe_read_user(&s, sizeof(s), (const void *)list) || !s.ptr)
		return;
	for (i = 0; i < LABELS_MAX && i < s.len; i++)
		if (label_add(set, s.ptr + i * LABEL_SIZE, s.ptr + i * LABEL_SIZE + 16, len_first))
			break;
	if (s.len > i)
		set->flags |= LABEL_SET_TRUNCATED;
}

/*
 * The same mix as the stacks' hash, over each label's words, summed: the
 * sum does not depend on the order a map hands its labels out in. 0 is
 * "no labels" in a key.
 */
static __always_inline __u64 label_set_hash(const struct label_set *set)
{
	__u64 sum = 0;

	for (__u32 i = 0; i < LABELS_MAX && i < set->n; i++) {
		const __u64 *w = (const __u64 *)&set->kv[i];
		__u64 h = 0xcbf29ce484222325ULL;

		for (__u32 k = 0; k < sizeof(struct label_kv) / 8; k++)
			h = (h ^ w[k]) * 0x9e3779b97f4a7c15ULL;
		sum += h ^ (h >> 29);
	}
	return sum ? sum : 1;
}

/*
 * Reads the labels this thread runs under into SET: custom-labels' table at
 * fsbase + tls (v0) or pointed to from there (v1), or the labels of the
 * goroutine running here (g at fsbase + tls, g.m.curg.labels). Returns how
 * many, 0 without any. A global function, verified once on its own; its
 * frame still counts with its callers' against the 512-byte stack (6.1
 * refused the off-CPU program at 544 bytes), so it keeps few locals.
 */
WALK_FN int labels_read(struct label_set *set, const struct label_proc *lp, __u64 fsbase)
{
	__u64 p;	/* g, then m, curg, labels: one slot, the stack is tight */

	if (!set || !lp)
		return 0;
	set->n = 0;
	set->flags = 0;
	if (lp->source == LABELS_CUSTOM_V0) {
		labels_array(set, fsbase + lp->tls, true);
		return set->n;
	}
	if (lp->source == LABELS_CUSTOM_V1) {
		/* custom_labels_current_set: NULL, or the thread's {storage, count, capacity} */
		if (!walk_read(&p, fsbase + lp->tls) && p)
			labels_array(set, p, true);
		return set->n;
	}
	if (walk_read(&p, fsbase + lp->tls) || !p || walk_read(&p, p + lp->g_m) || !p ||
	    walk_read(&p, p + lp->m_curg) || !p || walk_read(&p, p + lp->g_labels) || !p)
		return 0;
	if (lp->source == LABELS_GO_MAP) {
		/* labels is a *labelMap, which holds the map's *hmap */
		if (walk_read(&p, p) || !p)
			return 0;
		go_labels_map(set, p);
	} else if (lp->source == LABELS_GO_SLICE) {
		labels_array(set, p, false);
	}
	return set->n;
}

#ifdef EBPFPROF_STEPS_WALK
/* labels_read in the steps build (walk.bpf.h): a global function of scalars */
__noinline int labels_read_steps(__u32 pid, __u64 fsbase)
{
	__u32 zero = 0;

	return labels_read(bpf_map_lookup_elem(&label_scratch, &zero),
			   bpf_map_lookup_elem(&label_procs, &pid), fsbase);
}

/* otel_read (otel_ctx.bpf.h) in the steps build, likewise */
__noinline int otel_read_steps(__u32 pid, __u64 fsbase)
{
	__u32 zero = 0;

	return otel_read(bpf_map_lookup_elem(&label_scratch, &zero),
			 bpf_map_lookup_elem(&label_procs, &pid), fsbase, pid);
}
#endif

/*
 * The labels of the sampled thread of process image IMG, if userspace found
 * where it keeps them (its runtime_pids bit in BITS): their hash, the set
 * left in the scratch for count_sample to store; 0 without labels.
 */
static __always_inline __u64 labels_of(const struct proc_image *img, __u16 bits,
				       struct label_set **set)
{
	const struct label_proc *lp;
	__u32 zero = 0;

	if (!unwind_pid_bits__in(bits, UNWIND_RT_LABELS))
		return 0;
	lp = bpf_map_lookup_elem(&label_procs, &img->pid);
	if (!lp || lp->start != img->start || (lp->exec != img->exec && lp->exec != PROC_EXEC_ANY))
		return 0;
	*set = bpf_map_lookup_elem(&label_scratch, &zero);
	if (!*set)
		return 0;
	if (lp->source == LABELS_OTEL ?
	    !WALK_CALL(otel_read, (img->pid, walk_fsbase()), (*set, lp, walk_fsbase(), img->pid)) :
	    !WALK_CALL(labels_read, (img->pid, walk_fsbase()), (*set, lp, walk_fsbase())))
		return 0;
	return label_set_hash(*set);
}

#endif /* EBPFPROF_LABELS_BPF_H */
