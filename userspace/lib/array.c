/* array.c -- growable arrays: one reserve routine for every module's tables */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "array.h"

int array__reserve(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t new_cap;
	void *tmp;

	if (need <= *cap)
		return 0;
	new_cap = *cap < 16 ? 16 : *cap + *cap / 2;
	if (new_cap < need)
		new_cap = need;
	if (new_cap > SIZE_MAX / elem)
		return -ENOMEM;
	tmp = realloc(*arr, new_cap * elem);
	if (!tmp)
		return -ENOMEM;
	*arr = tmp;
	*cap = new_cap;
	return 0;
}
