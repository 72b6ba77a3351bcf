/* test_php.c -- unit tests for runtimes/php/: the version string, functions named from a fake heap, real PHP 8.2 and 8.4 found and their layouts checked on a live frame chain */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include "lib/proc_mem.h"
#include "runtimes/php/php_int.h"
#include "runtimes/php/php_runtime.h"
#include "test.h"

#define TRIXIE_ROOT "/var/cache/ebpfprof/trixie"

/* ---- the version each SAPI's binary says it is ---- */

static int test_version(void)
{
	static const char ok[] = "\0junk X-Powered-By: PHP/8.2.36\0more";
	static const char two[] = "X-Powered-By: PHP/8.10.0";

	CHECK(php_version__parse(ok, sizeof(ok) - 1) == 802);
	CHECK(php_version__parse(two, sizeof(two) - 1) == 810);
	CHECK(php_version__parse("X-Powered-By: PHP/8.4", 21) == 804);
	/* cut before the minor, no dot, not digits, nothing at all: no version */
	CHECK(php_version__parse("X-Powered-By: PHP/8.", 20) == 0);
	CHECK(php_version__parse("X-Powered-By: PHP/8", 19) == 0);
	CHECK(php_version__parse("X-Powered-By: PHP/x.2", 21) == 0);
	CHECK(php_version__parse("X-Powered-By: PHP/", 18) == 0);
	CHECK(php_version__parse("", 0) == 0);
	CHECK(php_layout__find(802) && php_layout__find(804) && !php_layout__find(700));
	return TEST_OK;
}

/* ---- functions named from a fake heap laid out as 8.2's ---- */

#define HEAP_BASE 0x10000ULL
#define HEAP_SIZE 8192

struct heap {
	__u8 b[HEAP_SIZE];
};

static int heap_read(void *ctx, __u64 addr, void *buf, size_t len)
{
	struct heap *h = ctx;

	if (addr < HEAP_BASE || addr - HEAP_BASE > HEAP_SIZE || len > HEAP_SIZE - (addr - HEAP_BASE))
		return -EFAULT;
	memcpy(buf, h->b + (addr - HEAP_BASE), len);
	return 0;
}

static void put64(struct heap *h, __u64 addr, __u64 v)
{
	memcpy(h->b + (addr - HEAP_BASE), &v, 8);
}

/* a zend_string at ADDR holding S (len as given, which may lie) */
static void put_str(struct heap *h, __u64 addr, const char *s, __u64 len)
{
	put64(h, addr + 16, len);
	memcpy(h->b + (addr - HEAP_BASE) + 24, s, strlen(s));
}

/* a user function at FUNC: name at +0x100, class at +0x200 (scope +0x300), file at +0x400 */
static __u32 put_func(struct heap *h, const struct php_layout *l, __u64 func, bool method)
{
	memset(h->b, 0, sizeof(h->b));
	h->b[func - HEAP_BASE] = PHP_USER_FUNCTION;
	put64(h, func + l->fn_name, HEAP_BASE + 0x100);
	put_str(h, HEAP_BASE + 0x100, "render", 6);
	if (method) {
		put64(h, func + l->fn_scope, HEAP_BASE + 0x300);
		put64(h, HEAP_BASE + 0x300 + l->ce_name, HEAP_BASE + 0x200);
		put_str(h, HEAP_BASE + 0x200, "App\\View", 8);
	}
	put64(h, func + l->bpf.op_filename, HEAP_BASE + 0x400);
	put64(h, func + l->bpf.op_filename + 8, 42);	/* line_start, line_end 0 */
	put_str(h, HEAP_BASE + 0x400, "/srv/app/view.php", 17);
	return php_func_tag(HEAP_BASE + 0x100, HEAP_BASE + 0x400, 42);
}

