/* java_layout.c -- the offsets of one HotSpot build, from its own serviceability tables */
#include <errno.h>
#include <string.h>
#include "java_int.h"

/*
 * HotSpot's interpreter frame, in words from the frame pointer: sender sp -1,
 * last sp -2, Method* -3, then x86-64 (frame_x86.hpp) mirror, mdp, cache,
 * locals and bcp -8; AArch64 (frame_aarch64.hpp) mdp, a padding word (the
 * extended sp since JDK 21), mirror, cache, locals and bcp -9. The tables
 * export the first two only; the rest have not moved from JDK 11 to 25.
 */
#define IF_METHOD_WORDS (-3)
#if defined(__x86_64__)
#define IF_BCP_WORDS (-8)
#elif defined(__aarch64__)
#define IF_BCP_WORDS (-9)
#endif

struct want {
	const char *type, *field;
	void *out;
	int size;		/* 2: __u16 offset, 8: __u64 address */
	bool optional;
};

static int take(const struct vmstructs *v, const struct want *w, int n, const char **missing)
{
	__u64 val;

	for (int i = 0; i < n; i++) {
		int err = w[i].field ? vmstructs__field(v, w[i].type, w[i].field, &val)
				     : vmstructs__type_size(v, w[i].type, &val);

		if (err) {
			if (w[i].optional)
				continue;
			*missing = w[i].field ? w[i].field : w[i].type;
			return -ENOTSUP;
		}
		if (w[i].size == 2 && val > 0xffff) {
			*missing = w[i].field ? w[i].field : w[i].type;
			return -ENOTSUP;
		}
		if (w[i].size == 2)
			*(__u16 *)w[i].out = (__u16)val;
		else
			*(__u64 *)w[i].out = val;
	}
	return 0;
}

/* the parts whose name moved between releases: the first one found */
static int take_either(const struct vmstructs *v, const char *type, const char *a, const char *b,
		       __u16 *out, int *which)
{
	__u64 val;

	*which = 0;
	if (vmstructs__field(v, type, a, &val)) {
		*which = 1;
		if (!b || vmstructs__field(v, type, b, &val))
			return -ENOTSUP;
	}
	if (val > 0xffff)
		return -ENOTSUP;
	*out = (__u16)val;
	return 0;
}

static int code_blob(const struct vmstructs *v, struct jvm_layout *l, const char **missing)
{
	struct java_proc *p = &l->bpf;
	int which;

	if (take_either(v, "CodeBlob", "_code_begin", "_code_offset", &p->cb_code, &which)) {
		*missing = "CodeBlob::_code_begin";
		return -ENOTSUP;
	}
	p->cb_code_is_offset = which;
	/* the debug info: JDK <= 22 keeps it in the blob, 23+ in a separate immutable block */
	if (!take_either(v, "CompiledMethod", "_scopes_data_begin", NULL, &l->nm_scopes, &which)) {
		l->nm_scopes_is_ptr = true;
		const struct want w[] = {
			{ "nmethod", "_scopes_pcs_offset", &l->nm_pcs, 2 },
			{ "nmethod", "_dependencies_offset", &l->nm_pcs_end, 2 },
			{ "nmethod", "_metadata_offset", &l->nm_metadata, 2 },
			{ "CompiledMethod", "_method", &l->nm_method, 2 },
		};
		return take(v, w, sizeof(w) / sizeof(w[0]), missing);
	}
	const struct want w[] = {
		{ "nmethod", "_scopes_pcs_offset", &l->nm_pcs, 2 },
		{ "nmethod", "_scopes_data_offset", &l->nm_scopes, 2 },
		{ "nmethod", "_immutable_data", &l->nm_immutable, 2 },
		{ "nmethod", "_method", &l->nm_method, 2 },
		{ "CodeBlob", "_mutable_data", &l->cb_mutable, 2 },
		{ "CodeBlob", "_relocation_size", &l->cb_reloc_size, 2 },
		{ "CodeBlob", "_mutable_data_size", &l->cb_mutable_size, 2 },
		{ "nmethod", "_immutable_data_size", &l->nm_imm_size, 2 },
	};
	l->nm_pcs_end = 0;
	return take(v, w, sizeof(w) / sizeof(w[0]), missing);
}

/* The fields we read as 4-byte ints must be ints in this build; one is 2 or 4 bytes. */
static int check_sizes(const struct vmstructs *v, struct java_proc *p, const char **missing)
{
	static const char *const ints[][2] = {
		{ "CodeBlob", "_frame_size" }, { "nmethod", "_compile_id" },
		{ "GrowableArrayBase", "_len" }, { "StubQueue", "_buffer_limit" },
		{ "StubQueue", "_queue_end" },
		{ "CodeHeap", "_log2_segment_size" }, { "nmethod", "_scopes_pcs_offset" },
		{ "PcDesc", "_pc_offset" }, { "PcDesc", "_scope_decode_offset" },
	};
	int size;

	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		size = vmstructs__field_size(v, ints[i][0], ints[i][1]);
		if (size != 4 && size != -ENOENT) {
			*missing = ints[i][1];
			return -ENOTSUP;
		}
	}
	size = vmstructs__field_size(v, "CodeBlob", "_frame_complete_offset");
	p->cb_frame_complete_size = size == 2 ? 2 : 4;
	if (size != 2 && size != 4 && size != -ENOENT) {
		*missing = "_frame_complete_offset";
		return -ENOTSUP;
	}
	return 0;
}

