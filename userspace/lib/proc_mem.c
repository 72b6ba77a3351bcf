/* proc_mem.c -- bounded reads of another process's memory */
#include <errno.h>
#include <stdlib.h>
#include <sys/uio.h>
#include "proc_mem.h"

ssize_t proc_mem__read_some(__u32 pid, __u64 addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(unsigned long)addr, len };
	ssize_t n;

	if (!len)
		return 0;
	n = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
	return n < 0 ? -errno : n;
}

int proc_mem__read(__u32 pid, __u64 addr, void *buf, size_t len)
{
	ssize_t n = proc_mem__read_some(pid, addr, buf, len);

	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EFAULT;
}

void *proc_mem__copy(__u32 pid, __u64 addr, size_t len, size_t max)
{
	void *buf;

	if (!len || len > max || !(buf = malloc(len)))
		return NULL;
	if (!proc_mem__read(pid, addr, buf, len))
		return buf;
	free(buf);
	return NULL;
}
