/* hashmap.h -- open-addressing index from a 64-bit hash to a caller's 32-bit entry id */
#ifndef EBPFPROF_HASHMAP_H
#define EBPFPROF_HASHMAP_H

#include <stddef.h>
#include <linux/types.h>

/*
 * The table stores (hash, id) pairs only; the entries themselves live in the
 * caller's arrays, and the caller's eq() callback tells whether entry id is
 * the key looked for. ids must be non-zero (0 means "not found"). Keeping the
 * table this thin keeps memory at 16 bytes a slot whatever the key type.
 */
struct hmap;

typedef int (*hmap_eq_fn)(__u32 id, const void *key, const void *ctx);

struct hmap *hmap__new(void);
void hmap__free(struct hmap *h);

/* The id of the entry with this hash for which eq(id, key, ctx) holds, or 0. */
__u32 hmap__find(const struct hmap *h, __u64 hash, hmap_eq_fn eq, const void *key,
		 const void *ctx);

/* Adds (hash, id); does not check for an existing equal entry. 0 or -ENOMEM. */
int hmap__insert(struct hmap *h, __u64 hash, __u32 id);

/* Removes the slot holding exactly (hash, id). 0 or -ENOENT. */
int hmap__remove(struct hmap *h, __u64 hash, __u32 id);

size_t hmap__count(const struct hmap *h);

/* Heap bytes the table holds (its slots never shrink). */
size_t hmap__bytes(const struct hmap *h);

/* 64-bit hash of bytes, chained through seed (pass 0 to start). */
__u64 hash_bytes(const void *data, size_t len, __u64 seed);

static inline __u64 hash_u64(__u64 v, __u64 seed)
{
	return hash_bytes(&v, sizeof(v), seed);
}

#endif /* EBPFPROF_HASHMAP_H */