int jvm_layout__from_vmstructs(const struct vmstructs *v, struct jvm_layout *l,
			       const char **missing)
{
	struct java_proc *p = &l->bpf;
	__u64 block = 0, val = 0;
	__s64 flag = 0;
	int which, err;
	const struct want w[] = {
		{ "CodeCache", "_heaps", &l->heaps, 8 },
		{ "CodeCache", "_low_bound", &l->low_bound, 8 },
		{ "CodeCache", "_high_bound", &l->high_bound, 8 },
		{ "AbstractInterpreter", "_code", &l->interp_code, 8 },
		{ "Abstract_VM_Version", "_vm_major_version", &l->vm_major, 8 },
		{ "CodeHeap", "_memory", &l->ch_memory, 2 },
		{ "CodeHeap", "_segmap", &l->ch_segmap, 2 },
		{ "CodeHeap", "_log2_segment_size", &l->ch_log2_seg, 2 },
		{ "VirtualSpace", "_low_boundary", &l->vs_low_boundary, 2 },
		{ "VirtualSpace", "_high_boundary", &l->vs_high_boundary, 2 },
		{ "GrowableArray<int>", "_data", &l->ga_data, 2 },
		{ "StubQueue", "_stub_buffer", &l->sq_buffer, 2 },
		{ "StubQueue", "_buffer_limit", &l->sq_limit, 2 },
		{ "StubQueue", "_queue_end", &l->sq_end, 2 },
		{ "CodeBlob", "_name", &p->cb_name, 2 },
		{ "CodeBlob", "_frame_size", &p->cb_frame_size, 2 },
		{ "CodeBlob", "_frame_complete_offset", &p->cb_frame_complete, 2 },
		{ "nmethod", "_compile_id", &p->nm_compile_id, 2 },
		{ "Method", "_constMethod", &l->m_const, 2 },
		{ "ConstMethod", "_constants", &l->cm_constants, 2 },
		{ "ConstMethod", "_name_index", &l->cm_name_index, 2 },
		{ "ConstMethod", "_signature_index", &l->cm_sig_index, 2 },
		{ "ConstMethod", "_code_size", &l->cm_code_size, 2 },
		{ "ConstMethod", NULL, &l->cm_size, 2 },
		{ "ConstantPool", "_pool_holder", &l->cp_holder, 2 },
		{ "ConstantPool", NULL, &l->cp_size, 2 },
		{ "Klass", "_name", &l->k_name, 2 },
		{ "Symbol", "_length", &l->sym_length, 2 },
		{ "Symbol", "_body", &l->sym_body, 2 },
		{ "PcDesc", "_pc_offset", &l->pc_pc, 2 },
		{ "PcDesc", "_scope_decode_offset", &l->pc_scope, 2 },
		{ "PcDesc", NULL, &l->pc_size, 2 },
	};

	memset(l, 0, sizeof(*l));
	err = take(v, w, sizeof(w) / sizeof(w[0]), missing);
	if (err)
		return err;
	if (vmstructs__type_size(v, "HeapBlock", &block) || block > 64) {
		*missing = "HeapBlock";
		return -ENOTSUP;
	}
	p->block_header = (__u16)block;
	/* the class's source file: in its ConstantPool since JDK 15, in the InstanceKlass before */
	if (!vmstructs__field(v, "ConstantPool", "_source_file_name_index", &val)) {
		l->src_in_klass = false;
	} else if (!vmstructs__field(v, "InstanceKlass", "_source_file_name_index", &val)) {
		l->src_in_klass = true;
	} else {
		*missing = "_source_file_name_index";
		return -ENOTSUP;
	}
	if (val > 0xffff) {
		*missing = "_source_file_name_index";
		return -ENOTSUP;
	}
	l->cp_source_file = (__u16)val;
	/* GenericGrowableArray until JDK 15 */
	if (take_either(v, "GrowableArrayBase", "_len", NULL, &l->ga_len, &which) &&
	    take_either(v, "GenericGrowableArray", "_len", NULL, &l->ga_len, &which)) {
		*missing = "GrowableArrayBase::_len";
		return -ENOTSUP;
	}
	if (take_either(v, "ConstMethod", "_flags", "_flags._flags", &l->cm_flags, &which)) {
		*missing = "ConstMethod::_flags";
		return -ENOTSUP;
	}
	/* JDK 21+ moved the flags to ConstMethodFlags, and the streams to UNSIGNED5 with it */
	l->u5_x1 = which == 1;
	if (vmstructs__int(v, which ? "ConstMethodFlags::_misc_has_linenumber_table"
				    : "ConstMethod::_has_linenumber_table", &flag) || flag <= 0) {
		*missing = "has_linenumber_table";
		return -ENOTSUP;
	}
	l->cm_has_lines = (__u32)flag;
	err = code_blob(v, l, missing);
	if (err)
		return err;
	err = check_sizes(v, p, missing);
	if (err)
		return err;
#if !defined(IF_BCP_WORDS)
	*missing = "interpreter frames of this architecture";
	return -ENOTSUP;
#else
	p->if_method = IF_METHOD_WORDS * 8;
	p->if_bcp = IF_BCP_WORDS * 8;
	flag = -1;
	vmstructs__int(v, "frame::interpreter_frame_sender_sp_offset", &flag);
	p->if_sender_sp = (__s16)(flag * 8);
	return 0;
#endif
}
