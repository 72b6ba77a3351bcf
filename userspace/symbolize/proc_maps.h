/* proc_maps.h -- parses /proc/PID/maps text into address ranges, offsets and file identities */
#ifndef EBPFPROF_PROC_MAPS_H
#define EBPFPROF_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Lines longer than this are rejected (a maps path is at most PATH_MAX). */
#define PROC_MAPS_LINE_MAX 8192
/* proc_maps__read() reads at most this much of a maps file. */
#define PROC_MAPS_READ_CAP (16u << 20)

struct proc_map {
	__u64 start;		/* [start, end) */
	__u64 end;
	__u64 pgoff;		/* file offset mapped at start */
	__u64 inode;		/* 0: not a file */
	__u32 dev_major;
	__u32 dev_minor;
	char perms[5];		/* "r-xp", NUL-terminated */
	bool deleted;		/* the path ended in " (deleted)", stripped from path */
	const char *path;	/* "" for anonymous memory; "[vdso]", "[heap]", ... */
};

/*
 * Parses maps text in BUF[0, LEN) (no NUL needed). Lines that are not
 * well-formed (bad numbers, start >= end, bad permissions, too long, cut
 * short) are skipped. *out is one allocation holding the entries and their
 * paths, in input order; free it with proc_maps__free(). Returns 0 or
 * -ENOMEM; *n may be 0.
 */
int proc_maps__parse(const char *buf, size_t len, struct proc_map **out, size_t *n);

/*
 * Reads and parses PROC_ROOT/PID/maps (PROC_ROOT NULL: "/proc"), at most
 * PROC_MAPS_READ_CAP bytes; past that, the last partial line is dropped.
 * While PID is shared (proc_maps__share), reads after the first get a copy
 * of the first one's entries. Thread-safe. Returns 0 or a negative errno (-ESRCH: no
 * such process).
 */
int proc_maps__read(const char *proc_root, __u32 pid, struct proc_map **out, size_t *n);

/*
 * From here to proc_maps__unshare(pid) (at most 1 s; 16 processes at once,
 * the oldest share ends first), the readers of PID's maps share one read of
 * the kernel's: for the consumers of one new process, one after the other.
 * Shared again before that (its next image), the next read is the kernel's,
 * and it stays shared until unshared as many times.
 */
void proc_maps__share(const char *proc_root, __u32 pid);
void proc_maps__unshare(__u32 pid);

/* True when PID is shared and its first read found no process: its later readers need not ask. */
bool proc_maps__gone(const char *proc_root, __u32 pid);

void proc_maps__free(struct proc_map *maps);

#endif /* EBPFPROF_PROC_MAPS_H */
