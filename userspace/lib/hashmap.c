/* hashmap.c -- open-addressing (linear probing) index from a 64-bit hash to an entry id */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hashmap.h"

struct slot {
	__u64 hash;
	__u32 id;	/* 0: empty */
};

struct hmap {
	struct slot *slots;
	size_t cap;	/* power of two */
	size_t count;
};

#define HMAP_MIN_CAP 16

struct hmap *hmap__new(void)
{
	struct hmap *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->slots = calloc(HMAP_MIN_CAP, sizeof(*h->slots));
	if (!h->slots) {
		free(h);
		errno = ENOMEM;
		return NULL;
	}
	h->cap = HMAP_MIN_CAP;
	return h;
}

void hmap__free(struct hmap *h)
{
	if (!h)
		return;
	free(h->slots);
	free(h);
}

__u32 hmap__find(const struct hmap *h, __u64 hash, hmap_eq_fn eq, const void *key,
		 const void *ctx)
{
	size_t mask = h->cap - 1;

	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		const struct slot *s = &h->slots[i];

		if (!s->id)
			return 0;
		if (s->hash == hash && eq(s->id, key, ctx))
			return s->id;
	}
}

static void place(struct slot *slots, size_t cap, __u64 hash, __u32 id)
{
	size_t i = hash & (cap - 1);

	while (slots[i].id)
		i = (i + 1) & (cap - 1);
	slots[i].hash = hash;
	slots[i].id = id;
}

static int grow(struct hmap *h)
{
	size_t cap = h->cap * 2;
	struct slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < h->cap; i++)
		if (h->slots[i].id)
			place(slots, cap, h->slots[i].hash, h->slots[i].id);
	free(h->slots);
	h->slots = slots;
	h->cap = cap;
	return 0;
}

int hmap__insert(struct hmap *h, __u64 hash, __u32 id)
{
	/* keep the load factor under 3/4 so probe chains stay short */
	if ((h->count + 1) * 4 > h->cap * 3) {
		int err = grow(h);

		if (err)
			return err;
	}
	place(h->slots, h->cap, hash, id);
	h->count++;
	return 0;
}

int hmap__remove(struct hmap *h, __u64 hash, __u32 id)
{
	size_t mask = h->cap - 1, i = hash & mask;

	while (h->slots[i].id && !(h->slots[i].hash == hash && h->slots[i].id == id))
		i = (i + 1) & mask;
	if (!h->slots[i].id)
		return -ENOENT;
	/* backward-shift deletion: no tombstones, so lookups never slow down */
	for (size_t j = (i + 1) & mask; h->slots[j].id; j = (j + 1) & mask) {
		size_t home = h->slots[j].hash & mask;

		/* move j into the hole at i unless its home lies cyclically in (i, j] */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			h->slots[i] = h->slots[j];
			i = j;
		}
	}
	h->slots[i].id = 0;
	h->count--;
	return 0;
}

size_t hmap__count(const struct hmap *h)
{
	return h->count;
}

size_t hmap__bytes(const struct hmap *h)
{
	return sizeof(*h) + h->cap * sizeof(*h->slots);
}

/* FNV-1a over the bytes, then a murmur3 finalizer so low bits mix well for masking. */
__u64 hash_bytes(const void *data, size_t len, __u64 seed)
{
	const unsigned char *p = data;
	__u64 x = 0xcbf29ce484222325ULL ^ seed;

	for (size_t i = 0; i < len; i++) {
		x ^= p[i];
		x *= 0x100000001b3ULL;
	}
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}
