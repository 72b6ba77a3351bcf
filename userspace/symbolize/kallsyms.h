/* kallsyms.h -- kernel text symbols from /proc/kallsyms, looked up by address */
#ifndef EBPFPROF_KALLSYMS_H
#define EBPFPROF_KALLSYMS_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

/* Longer lines are skipped (KSYM_NAME_LEN is 512, module names 56). */
#define KSYMS_LINE_MAX 1024
/* ksyms__load() reads at most this much. */
#define KSYMS_READ_CAP (64u << 20)

/*
 * About 8 bytes a symbol plus its name front-coded (some 12 bytes on average
 * for the kernel's names): the low 32 bits of each address and the rank of its
 * name in byte order. Names are decoded when asked for and kept from then on.
 */
struct ksyms;

/*
 * Loads the text symbols (types t T w W) of PATH (NULL: /proc/kallsyms).
 * Returns NULL with errno set: EPERM when every address reads 0 (kptr_restrict
 * or no CAP_SYSLOG: "kernel addresses hidden"), ENODATA when there is no text
 * symbol, or the error of reading the file.
 */
struct ksyms *ksyms__load(const char *path);

/* The same over kallsyms text in BUF[0, LEN) (E2BIG from 4 GiB); malformed lines are skipped. */
struct ksyms *ksyms__parse(const char *buf, size_t len);

void ksyms__free(struct ksyms *ks);

/*
 * The index of the symbol with the largest address <= ADDR, with *offset (may
 * be NULL) set to ADDR minus its address; -1 when ADDR is below every symbol.
 * Among aliases at one address the one kept prefers fewer leading
 * underscores, then global over weak over local.
 */
ssize_t ksyms__find(const struct ksyms *ks, __u64 addr, __u64 *offset);

/* Number of symbols; indexes run in address order, one symbol an address. */
size_t ksyms__count(const struct ksyms *ks);

/* The address of symbol I (I < ksyms__count(); 0 past the end). */
__u64 ksyms__addr(const struct ksyms *ks, size_t i);

/*
 * The name of symbol I, decoded on the first call and kept: the same pointer
 * every time, valid until ksyms__free(). NULL past the end, or with errno
 * ENOMEM when it could not be kept. Not thread-safe: it adds to KS's cache.
 */
const char *ksyms__name(struct ksyms *ks, size_t i);

/* The module of symbol I ("ext4"), NULL for the core kernel or past the end. */
const char *ksyms__module(const struct ksyms *ks, size_t i);

/* Heap bytes KS holds, names decoded so far included. */
size_t ksyms__bytes(const struct ksyms *ks);

#endif /* EBPFPROF_KALLSYMS_H */
