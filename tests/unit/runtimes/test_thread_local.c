/* test_thread_local.c -- unit tests for thread_local: a thread-local found from its file as the loader placed it in this process */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "runtimes/thread_local.h"
#include "symbolize/proc_maps.h"
#include "test.h"

/* this test's own thread-locals, in its executable's block */
__thread long static_tls_probe[2] = { 1, 2 };
__thread char static_tls_pad[40] = { 3 };

static __u64 thread_pointer(void)
{
	__u64 tp;

#if defined(__aarch64__)
	__asm__("mrs %0, tpidr_el0" : "=r"(tp));
#else
	__asm__("mov %%fs:0, %0" : "=r"(tp));	/* the TCB's first word points to itself */
#endif
	return tp;
}

/* the offset read from our own file, in its block (.symtab too), is where the compiler put the variable */
static int test_own_symbol(void)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	struct thread_local t, pad, none, dyn;

	CHECK(fd >= 0);
	CHECK(!thread_local__elf(fd, 0, false, "static_tls_probe", THREAD_LOCAL_SYMTAB | THREAD_LOCAL_BY_INTERP, &t));
	CHECK(!thread_local__elf(fd, 0, true, "static_tls_pad", THREAD_LOCAL_SYMTAB, &pad));
	CHECK(!thread_local__elf(fd, 0, true, "no_such_thread_local", THREAD_LOCAL_SYMTAB, &none));
	/* not exported: .dynsym alone does not have it */
	CHECK(!thread_local__elf(fd, 0, true, "static_tls_pad", 0, &dyn));
	close(fd);
	CHECK(t.exe && t.kind == THREAD_LOCAL_STATIC && pad.kind == THREAD_LOCAL_STATIC);
	CHECK(none.kind == THREAD_LOCAL_NONE && dyn.kind == THREAD_LOCAL_NONE);
	CHECK(thread_pointer() + (__u64)t.value == (__u64)(unsigned long)static_tls_probe);
	CHECK(thread_pointer() + (__u64)pad.value == (__u64)(unsigned long)static_tls_pad);
	return TEST_OK;
}

/*
 * libc's errno, in a library's static TLS: the GOT slot libc's own code
 * reads it through, filled by this process's loader, gives the address
 * errno has in this thread. libc has an interpreter (it runs), so it is
 * read as the library it is mapped as.
 */
static int test_library_slot(void)
{
	struct proc_map *maps = NULL;
	Dl_info info;
	size_t n = 0, i;
	__s64 off = 0;
	int err = -ENOENT;

	CHECK(dladdr((void *)abort, &info) && info.dli_fname && strstr(info.dli_fname, "libc"));
	CHECK(!proc_maps__read(NULL, (__u32)getpid(), &maps, &n));
	for (i = 0; i < n; i++)
		if (!maps[i].pgoff && strstr(maps[i].path, "/libc.so")) {
			err = thread_local__offset("/proc", (__u32)getpid(), &maps[i], false, "errno", 0, &off);
			break;
		}
	proc_maps__free(maps);
	if (i >= n || err)
		printf("  libc mapping %s, err %d\n", i < n ? "found" : "not found", err);
	CHECK(i < n && err == 0);
	CHECK(thread_pointer() + (__u64)off == (__u64)(unsigned long)&errno);
	return TEST_OK;
}

TEST_MAIN("thread_local", { "own_symbol", test_own_symbol }, { "library_slot", test_library_slot });
