/* pidns.h -- whether ebpfprof runs in a child PID namespace (a sidecar), and which: BPF then keeps that namespace's tasks, by its pids */
#ifndef EBPFPROF_PIDNS_H
#define EBPFPROF_PIDNS_H

#include <linux/types.h>

/*
 * 1 and *dev, *ino of /proc/self/ns/pid when this process is not in the
 * initial PID namespace, 0 when it is, a negative errno when it cannot tell.
 */
int pidns__child(__u64 *dev, __u64 *ino);

#endif /* EBPFPROF_PIDNS_H */
