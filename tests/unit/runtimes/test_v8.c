/* test_v8.c -- unit tests for runtimes/v8/: source position tables as V8 encodes them, strings and line ends in a fake heap, a real Node found and its offsets */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include "runtimes/v8/v8_int.h"
#include "runtimes/v8/v8_runtime.h"
#include "test.h"

/* ---- source positions ---- */

/* V8's encoding (source-position-table.cc): zigzag VLQs, 7 bits a byte, low first */
static size_t put_vlq(__u8 *out, __s64 v)
{
	__u64 u = ((__u64)v << 1) ^ (__u64)(v >> 63);
	size_t n = 0;

	do {
		out[n] = u & 0x7f;
		u >>= 7;
		if (u)
			out[n] |= 0x80;
		n++;
	} while (u);
	return n;
}

/* one entry, deltas from the previous: an expression's code delta is negated less 1 */
static size_t put_entry(__u8 *out, __s64 *code, __s64 *pos, __s64 c, __s64 script_off,
			int statement)
{
	__s64 raw = script_off << 1;	/* SourcePosition: not external, inlining id 0 */
	size_t n = put_vlq(out, statement ? c - *code : -(c - *code) - 1);

	n += put_vlq(out + n, raw - *pos);
	*code = c;
	*pos = raw;
	return n;
}

static int test_positions(void)
{
	__u8 tab[64];
	__s64 code = -1, pos = 0;
	size_t n = 0;

	n += put_entry(tab + n, &code, &pos, -1, 10, 1);	/* the function's entry */
	n += put_entry(tab + n, &code, &pos, 0, 25, 1);
	n += put_entry(tab + n, &code, &pos, 7, 300, 0);
	n += put_entry(tab + n, &code, &pos, 12, 40, 1);	/* a loop's back edge: back in the source */
	n += put_entry(tab + n, &code, &pos, 200, 100000, 1);
	CHECK(v8_positions__find(tab, n, 0) == 25);
	CHECK(v8_positions__find(tab, n, 6) == 25);
	CHECK(v8_positions__find(tab, n, 7) == 300);
	CHECK(v8_positions__find(tab, n, 12) == 40);
	CHECK(v8_positions__find(tab, n, 199) == 40);
	CHECK(v8_positions__find(tab, n, 5000) == 100000);
	/* cut inside an entry: malformed, not a guess */
	CHECK(v8_positions__find(tab, n - 1, 5000) == -1);
	CHECK(v8_positions__find(tab, 0, 0) == -1);
	return TEST_OK;
}

static int test_lines(void)
{
	const __u32 ends[] = { 9, 20, 21, 40 };	/* '\n' at these positions */

	CHECK(v8_lines__find(ends, 4, 0) == 1);
	CHECK(v8_lines__find(ends, 4, 9) == 1);
	CHECK(v8_lines__find(ends, 4, 10) == 2);
	CHECK(v8_lines__find(ends, 4, 21) == 3);
	CHECK(v8_lines__find(ends, 4, 22) == 4);
	CHECK(v8_lines__find(ends, 4, 41) == 5);	/* the last line, with no '\n' */
	CHECK(v8_lines__find(ends, 4, -1) == 0);
	return TEST_OK;
}

/* ---- a fake heap: objects at BASE + offset; a map is an object with its type at 12 ---- */

#define BASE 0x200000ULL
#define HEAP 4096

struct heap {
	__u8 b[HEAP];
	size_t used;
};

static int heap_read(void *ctx, __u64 addr, void *buf, size_t len)
{
	const struct heap *h = ctx;

	if (addr < BASE || addr - BASE > h->used || len > h->used - (addr - BASE))
		return -EFAULT;
	memcpy(buf, h->b + (addr - BASE), len);
	return 0;
}

/* a new object of SIZE bytes: its tagged address */
static __u64 alloc(struct heap *h, size_t size)
{
	__u64 at = BASE + h->used;

	h->used += (size + 7) & ~7UL;
	return at + 1;
}

static void put64(struct heap *h, __u64 obj, size_t off, __u64 v)
{
	memcpy(h->b + (obj - 1 - BASE) + off, &v, 8);
}

static void put32(struct heap *h, __u64 obj, size_t off, __u32 v)
{
	memcpy(h->b + (obj - 1 - BASE) + off, &v, 4);
}

static __u64 smi(__s64 v)
{
	return (__u64)v << 32;
}

/* a map whose instance type is TYPE */
static __u64 new_map(struct heap *h, __u16 type)
{
	__u64 m = alloc(h, 16);

	memcpy(h->b + (m - 1 - BASE) + 12, &type, 2);
	return m;
}

