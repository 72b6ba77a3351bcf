/* fuzz_goheap.c -- libFuzzer target: a Go heap bucket list, build info and code, all as another process holds them */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "collect/goheap/goheap_int.h"

#define BASE 0x10000ull

struct mem {
	const uint8_t *p;
	size_t n;
};

/* the input is the target's memory at BASE; anything else faults, as process_vm_readv would */
static int read_mem(void *ctx, __u64 addr, void *buf, size_t len)
{
	const struct mem *m = ctx;

	if (addr < BASE || addr - BASE > m->n || len > m->n - (addr - BASE))
		return -EFAULT;
	memcpy(buf, m->p + (addr - BASE), len);
	return 0;
}

/* a list another process writes: bounded, every record's PCs inside the snapshot */
static void walk(struct fuzz_in *in)
{
	struct goheap_snapshot s = {};
	struct goheap_walk_stats ws = {};
	size_t max = 1 + fin_u8(in) % 64;
	__u64 head = BASE + fin_uint(in, 2);
	uint8_t *copy = malloc(in->n ? in->n : 1);
	struct mem m = { copy, in->n };

	if (!copy)
		abort();
	memcpy(copy, in->p, in->n);
	if (!goheap_walk(head, read_mem, &m, max, &s, &ws)) {
		FUZZ_CHECK(s.n <= max && ws.buckets == s.n);
		for (size_t i = 0; i < s.n; i++) {
			FUZZ_CHECK(s.recs[i].n_pcs <= GOHEAP_MAX_DEPTH);
			FUZZ_CHECK(s.recs[i].pc_off + s.recs[i].n_pcs <= s.n_pcs);
		}
	}
	free(s.recs);
	free(s.pcs);
	free(copy);
}

static void buildinfo(struct fuzz_in *in)
{
	char ver[32];
	uint8_t *copy = malloc(in->n ? in->n : 1);

	if (!copy)
		abort();
	memcpy(copy, in->p, in->n);
	if (!goheap_buildinfo_version(copy, in->n, ver, sizeof(ver))) {
		FUZZ_CHECK(strlen(ver) < sizeof(ver) && !strncmp(ver, "go1.", 4));
		goheap_version_known(ver);
	}
	free(copy);
}

static void code(struct fuzz_in *in)
{
	__u64 out[8];
	uint8_t *copy = malloc(in->n ? in->n : 1);
	int n;

	if (!copy)
		abort();
	memcpy(copy, in->p, in->n);
	n = goheap_rip_loads(copy, in->n, 0x400000, out, 8);
	FUZZ_CHECK(n >= 0 && n <= 8);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };

	switch (fin_u8(&in) % 3) {
	case 0: walk(&in); break;
	case 1: buildinfo(&in); break;
	default: code(&in);
	}
	return 0;
}
