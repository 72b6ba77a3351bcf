/* pidns.c -- whether ebpfprof runs in a child PID namespace: /proc/self/ns/pid against the initial namespace's fixed inode */
#include <errno.h>
#include <sys/stat.h>
#include "pidns.h"

/* PROC_PID_INIT_INO (include/linux/proc_ns.h): the initial PID namespace's inode, on every kernel */
#define PID_INIT_INO 0xEFFFFFFCu

int pidns__child(__u64 *dev, __u64 *ino)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st))
		return -errno;
	if (st.st_ino == PID_INIT_INO)
		return 0;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 1;
}
