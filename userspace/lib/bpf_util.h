/* bpf_util.h -- map and program chores the CPU sampler and the off-CPU tracer share */
#ifndef EBPFPROF_BPF_UTIL_H
#define EBPFPROF_BPF_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/*
 * Deletes every entry of the map. Hash maps go a batch syscall per 64 KiB of
 * entries (BPF_MAP_LOOKUP_AND_DELETE_BATCH, 5.6+); other maps, or kernels
 * without batches, one key at a time, read one ahead so deletion cannot end
 * the walk.
 */
int bpf_util__clear_map(int fd);

/* Called with each entry; a non-zero return stops the walk and is returned. */
typedef int (*bpf_util_fn)(const void *key, const void *value, void *ctx);

/* Calls fn for every entry, in batches where the map and kernel allow (as above). */
int bpf_util__for_each(int fd, bpf_util_fn fn, void *ctx);

/*
 * Returns after an RCU grace period: updating an element of a map-in-map
 * makes bpf() wait for one (maybe_wait_bpf_programs), and perf_event and
 * tracing programs run inside RCU read-side sections, so every run that
 * began before has ended.
 */
int bpf_util__grace_period(int outer_fd, int inner_fd);

/*
 * Sets bit (bit mod the value's size in bits) of the value at key 0 of an
 * array map: a read, then a write of the whole value unless the bit was set
 * already; nothing at all when the last read or write said it is set. No
 * one may clear a bit.
 */
int bpf_util__set_bit(int fd, __u32 bit);

/* Whether that bit is set: 1 or 0 (by the shadow set_bit keeps, else a read), or a negative errno. */
int bpf_util__test_bit(int fd, __u32 bit);

/*
 * From here to bpf_util__unmap_bits(fd) (before fd is closed), set_bit and
 * test_bit of FD's mmapable array (BPF_F_MMAPABLE) work on its memory, with
 * no system call. 0 or a negative errno (-EINVAL: not such a map).
 */
int bpf_util__map_bits(int fd);
void bpf_util__unmap_bits(int fd);

/*
 * pthread_self() minus the thread pointer, as this process's glibc lays a
 * thread out: 0 on x86-64 (fs base is the struct pthread), negative on
 * AArch64 (TLS variant I: struct pthread ends where tpidr_el0 points). The
 * walk reads each thread's thread pointer; runtimes that name threads by
 * pthread_self() (CPython's thread_id) need this offset beside it.
 */
__s64 bpf_util__pthread_self_off(void);

/* Sums each of n_keys per-CPU u64 counters over n_cpus CPUs into out[]. */
int bpf_util__sum_percpu(int fd, __u32 n_keys, int n_cpus, __u64 *out);

/* run_time_ns and run_cnt of a program (counted while kernel.bpf_stats_enabled is 1). */
int bpf_util__prog_runtime(int prog_fd, __u64 *run_ns, __u64 *run_cnt);

/* Counts the map's keys, up to limit, one get-next-key syscall each (keys of 64 bytes at most). */
int bpf_util__count_keys(int fd, __u32 limit, __u32 *out);

/*
 * Whether perf_event programs may use hash maps allocated as used
 * (BPF_F_NO_PREALLOC): 6.1+, where the kernel's BPF allocator made run-time
 * allocation safe wherever a program runs. Before, the verifier refuses
 * them in perf_event programs (check_map_prog_compatibility: the NMI may
 * strike inside the allocator) and only warns in tracepoint programs, for
 * the same unsafety. Probed once by loading a program that names such a map.
 */
bool bpf_util__perf_event_no_prealloc(void);

/*
 * Readies the kernel's BPF allocator behind a hash map allocated as used, on
 * each of the CPUs, before programs run there. Its per-CPU cache of free
 * elements starts with one (for elements over 256 bytes) and is refilled
 * from irq_work, after the program returns: a program run that inserts
 * twice into a fresh map finds it empty the second time (-ENOMEM). An
 * insert and delete of the all-zero key (which the programs must never use)
 * from each CPU gets the refill done there first. Moves the calling thread
 * through the CPUs and back.
 */
int bpf_util__warm_map(int fd, const int *cpus, int n_cpus);

#endif /* EBPFPROF_BPF_UTIL_H */
