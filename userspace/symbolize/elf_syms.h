/* elf_syms.h -- function symbols, load segments and GNU build ID of one ELF file */
#ifndef EBPFPROF_ELF_SYMS_H
#define EBPFPROF_ELF_SYMS_H

#include <stddef.h>
#include <linux/types.h>

/* Larger files are refused. */
#define ELF_FILE_MAX (4ULL << 30)
/* At most this many function symbols are kept from one file. */
#define ELF_SYMS_MAX (4u << 20)
/* A build ID is at most this many bytes; the hex text twice that plus NUL. */
#define ELF_BUILD_ID_MAX 64
#define ELF_BUILD_ID_HEX_SIZE (2 * ELF_BUILD_ID_MAX + 1)

struct elf_syms;

/*
 * Reads the function symbols (STT_FUNC, STT_GNU_IFUNC; at most ELF_SYMS_MAX,
 * 16 bytes each plus the name) of .symtab, or of .dynsym when .symtab is
 * missing, unreadable or names no function (a stripped file keeps only
 * .dynsym; .symtab already holds every .dynsym symbol); the PT_LOAD segments;
 * and the GNU build ID, from the file open at FD (not closed; read with read(2), never
 * mmap'ed, so a file truncated underneath cannot fault us). The names of a
 * large table stay in the file (elf_syms__names_in_file): a duplicate of FD is
 * held, and a name is read with pread(2) at its first lookup and kept; else
 * nothing of the file is kept open. Returns NULL with errno set: ENOEXEC not
 * an executable or shared object, EFBIG over ELF_FILE_MAX, EINVAL malformed.
 */
struct elf_syms *elf_syms__read_fd(int fd);

/*
 * Tables read from a file whose names take at least MIN_BYTES keep them in
 * the file, for at most MAX_FILES tables at once (each holds a descriptor);
 * the others copy them (the default: 64 KiB, 64 files). Set before reading.
 */
void elf_syms__names_in_file(size_t min_bytes, unsigned max_files);
struct elf_syms *elf_syms__load(const char *path);
/* The same over an image in memory (the vDSO). */
struct elf_syms *elf_syms__read_mem(const void *image, size_t size);

void elf_syms__free(struct elf_syms *es);

/*
 * Converts a file offset to the ELF virtual address of the byte there, through
 * the PT_LOAD segment holding it: vaddr = off - p_offset + p_vaddr. This is
 * what undoes the load bias of PIE executables and shared libraries.
 * 0 or -ENOENT when no segment holds the offset.
 */
int elf_syms__offset_to_vaddr(const struct elf_syms *es, __u64 off, __u64 *vaddr);

/*
 * The function holding VADDR: the largest symbol address <= VADDR, and when
 * the symbol has a size VADDR must lie within it (sizeless symbols reach to
 * the next symbol, and no further than the end of their section). *offset
 * (may be NULL) = VADDR - symbol address. NULL when no symbol covers VADDR.
 * Among aliases at one address the name kept has the fewest leading
 * underscores, then the strongest binding (global, weak, local). The name is
 * borrowed until elf_syms__free(). NULL too when a name kept in the file
 * cannot be read (the file shrank or changed since). Thread-safe.
 */
const char *elf_syms__lookup(const struct elf_syms *es, __u64 vaddr, __u64 *offset);

/* Lower-case hex GNU build ID, "" when the file has none. */
const char *elf_syms__build_id(const struct elf_syms *es);

size_t elf_syms__count(const struct elf_syms *es);

/* Bytes of memory the object holds, for accounting. */
size_t elf_syms__mem_size(const struct elf_syms *es);

/*
 * Checks that FD is a regular file of at most ELF_FILE_MAX bytes and hands
 * libelf a read(2)-based handle on it: never mmap, so a file truncated
 * underneath cannot fault us. NULL with *err a negative errno.
 */
struct Elf *elf_open_read(int fd, int *err);

/*
 * Reads only the GNU build ID of the file open at FD into HEX (at least
 * ELF_BUILD_ID_HEX_SIZE bytes). 0, -ENOENT when it has none, or a negative
 * errno.
 */
int elf_read_build_id(int fd, char *hex, size_t size);

/*
 * Finds the NT_GNU_BUILD_ID note in a raw, host-endian ELF note stream (a
 * PT_NOTE segment, a SHT_NOTE section, /sys/kernel/notes) whose entries are
 * padded to ALIGN (4 or 8) bytes, and writes it as hex into HEX. Every size
 * is checked against LEN. 0, -ENOENT when absent, or -EINVAL.
 */
int elf_parse_build_id_notes(const void *buf, size_t len, size_t align, char *hex, size_t size);

#endif /* EBPFPROF_ELF_SYMS_H */
