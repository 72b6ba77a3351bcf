/* procfs.h -- bounded reads of /proc text files, and safe opening of another process's mapped files */
#ifndef EBPFPROF_PROCFS_H
#define EBPFPROF_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <linux/types.h>

struct proc_map;

/*
 * Reads all of PATH (relative to DIRFD, or absolute) into a malloc'ed,
 * NUL-terminated buffer, reading at most CAP bytes. *truncated (may be NULL)
 * tells whether the file had more. Returns 0 or a negative errno; the caller
 * frees *buf.
 */
int procfs__read_file(int dirfd, const char *path, size_t cap, char **buf, size_t *len,
		      bool *truncated);

/*
 * Opens the file that process PID maps at M, read-only, without letting the
 * process redirect us to a file outside its own view:
 *   1. PROC_ROOT/PID/map_files/START-END: the very file mapped, even when
 *      deleted or in another mount namespace;
 *   2. else M->path resolved inside PROC_ROOT/PID/root with openat2(2)
 *      RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, so a symlink planted in a
 *      container resolves inside the container; the result must then match
 *      the device and inode of the maps line.
 * The file must be a regular file. On success *fd is a new O_CLOEXEC
 * descriptor the caller closes, and *st its fstat(2). Returns 0 or a negative
 * errno (-ESTALE: the path now names another file; -EPERM for a deleted file
 * when map_files is refused: it needs CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN).
 */
int procfs__open_mapped(const char *proc_root, __u32 pid, const struct proc_map *m, int *fd,
			struct stat *st);

/*
 * The fstat(2) of the file procfs__open_mapped() would open, without
 * opening it where map_files allows (a stat of the very file mapped), so a
 * cache keyed by the file's identity costs one system call when it hits.
 * Returns 0 or the errors of procfs__open_mapped().
 */
int procfs__stat_mapped(const char *proc_root, __u32 pid, const struct proc_map *m,
			struct stat *st);

#endif /* EBPFPROF_PROCFS_H */
