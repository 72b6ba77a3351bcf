/* otel_ctx.bpf.h -- reads a thread's OpenTelemetry thread-context record (OTEP 4947) into its label set */
#ifndef EBPFPROF_OTEL_CTX_BPF_H
#define EBPFPROF_OTEL_CTX_BPF_H

#include "labels.h"
#include "walk.bpf.h"

#define OTEL_ATTRS_MASK (2 * OTEL_ATTRS_READ - 1)	/* masks an offset into the buffer below */

/* (pid, key index) -> the key's name, from the process's context (runtimes/labels/otel_ctx.c) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct otel_key_id);
	__type(value, struct otel_key);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} otel_keys SEC(".maps");

/*
 * A record's header and attribute bytes on this CPU while they are parsed:
 * off the stack, which the sampler's frames nearly fill. The buffer is
 * twice the bytes read, plus a value's cap, so any masked offset and a
 * value copied from it stay inside.
 */
struct otel_scratch {
	struct otel_record rec;
	__u16 seen[LABELS_MAX];	/* the key index of each label; 0xffff: an id label */
	__u8 attrs[2 * OTEL_ATTRS_READ + LABEL_VALUE_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct otel_scratch);
	__uint(max_entries, 1);
} otel_scratch SEC(".maps");

/* N bytes at SRC as 2N lower-case hex digits at DST: W3C's text of a trace or span id. */
static __always_inline void otel_hex(char *dst, const __u8 *src, __u32 n)
{
	for (__u32 i = 0; i < n; i++) {
		__u8 hi = src[i] >> 4, lo = src[i] & 15;

		dst[2 * i] = hi < 10 ? '0' + hi : 'a' + hi - 10;
		dst[2 * i + 1] = lo < 10 ? '0' + lo : 'a' + lo - 10;
	}
}

/* The label KEY (KEY_SIZE bytes, NUL included) valued by N id bytes at SRC, as the next of SET. */
static __always_inline void otel_id_label(struct label_set *set, struct otel_scratch *sc,
					  const char *key, __u32 key_size, const __u8 *src, __u32 n)
{
	struct label_kv *kv = &set->kv[set->n & (LABELS_MAX - 1)];

	__builtin_memset(kv, 0, sizeof(*kv));
	__builtin_memcpy(kv->key, key, key_size);
	otel_hex(kv->value, src, n);
	sc->seen[set->n & (LABELS_MAX - 1)] = 0xffff;
	set->n++;
}

/*
 * The label slot of key index K: the one it had (the last occurrence of a
 * key wins), else a new one; -1 when the set is full.
 */
static __always_inline int otel_slot(struct label_set *set, struct otel_scratch *sc, __u8 k)
{
	for (__u32 j = 0; j < LABELS_MAX; j++)
		if (j < set->n && sc->seen[j] == k)
			return j;
	if (set->n >= LABELS_MAX)
		return -1;
	sc->seen[set->n & (LABELS_MAX - 1)] = k;
	return set->n++;
}

/*
 * The attribute entries of N bytes in SC: each {key index, length, value}
 * named by PID's key map; one whose index has no name is left out (counted
 * by the caller through the set's flags). Parsing stops where an entry
 * would not fit, as the spec says; past OTEL_ATTRS_ENTRIES the set is cut.
 */
static __always_inline void otel_attrs(struct label_set *set, struct otel_scratch *sc, __u32 n,
				       __u32 pid)
{
	struct otel_key_id id = { .pid = pid };	/* a map key: on the stack, as 6.1 wants */
	const struct otel_key *key;
	struct label_kv *kv;
	__u32 off = 0, i, len, vo;
	int j;

	for (i = 0; i < OTEL_ATTRS_ENTRIES; i++) {
		if (off + 2 > n)
			break;
		id.index = sc->attrs[off & OTEL_ATTRS_MASK];
		len = sc->attrs[(off + 1) & OTEL_ATTRS_MASK];
		if (off + 2 + len > n)
			break;
		vo = off + 2;
		off = vo + len;
		key = bpf_map_lookup_elem(&otel_keys, &id);
		if (!key || !key->name[0]) {
			set->flags |= LABEL_SET_UNKNOWN_KEY;
			continue;
		}
		j = otel_slot(set, sc, id.index);
		if (j < 0) {
			set->flags |= LABEL_SET_TRUNCATED;
			continue;
		}
		kv = &set->kv[j & (LABELS_MAX - 1)];
		__builtin_memset(kv, 0, sizeof(*kv));
		__builtin_memcpy(kv->key, key->name, sizeof(kv->key));
		set->flags |= key->flags;
		if (len > LABEL_VALUE_MAX - 1) {
			len = LABEL_VALUE_MAX - 1;
			set->flags |= LABEL_SET_TRUNCATED;
		}
		bpf_probe_read_kernel(kv->value, len & (LABEL_VALUE_MAX - 1),
				      &sc->attrs[vo & OTEL_ATTRS_MASK]);
	}
	if (i == OTEL_ATTRS_ENTRIES && off + 2 <= n)
		set->flags |= LABEL_SET_TRUNCATED;
}

/*
 * Reads the thread-context record of the thread at FSBASE into SET: the
 * pointer at fsbase + tls (NULL: no context), its 28-byte header (valid
 * must be 1), then up to OTEL_ATTRS_READ attribute bytes in one read.
 * trace_id and span_id are labels in hex unless both are zero. Returns how
 * many labels. A global function, verified once on its own, beside
 * labels_read rather than under it: their frames do not add up.
 */
WALK_FN int otel_read(struct label_set *set, const struct label_proc *lp, __u64 fsbase, __u32 pid)
{
	struct otel_scratch *sc;
	__u32 zero = 0, n;
	__u64 rec;

	if (!set || !lp)
		return 0;
	set->n = 0;
	set->flags = 0;
	sc = bpf_map_lookup_elem(&otel_scratch, &zero);
	if (!sc || walk_read(&rec, fsbase + lp->tls) || !rec ||
	    bpf_probe_read_user(&sc->rec, sizeof(sc->rec), (const void *)rec) || sc->rec.valid != 1)
		return 0;
	if (*(__u64 *)&sc->rec.trace_id[0] | *(__u64 *)&sc->rec.trace_id[8] |
	    *(__u64 *)&sc->rec.span_id[0]) {
		otel_id_label(set, sc, "trace_id", sizeof("trace_id"), sc->rec.trace_id, 16);
		otel_id_label(set, sc, "span_id", sizeof("span_id"), sc->rec.span_id, 8);
	}
	n = sc->rec.attrs_size;
	if (n > OTEL_ATTRS_READ) {
		n = OTEL_ATTRS_READ;
		set->flags |= LABEL_SET_TRUNCATED;
	}
	if (n && !bpf_probe_read_user(sc->attrs, n & OTEL_ATTRS_MASK,
				      (const void *)(rec + sizeof(struct otel_record))))
		otel_attrs(set, sc, n, pid);
	return set->n;
}

#endif /* EBPFPROF_OTEL_CTX_BPF_H */
