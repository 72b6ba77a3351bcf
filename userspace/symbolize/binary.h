/* binary.h -- everything we can name in one executable file: ELF symbols, Go line table, DWARF */
#ifndef EBPFPROF_BINARY_H
#define EBPFPROF_BINARY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "elf_syms.h"
#include "srcline.h"

struct binary;

struct binary_opts {
	const char *root;	/* the process's root ("/proc/123/root") for debug files; NULL: host */
	const char *path;	/* the file's path as the process sees it, for .gnu_debuglink */
	bool debuginfod;	/* may ask debuginfod (DEBUGINFOD_URLS) for missing debug info */
	size_t dwarf_max;	/* DWARF costing more memory than this is dropped (names stay) */
};

/*
 * Reads the file open at fd: its symbols (.symtab, else .dynsym), then a Go
 * line table, else DWARF from the file itself or from its debug file (build-ID
 * tree, .gnu_debuglink, MiniDebugInfo, debuginfod when allowed), whose symbol
 * table also names the static functions a stripped binary lost. NULL with
 * errno set when the file is not ELF (ENOMEM: try again later).
 */
struct binary *binary__open(int fd, const struct binary_opts *o);

/* Wraps symbols read some other way (the vDSO from memory); takes es. */
struct binary *binary__from_syms(struct elf_syms *es);

void binary__free(struct binary *b);

/*
 * Names the code at file offset off: *name (the function, or NULL), *offset
 * into it, and up to max source lines, callee first. Returns how many lines.
 */
int binary__lookup(const struct binary *b, __u64 off, const char **name, __u64 *offset,
		   struct src_line *lines, int max);

const char *binary__build_id(const struct binary *b);
size_t binary__symbol_count(const struct binary *b);
size_t binary__mem_size(const struct binary *b);

/* Lets go of the file pages its mapped tables hold (gopclntab__release_pages). */
void binary__release_pages(struct binary *b);
bool binary__has_lines(const struct binary *b);
bool binary__has_inline(const struct binary *b);

/* Memory held for DWARF, part of binary__mem_size. */
size_t binary__dwarf_bytes(const struct binary *b);

#endif /* EBPFPROF_BINARY_H */
