/* fuzz_hashmap.c -- libFuzzer target: hmap inserts, finds and removes checked against a plain array */
#include <errno.h>
#include "fuzz.h"
#include "lib/hashmap.h"

#define MAX_ENTRIES 512

struct entry {
	__u64 hash;
	__u32 id;
};

static int id_eq(__u32 id, const void *key, const void *ctx)
{
	return id == *(const __u32 *)key;
}

/* Hashes crowd a few home slots and the end of the table, so probes chain and wrap. */
static __u64 take_hash(struct fuzz_in *in)
{
	uint8_t b = fin_u8(in);

	return b & 0x80 ? fin_uint(in, 8) : (__u64)(b & 0x0f) << 60 | (b >> 4 & 7) * 5 + 11;
}

static void check_all(struct hmap *h, const struct entry *e, size_t n)
{
	FUZZ_CHECK(hmap__count(h) == n);
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(hmap__find(h, e[i].hash, id_eq, &e[i].id, NULL) == e[i].id);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct entry e[MAX_ENTRIES];
	struct hmap *h = hmap__new();
	__u32 next_id = 1, id;
	size_t n = 0;

	FUZZ_CHECK(h);
	while (in.n) {
		uint8_t op = fin_u8(&in);
		__u64 hash;

		if (op < 0x90 && n < MAX_ENTRIES) {		/* insert */
			hash = take_hash(&in);
			FUZZ_CHECK(hmap__insert(h, hash, next_id) == 0);
			e[n++] = (struct entry){ hash, next_id++ };
		} else if (op < 0xf0 && n) {			/* remove one present */
			size_t i = fin_u8(&in) % n;

			FUZZ_CHECK(hmap__remove(h, e[i].hash, e[i].id) == 0);
			e[i] = e[--n];
		} else {					/* remove or find one absent */
			hash = take_hash(&in);
			id = next_id + fin_u8(&in);
			FUZZ_CHECK(hmap__remove(h, hash, id) == -ENOENT);
			FUZZ_CHECK(!hmap__find(h, hash, id_eq, &id, NULL));
		}
		check_all(h, e, n);
	}
	hmap__free(h);
	return 0;
}
