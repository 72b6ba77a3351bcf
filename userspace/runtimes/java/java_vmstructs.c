/* java_vmstructs.c -- reads HotSpot's serviceability tables from a JVM's memory, every size and pointer bounded */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "java_vmstructs.h"

#define STRIDE_MAX 256		/* an entry is 48 bytes today; a larger one is not a table we know */

const char *const jvm_sym_names[JVM_SYM_COUNT] = {
	[JVM_STRUCTS] = "gHotSpotVMStructs",
	[JVM_STRUCT_TYPE] = "gHotSpotVMStructEntryTypeNameOffset",
	[JVM_STRUCT_FIELD] = "gHotSpotVMStructEntryFieldNameOffset",
	[JVM_STRUCT_TYPE_STRING] = "gHotSpotVMStructEntryTypeStringOffset",
	[JVM_STRUCT_IS_STATIC] = "gHotSpotVMStructEntryIsStaticOffset",
	[JVM_STRUCT_OFFSET] = "gHotSpotVMStructEntryOffsetOffset",
	[JVM_STRUCT_ADDRESS] = "gHotSpotVMStructEntryAddressOffset",
	[JVM_STRUCT_STRIDE] = "gHotSpotVMStructEntryArrayStride",
	[JVM_TYPES] = "gHotSpotVMTypes",
	[JVM_TYPE_NAME] = "gHotSpotVMTypeEntryTypeNameOffset",
	[JVM_TYPE_SIZE] = "gHotSpotVMTypeEntrySizeOffset",
	[JVM_TYPE_STRIDE] = "gHotSpotVMTypeEntryArrayStride",
	[JVM_INTS] = "gHotSpotVMIntConstants",
	[JVM_INT_NAME] = "gHotSpotVMIntConstantEntryNameOffset",
	[JVM_INT_VALUE] = "gHotSpotVMIntConstantEntryValueOffset",
	[JVM_INT_STRIDE] = "gHotSpotVMIntConstantEntryArrayStride",
	[JVM_LONGS] = "gHotSpotVMLongConstants",
	[JVM_LONG_NAME] = "gHotSpotVMLongConstantEntryNameOffset",
	[JVM_LONG_VALUE] = "gHotSpotVMLongConstantEntryValueOffset",
	[JVM_LONG_STRIDE] = "gHotSpotVMLongConstantEntryArrayStride",
};

/* One entry of any table: type and field name (a constant has only a name), and its number. */
struct vm_entry {
	char *type;
	char *field;		/* NULL for types and constants */
	char *ctype;		/* a field's C type ("int16_t"), NULL if none */
	__u64 value;		/* offset, address, size or constant */
};

enum vm_table { VM_STRUCTS, VM_TYPES, VM_INTS, VM_LONGS, VM_TABLES };

struct vmstructs {
	struct vm_entry *e[VM_TABLES];
	size_t n[VM_TABLES], cap[VM_TABLES];
};

/* How one table is laid out: where its array is and where each part sits in an entry. */
struct table_desc {
	enum jvm_sym array, stride, name, field, value, alt_value, flag, ctype;
	__u32 value_size;
};

static const struct table_desc tables[VM_TABLES] = {
	[VM_STRUCTS] = { JVM_STRUCTS, JVM_STRUCT_STRIDE, JVM_STRUCT_TYPE, JVM_STRUCT_FIELD,
			 JVM_STRUCT_OFFSET, JVM_STRUCT_ADDRESS, JVM_STRUCT_IS_STATIC, JVM_STRUCT_TYPE_STRING, 8 },
	[VM_TYPES] = { JVM_TYPES, JVM_TYPE_STRIDE, JVM_TYPE_NAME, JVM_SYM_COUNT, JVM_TYPE_SIZE,
		       JVM_SYM_COUNT, JVM_SYM_COUNT, JVM_SYM_COUNT, 8 },
	[VM_INTS] = { JVM_INTS, JVM_INT_STRIDE, JVM_INT_NAME, JVM_SYM_COUNT, JVM_INT_VALUE,
		      JVM_SYM_COUNT, JVM_SYM_COUNT, JVM_SYM_COUNT, 4 },
	[VM_LONGS] = { JVM_LONGS, JVM_LONG_STRIDE, JVM_LONG_NAME, JVM_SYM_COUNT, JVM_LONG_VALUE,
		       JVM_SYM_COUNT, JVM_SYM_COUNT, JVM_SYM_COUNT, 8 },
};

