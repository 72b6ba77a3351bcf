/* test_ruby.c -- unit tests for runtimes/ruby/: CRuby's succinct line tables, the code scanners, real interpreters found and read */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include "lib/proc_mem.h"
#include "symbolize/proc_maps.h"
#include "runtimes/ruby/ruby_int.h"
#include "runtimes/ruby/ruby_runtime.h"
#include "test.h"

/* ---- the succinct index table, made as CRuby's iseq.c makes it (a reading of its algorithm) ---- */

static size_t make_succ(__u8 *out, __u32 max_pos, const __u32 *pos, __u32 n)
{
	__u32 imm = (max_pos < 54 ? max_pos + 8 : 54) / 9, blocks = max_pos < 54 ? 0 : (max_pos - 54 + 511) / 512;
	__u32 r = 0;
	size_t len = rb_succ__bytes(max_pos);

	memset(out, 0, len);
	for (__u32 j = 0; j < imm; j++) {
		__u64 v = 0;

		for (__u32 i = 0; i < 9; i++) {
			if (r < n && pos[r] == j * 9 + i)
				r++;
			v |= (__u64)r << (7 * i);
		}
		memcpy(out + 8 * j, &v, 8);
	}
	for (__u32 k = 0; k < blocks; k++) {
		__u8 *blk = out + 48 + 80 * k;
		__u64 small = 0, small_rank = 0;

		memcpy(blk, &r, 4);
		for (__u32 j = 0; j < 8; j++) {
			__u64 bits = 0;

			if (j)
				small |= small_rank << (9 * (j - 1));
			for (__u32 i = 0; i < 64; i++)
				if (r < n && pos[r] == k * 512 + j * 64 + i + 54) {
					bits |= 1ULL << i;
					r++;
				}
			memcpy(blk + 16 + 8 * j, &bits, 8);
			small_rank += (__u64)__builtin_popcountll(bits);
		}
		memcpy(blk + 8, &small, 8);
	}
	return len;
}

static int test_succ(void)
{
	static const __u32 sizes[] = { 1, 7, 53, 54, 55, 600, 1500, 4096 };
	__u8 tab[48 + 80 * 10];
	__u32 pos[1024], got[1024], n, k;

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		__u32 max = sizes[s];

		/* a position at 0, then every 1-5 VALUEs: instructions of one to four operands */
		for (n = 0, k = 0; k < max && n < 1024; k += 1 + (k * 7 + 3) % 5)
			pos[n++] = k;
		size_t len = make_succ(tab, max, pos, n);

		CHECK(!rb_succ__positions(tab, len, max, got, 1024, &k));
		CHECK(k == n && !memcmp(got, pos, n * sizeof(*pos)));
		/* short of the table's bytes: refused, never read past */
		CHECK(len < 8 || rb_succ__positions(tab, len - 8, max, got, 1024, &k) == -EINVAL);
		/* more entries than the caller has room for: refused */
		CHECK(n < 2 || rb_succ__positions(tab, len, max, got, n - 1, &k) == -EINVAL);
	}
	return TEST_OK;
}

/* ---- the machine code scanners ---- */

static int test_code(void)
{
	/* endbr64; data16 lea 0x100(%rip),%rdi; data16 data16 rex.W call ...; jmp out */
	static const __u8 main_code[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x66, 0x48, 0x8d, 0x3d, 0x00, 0x01, 0x00, 0x00,
					  0x66, 0x66, 0x48, 0xe8, 0x11, 0x22, 0x33, 0x44, 0xe9, 0x00, 0x10, 0x00,
					  0x00, 0xe9, 0xfb, 0xff, 0xff, 0xff };
	/* cmp %edi,0x20(%rip); mov 0x20(%rip),%rdi: last_id, then ids 16 bytes on */
	static const __u8 sym_code[] = { 0x39, 0x3d, 0x20, 0x00, 0x00, 0x00, 0x48, 0x8b, 0x3d, 0x29, 0x00, 0x00, 0x00 };
	/* lea 0x100(%rip),%rdi; call __tls_get_addr; mov 0x10(%rax),%r12 */
	static const __u8 ld_code[] = { 0x48, 0x8d, 0x3d, 0x00, 0x01, 0x00, 0x00, 0xe8, 0x11, 0x22, 0x33, 0x44,
					0x4c, 0x8b, 0xa0, 0x10, 0x00, 0x00, 0x00, 0x90 };
	/* a static CRuby's rb_iseq_eval_main: the canary's %fs:0x28, then mov %fs:-0x50,%r12 */
	static const __u8 le_code[] = { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00,
					0x64, 0x4c, 0x8b, 0x24, 0x25, 0xb0, 0xff, 0xff, 0xff };
	__u64 at = 0x1000, v, add;
	__s64 off;

	CHECK(!rb_code__tls_local_exec(le_code, sizeof(le_code), &off) && off == -0x50);
	CHECK(rb_code__tls_local_exec(le_code, 9, &off) == -ENOENT);	/* the canary's is not it */
	CHECK(rb_code__tls_local_exec(le_code, sizeof(le_code) - 1, &off) == -ENOENT);
	CHECK(!rb_code__tls_index(main_code, sizeof(main_code), at, &v, &add) && v == at + 12 + 0x100 && !add);
	CHECK(!rb_code__tls_index(ld_code, sizeof(ld_code), at, &v, &add) && v == at + 7 + 0x100 && add == 0x10);
	/* the first jump out of the function; the one back into it is a branch */
	CHECK(rb_code__jumps(main_code, 25, at, &v, 1) == 1 && v == at + 25 + 0x1000);
	CHECK(!rb_code__symbols(sym_code, sizeof(sym_code), at, &v) && v == at + 6 + 0x20);
	CHECK(rb_code__symbols(sym_code, 6, at, &v) == -ENOENT);
	CHECK(rb_code__tls_index(main_code + 4, 8, at, &v, &add) == -ENOENT);
	return TEST_OK;
}

