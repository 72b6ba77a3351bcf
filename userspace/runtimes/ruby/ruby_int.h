/* ruby_int.h -- shared by the files of runtimes/ruby/: CRuby's layouts, the parsers of its objects, the state per image */
#ifndef EBPFPROF_RUBY_INT_H
#define EBPFPROF_RUBY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "ruby_runtime.h"

/* What the namer needs of one CRuby version's structs (besides struct rb_proc's). */
struct rb_layout {
	__u32 version;			/* major << 16 | minor << 8 */
	__u16 cfp_size;
	__u16 body_insns_info;		/* rb_iseq_constant_body.insns_info: body, positions, size, succ_index_table */
	__u16 body_local_iseq;
	__u16 str_embed;		/* RString's embedded bytes */
	bool str_len_in_flags;		/* an embedded RString's length in its flags (3.1), else at +16 */
	__u8 ary_embed_len_bits;	/* an embedded RArray's length: bits from FL_USHIFT + 3 */
	bool class_ext_ptr;		/* RClass keeps a pointer to its classext (3.1), else embeds it */
	__u16 class_ext;		/* where the classext (or the pointer to it) is in RClass */
	__u16 ext_iv_tbl;		/* 3.1: the class's ivars, an st_table (__classpath__, __attached__) */
	__u16 ext_classpath;		/* 3.2+: its path, a String */
	__u16 ext_attached;		/* 3.2+: a singleton class's object */
	__u32 fl_singleton;		/* FL_SINGLETON: FL_USER0 until 3.3, FL_USER1 from 3.4 */
};

/* The layout of VERSION (major << 16 | minor << 8 | teeny), or NULL: one we do not know. */
const struct rb_layout *rb_layout__find(__u32 version);

/* the fixed parts, the same in 3.1, 3.3 and 3.4 (checked against each version's headers) */
#define RB_ISEQ_BODY 16		/* rb_iseq_t.body */
#define RB_BODY_SIZE 4		/* rb_iseq_constant_body.iseq_size (unsigned int) */
#define RB_BODY_ENCODED 8	/* .iseq_encoded */
#define RB_BODY_LOCATION 64	/* .location: pathobj, base_label, label, first_lineno */
#define RB_BODY_READ 192	/* bytes of a body read at once: past every field we use */
#define RB_ME_OWNER 32		/* rb_method_entry_t.owner */
#define RB_ME_DEF 16		/* .def */
#define RB_ME_CALLED_ID 24	/* .called_id */
#define RB_DEF_ORIGINAL_ID 32	/* rb_method_definition_t.original_id */
#define RB_INSN_INFO_SIZE 12	/* sizeof(struct iseq_insn_info_entry), line_no first */
/*
 * tLAST_OP_ID (0xaa from 3.4): IDs above it keep their serial above 4
 * scope bits. 0xaa itself is no ID a method is called by: the first
 * named one is the serial after it, shifted.
 */
#define RB_LAST_OP_ID 0xa9
#define RB_ID_ENTRY_UNIT 512	/* ids per array of the global symbol table */

/* RBasic flags */
#define RB_T_MASK 0x1f
#define RB_T_CLASS 0x02
#define RB_T_MODULE 0x03
#define RB_T_STRING 0x05
#define RB_T_ARRAY 0x07
#define RB_T_ICLASS 0x1c
#define RB_T_IMEMO 0x1a
#define RB_FL_USHIFT 12
#define RB_FL_EMBED (1u << 13)		/* RSTRING_NOEMBED for strings (clear: embedded), RARRAY_EMBED_FLAG */
#define RB_IMEMO_MENT 6			/* imemo_ment: a method entry */
#define RB_IMEMO_ISEQ 7

#define RB_STR_MAX 1024			/* bytes of a name or path: longer ones are cut */
#define RB_ISEQ_SIZE_MAX (RB_PC_MASK / 8)	/* VALUEs of code: the frame keeps RB_PC_BITS of the pc */

/*
 * Reads LEN bytes at ADDR of the process for the parsers: 0 or a negative
 * errno. A callback, so the fuzz target and tests feed memory of their own.
 */