/* Node 20's layout, as its v8dbg_* symbols give it */
static void layout(struct v8_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->bpf.map_instance_type = 12;
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
	l->type_fixed_array = 175;
	l->first_nonstring_type = 128;
	l->str_repr_mask = 7;
	l->str_encoding_mask = 8;
	l->cons_tag = 1;
	l->sliced_tag = 3;
	l->thin_tag = 5;
	l->one_byte_tag = 8;
}

/* instance types: representation | encoding (one byte: 8) */
#define SEQ_ONE 8
#define SEQ_TWO 0
#define CONS_ONE 9
#define SLICED_ONE 11
#define THIN_ONE 13
#define EXTERNAL_ONE 10

static __u64 seq_one(struct heap *h, const char *s)
{
	__u64 o = alloc(h, 16 + strlen(s));

	put64(h, o, 0, new_map(h, SEQ_ONE));
	put32(h, o, 12, (__u32)strlen(s));
	memcpy(h->b + (o - 1 - BASE) + 16, s, strlen(s));
	return o;
}

static int test_strings(void)
{
	struct heap *h = calloc(1, sizeof(*h));
	struct v8_layout l;
	struct v8_mem m = { heap_read, h, &l };
	__u64 a, b, cons, sliced, thin, two, ext;
	const __u16 wide[] = { 'f', 0xf6, 'o', 0x4e2d };	/* "föo中" */
	char out[64];
	int ret = TEST_FAIL;

	if (!h)
		return TEST_FAIL;
	layout(&l);
	a = seq_one(h, "Module.");
	b = seq_one(h, "_compile");
	cons = alloc(h, 32);
	put64(h, cons, 0, new_map(h, CONS_ONE));
	put32(h, cons, 12, 15);
	put64(h, cons, 16, a);
	put64(h, cons, 24, b);
	sliced = alloc(h, 32);
	put64(h, sliced, 0, new_map(h, SLICED_ONE));
	put32(h, sliced, 12, 4);
	put64(h, sliced, 16, cons);
	put64(h, sliced, 24, smi(6));	/* ".\_com" from the cons string */
	thin = alloc(h, 24);
	put64(h, thin, 0, new_map(h, THIN_ONE));
	put32(h, thin, 12, 8);
	put64(h, thin, 16, b);
	two = alloc(h, 16 + sizeof(wide));
	put64(h, two, 0, new_map(h, SEQ_TWO));
	put32(h, two, 12, 4);
	memcpy(h->b + (two - 1 - BASE) + 16, wide, sizeof(wide));
	ext = alloc(h, 32);
	put64(h, ext, 0, new_map(h, EXTERNAL_ONE));
	put32(h, ext, 12, 3);

	if (v8_mem__string(&m, cons, out, sizeof(out)) != 15 || strcmp(out, "Module._compile"))
		goto out;
	if (v8_mem__string(&m, sliced, out, sizeof(out)) != 4 || strcmp(out, "._co"))
		goto out;
	if (v8_mem__string(&m, thin, out, sizeof(out)) != 8 || strcmp(out, "_compile"))
		goto out;
	if (v8_mem__string(&m, two, out, sizeof(out)) < 0 || strcmp(out, "f\xc3\xb6o\xe4\xb8\xad"))
		goto out;
	/* cut to the buffer, never past it */
	if (v8_mem__string(&m, cons, out, 7) != 6 || strcmp(out, "Module"))
		goto out;
	/* external strings' characters are outside the heap: refused, not guessed */
	if (v8_mem__string(&m, ext, out, sizeof(out)) != -EINVAL)
		goto out;
	/* a pointer out of the heap, a Smi */
	if (v8_mem__string(&m, BASE + HEAP * 2 + 1, out, sizeof(out)) >= 0 ||
	    v8_mem__string(&m, smi(3), out, sizeof(out)) >= 0)
		goto out;
	ret = TEST_OK;
out:
	if (ret)
		fprintf(stderr, "  got '%s'\n", out);
	free(h);
	return ret;
}