/* A NUL-terminated string of the target, read in pieces so a string near unmapped memory is read too. */
static char *read_str(const struct jvm_mem *m, __u64 addr)
{
	char buf[VMSTRUCTS_NAME_MAX + 1];
	size_t got = 0;

	if (!addr)
		return NULL;
	while (got < VMSTRUCTS_NAME_MAX) {
		size_t chunk = 16;

		if (m->read(m->ctx, addr + got, buf + got, chunk))
			return NULL;
		if (memchr(buf + got, 0, chunk))
			return strdup(buf);
		got += chunk;
	}
	buf[VMSTRUCTS_NAME_MAX] = 0;
	return strdup(buf);
}

static int read_u64(const struct jvm_mem *m, __u64 addr, __u64 *out)
{
	return m->read(m->ctx, addr, out, sizeof(*out));
}

static void free_entries(struct vm_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].type);
		free(e[i].field);
		free(e[i].ctype);
	}
	free(e);
}

/* the variables of sym[] that hold a table's array address, stride and entry offsets */
static int read_desc(const struct jvm_mem *m, const __u64 *sym, const struct table_desc *d,
		     __u64 *array, __u64 *stride, __u64 off[6])
{
	const enum jvm_sym parts[6] = { d->name, d->field, d->value, d->alt_value, d->flag, d->ctype };
	const __u32 sizes[6] = { 8, 8, d->value_size, 8, 4, 8 };

	if (!sym[d->array] || !sym[d->stride] || read_u64(m, sym[d->array], array) ||
	    read_u64(m, sym[d->stride], stride))
		return -EFAULT;
	if (!*array || *stride < 8 || *stride > STRIDE_MAX)
		return -EINVAL;
	for (int k = 0; k < 6; k++) {
		off[k] = 0;
		if (parts[k] == JVM_SYM_COUNT)
			continue;
		if (!sym[parts[k]] || read_u64(m, sym[parts[k]], &off[k]))
			return -EFAULT;
		if (off[k] > *stride || off[k] + sizes[k] > *stride)
			return -EINVAL;
	}
	return 0;
}

static __u64 entry_u64(const __u8 *e, __u64 off, __u32 size)
{
	__u64 v = 0;

	memcpy(&v, e + off, size);
	if (size == 4)
		v = (__u64)(__s64)(__s32)v;	/* int constants are signed */
	return v;
}

/* Reads table t up to its terminating entry (a NULL name). */
static int read_table(const struct jvm_mem *m, const __u64 *sym, struct vmstructs *v,
		      enum vm_table t)
{
	const struct table_desc *d = &tables[t];
	__u64 array, stride, off[6], name;
	__u8 e[STRIDE_MAX];
	int err = read_desc(m, sym, d, &array, &stride, off);

	if (err)
		return err;
	for (size_t i = 0;; i++) {
		struct vm_entry *out;

		if (i >= VMSTRUCTS_MAX_ENTRIES)
			return -EINVAL;	/* no terminator where one must be */
		if (m->read(m->ctx, array + i * stride, e, stride))
			return -EFAULT;
		name = entry_u64(e, off[0], 8);
		if (!name)
			return 0;
		if (ARRAY_RESERVE(v->e[t], v->cap[t], v->n[t] + 1))
			return -ENOMEM;
		out = &v->e[t][v->n[t]];
		memset(out, 0, sizeof(*out));
		out->type = read_str(m, name);
		if (!out->type)
			continue;	/* an unreadable name: skipped, never matched */
		v->n[t]++;
		out->value = entry_u64(e, off[2], d->value_size);
		if (t != VM_STRUCTS)
			continue;
		out->field = read_str(m, entry_u64(e, off[1], 8));
		out->ctype = read_str(m, entry_u64(e, off[5], 8));
		if (entry_u64(e, off[4], 4))
			out->value = entry_u64(e, off[3], 8);	/* static: its address */
	}
}

