/* test_preload.c -- unit tests for the start-up preload order: busiest first, kernel threads and odd names, a real /proc */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "collect/preload.h"
#include "test.h"

/* a fake /proc/PID/stat: name, flags, utime, stime */
static void put(const char *root, int pid, const char *name, unsigned long flags, unsigned long ut,
		unsigned long st)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/stat", root, pid);
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "%d (%s) S 1 1 1 0 -1 %lu 10 0 0 0 %lu %lu 0 0 20 0 1 0 100 0 0\n", pid, name,
		flags, ut, st);
	fclose(f);
}

static int test_order(void)
{
	char root[] = "/tmp/ebpfprof-preload-XXXXXX", cmd[300];
	__u32 *pids = NULL;
	int n;

	CHECK(mkdtemp(root));
	put(root, 10, "idle", 0x400000, 1, 0);
	put(root, 20, "busy) S 1 1 1 0 -1 0 0 0 0 0 99999 (x", 0x400000, 500, 250);	/* a name with ") " */
	put(root, 30, "kworker/0:1", 0x00200040, 90000, 90000);			/* a kernel thread */
	put(root, 40, "mid", 0x400000, 100, 20);
	mkdir(strcat(strcpy(cmd, root), "/self"), 0755);			/* not a pid */
	n = preload__busiest(root, 10, &pids);
	CHECK(n == 3 && pids[0] == 20 && pids[1] == 40 && pids[2] == 10);
	free(pids);
	n = preload__busiest(root, 2, &pids);
	CHECK(n == 2 && pids[0] == 20 && pids[1] == 40);
	free(pids);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK(system(cmd) == 0);
	CHECK(preload__busiest("/nonexistent-proc", 10, &pids) < 0);
	return TEST_OK;
}

/* the real /proc: this process is there, and pid 2 (kthreadd) is not */
static int test_real_proc(void)
{
	__u32 *pids = NULL;
	int n = preload__busiest("/proc", 100000, &pids), self = 0, kthreadd = 0;

	CHECK(n > 0);
	for (int i = 0; i < n; i++) {
		self |= pids[i] == (__u32)getpid();
		kthreadd |= pids[i] == 2;
	}
	free(pids);
	CHECK(self && !kthreadd);
	return TEST_OK;
}

TEST_MAIN("preload", { "order", test_order }, { "real_proc", test_real_proc })
