/* static_tls.h -- where an executable's thread-locals lie from the thread pointer, as glibc lays them out */
#ifndef EBPFPROF_STATIC_TLS_H
#define EBPFPROF_STATIC_TLS_H

#include <gelf.h>
#include <linux/types.h>

/*
 * The two layouts of glibc's static TLS (Drepper, "ELF Handling For
 * Thread-Local Storage"): variant I puts the blocks after a TCB the
 * thread pointer points to (AArch64: tpidr_el0, a 16-byte TCB), variant
 * II before it (x86-64: the fs base is the TCB, which ends the blocks).
 */
enum static_tls_variant {
	STATIC_TLS_VARIANT_1,
	STATIC_TLS_VARIANT_2,
};

#if defined(__aarch64__)
#define STATIC_TLS_HOST STATIC_TLS_VARIANT_1
#else
#define STATIC_TLS_HOST STATIC_TLS_VARIANT_2
#endif

/*
 * The thread-pointer offset of the executable's TLS block, of program
 * header TLS (PT_TLS), under VARIANT: the first module's place in glibc's
 * _dl_determine_tlsoffset. A thread-local's address is the thread pointer
 * plus this plus its symbol's value. 0, or -EINVAL for a block of more
 * than 64 KiB or an alignment that is not a power of two up to 4 KiB.
 */
int static_tls__exe_block(const GElf_Phdr *tls, enum static_tls_variant variant, __s64 *off);

#endif /* EBPFPROF_STATIC_TLS_H */
