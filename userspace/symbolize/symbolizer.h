/* symbolizer.h -- names kernel and user addresses: kallsyms, /proc/PID/maps and ELF symbol tables */
#ifndef EBPFPROF_SYMBOLIZER_H
#define EBPFPROF_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "lib/stats.h"
#include "profile.h"
#include "srcline.h"

struct symbolizer;

struct symbolizer_opts {
	const char *kallsyms_path;	/* NULL: /proc/kallsyms */
	const char *proc_root;		/* NULL: /proc (tests may point elsewhere) */
	bool no_kernel;			/* do not load kallsyms */
	bool debuginfod;		/* may ask debuginfod ($DEBUGINFOD_URLS) for debug info */
	size_t dwarf_budget;		/* bytes of DWARF kept over all files; 0: no DWARF */
	bool lazy_files;		/* add_pid opens a new file, its first lookup reads it */
};

/*
 * One executable mapping of one process (or the kernel). Owned by the
 * symbolizer and valid until symbolizer__free(). ids are dense, start at 1 and
 * are unique within one symbolizer, so callers can index arrays by them.
 *
 * Paths: a file's path loses a trailing " (deleted)"; anonymous executable
 * memory (JIT code) is "[anon]"; "[vdso]" has the symbols of the vDSO image
 * read from the process; "[vsyscall]" and other bracketed names have none.
 * The kernel mapping (id 1) exists even without kallsyms.
 */
struct sym_mapping {
	__u32 id;
	__u64 serial;		/* never reused, unlike id: tells a new mapping under an old id */
	__u64 start;		/* [start, limit) in the process address space */
	__u64 limit;
	__u64 file_offset;	/* file offset mapped at start */
	const char *path;	/* path as in /proc/PID/maps, "[vdso]", "[kernel.kallsyms]" */
	const char *build_id;	/* lower-case hex GNU build ID, "" when unknown */
	bool has_symbols;	/* the file's symbol table was read */
	bool has_filenames;	/* lookups give source files (DWARF or Go tables) */
	bool has_line_numbers;
	bool has_inline_frames;
	bool is_kernel;
};

/* The answer for one address; strings are borrowed from the symbolizer. */
struct sym_frame {
	const struct sym_mapping *mapping;	/* NULL: the address is in no known mapping */
	const char *name;			/* NULL: no symbol covers the address */
	__u64 offset;				/* address - symbol start, when name != NULL */
	const char *module;			/* kernel module name ("ext4") or NULL */
	/*
	 * Source-level frames of the address, callee first (inlined calls
	 * expanded), when DWARF or a Go table knows them; n_lines 0 otherwise.
	 * The last line's function is the one containing the address.
	 */
	int n_lines;
	struct src_line lines[SRC_LINES_MAX];
};

/* Returns NULL with errno set. Loads kallsyms unless opts->no_kernel. */
struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts);
void symbolizer__free(struct symbolizer *s);

/*
 * Processes are known by image (struct proc_image: pid, start, exec count):
 * each image's samples are named by its own mappings, never by those of a
 * later image at its pid (an exec, a recycled pid). A pid's images are kept
 * from the newest back; an older one is superseded, never read again, and
 * names its samples until the next symbolizer__trim().
 */

/*
 * Snapshots IMG's executable mappings and opens their files now, while the
 * process lives, and reads their symbol tables now or, with lazy_files, at
 * their first lookup (so a burst of new processes is captured quickly, and a
 * file no sample hits is never read); files are cached by identity (device,
 * inode, build ID) so a library mapped by many processes is read once. A
 * no-op for a known image. The maps read count as IMG's only if its process
 * (its start) holds the pid after the read.
 * Returns 0 or a negative errno (-ESRCH: the process is gone; -ESTALE: a
 * later image of the pid is known, IMG can no longer be read: counted).
 */
int symbolizer__add_image(struct symbolizer *s, const struct proc_image *img);

/*
 * IMG is a fork of image PARENT not exec'd since (BPF's task_event says
 * so): it gets copies of PARENT's mappings, nothing read, as a re-read
 * would find them but for what either mapped since the fork (code outside
 * them is read as for any image). Its next add_image reads it. 0, or
 * -ENOENT when PARENT's maps are not known, or may predate ld.so's work (a
 * read inside its exec), or IMG is known already: read IMG with add_image
 * then.
 */
int symbolizer__add_fork(struct symbolizer *s, const struct proc_image *img,
			 const struct proc_image *parent);

/*
 * An exec made IMG at NS (CLOCK_MONOTONIC): the pid's earlier image is
 * superseded (never read again), and if its maps were read at or after NS
 * (they may be IMG's) they are dropped and counted. IMG itself is read by
 * add_image; if it was read already (a sample inside the exec announced it
 * first), its next add_image reads it again, with the libraries ld.so has
 * mapped since.
 */
void symbolizer__image_began(struct symbolizer *s, const struct proc_image *img, __s64 ns);