static int test_func_read(void)
{
	struct heap *h = calloc(1, sizeof(*h));
	const struct php_layout *l = php_layout__find(802);
	struct php_mem m = { heap_read, h, l };
	struct php_func_info f;
	__u64 func = HEAP_BASE + 0x800;
	__u32 tag;

	CHECK(h);
	tag = put_func(h, l, func, true);
	CHECK(php_func__read(&m, func, tag, &f) == 0);
	CHECK(!strcmp(f.name, "App\\View::render") && !strcmp(f.file, "/srv/app/view.php"));
	CHECK(f.line_start == 42 && !f.internal);
	php_func_info__free(&f);
	/* another function at that address now (another tag): refused, never named as the first */
	CHECK(php_func__read(&m, func, tag + 1, &f) == -ESTALE && !f.name);
	/* a plain function; a name whose length says 2^60: cut to what we keep */
	tag = put_func(h, l, func, false);
	put64(h, HEAP_BASE + 0x100 + 16, 1ULL << 60);
	CHECK(php_func__read(&m, func, tag, &f) == 0 && !strncmp(f.name, "render", 6) &&
	      strlen(f.name) <= 3 * 512);
	php_func_info__free(&f);
	/* a control character in a name is shown as '?' */
	tag = put_func(h, l, func, false);
	h->b[0x100 + 24 + 2] = '\n';
	CHECK(php_func__read(&m, func, tag, &f) == 0 && !strcmp(f.name, "re?der"));
	php_func_info__free(&f);
	/* a file's top code has no name; its file still says which */
	tag = put_func(h, l, func, false);
	put64(h, func + l->fn_name, 0);
	tag = php_func_tag(0, HEAP_BASE + 0x400, 42);
	CHECK(php_func__read(&m, func, tag, &f) == 0 && !strcmp(f.name, "{main}"));
	php_func_info__free(&f);
	/* an internal function: no file, its tag of its name alone */
	tag = put_func(h, l, func, false);
	h->b[func - HEAP_BASE] = 1;
	tag = php_func_tag(HEAP_BASE + 0x100, 0, 0);
	CHECK(php_func__read(&m, func, tag, &f) == 0 && f.internal && !f.file &&
	      !strcmp(f.name, "render"));
	php_func_info__free(&f);
	/* not a function type we know; a name outside memory */
	tag = put_func(h, l, func, false);
	h->b[func - HEAP_BASE] = 9;
	CHECK(php_func__read(&m, func, tag, &f) == -EFAULT);
	tag = put_func(h, l, func, false);
	put64(h, func + l->fn_name, 0x7fff00000000ULL);
	CHECK(php_func__read(&m, func, php_func_tag(0x7fff00000000ULL, HEAP_BASE + 0x400, 42), &f) ==
	      -EFAULT);
	free(h);
	return TEST_OK;
}

/* ---- a real PHP: found, its layout checked on the frame chain it runs ---- */

static int read_word(__u32 pid, __u64 addr, __u64 *v)
{
	return proc_mem__read(pid, addr, v, sizeof(*v));
}

static int live_read(void *ctx, __u64 addr, void *buf, size_t len)
{
	return proc_mem__read((__u32)(unsigned long)ctx, addr, buf, len);
}

/*
 * Walks the live chain as BPF does, from executor_globals out: the spinning
 * method, then php -r's code, the frame marked ZEND_CALL_TOP; each named as the
 * namer names it.
 */
static int check_chain(__u32 pid, const struct php_pid *p)
{
	const struct php_proc *pp = &p->proc;
	/* php -r runs its code as eval()'d code */
	const char *const want[2] = { "Spin::forever", "{eval}" };
	struct php_mem live = { live_read, (void *)(unsigned long)pid, p->layout };
	struct php_func_info f;
	__u64 ex, func, info, name, tail[2];
	__u8 type;
	int ok;

	if (read_word(pid, pp->current, &ex) || !ex)
		return TEST_FAIL;	/* not running PHP code yet */
	for (int i = 0; i < 2; i++) {
		CHECK(!read_word(pid, ex + 8 * pp->ex_func, &func) && func);
		CHECK(!read_word(pid, ex + 8 * pp->ex_info, &info));
		CHECK(!proc_mem__read(pid, func, &type, 1) && type == (i ? PHP_EVAL_CODE : PHP_USER_FUNCTION));
		CHECK(!read_word(pid, func + p->layout->fn_name, &name));
		CHECK(!proc_mem__read(pid, func + pp->op_filename, tail, sizeof(tail)));
		CHECK(php_func__read(&live, func, php_func_tag(name, tail[0], (__u32)tail[1]), &f) == 0);
		ok = !strcmp(f.name, want[i]) && strstr(f.file, "Command line code");
		if (!ok)
			fprintf(stderr, "  frame %d: %s %s:%u\n", i, f.name, f.file, f.line_start);
		php_func_info__free(&f);
		CHECK(ok);
		/* the spinning method is nested; the code began this execute_ex call */
		CHECK(!!((__u32)info & PHP_CALL_TOP) == (i == 1));
		CHECK(!read_word(pid, ex + 8 * pp->ex_prev, &ex));
	}
	CHECK(ex == 0);
	return TEST_OK;
}