static int test_line_ends(void)
{
	struct heap *h = calloc(1, sizeof(*h));
	struct v8_layout l;
	struct v8_mem m = { heap_read, h, &l };
	__u64 script, arr, undef, src;
	__u32 *ends = NULL, n = 0;
	int ret = TEST_FAIL;

	if (!h)
		return TEST_FAIL;
	layout(&l);
	/* V8 made them: a FixedArray of Smis */
	script = alloc(h, 64);
	arr = alloc(h, 16 + 3 * 8);
	put64(h, arr, 0, new_map(h, 175));
	put64(h, arr, 8, smi(3));
	put64(h, arr, 16, smi(4));
	put64(h, arr, 24, smi(9));
	put64(h, arr, 32, smi(30));
	put64(h, script, 56, arr);
	if (v8_mem__line_ends(&m, script, &ends, &n, 100) || n != 3 || ends[2] != 30)
		goto out;
	free(ends);
	/* more than the bound: refused */
	if (v8_mem__line_ends(&m, script, &ends, &n, 2) != -EFBIG || ends)
		goto out;
	/* not made yet (undefined): from the source itself */
	undef = alloc(h, 16);
	put64(h, undef, 0, new_map(h, 131));
	put64(h, script, 56, undef);
	src = seq_one(h, "a\nbb\n\nccc");
	put64(h, script, 8, src);
	if (v8_mem__line_ends(&m, script, &ends, &n, 100) || n != 3 || ends[0] != 1 || ends[1] != 4 ||
	    ends[2] != 5)
		goto out;
	ret = TEST_OK;
out:
	free(ends);
	free(h);
	return ret;
}

/* ---- a real Node: found, its offsets from its own symbols ---- */

static int test_real_node(void)
{
	const char *node = getenv("NODE") ? getenv("NODE") : "/usr/bin/node";
	const struct runtime_ops *ops = &v8_runtime;
	struct runtime_opts o = { .proc_root = "/proc" };
	struct v8_proc p;
	struct v8_stats st;
	struct proc_image img = {}, self = {};
	int ret = TEST_FAIL, status, err = -EAGAIN;
	void *rt = NULL;
	pid_t pid;
	__u32 key;

	if (access(node, X_OK))
		SKIP("no node binary (NODE= or /usr/bin/node)");
	o.procs_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "v8_test", 4, sizeof(struct v8_proc), 8, NULL);
	o.pids_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "v8_test_bits", 4,
				   sizeof(struct unwind_pid_bits), 1, NULL);
	if (o.procs_fd < 0 || o.pids_fd < 0)
		SKIP("cannot create BPF maps (root needed)");
	pid = fork();
	if (!pid) {
		execl(node, node, "-e", "let s = 0; for (;;) s += Math.sqrt(s)", (char *)NULL);
		_exit(127);
	}
	rt = ops->new(&o);
	img.pid = (__u32)pid;
	proc_image__start_of("/proc", img.pid, &img.start);
	/* until its JIT code range is there (a second or so of start-up) */
	for (int i = 0; rt && i < 50 && err == -EAGAIN; i++) {
		usleep(100000);
		err = ops->add_image(rt, &img);
	}
	key = (__u32)pid;
	if (err || bpf_map_lookup_elem(o.procs_fd, &key, &p)) {
		fprintf(stderr, "  add_image: %d\n", err);
		goto out;
	}
	/* found before its JIT code range: retry looks again each second until there is one */
	for (int i = 0; i < 50 && p.n_ranges < 2; i++) {
		usleep(100000);
		ops->retry(rt);
		bpf_map_lookup_elem(o.procs_fd, &key, &p);
	}
	printf("  %s: %u code ranges, builtins at %llx and %llx\n", node, p.n_ranges,
	       (unsigned long long)p.builtins[0].low, (unsigned long long)p.builtins[1].low);
	/* V8's x64 frame layout, as every version from Node 18 to 26 exports it */
	CHECK(p.fp_function == -16 && p.fp_context == -8 && p.fp_bytecode_array == -32 &&
	      p.fp_bytecode_offset == -40);
	CHECK(p.n_ranges >= 2 && p.builtins[0].low && p.builtins[0].high > p.builtins[0].low);
	CHECK(p.type_sfi && p.type_bytecode_array && p.map_instance_type == 12);
	ops->stats_read(rt, &st);
	CHECK(st.procs == 1 && st.unknown_versions == 0);
	/* not V8 at all: not there, nothing counted */
	self.pid = (__u32)getpid();
	proc_image__start_of("/proc", self.pid, &self.start);
	CHECK(ops->add_image(rt, &self) == -ENOENT);
	ops->stats_read(rt, &st);
	CHECK(st.procs == 1 && st.unknown_versions == 0);
	ret = TEST_OK;
out:
	if (rt)
		ops->free(rt);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(o.procs_fd);
	close(o.pids_fd);
	return ret;
}

TEST_MAIN("v8", { "positions", test_positions }, { "lines", test_lines },
	  { "strings", test_strings }, { "line_ends", test_line_ends },
	  { "real_node", test_real_node })