/*
 * Reads IMG's maps again now (the unwinder met code outside them: libraries
 * mapped after the exec, dlopen), or adds it. 0 or a negative errno.
 */
int symbolizer__refresh_image(struct symbolizer *s, const struct proc_image *img);

/*
 * Resolves a user address of IMG (call symbolizer__add_image first; an
 * unknown image is added on demand). The caller passes addr - 1 for return
 * addresses. An address outside every known mapping triggers one re-read of
 * the maps when the image still runs. Always fills *out; returns 0, or
 * -ENOENT when nothing at all is known of the address.
 */
int symbolizer__user(struct symbolizer *s, const struct proc_image *img, __u64 addr,
		     struct sym_frame *out);

/* Resolves a kernel address through kallsyms (modules included). */
int symbolizer__kernel(struct symbolizer *s, __u64 addr, struct sym_frame *out);

/*
 * Why kernel addresses get no names: 0 when kallsyms was loaded, else the
 * negative errno of loading it (-EPERM: addresses hidden by kptr_restrict;
 * -ENODEV: opts->no_kernel). symbolizer__new() does not fail for this; the
 * kernel mapping then has has_symbols false.
 */
int symbolizer__kernel_status(const struct symbolizer *s);

/*
 * For a long-lived agent, which would otherwise keep every pid, mapping and
 * file it ever saw. Both calls belong between harvests and shorten the
 * lifetimes stated above:
 *
 * - A mapping is valid until symbolizer__forget_pid() of its pid, or, once a
 *   re-read of the maps replaced it or a later image superseded its image,
 *   until the next symbolizer__trim().
 * - An id is not given to another mapping before the next symbolizer__trim()
 *   after its mapping was freed; so an array indexed by mapping id (one per
 *   window) is good from one trim to the next, and ids stay below the most
 *   mappings alive or freed-and-not-yet-trimmed at one time (stats.mapping_ids).
 *   Without trims ids are never reused.
 */

/*
 * Forgets PID (it exited, or is no longer of interest): frees the maps
 * snapshots and mappings of its every image, and drops their references on cached files,
 * which stay cached, evictable, until symbolizer__trim(). The caller holds no
 * sym_frame or sym_mapping of PID across this call. A later lookup of PID
 * adds it again as an unknown pid would be. A no-op for an unknown PID.
 */
void symbolizer__forget_pid(struct symbolizer *s, __u32 pid);

/*
 * Ends a harvest; the caller holds no sym_frame or sym_mapping, and no array
 * indexed by mapping id, across this call. Frees the images superseded and
 * the mappings re-reads of live pids replaced, lets ids freed since the last trim be reused, then
 * evicts the symbol tables no mapping uses, least recently used first, until
 * stats.bytes <= MAX_BYTES or none is left to evict (tables in use, kallsyms
 * and vDSO images stay). 0 evicts every unused table. The file pages that
 * the kept mapped tables (Go's) hold go back to the page cache.
 */
void symbolizer__trim(struct symbolizer *s, size_t max_bytes);

/* Files read and cache hits, for --verbose and benchmarks. */
struct symbolizer_stats {
	__u64 files_loaded;
	__u64 file_cache_hits;
	__u64 pids;
	__u64 symbols;
	__u64 bytes;		/* cached symbol tables, vDSO images and kallsyms */
	__u64 files_cached;	/* symbol tables held, in use or evictable */
	__u64 pids_live;	/* pids held: added, not forgotten (failed adds too) */
	__u64 mappings_live;	/* sym_mappings allocated, the kernel's included */
	__u64 mapping_ids;	/* largest id given out so far */
	__u64 files_evicted;	/* by symbolizer__trim() */
	__u64 dwarf_bytes;	/* part of bytes held by DWARF (line numbers, inline frames) */
	__u64 maps_denied;	/* /proc/PID/maps reads refused (EACCES/EPERM: no CAP_SYS_PTRACE) */
	__u64 pids_gone;	/* processes first looked up after they exited: their frames stay unnamed */
	__u64 files_denied;	/* mapped files we could not open (no CAP_DAC_READ_SEARCH...) */
	__u64 files_pending;	/* lazy_files: held open, not read yet */
	__u64 images_superseded; /* images a later one replaced at their pid (an exec, a recycled pid) */
	__u64 images_unread;	/* images first met after a later one was known: their frames unnamed */
	__u64 images_read_late;	/* maps read as the image exec'd: dropped, its frames unnamed */
	__u64 perfmaps_refused;	/* perf maps not read: planted, a link, or an earlier holder's */
	__u64 forks_parent_unknown;	/* fork children not copied: their parent not read */
	__u64 forks_parent_unsettled;	/* ...: their parent's maps unreadable (gone, superseded) */
};
void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *out);

/* struct symbolizer_stats as statistics, each named after "ebpfprof_" in /metrics */
extern const struct stat_desc symbolizer_stat_descs[];
extern const int n_symbolizer_stat_descs;

#endif /* EBPFPROF_SYMBOLIZER_H */
