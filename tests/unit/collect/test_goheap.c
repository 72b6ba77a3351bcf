/* test_goheap.c -- unit tests for the Go heap record reader: bucket lists laid out as the runtime lays them, read through process_vm_readv, and the real fixtures' variables */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "collect/goheap/goheap_find.h"
#include "lib/proc_mem.h"
#include "profile/heap_report.h"
#include "test.h"

#define NB 4

/* buckets as mprof.go's newBucket lays them: header, nstk PCs, memRecord */
static __u64 *bucket(size_t nstk, __u64 alloc, __u64 freed, __u64 size)
{
	__u64 *b = calloc(GO_BUCKET_WORDS + nstk + GO_MEMREC_CYCLES * 4, 8), *mr;

	b[BK_TYP] = GO_BUCKET_MEM;
	b[BK_SIZE] = size;
	b[BK_NSTK] = nstk;
	for (size_t i = 0; i < nstk; i++)
		b[GO_BUCKET_WORDS + i] = 0x401000 + i;
	mr = b + GO_BUCKET_WORDS + nstk;
	mr[0] = alloc;
	mr[1] = freed;
	mr[2] = alloc * size;
	mr[3] = freed * size;
	return b;
}

/* our own memory, through the same process_vm_readv the reader uses on a target */
static int read_self(void *ctx, __u64 addr, void *buf, size_t len)
{
	return proc_mem__read(getpid(), addr, buf, len);
}

static void link_all(__u64 **b, int n)
{
	for (int i = 0; i + 1 < n; i++)
		b[i][BK_ALLNEXT] = (__u64)(uintptr_t)b[i + 1];
}

static int walk(__u64 **b, size_t max, struct goheap_snapshot *s, struct goheap_walk_stats *ws)
{
	memset(ws, 0, sizeof(*ws));
	goheap_snapshot__reset(s);
	return goheap_walk((__u64)(uintptr_t)b[0], read_self, NULL, max, s, ws);
}

static int test_list_cycle_cap_bad(void)
{
	__u64 *b[NB] = { bucket(3, 10, 4, 64), bucket(1, 5, 5, 32), bucket(200, 1, 0, 8), bucket(2, 7, 0, 16) };
	struct goheap_snapshot s = {};
	struct goheap_walk_stats ws;

	link_all(b, NB);
	CHECK(!walk(b, 100, &s, &ws) && s.n == NB && ws.buckets == NB);
	CHECK(s.recs[0].allocs == 10 && s.recs[0].frees == 4 && s.recs[0].alloc_bytes == 640);
	CHECK(s.recs[0].n_pcs == 3 && s.pcs[s.recs[0].pc_off + 2] == 0x401002);
	CHECK(s.recs[2].n_pcs == GOHEAP_MAX_DEPTH && ws.depth_cap == 1);	/* cut, counted */
	/* the last bucket points back at the second: read once each, the loop counted */
	b[3][BK_ALLNEXT] = (__u64)(uintptr_t)b[1];
	CHECK(!walk(b, 100, &s, &ws) && s.n == NB && ws.cycles == 1);
	/* the cap stops a list that goes on, and says so */
	CHECK(!walk(b, 2, &s, &ws) && s.n == 2 && ws.bucket_cap == 1);
	/* a block-profile bucket where a memory one should be ends the walk, keeping what came before */
	b[2][BK_TYP] = 2;
	CHECK(!walk(b, 100, &s, &ws) && s.n == 2 && ws.bad == 1);
	/* a pointer into nothing: the same */
	b[1][BK_ALLNEXT] = 8;
	CHECK(!walk(b, 100, &s, &ws) && s.n == 2 && ws.bad == 1);
	goheap_snapshot__fini(&s);
	for (int i = 0; i < NB; i++)
		free(b[i]);
	return TEST_OK;
}