typedef int (*rb_read_fn)(void *ctx, __u64 addr, void *buf, size_t len);

struct rb_mem {
	rb_read_fn read;
	void *ctx;
	const struct rb_layout *l;
	__u64 symbols;		/* &ruby_global_symbols: last_id, then ids at +16; 0 unknown */
};

/* The String VALUE OBJ into out (NUL-terminated, cut to out_size - 1): its length, or a negative errno. */
int rb_mem__string(const struct rb_mem *m, __u64 obj, char *out, size_t out_size);

/* Element I of the Array VALUE ARY into *out: 0, -ERANGE past its end, or a negative errno. */
int rb_mem__array_entry(const struct rb_mem *m, __u64 ary, __u64 i, __u64 *out);

/* The name of symbol ID, from the global symbol table: its length, or a negative errno. */
int rb_mem__id_name(const struct rb_mem *m, __u64 id, char *out, size_t out_size);

/*
 * The path of class or module KLASS ("Foo::Bar"), and whether it is a
 * singleton class (whose object's path it gives then). Its length, or a
 * negative errno (-ENOENT: anonymous).
 */
int rb_mem__class_path(const struct rb_mem *m, __u64 klass, char *out, size_t out_size,
		       bool *singleton);

/*
 * The positions of a body's insn-info entries as CRuby's succinct index
 * table TAB[0, len) (made for an iseq of MAX_POS VALUEs) holds them:
 * out[0, *n), at most max, ascending. 0 or -EINVAL (malformed, too short).
 */
int rb_succ__positions(const void *tab, size_t len, __u32 max_pos, __u32 *out, __u32 max, __u32 *n);

/* bytes of a succinct index table for an iseq of MAX_POS VALUEs */
size_t rb_succ__bytes(__u32 max_pos);

/* ---- detection (ruby_elf.c): what the process's libruby says of itself ---- */

struct proc_map;

/* What is found in libruby's (or a static ruby's) code and symbols, as addresses of the process. */
struct rb_found {
	__u32 version;
	__u64 exec_start, exec_end;	/* vm_exec */
	__u64 tls_index;		/* the GOT pair { module, offset } __tls_get_addr takes for ruby_current_ec */
	__u64 tls_add;			/* added to its offset (local dynamic: the variable's place in the block) */
	__s64 tls_static;		/* else, nonzero: its offset from the thread pointer (a static
					 * CRuby's, or a TLSDESC slot's the loader resolved) */
	__u64 symbols;			/* ruby_global_symbols */
};

/*
 * Looks for CRuby in the file mapped at M of process PID (under PROC_ROOT):
 * 0, -ENOENT (not CRuby), -ENOTSUP (CRuby, but something the walk needs was
 * not found), or another negative errno.
 */
int rb_elf__probe(const char *proc_root, __u32 pid, const struct proc_map *m, struct rb_found *f);

/*
 * Machine code scanners, on BUF[0, len) read at address AT: exported for the
 * tests and the fuzz target. Each returns 0 and the address found, or -ENOENT
 * (rb_code__jumps: its count).
 */
int rb_code__tls_index(const __u8 *buf, size_t len, __u64 at, __u64 *tls_index, __u64 *add);
/* a static CRuby's local-exec read of ruby_current_ec: its offset from the thread pointer (x86-64) */
int rb_code__tls_local_exec(const __u8 *buf, size_t len, __s64 *off);
/* the targets of jumps out of BUF (tail calls, or bytes that look like one): up to MAX, their count */
int rb_code__jumps(const __u8 *buf, size_t len, __u64 at, __u64 *out, int max);
int rb_code__symbols(const __u8 *buf, size_t len, __u64 at, __u64 *symbols);
/* the same two on AArch64's code */
int rb_code__a64_jumps(const __u8 *buf, size_t len, __u64 at, __u64 *out, int max);
int rb_code__a64_symbols(const __u8 *buf, size_t len, __u64 at, __u64 *symbols);

