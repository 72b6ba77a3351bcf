/* static_tls.c -- an executable's static TLS block's offset from the thread pointer (glibc's layout) */
#include <errno.h>
#include "static_tls.h"

#define BLOCK_MAX 65536		/* past it, no block we would trust an offset into */
#define ALIGN_MAX 4096
#define VARIANT_1_TCB 16	/* AArch64's tcbhead_t: the DTV pointer and a private word */

int static_tls__exe_block(const GElf_Phdr *tls, enum static_tls_variant variant, __s64 *off)
{
	__u64 align = tls->p_align ? tls->p_align : 1, first, at;

	if (!tls->p_memsz || tls->p_memsz > BLOCK_MAX || align > ALIGN_MAX || (align & (align - 1)))
		return -EINVAL;
	/* the block's first byte keeps p_vaddr's place modulo the alignment */
	first = -(tls->p_vaddr & (align - 1)) & (align - 1);
	if (variant == STATIC_TLS_VARIANT_2) {
		/* it ends at the thread pointer, its start aligned as the file says */
		at = ((tls->p_memsz - first + align - 1) & ~(align - 1)) + first;
		*off = -(__s64)at;
		return 0;
	}
	/* it starts after the TCB, at the first aligned place that leaves room for its misalignment */
	at = (VARIANT_1_TCB + align - 1) & ~(align - 1);
	if (at - VARIANT_1_TCB < first)
		at += align;
	*off = (__s64)(at - first);
	return 0;
}
