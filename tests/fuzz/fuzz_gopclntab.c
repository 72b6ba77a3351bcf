/* fuzz_gopclntab.c -- libFuzzer target: Go pclntab tables from memory, and whole ELF files through a memfd */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "symbolize/go/gopclntab_int.h"
#include "fuzz.h"

/*
 * Input: a mode byte, 8 bytes that pick the probes, then the payload.
 * Mode bit 0 clear: the payload is a bare table (gopclntab__from_table).
 * Set: an ELF file (gopclntab__open, with section search, segment scan,
 * relocations and inline trees), as a crafted binary on the host would be.
 */
#define TABLE_VADDR 0x500000ULL
#define PROBE_FUNCS 16

static volatile size_t sink;

static void check_frames(const struct gopclntab *t, __u64 vaddr, int max)
{
	struct src_line out[SRC_LINES_MAX];
	int n = gopclntab__lookup(t, vaddr, out, max);

	FUZZ_CHECK(n >= 0 && n <= max);
	for (int i = 0; i < n; i++) {
		FUZZ_CHECK(out[i].function);
		/* strlen walks to the NUL: ASan sees a string running off the table */
		sink += strlen(out[i].function);
		sink += out[i].file ? strlen(out[i].file) : 0;
	}
}

/* every SP-delta run is inside its function, in order, with a sane delta */
static int check_sp_run(void *ctx, __u64 start, __u64 end, __s32 delta, const char *func)
{
	__u64 *last = ctx;

	FUZZ_CHECK(start < end && delta >= 0 && delta <= GOPCLNTAB_SP_DELTA_MAX);
	*last = end;
	sink += func ? strlen(func) : 0;
	return 0;
}

/* entries, ends and a point inside functions the probe bytes pick, and the table's edges */
static void probe(const struct gopclntab *t, __u64 pick)
{
	size_t nfunc = gopclntab__func_count(t);
	struct func_info fi;

	FUZZ_CHECK(nfunc > 0);
	/* a copied table is held whole; a mapped one is page cache, not counted */
	FUZZ_CHECK(gopclntab__mem_size(t) > (t->map ? sizeof(*t) - 1 : t->size));
	sink += strlen(gopclntab__go_version(t));
	for (int i = 0; i < PROBE_FUNCS; i++) {
		__u32 idx = i < 2 ? (i ? nfunc - 1 : 0) : (__u32)((pick >> (4 * i)) * 2654435761u) % nfunc;

		/* an empty function (equal pcs) or one whose end wraps has no address to probe */
		if (pcln_func(t, idx, &fi) || fi.entry >= fi.end)
			continue;
		check_frames(t, fi.entry, SRC_LINES_MAX);
		check_frames(t, fi.end - 1, SRC_LINES_MAX);
		check_frames(t, fi.entry + (pick >> (3 * i)) % (fi.end - fi.entry), 1 + i % 4);
	}
	FUZZ_CHECK(gopclntab__for_each_sp(t, check_sp_run, &(__u64){ 0 }) == 0);
	check_frames(t, 0, SRC_LINES_MAX);
	check_frames(t, ~0ULL, SRC_LINES_MAX);
	check_frames(t, pick, SRC_LINES_MAX);
}

static int memfd = -1;

static struct gopclntab *open_file(const uint8_t *data, size_t size)
{
	if (memfd < 0)
		memfd = memfd_create("fuzz_gopclntab", MFD_CLOEXEC);
	FUZZ_CHECK(memfd >= 0);
	FUZZ_CHECK(ftruncate(memfd, 0) == 0);
	FUZZ_CHECK(pwrite(memfd, data, size, 0) == (ssize_t)size);
	return gopclntab__open(memfd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct gopclntab *t;
	bool file = fin_u8(&in) & 1;
	__u64 pick = fin_uint(&in, 8);

	errno = 0;
	t = file ? open_file(in.p, in.n) : gopclntab__from_table(in.p, in.n, TABLE_VADDR);
	if (!t) {
		/* refused with a reason, never an unexplained failure */
		FUZZ_CHECK(errno == EINVAL || errno == ENOENT || errno == EFBIG);
		return 0;
	}
	probe(t, pick);
	gopclntab__free(t);
	return 0;
}