/*
 * From the process's MAPS[0, n): YJIT's code region into proc->jit_start,
 * jit_end (left 0 without one), and the mapping of libruby's code that
 * holds vm_exec (EXEC_START), which enters it, into text_start, text_end.
 */
void rb_maps__jit_range(const struct proc_map *maps, size_t n, __u64 exec_start, struct rb_proc *proc);

/* ---- the state per image (ruby.c), names (ruby_names.c) ---- */

struct hmap;

/* One iseq or method entry, as read when BPF first saw it run. */
struct rb_code {
	__u64 addr;		/* the iseq, or the method entry */
	__u32 gen;		/* as announced: rb_iseq_gen() for an iseq, rb_gen() for a method entry */
	bool cme;		/* addr is a method entry */
	bool ok;
	bool singleton;		/* a method entry's owner is a singleton class: Foo.bar */
	char *name;		/* an iseq's label ("bar", "block in bar", "<main>"); a method's name */
	char *base;		/* an iseq's base label ("bar") */
	char *klass;		/* a method entry's owner's path ("Foo::Bar"); NULL: anonymous */
	char *file;		/* an iseq's path */
	__u64 encoded;		/* iseq_encoded: where its pc counts from */
	__u32 iseq_size;
	__u32 first_line;
	__u32 n_lines;
	__u32 *positions;	/* insn-info entries: where each starts, and its line */
	__u32 *lines;
};

/* A frame's whole name: an iseq's label with its method entry's class ("block in Foo#bar"). */
struct rb_name {
	__u64 iseq, me;
	__u32 iseq_gen, me_gen;
	char *full;
};

struct rb_pid {
	struct proc_image img;	/* PROC_EXEC_ANY: found running, adopted by its first event */
	bool superseded;	/* a later image holds the pid: only what was read names its frames */
	bool dead;		/* gone at the last sweep: freed at the next */
	bool unknown;		/* a CRuby we cannot walk: counted once */
	const struct rb_layout *layout;
	struct rb_proc proc;	/* as BPF has it */
	__u64 found_ns;		/* CLOCK_MONOTONIC when found: YJIT's code is looked for a while after */
	__u64 symbols;
	struct hmap *index;	/* (addr, gen, cme) -> codes[] id + 1 */
	struct rb_code *codes;
	size_t n_codes, cap_codes;
	struct hmap *name_index;	/* (iseq or me, me) -> names[] id + 1 */
	struct rb_name *names;
	size_t n_names, cap_names;
	size_t bytes;
};

struct ruby_rt {
	struct runtime_opts o;
	struct rb_pid **pids;
	size_t n_pids, cap_pids;
	struct ruby_stats stats;
	__u8 said[64];		/* versions said unknown once, by minor */
	__u64 next_retry_ns;	/* when ruby__retry looks again */
};

struct rb_pid *ruby__find_image(const struct ruby_rt *r, const struct proc_image *img);
void ruby__free_pid(struct rb_pid *p);
int ruby__add_image(struct ruby_rt *r, const struct proc_image *img);
void ruby__sweep(struct ruby_rt *r);
/* Processes found without YJIT's code in their first minute: looked at again, once a second. */
void ruby__retry(struct ruby_rt *r);

void ruby__event(struct ruby_rt *r, const struct rt_event *e);
int ruby__frame(struct ruby_rt *r, const struct proc_image *img, __u64 a, __u64 b,
		struct src_line *out, int max, __u64 *loc);
const char *ruby__mark(struct ruby_rt *r, __u64 slot);

/*
 * Reads the iseq or method entry at c->addr (c->cme says which) into c: 0,
 * -ENOENT (a method entry slot holding something else: a top-level frame's
 * cref), or another negative errno.
 */
int rb_code__read(const struct rb_mem *m, struct rb_code *c);
void rb_code__free(struct rb_code *c);
size_t rb_code__bytes(const struct rb_code *c);

/* The whole name of a frame: an iseq's label with the class of ME's entry (NULL: none), or a C method's. */
char *rb_name__compose(const struct rb_code *iseq, const struct rb_code *me);

#endif /* EBPFPROF_RUBY_INT_H */