/* AArch64: Debian 12's arm64 libruby 3.1, its rb_id2str and the code it jumps to */
static int test_a64_code(void)
{
	/* cmp x0, #0xa9; lsr; csel; mov w1, #0; b 0x1f6124 (at 0x1f8420) */
	static const __u32 id2str[] = { 0xf102a41f, 0xd344fc02, 0x1a829000, 0x52800001, 0x17fff73d };
	/*
	 * at 0x1f6170: adrp x0, 0x380000; ldr w1, [x0, #384]; cmp; b.hi; add x0, x0, #0x180; lsr;
	 * ldr x0, [x0, #16]: last_id at 0x380180, ids 16 bytes on
	 */
	static const __u32 sym_code[] = { 0xd0000c40, 0xb9418001, 0x6b01027f, 0x540002a8, 0x91060000,
					  0x53097e61, 0xf9400800 };
	const __u8 *j = (const __u8 *)id2str, *c = (const __u8 *)sym_code;
	__u64 v = 0;

	CHECK(rb_code__a64_jumps(j, sizeof(id2str), 0x1f8420, &v, 1) == 1 && v == 0x1f6124);
	CHECK(rb_code__a64_jumps(j, 16, 0x1f8420, &v, 1) == 0);
	CHECK(!rb_code__a64_symbols(c, sizeof(sym_code), 0x1f6170, &v) && v == 0x380180);
	/* without the add, ids' address is not formed: no pair */
	CHECK(rb_code__a64_symbols(c, 16, 0x1f6170, &v) == -ENOENT);
	return TEST_OK;
}

/* ---- names, and the versions we know ---- */

static int name_is(const struct rb_code *iseq, const struct rb_code *me, const char *want)
{
	char *got = rb_name__compose(iseq, me);
	int ok = got && !strcmp(got, want);

	if (!ok)
		fprintf(stderr, "  got '%s', want '%s'\n", got ? got : "(null)", want);
	free(got);
	return ok;
}

static int test_names(void)
{
	struct rb_code method = { .name = "bar", .base = "bar" };
	struct rb_code block = { .name = "block (2 levels) in bar", .base = "bar" };
	struct rb_code top = { .name = "<main>", .base = "<main>" };
	struct rb_code klass = { .cme = true, .name = "bar", .klass = "Foo::Baz" };
	struct rb_code single = { .cme = true, .name = "bar", .klass = "Foo", .singleton = true };
	struct rb_code anon = { .cme = true, .name = "times" };

	CHECK(name_is(&method, &klass, "Foo::Baz#bar"));
	CHECK(name_is(&block, &klass, "block (2 levels) in Foo::Baz#bar"));
	CHECK(name_is(&method, &single, "Foo.bar"));
	CHECK(name_is(&method, NULL, "bar"));
	CHECK(name_is(&top, &klass, "<main>"));	/* a label not ending in its base stays */
	CHECK(name_is(&method, &anon, "bar"));	/* an anonymous class: the method alone */
	CHECK(name_is(NULL, &single, "Foo.bar"));
	CHECK(name_is(NULL, &anon, "times"));
	/* the versions whose layout we have, and one we do not: never guessed */
	CHECK(rb_layout__find(0x030102) && rb_layout__find(0x030308) && rb_layout__find(0x03040b));
	CHECK(!rb_layout__find(0x030207) && !rb_layout__find(0x030500) && !rb_layout__find(0x020700));
	/* 3.4 moved FL_SINGLETON up a bit */
	CHECK(rb_layout__find(0x030308)->fl_singleton == 1u << 12 &&
	      rb_layout__find(0x03040b)->fl_singleton == 1u << 13);
	return TEST_OK;
}

