/* fuzz_v8.c -- libFuzzer target: V8 strings, line ends, source position tables and scope infos, all read from a target's memory */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "lib/utf8.h"
#include "runtimes/v8/v8_int.h"

/* Node 20's values, as its v8dbg_* symbols give them */
static void layout(struct v8_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->bpf.map_instance_type = 12;
	l->bpf.type_sfi = 262;
	l->bpf.type_bytecode_array = 191;
	l->script_name = 16;
	l->script_source = 8;
	l->script_line_ends = 56;
	l->fixed_length = 8;
	l->fixed_data = 16;
	l->string_length = 12;
	l->seq_one_chars = 16;
	l->seq_two_chars = 16;
	l->cons_first = 16;
	l->cons_second = 24;
	l->sliced_parent = 16;
	l->sliced_offset = 24;
	l->thin_actual = 16;
	l->scopeinfo_first_vars = 3;
	l->scopeinfo_ncontextlocals = 2;
	l->type_fixed_array = 175;
	l->first_nonstring_type = 128;
	l->str_repr_mask = 7;
	l->str_encoding_mask = 8;
	l->seq_tag = 0;
	l->cons_tag = 1;
	l->sliced_tag = 3;
	l->thin_tag = 5;
	l->one_byte_tag = 8;
}

/* a source position table: a position in range or -1, never a read past it */
static void positions(struct fuzz_in *in)
{
	__u32 offset = (__u32)fin_uint(in, 4);
	struct fuzz_mem m = fuzz_mem_rest(in);
	__s64 pos = v8_positions__find(m.p, m.n, offset);

	FUZZ_CHECK(pos >= -1 && pos < (1 << 30));
	free(m.p);
}

/* a string object: valid UTF-8 that fits the buffer, or refused */
static void string(struct fuzz_in *in)
{
	struct v8_layout l;
	size_t out_size = 1 + fin_u8(in);
	__u64 obj = FUZZ_MEM_BASE + fin_uint(in, 2) + 1;
	struct fuzz_mem m = fuzz_mem_rest(in);
	struct v8_mem vm = { fuzz_mem_read, &m, &l };
	char *out = malloc(out_size);
	int n;

	if (!out)
		abort();
	layout(&l);
	n = v8_mem__string(&vm, obj, out, out_size);
	if (n >= 0) {
		FUZZ_CHECK((size_t)n < out_size && strlen(out) == (size_t)n);
		FUZZ_CHECK(utf8__valid(out, (size_t)n));
	}
	free(out);
	free(m.p);
}

/* a script's line ends: increasing, at most the bound, or refused */
static void line_ends(struct fuzz_in *in)
{
	struct v8_layout l;
	__u32 max = 1 + fin_u8(in), *ends = NULL, n = 0;
	__u64 script = FUZZ_MEM_BASE + fin_uint(in, 2) + 1;
	struct fuzz_mem m = fuzz_mem_rest(in);
	struct v8_mem vm = { fuzz_mem_read, &m, &l };

	layout(&l);
	if (!v8_mem__line_ends(&vm, script, &ends, &n, max)) {
		FUZZ_CHECK(n <= max && (n == 0 || ends));
		for (__u32 i = 1; i < n; i++)
			FUZZ_CHECK(ends[i] >= ends[i - 1]);
		if (n)
			FUZZ_CHECK(v8_lines__find(ends, n, ends[n - 1]) == n);
	} else {
		FUZZ_CHECK(!ends && !n);
	}
	free(ends);
	free(m.p);
}

/* a ScopeInfo's words: where names start is within them */
static void scope_info(struct fuzz_in *in)
{
	struct v8_layout l;
	struct fuzz_mem m = fuzz_mem_rest(in);
	size_t n = m.n / 8;
	__u64 *w = malloc(n ? n * 8 : 8);
	int i;

	if (!w)
		abort();
	memcpy(w, m.p, n * 8);
	layout(&l);
	i = v8_scope_info__names(&l, w, n);
	FUZZ_CHECK(i == -ENOENT || (i >= 0 && (size_t)i < n));
	free(w);
	free(m.p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };

	switch (fin_u8(&in) % 4) {
	case 0: positions(&in); break;
	case 1: string(&in); break;
	case 2: line_ends(&in); break;
	default: scope_info(&in); break;
	}
	return 0;
}
