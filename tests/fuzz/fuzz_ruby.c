/* fuzz_ruby.c -- libFuzzer target: CRuby iseqs, method entries, strings, classes and line tables read from a target's memory, and the code scanners */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "runtimes/ruby/ruby_int.h"

/* a succinct index table: ascending positions, no more than asked for, or refused */
static void succ(struct fuzz_in *in)
{
	__u32 max_pos = (__u32)fin_uint(in, 2), max = 1 + fin_u8(in), n = 0;
	struct fuzz_mem m = fuzz_mem_rest(in);
	__u32 *out = malloc(max * sizeof(*out));

	if (!out)
		abort();
	if (!rb_succ__positions(m.p, m.n, max_pos, out, max, &n)) {
		FUZZ_CHECK(n <= max);
		for (__u32 i = 1; i < n; i++)
			FUZZ_CHECK(out[i] > out[i - 1]);
	}
	free(out);
	free(m.p);
}

/* an iseq or method entry, in either version's layout: names NUL-terminated and bounded, lines within the iseq */
static void code(struct fuzz_in *in)
{
	const struct rb_layout *l = rb_layout__find(fin_u8(in) & 1 ? 0x030300 : 0x030100);
	struct rb_code c = { .cme = fin_u8(in) & 1 };
	__u64 symbols = FUZZ_MEM_BASE + 8 * fin_uint(in, 2);
	struct fuzz_mem m;
	struct rb_mem rm = { fuzz_mem_read, NULL, l, 0 };
	char *name;

	c.addr = FUZZ_MEM_BASE + 8 * fin_uint(in, 2);
	m = fuzz_mem_rest(in);
	rm.ctx = &m;
	rm.symbols = symbols;
	if (!rb_code__read(&rm, &c)) {
		FUZZ_CHECK(!c.name || strlen(c.name) < RB_STR_MAX);
		FUZZ_CHECK(c.cme || (c.name && c.base && c.file && c.n_lines <= c.iseq_size));
		name = c.cme ? rb_name__compose(NULL, &c) : rb_name__compose(&c, NULL);
		FUZZ_CHECK(name);
		free(name);
	}
	rb_code__free(&c);
	free(m.p);
}

/* the machine code scanners: any bytes, an address or not found */
static void scan(struct fuzz_in *in)
{
	struct fuzz_mem m = fuzz_mem_rest(in);
	__u64 v, add, jumps[4];
	__s64 off;

	rb_code__tls_index(m.p, m.n, FUZZ_MEM_BASE, &v, &add);
	FUZZ_CHECK(rb_code__tls_local_exec(m.p, m.n, &off) || off < 0);
	FUZZ_CHECK(rb_code__jumps(m.p, m.n, FUZZ_MEM_BASE, jumps, 4) <= 4);
	rb_code__symbols(m.p, m.n, FUZZ_MEM_BASE, &v);
	FUZZ_CHECK(rb_code__a64_jumps(m.p, m.n, FUZZ_MEM_BASE, jumps, 4) <= 4);
	rb_code__a64_symbols(m.p, m.n, FUZZ_MEM_BASE, &v);
	free(m.p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };

	switch (fin_u8(&in) % 3) {
	case 0: succ(&in); break;
	case 1: code(&in); break;
	default: scan(&in); break;
	}
	return 0;
}
