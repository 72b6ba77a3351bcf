/* java_vmstructs.h -- HotSpot's serviceability tables (gHotSpotVMStructs and friends) read from a JVM's memory */
#ifndef EBPFPROF_JAVA_VMSTRUCTS_H
#define EBPFPROF_JAVA_VMSTRUCTS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* The exported symbols of libjvm.so that describe the tables (values are addresses of variables). */
enum jvm_sym {
	JVM_STRUCTS, JVM_STRUCT_TYPE, JVM_STRUCT_FIELD, JVM_STRUCT_TYPE_STRING, JVM_STRUCT_IS_STATIC, JVM_STRUCT_OFFSET,
	JVM_STRUCT_ADDRESS, JVM_STRUCT_STRIDE,
	JVM_TYPES, JVM_TYPE_NAME, JVM_TYPE_SIZE, JVM_TYPE_STRIDE,
	JVM_INTS, JVM_INT_NAME, JVM_INT_VALUE, JVM_INT_STRIDE,
	JVM_LONGS, JVM_LONG_NAME, JVM_LONG_VALUE, JVM_LONG_STRIDE,
	JVM_SYM_COUNT
};

extern const char *const jvm_sym_names[JVM_SYM_COUNT];

/* Reads len bytes at addr of the target: 0, or a negative errno (nothing partial). */
typedef int (*jvm_read_fn)(void *ctx, __u64 addr, void *buf, size_t len);

struct jvm_mem {
	jvm_read_fn read;
	void *ctx;
};

struct vmstructs;

/* entries of one table read at most (HotSpot has about 3000 fields, 1000 types) */
#define VMSTRUCTS_MAX_ENTRIES 16384
/* longest type or field name kept; longer ones are cut (and match nothing we ask for) */
#define VMSTRUCTS_NAME_MAX 96

/*
 * Reads the four tables of a JVM whose symbols sym[] are at those addresses
 * of the target. Every stride, offset, count and string is bounded here: the
 * target controls them. NULL with errno set (-EINVAL: a table's layout is not
 * one we can read; -EFAULT: unreadable memory).
 */
struct vmstructs *vmstructs__read(const struct jvm_mem *m, const __u64 sym[JVM_SYM_COUNT]);
void vmstructs__free(struct vmstructs *v);

/* A field: its offset (nonstatic) or address (static). -ENOENT when the build does not have it. */
int vmstructs__field(const struct vmstructs *v, const char *type, const char *field, __u64 *out);
/* The bytes a field's C type takes by its type string (1, 2, 4, 8), or -ENOENT. */
int vmstructs__field_size(const struct vmstructs *v, const char *type, const char *field);
int vmstructs__type_size(const struct vmstructs *v, const char *type, __u64 *out);
int vmstructs__int(const struct vmstructs *v, const char *name, __s64 *out);
int vmstructs__long(const struct vmstructs *v, const char *name, __u64 *out);

/* entries read, for -v and tests */
size_t vmstructs__count(const struct vmstructs *v);
/* every entry, for tests and debugging: fn(type or constant name, field or NULL, value, ctx) */
void vmstructs__each(const struct vmstructs *v, void (*fn)(const char *, const char *, __u64, void *),
		     void *ctx);

#endif /* EBPFPROF_JAVA_VMSTRUCTS_H */
