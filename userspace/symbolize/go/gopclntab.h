/* gopclntab.h -- Go function, file and line (inlined calls expanded) from a binary's own pclntab */
#ifndef EBPFPROF_GOPCLNTAB_H
#define EBPFPROF_GOPCLNTAB_H

#include <stddef.h>
#include <linux/types.h>
#include "symbolize/symbolize.h"

/* Larger tables are refused (EFBIG); the biggest real ones are well under 100 MiB. */
#define GOPCLNTAB_MAX (256u << 20)
/* The inline trees kept of one file take at most this many bytes; past it, trees are dropped. */
#define GOPCLNTAB_INL_MAX (64u << 20)

struct gopclntab;

/*
 * Reads the Go line table of the ELF file open at FD (not closed; nothing of
 * it stays open). The table is mapped read-only, not copied: a large one
 * (dockerd's is 17 MB) costs memory only for the pages lookups touch, which
 * stay page cache the kernel may drop. Every read of the mapping is guarded
 * (lib/sigbus.h): a file truncated underneath makes the table answer nothing
 * more, never a crash. The strings lookups return are copies, made once per
 * string. Where a file cannot be mapped the table is copied with pread(2).
 * The table is the section .gopclntab or
 * .data.rel.ro.gopclntab; when there is none (no section headers, or a system
 * linker merged it into .data.rel.ro) the non-executable PT_LOAD segments are
 * scanned for a pcHeader whose offsets and function table check out. A file
 * whose section headers name none of Go's sections (.go.buildinfo,
 * .note.go.buildid, .gosymtab) is taken for non-Go without a scan.
 *
 * Every format since Go 1.2 is read. Inlined calls are expanded when the
 * inline trees can be located: through the pointers in the table up to Go
 * 1.17, through runtime.firstmoduledata's gofunc (found by its pointers back
 * to the table) from Go 1.18 on. When they cannot, each address gets one frame
 * named after the physical function, with the file and line of the innermost
 * inlined code (what Go's runtime.FuncForPC reports).
 *
 * Keeps the mapping, the inline trees and the strings looked up. Returns NULL
 * with errno set: ENOENT the file is not Go (or not ELF), EINVAL the table is
 * malformed, EFBIG it is over GOPCLNTAB_MAX, EIO the file shrank while it was
 * read, ENOMEM, or the read error.
 */
struct gopclntab *gopclntab__open(int fd);

/*
 * The table alone, from SIZE bytes of memory at DATA that a file loads at
 * VADDR (copied: DATA may go away). The same checks as gopclntab__open(), but
 * without the file there are no inline trees and no relocations (a Go 1.18+
 * table whose textStart is 0 is refused). For tests and fuzzing. NULL with
 * errno set: EINVAL malformed, EFBIG over GOPCLNTAB_MAX, ENOMEM.
 */
struct gopclntab *gopclntab__from_table(const void *data, size_t size, __u64 vaddr);

void gopclntab__free(struct gopclntab *t);

/*
 * Frames for the ELF virtual address VADDR (as in the file: the caller has
 * removed the load bias; a return address should have 1 subtracted), callee
 * first: the innermost inlined call with its file:line at VADDR, then each
 * caller with the line of its call site, the physical function last. At most
 * MAX frames: past that the innermost MAX - 1 and the physical function are
 * kept. Returns how many; 0 when no Go function covers VADDR. Strings are
 * borrowed until gopclntab__free(). Safe to call from several threads.
 */
int gopclntab__lookup(const struct gopclntab *t, __u64 vaddr, struct src_line *out, int max);

/*
 * The code [*entry, *end) of the function named NAME (ELF virtual
 * addresses, as in the file), for finding what a runtime function refers to
 * in a stripped binary. A linear search: for a few names, not per sample.
 * 0, or -ENOENT (-EIO when the file shrank under the mapping).
 */
int gopclntab__find_func(const struct gopclntab *t, const char *name, __u64 *entry, __u64 *end);

/*
 * Lets go of the pages of a mapped table that lookups touched: they stay
 * page cache, and the next lookup maps back the few it reads. Without it a
 * table read through once (an open's checks, a walk) stays in our RSS.
 * Safe beside lookups: one that reads a page meanwhile maps it back.
 */
void gopclntab__release_pages(struct gopclntab *t);

/* Bytes of memory the object holds, for accounting. */
size_t gopclntab__mem_size(const struct gopclntab *t);

/* First Go release of the table's format, for logs: "1.20+", "1.18", "1.16" or "1.2". */
const char *gopclntab__go_version(const struct gopclntab *t);

/* Number of functions in the table; whether inline trees were located (1) or not (0). */
size_t gopclntab__func_count(const struct gopclntab *t);
int gopclntab__has_inline(const struct gopclntab *t);

/* Larger SP deltas than this (bytes) are taken for corruption. */
#define GOPCLNTAB_SP_DELTA_MAX (1 << 20)

/*
 * Called for each run [start, end) of a function's code over which the stack
 * pointer sits sp_delta bytes below its value at the function's entry (the
 * return address not counted), from the function's pcsp table: what Go's own
 * runtime unwinds with. FUNC is the function's name (NULL if unreadable),
 * borrowed from the table. A non-zero return stops the walk.
 */
typedef int (*gopclntab_sp_fn)(void *ctx, __u64 start, __u64 end, __s32 sp_delta,
			       const char *func);

/*
 * Calls fn for every function's SP-delta runs, in table order; 0, fn's
 * non-zero return, or -EIO when the file shrank under the mapping (fn may have
 * been called for part of the table). FN must not itself read a mapped table.
 */
int gopclntab__for_each_sp(const struct gopclntab *t, gopclntab_sp_fn fn, void *ctx);

#endif /* EBPFPROF_GOPCLNTAB_H */
