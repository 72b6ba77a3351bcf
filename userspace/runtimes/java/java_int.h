/* java_int.h -- shared by the files of runtimes/java/: a JVM's layout, and HotSpot's compressed streams */
#ifndef EBPFPROF_JAVA_INT_H
#define EBPFPROF_JAVA_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "../../../include/java.h"
#include "java_vmstructs.h"
#include "java_runtime.h"
#include "runtimes/rt_images.h"
#include "lib/clock.h"
#include "lib/hashmap.h"
#include "lib/proc_mem.h"

/*
 * Everything a JVM's tables told us: the BPF walk's offsets and the
 * namer's. Static fields are the process's addresses of those variables.
 */
struct jvm_layout {
	struct java_proc bpf;	/* offsets only here; addresses are filled per process */
	__u64 major;		/* Abstract_VM_Version::_vm_major_version */
	bool u5_x1;		/* streams in JDK 21+'s UNSIGNED5 (byte 0 excluded) */
	/* statics: addresses in the process */
	__u64 heaps, low_bound, high_bound, interp_code, vm_major;
	/* CodeHeap, VirtualSpace, GrowableArray, StubQueue */
	__u16 ch_memory, ch_segmap, ch_log2_seg, vs_low_boundary, vs_high_boundary;
	__u16 ga_len, ga_data, sq_buffer, sq_limit, sq_end;
	/* Method, ConstMethod, ConstantPool, Klass, Symbol */
	__u16 m_const, cm_constants, cm_name_index, cm_sig_index, cm_code_size, cm_flags, cm_size;
	__u16 cp_holder, cp_source_file, cp_size, k_name, sym_length, sym_body;
	bool src_in_klass;	/* cp_source_file is an InstanceKlass field (JDK 11-14) */
	__u32 cm_has_lines;	/* the ConstMethod flag saying a line number table follows the code */
	/* nmethod and its debug info */
	__u16 nm_method, nm_pcs, nm_pcs_end, nm_scopes, nm_metadata, nm_immutable;
	__u16 cb_mutable, cb_reloc_size, cb_mutable_size, nm_imm_size;
	bool nm_scopes_is_ptr;	/* JDK <= 22: _scopes_data_begin is a pointer, offsets from the blob */
	__u16 pc_pc, pc_scope, pc_size;
};

/* Fills *out from the tables; -ENOTSUP naming the first field this build lacks in *missing. */
int jvm_layout__from_vmstructs(const struct vmstructs *v, struct jvm_layout *out,
			       const char **missing);

/*
 * One unsigned int of a compressed stream at *pos of buf[0, len): HotSpot's
 * UNSIGNED5 (x1: JDK 21+, byte 0 excluded; else the older form). -EINVAL past len.
 */
int jvm_u5__read(const __u8 *buf, size_t len, size_t *pos, bool x1, __u32 *out);

/* The line of bytecode index bci by a method's compressed line number table; 0 if none. */
__u32 jvm_lines__find(const __u8 *tab, size_t len, bool x1, __u32 bci);

/* One scope of compiled code's debug info at off of data[0, len). */
struct jvm_scope {
	__s32 sender;		/* the caller's scope offset, 0: none (not inlined) */
	__u32 method_index;	/* into the nmethod's metadata, 1-based */
	__s32 bci;
};

int jvm_scope__read(const __u8 *data, size_t len, __u32 off, bool x1, struct jvm_scope *out);

/* A method as read from the process. */
struct jvm_method {
	__u64 addr;
	__u64 const_method;	/* the check against a reused Method address, and where bytecodes start */
	bool ok;
	char *function;		/* package.Class.method */
	char *file;		/* the class's SourceFile, NULL if none */
	__u8 *lines;		/* compressed line number table, NULL if none */
	__u32 n_lines;
	__u32 code_size;
};

/* A compiled method's debug info as read from the process. */
struct jvm_nmethod {
	__u64 addr;
	__u32 compile_id;	/* the check against a reused nmethod address */
	bool ok;
	__u64 code_begin;
	__u64 method;		/* Method* it compiles */
	__u8 *pcs;		/* PcDesc array */
	__u32 n_pcs;
	__u8 *scopes;		/* scope descriptors */
	__u32 n_scopes;
	__u64 *metadata;	/* Metadata* array the scopes index */
	__u32 n_metadata;
};

struct jvm_pid {
	RT_IMAGE_HEAD;		/* img, superseded, dead: rt_images.h */
	bool unknown;		/* tables we cannot use: counted, not walked */
	bool unsure;		/* unknown, but maybe still loading: looked at again before it counts */
	__u64 unsure_since_ns;	/* the first look that found its tables short */
	bool named_one;		/* a frame of it was named: first_named_ns is measured */
	__u64 found_ns;		/* when BPF got its table */
	struct jvm_layout layout;
	struct hmap *m_index, *nm_index;	/* address -> id + 1 */
	struct jvm_method *methods;
	size_t n_methods, cap_methods;
	struct jvm_nmethod *nmethods;
	size_t n_nmethods, cap_nmethods;
};

struct java {
	struct java_opts opts;
	struct rt_images pids;
	struct proc_image *waiting;	/* JVMs still starting */
	size_t n_waiting, cap_waiting;
	__u64 next_retry_ns;
	struct java_stats stats;
	bool said_unknown;
};

struct java_stats;
/* The state of image IMG (rt_images__find) */
struct jvm_pid *jvm__find_image(struct java *j, const struct proc_image *img);
void jvm__free_names(struct java *j, struct jvm_pid *p);

#endif /* EBPFPROF_JAVA_INT_H */
