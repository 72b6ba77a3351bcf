/* rt_images.h -- a runtime's states, one per process image: found by image or pid, superseded, swept */
#ifndef EBPFPROF_RT_IMAGES_H
#define EBPFPROF_RT_IMAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "lib/proc_image.h"

/*
 * What every runtime keeps of a process image beside its own state
 * (runtime.h: states per image). A state begins with it, by RT_IMAGE_HEAD.
 */
struct rt_image {
	struct proc_image img;	/* PROC_EXEC_ANY: found running, adopted by its first event or frame */
	bool superseded;	/* a later image holds the pid: only what was read names its frames */
	bool dead;		/* gone at the last sweep: freed at the next */
};

/*
 * A state's first member: its head for the set (p->head), and the same
 * fields by name (p->img, p->superseded, p->dead), as every runtime's
 * code reads them. A union rather than container_of: the head is the
 * state's first byte, so the set's pointer is the state's (a cast), and no
 * reader of p->img changes. rt_images.c checks the two layouts match.
 */
#define RT_IMAGE_HEAD                               \
	union {                                     \
		struct rt_image head;               \
		struct {                            \
			struct proc_image img;      \
			bool superseded;            \
			bool dead;                  \
		};                                  \
	}

/* The states of one runtime; zeroed is empty. The states are the runtime's: it allocates and frees them. */
struct rt_images {
	struct rt_image **all;	/* in no order: a removal moves the last one into its place */
	size_t n, cap;
};

/* What is done with a state leaving the set: CTX is the runtime's, H the state's head. */
typedef void (*rt_image_fn)(void *ctx, struct rt_image *h);

/*
 * The state of image IMG: its own, else a state of a process found running
 * (exec PROC_EXEC_ANY) that IMG then adopts (runtime__is_image); never a
 * superseded one's, never another image's at its pid. NULL if none.
 */
struct rt_image *rt_images__find(struct rt_images *s, const struct proc_image *img);

/* The state of the image BPF's table of PID is of (the one not superseded), if any. */
struct rt_image *rt_images__current(const struct rt_images *s, __u32 pid);

/* Adds state H as image IMG's, current and live (its head is set): 0 or -ENOMEM. */
int rt_images__add(struct rt_images *s, struct rt_image *h, const struct proc_image *img);

/* Takes state H out of the set (not freed). */
void rt_images__remove(struct rt_images *s, struct rt_image *h);

/*
 * Each state whose image has ended at two sweeps in a row (runtime__gone_twice:
 * samples of a whole window were named by then) leaves the set; its pid's
 * table in the runtime's BPF map PROCS_FD goes with it unless the state was
 * superseded (the table is a later image's, or gone), and FREE_STATE frees it.
 */
void rt_images__sweep(struct rt_images *s, const char *proc_root, int procs_fd,
		      rt_image_fn free_state, void *ctx);

/* Every state to FREE_STATE, then the set's own memory; the set is empty after. */
void rt_images__release(struct rt_images *s, rt_image_fn free_state, void *ctx);

#endif /* EBPFPROF_RT_IMAGES_H */
