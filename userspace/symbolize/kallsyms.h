/* kallsyms.h -- kernel text symbols from /proc/kallsyms, looked up by address */
#ifndef EBPFPROF_KALLSYMS_H
#define EBPFPROF_KALLSYMS_H

#include <stddef.h>
#include <linux/types.h>

/* Longer lines are skipped (KSYM_NAME_LEN is 512, module names 56). */
#define KSYMS_LINE_MAX 1024
/* ksyms__load() reads at most this much. */
#define KSYMS_READ_CAP (64u << 20)

/* 16 bytes a symbol, plus its name once in a string pool. */
struct ksym {
	__u64 addr;
	const char *name;
};

struct ksyms;

/*
 * Loads the text symbols (types t T w W) of PATH (NULL: /proc/kallsyms).
 * Returns NULL with errno set: EPERM when every address reads 0 (kptr_restrict
 * or no CAP_SYSLOG: "kernel addresses hidden"), ENODATA when there is no text
 * symbol, or the error of reading the file.
 */
struct ksyms *ksyms__load(const char *path);

/* The same over kallsyms text in BUF[0, LEN); malformed lines are skipped. */
struct ksyms *ksyms__parse(const char *buf, size_t len);

void ksyms__free(struct ksyms *ks);

/*
 * The symbol with the largest address <= ADDR, with *offset (may be NULL) set
 * to ADDR minus its address; NULL when ADDR is below every symbol. Among
 * aliases at one address the one kept prefers fewer leading underscores, then
 * global over weak over local. Borrowed, valid until ksyms__free().
 */
const struct ksym *ksyms__map_addr(const struct ksyms *ks, __u64 addr, __u64 *offset);

/* The module SYM belongs to ("ext4"), NULL for the core kernel. */
const char *ksyms__module(const struct ksyms *ks, const struct ksym *sym);

/* Number of symbols, and the i-th in address order (NULL past the end). */
size_t ksyms__count(const struct ksyms *ks);
const struct ksym *ksyms__at(const struct ksyms *ks, size_t i);

#endif /* EBPFPROF_KALLSYMS_H */