/* php ARGV (a real PHP, maybe chrooted) runs a method forever; found, version VERSION, its chain read */
static int real_php(const char *const *argv, __u32 version)
{
	const struct runtime_ops *ops = &php_runtime;
	struct runtime_opts o = { .proc_root = "/proc" };
	struct php_stats st;
	struct proc_image img = {}, self = {};
	struct php_proc p;
	struct php_rt *r = NULL;
	int ret = TEST_FAIL, status, err = -ENOENT;
	pid_t pid;
	__u32 key;

	o.procs_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "php_test", 4, sizeof(struct php_proc), 8, NULL);
	o.pids_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "php_test_bits", 4,
				   sizeof(struct unwind_pid_bits), 1, NULL);
	if (o.procs_fd < 0 || o.pids_fd < 0)
		SKIP("cannot create BPF maps (root needed)");
	pid = fork();
	if (!pid) {
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	r = ops->new(&o);
	img.pid = (__u32)pid;
	/* until it runs the method (start-up reads its ini files, compiles) */
	for (int i = 0; r && i < 50; i++) {
		usleep(100000);
		proc_image__start_of("/proc", img.pid, &img.start);
		err = ops->add_image(r, &img);
		if (!err && r->pids.n == 1 &&
		    check_chain(img.pid, (const struct php_pid *)r->pids.all[0]) == TEST_OK)
			break;
		err = err ? err : -EAGAIN;
	}
	key = (__u32)pid;
	if (err || bpf_map_lookup_elem(o.procs_fd, &key, &p)) {
		fprintf(stderr, "  add_image or the chain: %d\n", err);
		goto out;
	}
	CHECK(p.version == version && p.exec_start && p.exec_end > p.exec_start && p.current);
	ops->stats_read(r, &st);
	CHECK(st.procs == 1 && st.unknown_versions == 0);
	/* not PHP at all: not there, nothing counted */
	self.pid = (__u32)getpid();
	proc_image__start_of("/proc", self.pid, &self.start);
	CHECK(ops->add_image(r, &self) == -ENOENT);
	ops->stats_read(r, &st);
	CHECK(st.procs == 1 && st.unknown_versions == 0);
	ret = TEST_OK;
out:
	if (r)
		ops->free(r);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(o.procs_fd);
	close(o.pids_fd);
	return ret;
}

#define SPIN "class Spin { static function forever() { for (;;) {} } } Spin::forever();"

static int test_real_php82(void)
{
	const char *const argv[] = { "/usr/bin/php8.2", "-n", "-r", SPIN, NULL };

	if (access(argv[0], X_OK))
		SKIP("no /usr/bin/php8.2 (make deps-test installs php-cli)");
	return real_php(argv, 802);
}

static int test_real_php84(void)
{
	const char *const argv[] = { "/usr/sbin/chroot", TRIXIE_ROOT, "php8.4", "-n", "-r", SPIN, NULL };

	if (access(TRIXIE_ROOT "/usr/bin/php8.4", X_OK))
		SKIP("no PHP 8.4 in " TRIXIE_ROOT " (bash tests/lib/trixie_root.sh builds it)");
	return real_php(argv, 804);
}

TEST_MAIN("php", { "version", test_version }, { "func_read", test_func_read },
	  { "real_php8.2", test_real_php82 }, { "real_php8.4", test_real_php84 })
