/* symbolizer.h -- names kernel and user addresses: kallsyms, /proc/PID/maps and ELF symbol tables */
#ifndef EBPFPROF_SYMBOLIZER_H
#define EBPFPROF_SYMBOLIZER_H

#include <stdbool.h>
#include <linux/types.h>

struct symbolizer;

struct symbolizer_opts {
	const char *kallsyms_path;	/* NULL: /proc/kallsyms */
	const char *proc_root;		/* NULL: /proc (tests may point elsewhere) */
	bool no_kernel;			/* do not load kallsyms */
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
	__u64 start;		/* [start, limit) in the process address space */
	__u64 limit;
	__u64 file_offset;	/* file offset mapped at start */
	const char *path;	/* path as in /proc/PID/maps, "[vdso]", "[kernel.kallsyms]" */
	const char *build_id;	/* lower-case hex GNU build ID, "" when unknown */
	bool has_symbols;	/* the file's symbol table was read */
	bool is_kernel;
};

/* The answer for one address; strings are borrowed from the symbolizer. */
struct sym_frame {
	const struct sym_mapping *mapping;	/* NULL: the address is in no known mapping */
	const char *name;			/* NULL: no symbol covers the address */
	__u64 offset;				/* address - symbol start, when name != NULL */
	const char *module;			/* kernel module name ("ext4") or NULL */
};

/* Returns NULL with errno set. Loads kallsyms unless opts->no_kernel. */
struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts);
void symbolizer__free(struct symbolizer *s);

/*
 * Snapshots PID's executable mappings and reads their symbol tables now, while
 * the process lives; files are cached by identity (device, inode, build ID) so a
 * library mapped by many processes is read once. A no-op for a known PID.
 * Returns 0 or a negative errno (-ESRCH: the process is gone).
 */
int symbolizer__add_pid(struct symbolizer *s, __u32 pid);

/*
 * Resolves a user address of PID (call symbolizer__add_pid first; an unknown
 * PID is added on demand). The caller passes addr - 1 for return addresses.
 * An address outside every known mapping triggers one re-read of the maps
 * when the process still lives. Always fills *out; returns 0, or -ENOENT when
 * nothing at all is known of the address.
 */
int symbolizer__user(struct symbolizer *s, __u32 pid, __u64 addr, struct sym_frame *out);

/* Resolves a kernel address through kallsyms (modules included). */
int symbolizer__kernel(struct symbolizer *s, __u64 addr, struct sym_frame *out);

/*
 * Why kernel addresses get no names: 0 when kallsyms was loaded, else the
 * negative errno of loading it (-EPERM: addresses hidden by kptr_restrict;
 * -ENODEV: opts->no_kernel). symbolizer__new() does not fail for this; the
 * kernel mapping then has has_symbols false.
 */
int symbolizer__kernel_status(const struct symbolizer *s);

/* Files read and cache hits, for --verbose and benchmarks. */
struct symbolizer_stats {
	__u64 files_loaded;
	__u64 file_cache_hits;
	__u64 pids;
	__u64 symbols;
};
void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *out);

#endif /* EBPFPROF_SYMBOLIZER_H */
