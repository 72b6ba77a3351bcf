/* array.h -- growable arrays: one reserve routine for every module's tables */
#ifndef EBPFPROF_ARRAY_H
#define EBPFPROF_ARRAY_H

#include <stddef.h>

/*
 * Makes room for need elements of elem bytes in *arr, whose capacity is *cap.
 * Grows by half again (at least to 16), so appends are amortized O(1). On
 * failure *arr and *cap are unchanged. Returns 0 or -ENOMEM.
 */
int array__reserve(void **arr, size_t *cap, size_t need, size_t elem);

#define ARRAY_RESERVE(arr, cap, need) \
	array__reserve((void **)&(arr), &(cap), (need), sizeof(*(arr)))

#endif /* EBPFPROF_ARRAY_H */
