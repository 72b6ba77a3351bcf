/* perl_int.h -- shared by the files of runtimes/perl/: the layouts we know, the parsers of Perl's structs */
#ifndef EBPFPROF_PERL_INT_H
#define EBPFPROF_PERL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "../../../include/perl.h"
#include "lib/hashmap.h"
#include "lib/proc_image.h"
#include "perl_runtime.h"
#include "runtimes/rt_images.h"

#define PERL_NAME_MAX 256	/* a name or a file read at most: longer ones are cut */

/* What the walk and the namer need of one perl version (threaded builds), from our table. */
struct perl_layout {
	__u16 version;		/* 5.36: 0x0524 */
	struct perl_proc bpf;	/* offsets only; addresses are filled per process */
	__u16 xcv_stash;	/* XPVCV: the stash of a lexical (CvNAMED) sub */
	__u16 xcv_gv;		/* XPVCV.xcv_gv_u: its GV, or its name's HEK when CvNAMED */
	__u16 xcv_file;		/* XPVCV.xcv_file: the file it was compiled from (char *) */
	__u16 xcv_flags;	/* XPVCV.xcv_flags (32 bits) */
	__u32 cvf_named;	/* CVf_NAMED */
	__u16 xgv_name;		/* XPVGV.xiv_u: the GV's name HEK */
	__u16 xgv_stash;	/* XPVGV.xnv_u: its stash */
	__u16 xhv_aux;		/* struct xpvhv_with_aux: its xpvhv_aux */
	__u16 aux_name;		/* xpvhv_aux.xhv_name_u: a HEK, or a HEK array when name_count != 0 */
	__u16 aux_name_count;	/* xpvhv_aux.xhv_name_count (I32) */
	__u16 hek_len;		/* HEK.hek_len (I32) */
	__u16 hek_key;		/* HEK.hek_key: the bytes */
	__u32 hv_has_aux;	/* the HV flag saying it has its aux (SVf_OOK / SVphv_HasAUX) */
};


/* the layout of version VERSION (PL_version's minor: 36), or NULL */
const struct perl_layout *perl_layout__of(unsigned int version);

/*
 * Reads LEN bytes at ADDR of the process for the parsers: 0 or a negative
 * errno. A callback, so the fuzz target and the tests feed memory of their own.
 */
typedef int (*perl_read_fn)(void *ctx, __u64 addr, void *buf, size_t len);

struct perl_mem {
	perl_read_fn read;
	void *ctx;
	const struct perl_layout *l;
};

/*
 * The sub CV's name, "Package::sub" (lexical subs by their own name, anonymous
 * ones "Package::__ANON__"), into name, and the file it was compiled from
 * into file ("" if it has none); each NUL-terminated, cut at size - 1. GEN is
 * what BPF saw of it (include/perl.h): a CV whose first op is another now
 * was freed and reused. 0, or a negative errno (-ESTALE: reused; -EINVAL:
 * not a CV, or a name that does not parse).
 */
int perl_mem__sub(const struct perl_mem *m, __u64 cv, __u32 gen, char *name, size_t name_size,
		  char *file, size_t file_size);

/* The NUL-terminated string at ADDR (a file name) into out, cut at size - 1; 0 or -errno. */
int perl_mem__string(const struct perl_mem *m, __u64 addr, char *out, size_t size);

/* One cached name: a sub's (PERL_EVENT_CV) or a file's (PERL_EVENT_FILE). */
struct perl_func {
	__u64 addr;
	__u32 gen;
	__u32 kind;
	char *name;		/* "Package::sub"; a file's code: NULL */
	char *file;		/* NULL if none */
};

/* One process image's state (runtime.h: states per image). */
struct perl_pid {
	RT_IMAGE_HEAD;		/* img, superseded, dead: rt_images.h */
	bool unknown;		/* a version we do not know, said once */
	struct perl_proc proc;	/* its BPF table */
	const struct perl_layout *l;
	struct perl_func *funcs;
	size_t n_funcs, cap_funcs;
	struct hmap *index;	/* (kind, addr, gen) -> funcs[id - 1] */
	size_t bytes;		/* what its names hold */
};

struct perl_rt {
	struct runtime_opts o;
	struct rt_images pids;
	struct perl_stats stats;
};

/* runtime_ops' add_image, event, frame, mark and sweep, the ops themselves (RT: a struct perl_rt) */
int perl__add_image(void *rt, const struct proc_image *img);
void perl__event(void *rt, const struct rt_event *e);
int perl__frame(void *rt, const struct proc_image *img, __u64 a, __u64 b,
		struct src_line *out, int max, __u64 *loc);
const char *perl__mark(void *rt, __u64 slot);
void perl__sweep(void *rt);
/* Frees state H of runtime RT (an rt_image_fn), counting out what its names held */
void perl__free_pid(void *rt, struct rt_image *h);

#endif /* EBPFPROF_PERL_INT_H */