/* YJIT's region: the anonymous run around the largest executable mapping, split while written */
static int test_jit_range(void)
{
	struct proc_map m[] = {
		{ .start = 0x1000000, .end = 0x1400000, .inode = 7, .perms = "r-xp", .path = "/usr/lib/libruby.so" },
		{ .start = 0x2000000, .end = 0x2001000, .perms = "r-xp", .path = "" },	/* a closure page */
		{ .start = 0x3000000, .end = 0x3800000, .perms = "r-xp", .path = "" },
		{ .start = 0x3800000, .end = 0x3801000, .perms = "rw-p", .path = "" },	/* being written */
		{ .start = 0x3801000, .end = 0x4000000, .perms = "r-xp", .path = "" },
		{ .start = 0x5000000, .end = 0x5001000, .perms = "rw-p", .path = "[heap]" },
	};
	struct rb_proc p = {};

	rb_maps__jit_range(m, 6, 0x1000100, &p);
	CHECK(p.jit_start == 0x3000000 && p.jit_end == 0x4000000);
	CHECK(p.text_start == 0x1000000 && p.text_end == 0x1400000);
	/* without YJIT: small executable pages only, no region */
	memset(&p, 0, sizeof(p));
	rb_maps__jit_range(m, 2, 0x1000100, &p);
	CHECK(!p.jit_start && !p.jit_end && p.text_start == 0x1000000);
	return TEST_OK;
}

/* ---- real interpreters ---- */

/*
 * Runs ARGV, a Ruby, and adds its image IMG (pid and start set here, exec as
 * given) to a new runtime on BPF maps of its own in O, until it is found:
 * *RT and *PID set. 0, add_image's last error, or -EPERM with no BPF maps
 * (O's fds negative, nothing run).
 */
static int ruby_found(char *const argv[], struct runtime_opts *o, void **rt, pid_t *pid,
		      struct proc_image *img)
{
	int err = -ENOENT;

	o->procs_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "rb_test", 4, sizeof(struct rb_proc), 8, NULL);
	o->pids_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "rb_test_bits", 4, sizeof(struct unwind_pid_bits),
				    1, NULL);
	if (o->procs_fd < 0 || o->pids_fd < 0)
		return -EPERM;
	*pid = fork();
	if (!*pid) {
		execv(argv[0], argv);
		_exit(127);
	}
	*rt = ruby_runtime.new(o);
	img->pid = (__u32)*pid;
	proc_image__start_of("/proc", img->pid, &img->start);
	for (int i = 0; *rt && i < 50 && err; i++) {
		usleep(100000);
		err = ruby_runtime.add_image(*rt, img);
	}
	return err;
}

/*
 * RUBY (argv) found in its process, its tables read, and its classes named
 * through them; YJIT's code region found if and only if WANT_JIT
 */
