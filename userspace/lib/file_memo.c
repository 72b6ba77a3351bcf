/* file_memo.c -- a bounded memo of what one read of a file found, by the file's identity */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "file_memo.h"
#include "hashmap.h"

struct memo_key {
	__u64 dev;
	__u64 ino;
	__u64 size;
	__s64 mtime_sec;
	__s64 mtime_nsec;
	__u64 extra;
};

struct file_memo {
	struct hmap *index;	/* hash of the key -> keys[] index + 1 */
	struct memo_key *keys;
	char *values;		/* cap values of value_size bytes, in the keys' order */
	size_t n, cap, value_size;
	__u64 hits;
};

struct file_memo *file_memo__new(size_t cap, size_t value_size)
{
	struct file_memo *fm = calloc(1, sizeof(*fm));

	if (!fm)
		return NULL;
	fm->cap = cap ? cap : 1;
	fm->value_size = value_size;
	fm->index = hmap__new();
	fm->keys = malloc(fm->cap * sizeof(*fm->keys));
	fm->values = malloc(fm->cap * (value_size ? value_size : 1));
	if (!fm->index || !fm->keys || !fm->values) {
		file_memo__free(fm);
		errno = ENOMEM;
		return NULL;
	}
	return fm;
}

void file_memo__free(struct file_memo *fm)
{
	if (!fm)
		return;
	hmap__free(fm->index);
	free(fm->keys);
	free(fm->values);
	free(fm);
}

static struct memo_key key_of(const struct stat *st, __u64 extra)
{
	return (struct memo_key){ .dev = st->st_dev, .ino = st->st_ino, .size = (__u64)st->st_size,
				  .mtime_sec = st->st_mtim.tv_sec, .mtime_nsec = st->st_mtim.tv_nsec,
				  .extra = extra };
}

static __u64 key_hash(const struct memo_key *k)
{
	return hash_bytes(k, sizeof(*k), 0);
}

static int key_eq(__u32 id, const void *key, const void *ctx)
{
	const struct file_memo *fm = ctx;

	return !memcmp(&fm->keys[id - 1], key, sizeof(struct memo_key));
}

static __u32 find(const struct file_memo *fm, const struct memo_key *k)
{
	return hmap__find(fm->index, key_hash(k), key_eq, k, fm);
}

const void *file_memo__get(struct file_memo *fm, const struct stat *st, __u64 extra)
{
	struct memo_key k = key_of(st, extra);
	__u32 id = find(fm, &k);

	if (!id)
		return NULL;
	fm->hits++;
	return fm->values + (id - 1) * fm->value_size;
}

int file_memo__put(struct file_memo *fm, const struct stat *st, __u64 extra, const void *value)
{
	struct memo_key k = key_of(st, extra);
	__u32 id = find(fm, &k);
	struct hmap *fresh;

	if (!id) {
		if (fm->n == fm->cap) {
			fresh = hmap__new();
			if (!fresh)
				return -ENOMEM;
			hmap__free(fm->index);
			fm->index = fresh;
			fm->n = 0;
		}
		if (hmap__insert(fm->index, key_hash(&k), fm->n + 1))
			return -ENOMEM;
		fm->keys[fm->n++] = k;
		id = fm->n;
	}
	memcpy(fm->values + (id - 1) * fm->value_size, value, fm->value_size);
	return 0;
}

size_t file_memo__count(const struct file_memo *fm)
{
	return fm->n;
}

__u64 file_memo__hits(const struct file_memo *fm)
{
	return fm->hits;
}