struct vmstructs *vmstructs__read(const struct jvm_mem *m, const __u64 sym[JVM_SYM_COUNT])
{
	struct vmstructs *v = calloc(1, sizeof(*v));
	int err = 0;

	if (!v)
		return NULL;
	for (int t = 0; t < VM_TABLES && !err; t++)
		err = read_table(m, sym, v, t);
	if (err) {
		vmstructs__free(v);
		errno = -err;
		return NULL;
	}
	return v;
}

void vmstructs__free(struct vmstructs *v)
{
	if (!v)
		return;
	for (int t = 0; t < VM_TABLES; t++)
		free_entries(v->e[t], v->n[t]);
	free(v);
}

static int find(const struct vmstructs *v, enum vm_table t, const char *type, const char *field,
		__u64 *out)
{
	for (size_t i = 0; i < v->n[t]; i++) {
		const struct vm_entry *e = &v->e[t][i];

		if (strcmp(e->type, type) || (field && (!e->field || strcmp(e->field, field))))
			continue;
		*out = e->value;
		return 0;
	}
	return -ENOENT;
}

int vmstructs__field(const struct vmstructs *v, const char *type, const char *field, __u64 *out)
{
	return find(v, VM_STRUCTS, type, field, out);
}

int vmstructs__field_size(const struct vmstructs *v, const char *type, const char *field)
{
	static const struct { const char *name; int size; } sizes[] = {
		{ "int16_t", 2 }, { "uint16_t", 2 }, { "u2", 2 }, { "short", 2 }, { "jushort", 2 },
		{ "jshort", 2 }, { "int", 4 }, { "int32_t", 4 }, { "uint32_t", 4 }, { "u4", 4 },
		{ "jint", 4 }, { "juint", 4 }, { "unsigned int", 4 }, { "u1", 1 }, { "uint8_t", 1 },
		{ "int8_t", 1 }, { "bool", 1 }, { "char", 1 }, { "jbyte", 1 }, { "jubyte", 1 },
	};

	for (size_t i = 0; i < v->n[VM_STRUCTS]; i++) {
		const struct vm_entry *e = &v->e[VM_STRUCTS][i];

		if (strcmp(e->type, type) || !e->field || strcmp(e->field, field))
			continue;
		if (!e->ctype)
			return -ENOENT;
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
			if (!strcmp(e->ctype, sizes[k].name))
				return sizes[k].size;
		return 8;	/* pointers, size_t, intptr_t, address */
	}
	return -ENOENT;
}

int vmstructs__type_size(const struct vmstructs *v, const char *type, __u64 *out)
{
	return find(v, VM_TYPES, type, NULL, out);
}

int vmstructs__int(const struct vmstructs *v, const char *name, __s64 *out)
{
	return find(v, VM_INTS, name, NULL, (__u64 *)out);
}

int vmstructs__long(const struct vmstructs *v, const char *name, __u64 *out)
{
	return find(v, VM_LONGS, name, NULL, out);
}

size_t vmstructs__count(const struct vmstructs *v)
{
	return v->n[VM_STRUCTS] + v->n[VM_TYPES] + v->n[VM_INTS] + v->n[VM_LONGS];
}

/* every entry, for tests and debugging: fn(type, field or NULL, value) */
void vmstructs__each(const struct vmstructs *v, void (*fn)(const char *, const char *, __u64, void *),
		     void *ctx)
{
	for (int t = 0; t < VM_TABLES; t++)
		for (size_t i = 0; i < v->n[t]; i++)
			fn(v->e[t][i].type, v->e[t][i].field, v->e[t][i].value, ctx);
}
