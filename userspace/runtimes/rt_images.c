/* rt_images.c -- a runtime's states, one per process image: found by image or pid, superseded, swept */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include "lib/array.h"
#include "runtime.h"
#include "rt_images.h"

/* RT_IMAGE_HEAD's named fields are struct rt_image's, at the same places */
struct rt_image_check {
	RT_IMAGE_HEAD;
};
_Static_assert(sizeof(struct rt_image_check) == sizeof(struct rt_image), "RT_IMAGE_HEAD's size");
_Static_assert(offsetof(struct rt_image_check, img) == offsetof(struct rt_image, img) &&
	       offsetof(struct rt_image_check, superseded) == offsetof(struct rt_image, superseded) &&
	       offsetof(struct rt_image_check, dead) == offsetof(struct rt_image, dead),
	       "RT_IMAGE_HEAD's fields");

struct rt_image *rt_images__find(struct rt_images *s, const struct proc_image *img)
{
	/* its own first: a superseded state still names its image's samples */
	for (size_t i = 0; i < s->n; i++)
		if (proc_image__eq(&s->all[i]->img, img))
			return s->all[i];
	for (size_t i = 0; i < s->n; i++)
		if (!s->all[i]->superseded && runtime__is_image(&s->all[i]->img, img))
			return s->all[i];
	return NULL;
}

struct rt_image *rt_images__current(const struct rt_images *s, __u32 pid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->all[i]->img.pid == pid && !s->all[i]->superseded)
			return s->all[i];
	return NULL;
}

int rt_images__add(struct rt_images *s, struct rt_image *h, const struct proc_image *img)
{
	if (ARRAY_RESERVE(s->all, s->cap, s->n + 1))
		return -ENOMEM;
	*h = (struct rt_image){ .img = *img };
	s->all[s->n++] = h;
	return 0;
}

void rt_images__remove(struct rt_images *s, struct rt_image *h)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->all[i] == h) {
			s->all[i] = s->all[--s->n];
			return;
		}
}

void rt_images__sweep(struct rt_images *s, const char *proc_root, int procs_fd,
		      rt_image_fn free_state, void *ctx)
{
	for (size_t i = 0; i < s->n;) {
		struct rt_image *h = s->all[i];

		if (!runtime__gone_twice(proc_root, &h->img, h->superseded, &h->dead)) {
			i++;
			continue;
		}
		if (!h->superseded)
			bpf_map_delete_elem(procs_fd, &h->img.pid);
		s->all[i] = s->all[--s->n];	/* the last state moves to i: looked at next */
		free_state(ctx, h);
	}
}

void rt_images__release(struct rt_images *s, rt_image_fn free_state, void *ctx)
{
	for (size_t i = 0; i < s->n; i++)
		free_state(ctx, s->all[i]);
	free(s->all);
	*s = (struct rt_images){ 0 };
}
