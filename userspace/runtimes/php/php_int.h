/* php_int.h -- shared by the files of runtimes/php/: the layouts by version, the parsers of Zend VM memory, the state */
#ifndef EBPFPROF_PHP_INT_H
#define EBPFPROF_PHP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "../../../include/php.h"
#include "php_runtime.h"
#include "runtimes/rt_images.h"

/* What the walk and the namer need of one PHP version (x86-64, non-ZTS builds). */
struct php_layout {
	__u32 version;			/* 802: PHP 8.2 */
	__u16 eg_current;		/* executor_globals.current_execute_data */
	struct php_proc bpf;		/* offsets only; addresses are filled per process */
	__u16 fn_name;			/* zend_function.common.function_name */
	__u16 fn_scope;			/* .common.scope */
	__u16 ce_name;			/* zend_class_entry.name */
	__u16 str_len;			/* zend_string.len */
	__u16 str_val;			/* zend_string.val */
};

/* the layout of PHP VERSION (802), or NULL: a version we do not know */
const struct php_layout *php_layout__find(__u32 version);

/*
 * The version PHP/X.Y says it is in BUF[0, len) (its "X-Powered-By: PHP/"
 * string, in every SAPI's binary) as X * 100 + Y, or 0. Bounded by len.
 */
__u32 php_version__parse(const char *buf, size_t len);

/*
 * Reads LEN bytes at ADDR of the process for the parsers: 0 or a negative
 * errno. A callback, so the fuzz target and tests feed memory of their own.
 */
typedef int (*php_read_fn)(void *ctx, __u64 addr, void *buf, size_t len);

struct php_mem {
	php_read_fn read;
	void *ctx;
	const struct php_layout *l;
};

/* A function as read from the process: malloc'ed strings. */
struct php_func_info {
	char *name;		/* "Class::method", "function", "{main}" for a file's top code */
	char *file;		/* NULL for internal functions */
	__u32 line_start;
	bool internal;
};

/*
 * Reads the zend_function at FUNC: its name, its class's, its file and
 * first line, every string bounded (a longer one is cut, invalid UTF-8
 * repaired). TAG is the php_func_tag BPF saw: a function whose tag differs
 * now is another one at that address, refused. 0 or a negative errno.
 */
int php_func__read(const struct php_mem *m, __u64 func, __u32 tag, struct php_func_info *out);
void php_func_info__free(struct php_func_info *f);

/* ---- the runtime's state, shared by php.c (detection), php_names.c and php_ops.c ---- */

struct hmap;

struct php_func {
	__u64 addr;
	__u32 tag;		/* with addr, the key */
	bool ok;
	struct php_func_info info;
};

struct php_pid {
	RT_IMAGE_HEAD;		/* img, superseded, dead: rt_images.h */
	bool unknown;		/* a PHP we cannot read: counted once, native frames only */
	const struct php_layout *layout;
	struct php_proc proc;	/* as BPF has it */
	struct hmap *index;	/* (addr, tag) -> funcs[] id + 1 */
	struct php_func *funcs;
	size_t n_funcs, cap_funcs;
};

/* what a PHP binary was found to be, by file: php-fpm's workers are all one */
struct php_file {
	__u64 dev, ino, mtime;
	__u32 version;
	__u64 eg, exec, exec_size;	/* file vaddrs of executor_globals and execute_ex */
	__u64 call, call_size;		/* zend_call_function, or 0 */
	__u64 map_vaddr;		/* the vaddr of the mapping the symbols were found by */
	__u64 map_off;
};

#define PHP_FILES 8

struct php_rt {
	struct runtime_opts o;
	struct rt_images pids;
	struct php_file files[PHP_FILES];
	unsigned next_file;
	struct php_stats stats;
};

/* The one place an image's cache is found (rt_images__find); NULL if none. */
struct php_pid *php__find_image(struct php_rt *r, const struct proc_image *img);
/* Frees state H of runtime RT (an rt_image_fn), counting out what its functions held */
void php__free_pid(void *rt, struct rt_image *h);

/* detection (php.c): runtime_ops.add_image and sweep, the ops themselves (RT: a struct php_rt) */
int php__add_image(void *rt, const struct proc_image *img);
void php__sweep(void *rt);

/* names (php_names.c): runtime_ops.event, frame and mark */
void php__event(void *rt, const struct rt_event *e);
int php__frame(void *rt, const struct proc_image *img, __u64 a, __u64 b, struct src_line *out,
	       int max, __u64 *loc);
const char *php__mark(void *rt, __u64 slot);
size_t php_func__bytes(const struct php_func *f);

#endif /* EBPFPROF_PHP_INT_H */