static int real_ruby(char *const argv[], __u32 want_minor, bool want_jit)
{
	const struct runtime_ops *ops = &ruby_runtime;
	struct runtime_opts o = { .proc_root = "/proc" };
	struct ruby_stats st;
	struct rb_proc p;
	struct proc_image img = {};
	struct proc_map *maps = NULL;
	struct rb_found f;
	size_t n = 0;
	int ret = TEST_FAIL, status, err;
	void *rt = NULL;
	pid_t pid;
	__u32 key;

	err = ruby_found(argv, &o, &rt, &pid, &img);
	if (err == -EPERM)
		SKIP("cannot create BPF maps (root needed)");
	key = img.pid;
	/* YJIT starts with the VM, after libruby is mapped: looked for again, once a second */
	for (int i = 0; rt && !err && want_jit && i < 30; i++) {
		usleep(100000);
		ops->retry(rt);
	}
	if (err || bpf_map_lookup_elem(o.procs_fd, &key, &p)) {
		fprintf(stderr, "  add_image: %d\n", err);
		goto out;
	}
	printf("  CRuby %u.%u.%u: vm_exec [%llx, %llx), TLS module %llu offset %llu\n", p.version >> 16,
	       (p.version >> 8) & 0xff, p.version & 0xff, (unsigned long long)p.exec_start,
	       (unsigned long long)p.exec_end, (unsigned long long)p.tls_module,
	       (unsigned long long)p.tls_offset);
	CHECK((p.version >> 8) == (0x0300 | want_minor));
	CHECK(p.exec_end > p.exec_start && p.exec_end - p.exec_start < (1u << 20));
	CHECK(p.tls_module >= 1 && p.tls_module < 64);
	CHECK(p.text_start <= p.exec_start && p.exec_end <= p.text_end);
	CHECK(want_jit ? p.jit_end - p.jit_start >= (1u << 20) : !p.jit_start && !p.jit_end);
	ops->stats_read(rt, &st);
	CHECK(st.procs == 1 && st.unknown_versions == 0);
	/* the symbol table and the class layout: Object's path is "Object", read as a frame's class is */
	CHECK(!proc_maps__read("/proc", img.pid, &maps, &n));
	err = -ENOENT;
	for (size_t i = 0; i < n && err; i++)
		if (strstr(maps[i].path, "libruby"))
			err = rb_elf__probe("/proc", img.pid, &maps[i], &f);
	proc_maps__free(maps);
	CHECK(!err && f.symbols);
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

static int test_real_ruby31(void)
{
	char *argv[] = { "/usr/bin/ruby", "-e", "loop { 100.times { |i| i * i } }", NULL };

	if (access(argv[0], X_OK))
		SKIP("no /usr/bin/ruby");
	return real_ruby(argv, 1, false);
}

/* Debian 12's 3.1 has YJIT (the C one): its region found */
static int test_real_ruby31_yjit(void)
{
	char *argv[] = { "/usr/bin/ruby", "--yjit", "-e", "loop { 100.times { |i| i * i } }", NULL };

	if (access(argv[0], X_OK))
		SKIP("no /usr/bin/ruby");
	return real_ruby(argv, 1, true);
}

/*
 * A Ruby found running (exec unknown), whose announcement is handled only
 * after it has exited: its state stays, not superseded, and is the
 * announced image's; its BPF table stays until the sweeps.
 */
static int test_gone_before_announced(void)
{
	char *argv[] = { "/usr/bin/ruby", "-e", "loop { 100.times { |i| i * i } }", NULL };
	const struct runtime_ops *ops = &ruby_runtime;
	struct runtime_opts o = { .proc_root = "/proc" };
	struct proc_image any = { .exec = PROC_EXEC_ANY }, announced;
	struct rb_pid *p;
	struct rb_proc proc;
	int ret = TEST_FAIL, status, err;
	void *rt = NULL;
	pid_t pid = -1;
	__u32 key;

	if (access(argv[0], X_OK))
		SKIP("no /usr/bin/ruby");
	err = ruby_found(argv, &o, &rt, &pid, &any);
	if (err == -EPERM)
		SKIP("cannot create BPF maps (root needed)");
	key = any.pid;
	if (err) {
		fprintf(stderr, "  add_image of the running process: %d\n", err);
		goto out;
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	pid = -1;
	announced = any;
	announced.exec = 7;
	err = ops->add_image(rt, &announced);
	p = ruby__find_image(rt, &announced);
	if (err != -ESRCH || !p || p->superseded || p->img.exec != 7 ||
	    bpf_map_lookup_elem(o.procs_fd, &key, &proc)) {
		fprintf(stderr, "  announced after the exit: add_image %d, its state %s\n", err,
			!p ? "gone" : p->superseded ? "superseded" : "kept");
		goto out;
	}
	ret = TEST_OK;
out:
	if (rt)
		ops->free(rt);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	close(o.procs_fd);
	close(o.pids_fd);
	return ret;
}

/* RUBY (ruby3.3, ruby3.4) of the Debian root at ROOT, chrooted */
static int real_ruby_in(const char *root, const char *ruby, __u32 want_minor)
{
	char *argv[] = { "/usr/sbin/chroot", (char *)root, (char *)ruby, "-e",
			 "loop { 100.times { |i| i * i } }", NULL };
	char path[256];

	snprintf(path, sizeof(path), "%s/usr/bin/%s", root, ruby);
	if (access(path, X_OK))
		SKIP("no Debian root with it (tests/lib/trixie_root.sh, tests/lib/ruby34_root.sh)");
	return real_ruby(argv, want_minor, false);
}

static int test_real_ruby33(void)
{
	return real_ruby_in("/var/cache/ebpfprof/trixie", "ruby3.3", 3);
}

static int test_real_ruby34(void)
{
	return real_ruby_in("/var/cache/ebpfprof/ruby34", "ruby3.4", 4);
}

TEST_MAIN("ruby", { "succ", test_succ }, { "code", test_code }, { "a64_code", test_a64_code },
	  { "names", test_names },
	  { "jit_range", test_jit_range },
	  { "real_ruby3.1", test_real_ruby31 },
	  { "real_ruby3.1-yjit", test_real_ruby31_yjit },
	  { "gone_before_announced", test_gone_before_announced },
	  { "real_ruby3.3", test_real_ruby33 },
	  { "real_ruby3.4", test_real_ruby34 })
