/* file_set.c -- a bounded set of files by device and inode */
#include <errno.h>
#include <stdlib.h>
#include "file_set.h"
#include "hashmap.h"

struct file_key {
	__u64 dev;
	__u64 ino;
};

struct file_set {
	struct hmap *index;	/* hash of the key -> keys[] index + 1 */
	struct file_key *keys;
	size_t n, cap;
	__u64 flushes;
};

struct file_set *file_set__new(size_t cap)
{
	struct file_set *fs = calloc(1, sizeof(*fs));

	if (!fs)
		return NULL;
	fs->cap = cap ? cap : 1;
	fs->index = hmap__new();
	fs->keys = malloc(fs->cap * sizeof(*fs->keys));
	if (!fs->index || !fs->keys) {
		file_set__free(fs);
		errno = ENOMEM;
		return NULL;
	}
	return fs;
}

void file_set__free(struct file_set *fs)
{
	if (!fs)
		return;
	hmap__free(fs->index);
	free(fs->keys);
	free(fs);
}

static __u64 key_hash(const struct file_key *k)
{
	return hash_u64(k->ino, k->dev);
}

static int key_eq(__u32 id, const void *key, const void *ctx)
{
	const struct file_set *fs = ctx;
	const struct file_key *k = key;

	return fs->keys[id - 1].dev == k->dev && fs->keys[id - 1].ino == k->ino;
}

bool file_set__has(const struct file_set *fs, __u64 dev, __u64 ino)
{
	struct file_key k = { dev, ino };

	return hmap__find(fs->index, key_hash(&k), key_eq, &k, fs) != 0;
}

int file_set__add(struct file_set *fs, __u64 dev, __u64 ino)
{
	struct file_key k = { dev, ino };
	struct hmap *fresh;

	if (file_set__has(fs, dev, ino))
		return 0;
	if (fs->n == fs->cap) {
		fresh = hmap__new();
		if (!fresh)
			return -ENOMEM;
		hmap__free(fs->index);
		fs->index = fresh;
		fs->n = 0;
		fs->flushes++;
	}
	if (hmap__insert(fs->index, key_hash(&k), fs->n + 1))
		return -ENOMEM;
	fs->keys[fs->n++] = k;
	return 0;
}

size_t file_set__count(const struct file_set *fs)
{
	return fs->n;
}

__u64 file_set__flushes(const struct file_set *fs)
{
	return fs->flushes;
}
