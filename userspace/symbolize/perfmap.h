/* perfmap.h -- JIT symbols from /tmp/perf-PID.map files (Node.js, JVM agents, .NET, LuaJIT) */
#ifndef EBPFPROF_PERFMAP_H
#define EBPFPROF_PERFMAP_H

#include <stddef.h>
#include <linux/types.h>

/*
 * A perf map is written by the process it describes, so it is untrusted:
 * reads stop at PERFMAP_FILE_CAP bytes, the table at PERFMAP_ENTRIES_MAX
 * lines; lines longer than PERFMAP_LINE_MAX, symbols of size 0 or above
 * PERFMAP_SYM_SIZE_MAX, and ranges that overflow are skipped.
 */
#define PERFMAP_FILE_CAP (64u << 20)
#define PERFMAP_ENTRIES_MAX (1u << 20)
#define PERFMAP_LINE_MAX 4096
#define PERFMAP_SYM_SIZE_MAX (1u << 30)

struct perfmap;

struct perfmap_stats {
	__u64 malformed;	/* lines skipped as malformed, since the last full reload */
	__u64 dropped;		/* good lines past PERFMAP_ENTRIES_MAX or the name pool cap */
	__u64 bytes_read;	/* bytes of lines read over the map's lifetime */
	__u32 reloads;		/* reads from the start of the file, the first included */
	__u32 truncated;	/* 1: the file is bigger than PERFMAP_FILE_CAP, the rest unread */
};

/*
 * The perf map of process PID as that process sees it (PROC_ROOT NULL:
 * "/proc"). The file is /tmp/perf-NSPID.map in the process's mount namespace,
 * NSPID being the innermost pid of the NSpid: line of PROC_ROOT/PID/status
 * (a process in a container writes its namespaced pid). It is opened with
 * openat2(2) inside PROC_ROOT/PID/root (RESOLVE_IN_ROOT |
 * RESOLVE_NO_MAGICLINKS), so no path can lead out of the process's root;
 * where openat2 is missing (ENOSYS: Linux < 5.6, valgrind) the path is
 * walked following no symlink at all.
 *
 * /tmp is writable by everyone, so anyone can plant a file under a name
 * another process will use. The file is therefore accepted only when it can
 * have come from the process itself:
 *   - the last component is not a symlink (O_NOFOLLOW; ELOOP): JITs write
 *     a plain file, and a symlink would let a planter aim us at any file of
 *     the container, such as /etc/shadow, and read it as symbol names;
 *   - it is a regular file with one link (EINVAL): a FIFO would stall us,
 *     a device never end, a hard link would alias a file of someone else;
 *   - it is owned by one of the process's uids or by root (EPERM): another
 *     user's file would let them put false names on this process's samples;
 *   - it was last written after the process started, give or take a second
 *     (ESTALE): an older file is an earlier holder's of the pid (CPython's
 *     -X perf and others leave theirs behind) and would name this process's
 *     code with another's symbols.
 *
 * Returns NULL with errno set (ENOENT: no map, or no such process). Nothing
 * is read yet: call perfmap__refresh(). The map does not notice the pid
 * being reused after it is open; drop it when the process exits.
 */
struct perfmap *perfmap__open(const char *proc_root, __u32 pid);

/* An empty table tied to no file, for perfmap__parse() (fuzzing, tests). */
struct perfmap *perfmap__new(void);

/*
 * Brings the table up to date with the file, reading only when its inode,
 * size or mtime changed. When the file only grew (JITs append) and the bytes
 * before the old end are unchanged, only the new bytes are read; otherwise
 * (replaced, truncated, rewritten) it is read again from the start. A last
 * line without its newline is being written: it is read again next time.
 * Returns 0 or a negative errno (-EINVAL for a perfmap__new() table); on
 * error the table is unchanged.
 */
int perfmap__refresh(struct perfmap *m);

/*
 * The symbol covering ADDR (start <= ADDR < start + size) and *offset (may
 * be NULL) from its start, or NULL. Where ranges overlap the later line wins,
 * as in perf: JITs reuse freed code memory. Borrowed until the next
 * refresh, parse or free.
 */
const char *perfmap__lookup(const struct perfmap *m, __u64 addr, __u64 *offset);

/* Lines in the table (those hidden by later lines included). */
size_t perfmap__count(const struct perfmap *m);

/* Bytes of memory the table holds. */
size_t perfmap__mem_size(const struct perfmap *m);

void perfmap__stats(const struct perfmap *m, struct perfmap_stats *st);

void perfmap__free(struct perfmap *m);

/*
 * Adds the lines of BUF[0, LEN) (no NUL needed) after those already in the
 * table. Only newline-terminated lines are taken; an unterminated tail is
 * ignored, as refresh would wait for its newline. Malformed lines are
 * skipped and counted. Returns 0 or -ENOMEM (the table unchanged).
 */
int perfmap__parse(struct perfmap *m, const char *buf, size_t len);

#endif /* EBPFPROF_PERFMAP_H */
