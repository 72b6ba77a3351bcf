/* debuginfo.h -- finds debug files: build-ID tree, debuglink, MiniDebugInfo, debuginfod */
#ifndef EBPFPROF_DEBUGINFO_H
#define EBPFPROF_DEBUGINFO_H

#include <stdbool.h>

/* MiniDebugInfo larger than this once decompressed is refused. */
#define DEBUGINFO_MINI_MAX (256u << 20)
/* A .gnu_debugdata section (xz) larger than this is refused. */
#define DEBUGINFO_MINI_XZ_MAX (64u << 20)

enum debuginfo_kind {
	DEBUGINFO_NONE,
	DEBUGINFO_BUILD_ID,	/* /usr/lib/debug/.build-id/xx/rest.debug, build ID checked */
	DEBUGINFO_DEBUGLINK,	/* .gnu_debuglink, CRC checked */
	DEBUGINFO_MINI,		/* .gnu_debugdata: in-memory ELF, .symtab only, no DWARF */
	DEBUGINFO_DEBUGINFOD,	/* downloaded, build ID checked */
	DEBUGINFO_ALT_PATH,	/* a dwz file at the path its user recorded, build ID checked */
};

struct debuginfo_opts {
	const char *root;	/* the process's root ("/proc/123/root"); NULL or "": the host's */
	bool use_debuginfod;
	const char *debuginfod_urls;	/* space-separated; NULL: $DEBUGINFOD_URLS */
	const char *cache_dir;		/* NULL: $DEBUGINFOD_CACHE_PATH or the library's */
};

/*
 * Opens the best debug data for the ELF open at ELF_FD (not closed), whose
 * GNU build ID is BUILD_ID (lower-case hex; NULL or "": read from ELF_FD) and
 * whose path as its process sees it is BINARY_PATH (may be NULL: no debuglink
 * search). Tried in order:
 *   1. /usr/lib/debug/.build-id/xx/rest.debug under the root, then the host's;
 *   2. the .gnu_debuglink name (a plain file name: one with '/' or "." / ".."
 *      is refused) in the binary's directory, its .debug/ subdirectory and
 *      /usr/lib/debug/<dir>/, under the root only; the CRC32 must match;
 *   3. MiniDebugInfo: .gnu_debugdata decompressed (at most DEBUGINFO_MINI_MAX)
 *      into a sealed memfd; it holds symbols, not DWARF;
 *   4. debuginfod, when o->use_debuginfod: blocks up to the library's timeout
 *      ($DEBUGINFOD_TIMEOUT, 90 s by default), so the profiler calls this off
 *      its sampling path or uses debuginfo_fetch below; downloads are cached
 *      on disk by libdebuginfod.
 * Paths under a root are resolved with openat2(RESOLVE_IN_ROOT) (by hand, one
 * component at a time, where the kernel lacks it: before 5.6), so symlinks in
 * a container never lead out of it; only regular files are opened, never
 * blocking (O_NONBLOCK: a FIFO is refused, not waited on).
 *
 * Returns a read-only O_CLOEXEC descriptor the caller closes, and the source
 * in *kind (may be NULL); or a negative errno: -ENOENT found nowhere.
 * O may be NULL (host root, no debuginfod).
 */
int debuginfo__find(int elf_fd, const char *build_id, const char *binary_path,
		    const struct debuginfo_opts *o, int *kind);

/*
 * Opens the dwz supplementary file that debug data refers to (see
 * dwarf_info__altlink): by BUILD_ID in /usr/lib/debug/.build-id under the
 * root then the host's (Fedora links dwz files there); at ALT_PATH under the
 * root when absolute (Debian's "/usr/lib/debug/.dwz/<triplet>/<pkg>.debug";
 * a relative one is not followed); then debuginfod when opted in. The build
 * ID must match. A descriptor and *kind (may be NULL), or a negative errno.
 */
int debuginfo__find_alt(const char *alt_path, const char *build_id,
			const struct debuginfo_opts *o, int *kind);

/*
 * Only step 4: asks debuginfod for BUILD_ID's debug file, on the caller's
 * thread. libdebuginfod takes its server list and cache directory from the
 * environment only, so when O names them they are set for the call and put
 * back, under a lock that serializes every query made here. Returns a
 * descriptor or a negative errno: -ENOSYS no server configured, -ENOENT not
 * found, -EBADMSG the answer has another build ID, -ECANCELED.
 */
int debuginfo__fetch(const char *build_id, const struct debuginfo_opts *o);

/* A debuginfod query running on its own thread. */
struct debuginfo_fetch;

/* Starts debuginfo__fetch(BUILD_ID, O) in a new thread; O is copied. NULL with errno set. */
struct debuginfo_fetch *debuginfo_fetch__start(const char *build_id,
					       const struct debuginfo_opts *o);

/*
 * Waits up to TIMEOUT_MS (0: just looks, negative: until done) for the
 * result. -EINPROGRESS while running; then, once, the result of
 * debuginfo__fetch (a descriptor is the caller's to close), and -EALREADY
 * after that.
 */
int debuginfo_fetch__wait(struct debuginfo_fetch *f, int timeout_ms);

/* Aborts a running download, waits for the thread, closes a result nobody took. */
void debuginfo_fetch__free(struct debuginfo_fetch *f);

#endif /* EBPFPROF_DEBUGINFO_H */