/* before the first GC every active cycle is zero: runtime.MemProfile sums the future cycles */
static int test_futures_before_gc(void)
{
	__u64 *b[2] = { bucket(1, 0, 0, 64), bucket(1, 0, 0, 64) }, *mr = b[1] + GO_BUCKET_WORDS + 1;
	struct goheap_snapshot s = {};
	struct goheap_walk_stats ws;

	link_all(b, 2);
	mr[4] = 3, mr[6] = 192;		/* future[0] */
	mr[8] = 2, mr[9] = 1, mr[10] = 128, mr[11] = 64;	/* future[1] */
	CHECK(!walk(b, 10, &s, &ws) && s.n == 2);
	CHECK(s.recs[1].allocs == 5 && s.recs[1].frees == 1 && s.recs[1].alloc_bytes == 320 &&
	      s.recs[1].free_bytes == 64);
	/* once one bucket has an active count, the futures are not the profile's yet */
	b[0][GO_BUCKET_WORDS + 1] = 1;
	CHECK(!walk(b, 10, &s, &ws) && s.recs[1].allocs == 0);
	goheap_snapshot__fini(&s);
	free(b[0]);
	free(b[1]);
	return TEST_OK;
}

/* runtime/pprof's scaleHeapSample, by its formula: count / (1 - e^(-avg/rate)) */
static int test_scale(void)
{
	__s64 c, v;
	double k = 1 / (1 - exp(-1.0));

	heap_report__scale(10, 81920, 8192, &c, &v);
	CHECK(c == (__s64)(10 * k) && v == (__s64)(81920 * k));
	heap_report__scale(10, 81920, 1, &c, &v);
	CHECK(c == 10 && v == 81920);		/* every allocation recorded */
	heap_report__scale(0, 81920, 8192, &c, &v);
	CHECK(c == 0 && v == 0);
	return TEST_OK;
}

static int test_versions(void)
{
	__u8 bi[41] = "\xff Go buildinf:\x08\x02";	/* magic, pointer size, flags: inline strings */
	char ver[32];

	memcpy(bi + 32, "\x08go1.19.8", 9);	/* at 32: a uvarint length, the version */
	CHECK(!goheap_buildinfo_version(bi, sizeof(bi), ver, sizeof(ver)) && !strcmp(ver, "go1.19.8"));
	CHECK(goheap_buildinfo_version(bi, 40, ver, sizeof(ver)) == -ENOENT);	/* cut short */
	CHECK(goheap_version_known("go1.18") && goheap_version_known("go1.24.4"));
	CHECK(!goheap_version_known("go1.17.13") && !goheap_version_known("go1.25.0") &&
	      !goheap_version_known("devel"));
	return TEST_OK;
}

/* the stripped fixtures: version read, both variables found from the code of runtime functions */
static int fixture(const char *name)
{
	struct goheap_layout l;
	char path[256];
	int fd, err;

	snprintf(path, sizeof(path), FIXTURES_DIR "%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -ENOENT;
	err = goheap_layout__find(fd, &l);
	close(fd);
	printf("  %s: %s, mbuckets %#llx, MemProfileRate %#llx\n", name, l.version,
	       (unsigned long long)l.mbuckets, (unsigned long long)l.rate);
	if (err || !l.mbuckets_from_code || !l.rate || !goheap_layout__writable(&l, l.mbuckets) ||
	    !goheap_layout__writable(&l, l.rate))
		return -EINVAL;
	return 0;
}

static int test_stripped_fixtures(void)
{
	int a = fixture("goheap-go1.19"), b = fixture("goheap-go1.24");

	if (a == -ENOENT)
		SKIP("no fixture goheap-go1.19 (make fixtures)");
	CHECK(!a);
	CHECK(!b || b == -ENOENT);	/* 1.24: built only where the Debian 13 root is */
	return TEST_OK;
}

TEST_MAIN("goheap", { "list_cycle_cap_bad", test_list_cycle_cap_bad },
	  { "futures_before_gc", test_futures_before_gc }, { "scale", test_scale },
	  { "versions", test_versions }, { "stripped_fixtures", test_stripped_fixtures })
