/* dwarf.h -- source file:line and inlined frames of code addresses, from one ELF file's DWARF */
#ifndef EBPFPROF_DWARF_H
#define EBPFPROF_DWARF_H

#include <stddef.h>
#include <linux/types.h>
#include "srcline.h"

struct dwarf_info;

/*
 * Opens the DWARF of the ELF file open at FD: the binary itself or a separate
 * debug file (see debuginfo.h). The file is read with read(2), never mmap'ed,
 * so one truncated underneath cannot fault us; FD is not kept (the caller may
 * close it on return).
 *
 * Memory: libdw reads every .debug_* section into memory at open
 * (decompressing SHF_COMPRESSED ones), so the object holds about their total
 * size for its whole life, plus what lookups add: per unit touched, libdw's
 * parsed line table and abbreviations (~56 bytes a line row), and our index
 * of its functions (56 bytes a range). dwarf_info__mem_size() tells the sum
 * (within 10% of the heap growth measured on libpython, libnccl and docker).
 *
 * Split DWARF (.dwo files) is not read: its units answer nothing.
 *
 * MAX_BYTES bounds the debug sections' total size: a file past it is refused
 * from its section headers, before libdw reads or inflates anything.
 *
 * Returns NULL with errno set: ENOENT no .debug_info, EFBIG larger than
 * ELF_FILE_MAX or debug sections that would decompress beyond it, E2BIG debug
 * sections over MAX_BYTES, EINVAL malformed, ENOMEM.
 */
struct dwarf_info *dwarf_info__open(int fd, size_t max_bytes);

void dwarf_info__free(struct dwarf_info *d);

/*
 * DWARF shrunk by dwz refers to a supplementary file (.gnu_debugaltlink) for
 * what several files share: types, inline functions' abstract instances,
 * names. Until it is given, lookups answer without what it holds (names may
 * be NULL). libdw is kept from finding it by itself: it would open whatever
 * path the file names. Returns the path recorded (untrusted, borrowed until
 * dwarf_info__free) and in *build_id (may be NULL) its hex build ID; NULL
 * when no supplementary file is needed. debuginfo__find_alt() finds it.
 */
const char *dwarf_info__altlink(const struct dwarf_info *d, const char **build_id);

/*
 * Attaches the supplementary file open at FD (not kept), read as in
 * dwarf_info__open. 0, or -EBADMSG its build ID is not the one recorded,
 * -EINVAL none is needed, -EEXIST one is attached, or another negative errno.
 */
int dwarf_info__set_alt(struct dwarf_info *d, int fd);

/*
 * Source frames of the instruction at VADDR (an ELF virtual address: the load
 * bias already removed; for a return address pass the address of the call,
 * e.g. return address - 1). Fills OUT callee first: the innermost inlined
 * subroutine with the line at VADDR, then each caller with the line of its
 * call (DW_AT_call_file/DW_AT_call_line), ending with the concrete function.
 * When there are more than MAX, the innermost MAX - 1 and the concrete
 * function are kept. function is DW_AT_linkage_name when present (mangled:
 * callers demangle) else DW_AT_name; NULL when DWARF names no function there
 * (assembly with lines but no subprogram, or a name in a dwz file not
 * attached): callers then take the symbol table's.
 * Strings are borrowed until dwarf_info__free().
 *
 * Returns how many frames were written, 0 when no unit covers VADDR.
 * Lookups fill caches: one thread at a time per object.
 */
int dwarf_info__lookup(struct dwarf_info *d, __u64 vaddr, struct src_line *out, int max);

/* Bytes of memory the object holds (see dwarf_info__open), for accounting. */
size_t dwarf_info__mem_size(const struct dwarf_info *d);

#endif /* EBPFPROF_DWARF_H */
