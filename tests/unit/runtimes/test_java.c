/* test_java.c -- unit tests for runtimes/java/: the tables of each real JDK here read from a running JVM, offsets plausible; UNSIGNED5, line tables, scopes */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include "unwind.h"
#include "runtimes/java/java_int.h"
#include "test.h"

/*
 * The JVM runs this long between two looks, each made while it is stopped.
 * A look under ASan costs some ten times more: a JVM stepped as finely then
 * took up to 7 minutes to start, the plain build's 8 s.
 */
#ifdef __SANITIZE_ADDRESS__
#define LOOK_STEP_US 200
#else
#define LOOK_STEP_US 20
#endif

/* a JVM that sleeps: the source launcher runs a one-line class */
static pid_t start_jvm(const char *java, const char *src)
{
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execl(java, java, "-Xshare:auto", src, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* our writer of UNSIGNED5, from its definition, to check the reader against */
static size_t u5_write(__u32 v, bool x1, __u8 *out)
{
	const __u32 x = x1, low = 256 - 64 - x;
	size_t n = 0;

	for (int i = 0; i < 5; i++) {
		if (v < low || i == 4) {
			out[n++] = (__u8)(x + v);
			return n;
		}
		v -= low;
		out[n++] = (__u8)(x + low + (v % 64));
		v >>= 6;
	}
	return n;
}

static int test_u5(void)
{
	const __u32 vals[] = { 0, 1, 189, 190, 191, 192, 255, 1000, 12345, 0x307e, 0x307f, 1u << 20,
			       0x7fffffff, 0xffffffff };
	__u8 buf[8];

	for (int x1 = 0; x1 < 2; x1++) {
		for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
			size_t len = u5_write(vals[i], x1, buf), pos = 0;
			__u32 got;

			CHECK(len >= 1 && len <= 5);
			CHECK(!jvm_u5__read(buf, len, &pos, x1, &got));
			CHECK(got == vals[i] && pos == len);
			pos = 0;
			CHECK(len == 1 || jvm_u5__read(buf, len - 1, &pos, x1, &got) == -EINVAL);
		}
	}
	/* JDK 20+ never writes byte 0 inside a number */
	size_t pos = 0;
	__u32 got;

	CHECK(jvm_u5__read((const __u8 *)"\0", 1, &pos, true, &got) == -EINVAL);
	return TEST_OK;
}

static int test_lines(void)
{
	/* (bci 0, line 10) escaped, (3, 11) short, (9, 9) escaped (a line back), end */
	__u8 tab[32];
	size_t n = 0;

	for (int x1 = 0; x1 < 2; x1++) {
		n = 0;
		tab[n++] = 0xff;
		n += u5_write(0, x1, tab + n);
		n += u5_write(20, x1, tab + n);		/* +10, sign-encoded */
		tab[n++] = 3 << 3 | 1;
		tab[n++] = 0xff;
		n += u5_write(12, x1, tab + n);		/* bci +6 */
		n += u5_write(3, x1, tab + n);		/* line -2 */
		tab[n++] = 0;
		CHECK(jvm_lines__find(tab, n, x1, 0) == 10);
		CHECK(jvm_lines__find(tab, n, x1, 2) == 10);
		CHECK(jvm_lines__find(tab, n, x1, 3) == 11);
		CHECK(jvm_lines__find(tab, n, x1, 8) == 11);
		CHECK(jvm_lines__find(tab, n, x1, 9) == 9);
		CHECK(jvm_lines__find(tab, n, x1, 500) == 9);
		CHECK(jvm_lines__find(tab, 2, x1, 9) == 0);	/* cut short: no line, no over-read */
	}
	return TEST_OK;
}

static int test_scope(void)
{
	__u8 buf[16];
	struct jvm_scope s;
	size_t n = 0;

	buf[n++] = 0xaa;	/* the stream's first byte is never a scope */
	n += u5_write(37, true, buf + n);
	n += u5_write(3, true, buf + n);
	n += u5_write(0, true, buf + n);	/* InvocationEntryBci */
	CHECK(!jvm_scope__read(buf, n, 1, true, &s));
	CHECK(s.sender == 37 && s.method_index == 3 && s.bci == -1);
	CHECK(jvm_scope__read(buf, n - 1, 1, true, &s) == -EINVAL);
	CHECK(jvm_scope__read(buf, n, (__u32)n, true, &s) == -EINVAL);
	return TEST_OK;
}

/*
 * One JDK: a running JVM's tables give a layout, and java__add_pid a
 * plausible BPF entry. Looked at from its first moments, every few tens of
 * microseconds of its run, as a profile started with it may: the entry of
 * the first look that takes it must be the one a look 1.5 s later gives (a
 * JVM taken while it made its interpreter once had an interpreter range
 * over code made after it; with that bug back, 3 of 5 runs here failed).
 * The image it exec'd from, looked at after it (a wait of a launcher
 * script's shell), is refused and leaves the JVM's state as it was (it once
 * superseded it: no Java frame named). Exited but not yet reaped, it has no
 * mappings: not an exec, it stays.
 */
static int check_jdk(const char *home, const char *src, int map_fd, int bits_fd)
{
	char java[PATH_MAX + 16];
	struct java_opts o = { .procs_fd = map_fd, .pids_fd = bits_fd };
	struct java *j = java__new(&o), *later = java__new(&o);
	struct unwind_pid_bits bits;
	__u32 zero = 0;
	struct java_proc p, p2;
	struct java_stats st;
	struct proc_image img = {}, shell;
	struct jvm_pid *cur;
	pid_t pid;
	int err = -ENOENT, err2 = -ENOENT, stale, zombie, status, looks = 0;
	bool kept, still;

	snprintf(java, sizeof(java), "%s/bin/java", home);
	pid = start_jvm(java, src);
	CHECK(j && later && pid > 0);
	/* a look at every few tens of microseconds of its run: stopped while we look */
	prctl(PR_SET_TIMERSLACK, 1UL);	/* usleep(20) is 20 us, not 70 */
	for (; looks < 40000 && err; looks++) {
		kill(pid, SIGCONT);
		usleep(LOOK_STEP_US);
		kill(pid, SIGSTOP);
		if (waitpid(pid, &status, WUNTRACED) != pid || !WIFSTOPPED(status))
			break;
		img = (struct proc_image){ .pid = (__u32)pid, .exec = 2 };
		proc_image__start_of("/proc", img.pid, &img.start);
		err = java__add_image(j, &img);
	}
	kill(pid, SIGCONT);
	if (!err)
		err = bpf_map_lookup_elem(map_fd, &pid, &p) ? -errno : 0;
	usleep(1500000);
	err2 = java__add_image(later, &img);
	if (!err2)
		err2 = bpf_map_lookup_elem(map_fd, &pid, &p2) ? -errno : 0;
	/* the image it exec'd from (a launcher script's shell), looked at late: not over the JVM's */
	shell = img;
	shell.exec = 1;
	stale = java__add_image(later, &shell);
	cur = jvm__find_image(later, &img);
	still = cur && !cur->superseded && !jvm__find_image(later, &shell);
	/* exited, not yet reaped: no mappings left, and its names must stay */
	kill(pid, SIGKILL);
	waitid(P_PID, (id_t)pid, NULL, WEXITED | WNOWAIT);
	zombie = java__add_image(later, &img);
	kept = jvm__find_image(later, &img) != NULL;
	waitpid(pid, &status, 0);
	java__stats(j, &st);
	java__free(j);
	java__free(later);
	if (err || err2 || stale != -ESTALE || !still || zombie != -ESRCH || !kept) {
		fprintf(stderr, "  %s: java__add_image %d, later %d, its shell's %d (%s), exited %d (%s)\n",
			home, err, err2, stale, still ? "kept" : "superseded", zombie,
			kept ? "kept" : "dropped");
		return TEST_FAIL;
	}
	bpf_map_delete_elem(map_fd, &pid);
	if (memcmp(&p, &p2, sizeof(p))) {
		fprintf(stderr, "  %s: the first look's interpreter [%llx, %llx), a later one's [%llx, %llx)\n",
			home, (unsigned long long)p.interp_low, (unsigned long long)p.interp_high,
			(unsigned long long)p2.interp_low, (unsigned long long)p2.interp_high);
		return TEST_FAIL;
	}
	/* BPF looks a pid up only where its bit is set */
	CHECK(!bpf_map_lookup_elem(bits_fd, &zero, &bits));
	/* the JVM's bit, not Python's beside it in the same word */
	CHECK(unwind_pid_bits__has(&bits, (__u32)pid, UNWIND_RT_JAVA));
	CHECK(!unwind_pid_bits__has(&bits, (__u32)pid, UNWIND_RT_PYTHON));
	CHECK(p.n_heaps >= 1 && p.n_heaps <= JAVA_MAX_HEAPS);
	for (__u32 i = 0; i < p.n_heaps; i++) {
		CHECK(p.heap[i].low < p.heap[i].high && p.heap[i].segmap);
		CHECK(p.heap[i].low >= p.code_low && p.heap[i].high <= p.code_high);
		CHECK(p.heap[i].log2_seg >= 5 && p.heap[i].log2_seg <= 10);
	}
	CHECK(p.interp_low >= p.code_low && p.interp_high <= p.code_high &&
	      p.interp_low < p.interp_high);
	CHECK(p.block_header == 8 || p.block_header == 16);
	CHECK(p.cb_name < 0x100 && p.cb_frame_size < 0x100 && p.cb_code < 0x100);
	CHECK(p.nm_compile_id > p.cb_frame_size && p.nm_compile_id < 0x400);
	CHECK(p.if_method == -24 && p.if_bcp == -64 && p.if_sender_sp == -8);
	CHECK(p.cb_frame_complete_size == 2 || p.cb_frame_complete_size == 4);
	fprintf(stderr, "  %s: %u heaps, code cache %llu MB, interpreter %llu KB; taken at look %d, %llu before it was ready, as a look 1.5 s later\n",
		home, p.n_heaps, (unsigned long long)(p.code_high - p.code_low) >> 20,
		(unsigned long long)(p.interp_high - p.interp_low) >> 10, looks,
		(unsigned long long)st.not_ready);
	return TEST_OK;
}

static int test_real_jdks(void)
{
	char src[128], dir[64];
	glob_t g;
	int map_fd, bits_fd, checked = 0, ret = TEST_OK;
	FILE *f;

	if (glob("/usr/lib/jvm/*/lib/server/libjvm.so", 0, NULL, &g) || !g.gl_pathc)
		SKIP("no JDK under /usr/lib/jvm");
	snprintf(dir, sizeof(dir), "/tmp/test_java_XXXXXX");
	CHECK(mkdtemp(dir));
	snprintf(src, sizeof(src), "%s/Sleep.java", dir);
	f = fopen(src, "w");
	CHECK(f);
	fputs("class Sleep { public static void main(String[] a) throws Exception { Thread.sleep(60000); } }\n", f);
	fclose(f);
	map_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "java_test", 4, sizeof(struct java_proc), 8, NULL);
	CHECK(map_fd >= 0);
	bits_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "java_test_bits", 4,
				 sizeof(struct unwind_pid_bits), 1, NULL);
	CHECK(bits_fd >= 0);
	for (size_t i = 0; i < g.gl_pathc && ret == TEST_OK; i++) {
		char home[PATH_MAX], real[PATH_MAX];
		char *end;

		/* Debian's alias links name one JDK twice: check each real one once */
		if (!realpath(g.gl_pathv[i], real))
			continue;
		snprintf(home, sizeof(home), "%s", g.gl_pathv[i]);
		end = strstr(home, "/lib/server/libjvm.so");
		*end = 0;
		bool dup = false;

		for (size_t k = 0; k < i; k++) {
			char other[PATH_MAX];

			if (realpath(g.gl_pathv[k], other) && !strcmp(other, real))
				dup = true;
		}
		if (dup)
			continue;
		ret = check_jdk(home, src, map_fd, bits_fd);
		checked++;
	}
	unlink(src);
	rmdir(dir);
	close(map_fd);
	close(bits_fd);
	globfree(&g);
	CHECK(checked > 0);
	return ret;
}

TEST_MAIN("java", { "u5", test_u5 }, { "lines", test_lines }, { "scope", test_scope },
	  { "real_jdks", test_real_jdks })
