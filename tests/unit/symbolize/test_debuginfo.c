/* test_debuginfo.c -- debug files via build-ID tree, debuglink, MiniDebugInfo, a local debuginfod */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdint.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "symbolize/debuginfo.h"
#include "symbolize/dwarf.h"
#include "symbolize/elf_syms.h"
#include "test.h"

#define FIX FIXTURES_DIR
#define DEBUGINFOD "/usr/bin/debuginfod"
#define SERVER_WAIT_MS 20000

static bool have(const char *path)
{
	return access(path, R_OK) == 0;
}

/* a fresh directory under /tmp, removed by rm_tree() */
static int make_tmp(char *dir, size_t size)
{
	if (snprintf(dir, size, "/tmp/ebpfprof-debuginfo-XXXXXX") >= (int)size || !mkdtemp(dir))
		return -errno;
	return 0;
}

static void rm_tree(const char *dir)
{
	char cmd[PATH_MAX + 16];

	if (dir[0] && snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir) < (int)sizeof(cmd) &&
	    system(cmd))
		fprintf(stderr, "  could not remove %s\n", dir);
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out, err = 0;
	ssize_t n;

	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		close(in);
		return -errno;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			err = -EIO;
	close(in);
	close(out);
	return n < 0 ? -errno : err;
}

static int mkdirs(const char *dir, const char *sub)
{
	char cmd[2 * PATH_MAX];
	int n = snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s'", dir, sub);

	if (n < 0 || (size_t)n >= sizeof(cmd))
		return -ENAMETOOLONG;
	return system(cmd) ? -EIO : 0;
}

static bool same_file(int fd, const char *path)
{
	struct stat a, b;

	return !fstat(fd, &a) && !stat(path, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static bool build_id_is(int fd, const char *want)
{
	char hex[ELF_BUILD_ID_HEX_SIZE];

	return !elf_read_build_id(fd, hex, sizeof(hex)) && !strcmp(hex, want);
}

static int fixture_build_id(char *hex, size_t size)
{
	int fd = open(FIX "debug_inline", O_RDONLY), err;

	if (fd < 0)
		return -errno;
	err = elf_read_build_id(fd, hex, size);
	close(fd);
	return err;
}

/* the helper's call site as the fixture prints it; the DWARF found must give its inline chain */
static int check_dwarf_works(int fd)
{
	struct src_line out[SRC_LINES_MAX];
	unsigned long long pc = 0;
	struct dwarf_info *d;
	char name[64];
	FILE *p = popen(FIX "debug_inline </dev/null", "r");
	bool ok;
	int n;

	CHECK(p);
	while (fscanf(p, "%63s %llx", name, &pc) == 2 && strcmp(name, "helper_pc"))
		;
	pclose(p);
	CHECK(pc);
	d = dwarf_info__open(fd, SIZE_MAX);
	CHECK(d);
	n = dwarf_info__lookup(d, pc, out, SRC_LINES_MAX);
	/* the strings live as long as the object */
	ok = n == 2 && out[0].function && !strcmp(out[0].function, "fixture_helper");
	dwarf_info__free(d);
	CHECK(ok);
	return TEST_OK;
}

static int test_build_id_tree(void)
{
	struct debuginfo_opts o = { .root = FIX "debugroot" };
	char bid[ELF_BUILD_ID_HEX_SIZE], upper[ELF_BUILD_ID_HEX_SIZE];
	int elf, fd, kind = -1, r;

	if (!have(FIX "debugroot/.stamp"))
		SKIP("run make fixtures");
	CHECK(fixture_build_id(bid, sizeof(bid)) == 0);
	elf = open(FIX "debug_inline_stripped", O_RDONLY);
	CHECK(elf >= 0);
	/* the build ID read from the binary */
	fd = debuginfo__find(elf, "", "/usr/bin/debug_inline_stripped", &o, &kind);
	CHECK(fd >= 0);
	CHECK(kind == DEBUGINFO_BUILD_ID);
	CHECK(build_id_is(fd, bid));
	r = check_dwarf_works(fd);
	close(fd);
	CHECK(r == TEST_OK);
	/* given by the caller, in capitals */
	for (size_t i = 0; i <= strlen(bid); i++)
		upper[i] = bid[i] >= 'a' && bid[i] <= 'f' ? bid[i] - 'a' + 'A' : bid[i];
	fd = debuginfo__find(elf, upper, NULL, &o, &kind);
	CHECK(fd >= 0 && kind == DEBUGINFO_BUILD_ID);
	close(fd);
	/* another build ID is not in the tree (nor on the host) */
	fd = debuginfo__find(elf, "00112233445566778899aabbccddeeff00112233", NULL, &o, &kind);
	CHECK(fd == -ENOENT && kind == DEBUGINFO_NONE);
	close(elf);
	return TEST_OK;
}

static int test_debuglink(void)
{
	char path[PATH_MAX], bid[ELF_BUILD_ID_HEX_SIZE];
	int elf, fd, kind = -1, r;

	if (!have(FIX "debuglink_sub/.stamp") || !realpath(FIX "debug_inline_stripped", path))
		SKIP("run make fixtures");
	CHECK(fixture_build_id(bid, sizeof(bid)) == 0);
	/* beside the binary */
	elf = open(path, O_RDONLY);
	CHECK(elf >= 0);
	fd = debuginfo__find(elf, NULL, path, NULL, &kind);
	close(elf);
	CHECK(fd >= 0);
	CHECK(kind == DEBUGINFO_DEBUGLINK);
	CHECK(same_file(fd, FIX "debug_inline.debug"));
	r = check_dwarf_works(fd);
	close(fd);
	CHECK(r == TEST_OK);

	/* in .debug/ beside it */
	CHECK(realpath(FIX "debuglink_sub/debug_inline_stripped", path));
	elf = open(path, O_RDONLY);
	CHECK(elf >= 0);
	fd = debuginfo__find(elf, NULL, path, NULL, &kind);
	close(elf);
	CHECK(fd >= 0 && kind == DEBUGINFO_DEBUGLINK);
	CHECK(same_file(fd, FIX "debuglink_sub/.debug/debug_inline.debug"));
	close(fd);

	/* under the process root's /usr/lib/debug/<dir of the binary>/ */
	{
		struct debuginfo_opts o = { .root = FIX "debugroot_dir" };

		elf = open(FIX "debug_inline_stripped", O_RDONLY);
		CHECK(elf >= 0);
		fd = debuginfo__find(elf, NULL, "/opt/app/debug_inline_stripped", &o, &kind);
		close(elf);
		CHECK(fd >= 0 && kind == DEBUGINFO_DEBUGLINK);
		CHECK(same_file(fd, FIX "debugroot_dir/usr/lib/debug/opt/app/debug_inline.debug"));
		close(fd);
	}
	return TEST_OK;
}

/* a debug file whose CRC is not the one the binary recorded is not taken */
static int test_debuglink_bad_crc(void)
{
	char dir[PATH_MAX], bin[PATH_MAX + 64], dbg[PATH_MAX + 64];
	int elf, fd, kind = -1, err = TEST_FAIL;

	if (!have(FIX "debug_inline_stripped"))
		SKIP("run make fixtures");
	CHECK(make_tmp(dir, sizeof(dir)) == 0);
	snprintf(bin, sizeof(bin), "%s/debug_inline_stripped", dir);
	snprintf(dbg, sizeof(dbg), "%s/debug_inline.debug", dir);
	/* same build ID, other bytes: the unstripped binary */
	if (copy_file(FIX "debug_inline_stripped", bin) || copy_file(FIX "debug_inline", dbg))
		goto out;
	elf = open(bin, O_RDONLY);
	if (elf < 0)
		goto out;
	fd = debuginfo__find(elf, NULL, bin, NULL, &kind);
	close(elf);
	if (fd >= 0)
		close(fd);
	if (fd == -ENOENT && kind == DEBUGINFO_NONE)
		err = TEST_OK;
out:
	rm_tree(dir);
	return err;
}

/*
 * Rewrites the .gnu_debuglink of the binary at PATH to NAME with the CRC of
 * the file CRC_OF, in place (NAME must fit the section).
 */
static int patch_debuglink(const char *path, const char *name, const char *crc_of)
{
	unsigned char buf[65536];
	uLong crc = crc32(0, NULL, 0);
	int fd, err = -ENOENT;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	ssize_t n;
	Elf *elf;

	fd = open(crc_of, O_RDONLY);
	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		crc = crc32(crc, buf, n);
	close(fd);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && !elf_getshdrstrndx(elf, &shstrndx)) {
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *s;
			unsigned char sec[256] = { 0 };
			size_t len = strlen(name), crc_off = (len + 4) & ~(size_t)3;
			__u32 c = crc;

			if (!gelf_getshdr(scn, &sh) ||
			    !(s = elf_strptr(elf, shstrndx, sh.sh_name)) ||
			    strcmp(s, ".gnu_debuglink"))
				continue;
			err = -ENOSPC;
			if (crc_off + 4 > sh.sh_size || sh.sh_size > sizeof(sec))
				break;
			memcpy(sec, name, len);
			memcpy(sec + sh.sh_size - 4, &c, 4);
			/* the CRC sits right after the padded name: shorter names leave a gap */
			memcpy(sec + crc_off, &c, 4);
			n = pwrite(fd, sec, sh.sh_size, sh.sh_offset);
			err = n == (ssize_t)sh.sh_size ? 0 : -EIO;
			break;
		}
	}
	elf_end(elf);
	close(fd);
	return err;
}

/* a debuglink name with a path in it is refused, even with the right CRC */
static int test_debuglink_hostile_name(void)
{
	char dir[PATH_MAX], sub[PATH_MAX + 64], bin[PATH_MAX + 64], tmp[PATH_MAX + 64];
	int elf, fd = -1, kind = -1, err = TEST_FAIL;

	if (!have(FIX "debug_inline_stripped"))
		SKIP("run make fixtures");
	CHECK(make_tmp(dir, sizeof(dir)) == 0);
	snprintf(sub, sizeof(sub), "%s/a", dir);
	snprintf(bin, sizeof(bin), "%s/a/debug_inline_stripped", dir);
	if (mkdirs(dir, "a") || copy_file(FIX "debug_inline_stripped", bin))
		goto out;
	snprintf(tmp, sizeof(tmp), "%s/x.debug", dir);
	if (copy_file(FIX "debug_inline.debug", tmp))
		goto out;
	snprintf(tmp, sizeof(tmp), "%s/a/x.debug", dir);
	if (copy_file(FIX "debug_inline.debug", tmp))
		goto out;

	/* the control: a plain name with the right CRC is found */
	if (patch_debuglink(bin, "x.debug", FIX "debug_inline.debug"))
		goto out;
	elf = open(bin, O_RDONLY);
	fd = debuginfo__find(elf, NULL, bin, NULL, &kind);
	close(elf);
	if (fd < 0 || kind != DEBUGINFO_DEBUGLINK || !same_file(fd, tmp)) {
		fprintf(stderr, "  control: fd %d kind %d\n", fd, kind);
		goto out;
	}
	close(fd);
	fd = -1;

	/* "../x.debug" would reach dir/x.debug */
	if (patch_debuglink(bin, "../x.debug", FIX "debug_inline.debug"))
		goto out;
	elf = open(bin, O_RDONLY);
	fd = debuginfo__find(elf, NULL, bin, NULL, &kind);
	close(elf);
	if (fd == -ENOENT && kind == DEBUGINFO_NONE)
		err = TEST_OK;
out:
	if (fd >= 0)
		close(fd);
	rm_tree(dir);
	return err;
}

/* symlinks inside a process root resolve inside it, never to the host's files */
static int test_root_confinement(void)
{
	char dir[PATH_MAX], host_dbg[PATH_MAX], link[PATH_MAX + 64], copy[PATH_MAX + 64];
	struct debuginfo_opts o = { .root = NULL };
	int elf, fd = -1, kind = -1, err = TEST_FAIL;

	if (!have(FIX "debuglink_sub/.stamp") || !realpath(FIX "debuglink_sub/.debug", host_dbg))
		SKIP("run make fixtures");
	CHECK(make_tmp(dir, sizeof(dir)) == 0);
	o.root = dir;
	elf = open(FIX "debug_inline_stripped", O_RDONLY);
	if (elf < 0 || mkdirs(dir, "opt/app"))
		goto out;
	/* /opt/app/.debug -> the host's directory holding the right file */
	snprintf(link, sizeof(link), "%s/opt/app/.debug", dir);
	if (symlink(host_dbg, link))
		goto out;
	fd = debuginfo__find(elf, NULL, "/opt/app/debug_inline_stripped", &o, &kind);
	if (fd != -ENOENT) {
		fprintf(stderr, "  absolute symlink followed out of the root: %d\n", fd);
		goto out;
	}
	/* and "../../../../.." climbs no higher than the root */
	unlink(link);
	if (symlink("../../../../../../../../../../../..", link))
		goto out;
	fd = debuginfo__find(elf, NULL, "/opt/app/debug_inline_stripped", &o, &kind);
	if (fd != -ENOENT)
		goto out;
	/* the control: the file really inside the root is found */
	unlink(link);
	snprintf(copy, sizeof(copy), "%s/opt/app/debug_inline.debug", dir);
	if (copy_file(FIX "debug_inline.debug", copy))
		goto out;
	fd = debuginfo__find(elf, NULL, "/opt/app/debug_inline_stripped", &o, &kind);
	if (fd >= 0 && kind == DEBUGINFO_DEBUGLINK && same_file(fd, copy))
		err = TEST_OK;
out:
	if (fd >= 0)
		close(fd);
	if (elf >= 0)
		close(elf);
	rm_tree(dir);
	return err;
}

static int test_minidebuginfo(void)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct debuginfo_opts o;
	unsigned long long caller = 0;
	struct elf_syms *es = NULL;
	const char *name = NULL;
	int elf, fd, kind = -1;
	char word[64];
	FILE *p;

	if (!have(FIX "debug_inline_mini") || !realpath(FIX "debug_inline_mini", path))
		SKIP("run make fixtures");
	p = popen(FIX "debug_inline </dev/null", "r");
	CHECK(p);
	while (fscanf(p, "%63s %llx", word, &caller) == 2 && strcmp(word, "fixture_caller"))
		;
	pclose(p);
	CHECK(caller);
	/* an empty root: no build-ID tree to answer first */
	CHECK(make_tmp(dir, sizeof(dir)) == 0);
	o = (struct debuginfo_opts){ .root = dir };
	elf = open(path, O_RDONLY);
	fd = elf >= 0 ? debuginfo__find(elf, NULL, path, &o, &kind) : -1;
	if (elf >= 0)
		close(elf);
	rm_tree(dir);
	CHECK(fd >= 0);
	CHECK(kind == DEBUGINFO_MINI);
	/* an ELF image with the symbols strip removed, and no DWARF */
	es = elf_syms__read_fd(fd);
	if (es)
		name = elf_syms__lookup(es, caller, NULL);
	CHECK(name && !strcmp(name, "fixture_caller"));
	elf_syms__free(es);
	errno = 0;
	CHECK(!dwarf_info__open(fd, SIZE_MAX));
	CHECK(errno == ENOENT);
	/* sealed: nobody can rewrite it under a reader */
	CHECK(write(fd, "x", 1) < 0 && errno == EPERM);
	close(fd);
	return TEST_OK;
}

/* the dwz supplementary file: by build ID, or at the absolute path its user recorded */
static int test_find_alt(void)
{
	char dir[PATH_MAX], bid[ELF_BUILD_ID_HEX_SIZE], path[PATH_MAX + 64];
	static const char alt[] = "/usr/lib/debug/.dwz/x86_64-linux-gnu/fixture.debug";
	struct debuginfo_opts o = { .root = FIX "dwz/root" };
	int fd, kind = -1, err = TEST_FAIL;

	if (!have(FIX "dwz/.stamp"))
		SKIP("dwz is not installed (apt-get install dwz, then make fixtures)");
	fd = open(FIX "dwz/common.debug", O_RDONLY);
	CHECK(fd >= 0 && elf_read_build_id(fd, bid, sizeof(bid)) == 0);
	close(fd);
	fd = debuginfo__find_alt("ebpfprof-fixture-alt.debug", bid, &o, &kind);
	CHECK(fd >= 0 && kind == DEBUGINFO_BUILD_ID && build_id_is(fd, bid));
	close(fd);
	CHECK(debuginfo__find_alt(NULL, "not hex", &o, &kind) == -EINVAL);

	CHECK(make_tmp(dir, sizeof(dir)) == 0);
	o.root = dir;
	snprintf(path, sizeof(path), "%s%s", dir, alt);
	if (mkdirs(dir, "usr/lib/debug/.dwz/x86_64-linux-gnu"))
		goto out;
	/* a FIFO there must not block us */
	if (mkfifo(path, 0600))
		goto out;
	fd = debuginfo__find_alt(alt, bid, &o, &kind);
	if (fd != -ENOENT || kind != DEBUGINFO_NONE)
		goto out;
	/* another file there is not it */
	unlink(path);
	if (copy_file(FIX "debug_inline.debug", path))
		goto out;
	fd = debuginfo__find_alt(alt, bid, &o, &kind);
	if (fd != -ENOENT)
		goto out;
	if (copy_file(FIX "dwz/common.debug", path))
		goto out;
	fd = debuginfo__find_alt(alt, bid, &o, &kind);
	if (fd >= 0 && kind == DEBUGINFO_ALT_PATH && build_id_is(fd, bid))
		err = TEST_OK;
out:
	if (fd >= 0)
		close(fd);
	rm_tree(dir);
	return err;
}

static int test_not_found(void)
{
	char dir[PATH_MAX];
	struct debuginfo_opts o;
	int elf, fd, kind = -1;

	if (!have(FIX "debug_inline_stripped"))
		SKIP("run make fixtures");
	CHECK(make_tmp(dir, sizeof(dir)) == 0);
	o = (struct debuginfo_opts){ .root = dir };
	elf = open(FIX "debug_inline_stripped", O_RDONLY);
	fd = debuginfo__find(elf, NULL, NULL, &o, &kind);
	close(elf);
	rm_tree(dir);
	CHECK(fd == -ENOENT && kind == DEBUGINFO_NONE);
	/* a root that is not there */
	o.root = "/nonexistent/root";
	elf = open(FIX "debug_inline_stripped", O_RDONLY);
	fd = debuginfo__find(elf, NULL, NULL, &o, &kind);
	close(elf);
	CHECK(fd < 0);
	return TEST_OK;
}

/* a port nobody listens on now */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	if (s >= 0 && !bind(s, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(s, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	if (s >= 0)
		close(s);
	return port;
}

/* debuginfod -F over DIR/files, its database in DIR, on PORT */
static pid_t start_debuginfod(const char *dir, int port)
{
	char files[PATH_MAX + 16], db[PATH_MAX + 16], log[PATH_MAX + 16], portarg[16];
	pid_t pid;

	snprintf(files, sizeof(files), "%s/files", dir);
	snprintf(db, sizeof(db), "%s/db.sqlite", dir);
	snprintf(log, sizeof(log), "%s/server.log", dir);
	snprintf(portarg, sizeof(portarg), "%d", port);
	pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(DEBUGINFOD, DEBUGINFOD, "-F", "-d", db, "-p", portarg, "-t", "0", "-g", "0",
		      files, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void ms_sleep(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int test_debuginfod(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], urls[64], cache[PATH_MAX + 64];
	char bid[ELF_BUILD_ID_HEX_SIZE];
	struct debuginfo_opts o;
	struct debuginfo_fetch *f;
	int port, fd = -1, elf = -1, kind = -1, err = TEST_FAIL, waited, attempt = 0, status;
	pid_t pid;

	if (!have(FIX "debug_inline.debug"))
		SKIP("run make fixtures");
	if (access(DEBUGINFOD, X_OK))
		SKIP("debuginfod is not installed (apt-get install debuginfod)");
	CHECK(fixture_build_id(bid, sizeof(bid)) == 0);
	CHECK(!getenv("DEBUGINFOD_URLS") || unsetenv("DEBUGINFOD_URLS") == 0);
	CHECK(make_tmp(dir, sizeof(dir)) == 0);
	snprintf(path, sizeof(path), "%s/files/debug_inline.debug", dir);
	if (mkdirs(dir, "files") || copy_file(FIX "debug_inline.debug", path))
		goto out_rm;
	port = free_port();
	pid = port > 0 ? start_debuginfod(dir, port) : -1;
	if (pid < 0)
		goto out_rm;
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", port);

	/*
	 * Until it has bound its port and scanned the directory it answers
	 * nothing or 404; the client caches misses, so each try gets a fresh cache.
	 */
	for (waited = 0; waited < SERVER_WAIT_MS; waited += 200) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			pid = -1;
			break;
		}
		snprintf(cache, sizeof(cache), "%s/cache-%d", dir, attempt++);
		o = (struct debuginfo_opts){ .use_debuginfod = true, .debuginfod_urls = urls,
					     .cache_dir = cache };
		fd = debuginfo__fetch(bid, &o);
		if (fd >= 0)
			break;
		ms_sleep(200);
	}
	if (fd < 0) {
		fprintf(stderr, "  no answer from debuginfod in %d ms: %d\n", waited, fd);
		if (pid < 0) {
			err = TEST_SKIP;
			test__skip_reason = "debuginfod could not start (see its log)";
		}
		goto out_kill;
	}
	if (!build_id_is(fd, bid))
		goto out_kill;
	close(fd);
	fd = -1;
	/* our overrides of the environment do not stay */
	if (getenv("DEBUGINFOD_URLS") || getenv("DEBUGINFOD_CACHE_PATH")) {
		fprintf(stderr, "  environment not restored\n");
		goto out_kill;
	}

	/* the whole search: nothing local (empty root, no path), so debuginfod answers */
	snprintf(path, sizeof(path), "%s/emptyroot", dir);
	snprintf(cache, sizeof(cache), "%s/cache-find", dir);
	o = (struct debuginfo_opts){ .root = path, .use_debuginfod = true,
				     .debuginfod_urls = urls, .cache_dir = cache };
	if (mkdirs(dir, "emptyroot"))
		goto out_kill;
	elf = open(FIX "debug_inline_stripped", O_RDONLY);
	fd = debuginfo__find(elf, NULL, NULL, &o, &kind);
	if (fd < 0 || kind != DEBUGINFO_DEBUGINFOD || !build_id_is(fd, bid) ||
	    check_dwarf_works(fd) != TEST_OK) {
		fprintf(stderr, "  debuginfo__find: fd %d kind %d\n", fd, kind);
		goto out_kill;
	}
	close(fd);
	fd = -1;

	/* off the caller's thread */
	snprintf(cache, sizeof(cache), "%s/cache-async", dir);
	o.cache_dir = cache;
	f = debuginfo_fetch__start(bid, &o);
	if (!f)
		goto out_kill;
	fd = debuginfo_fetch__wait(f, SERVER_WAIT_MS);
	if (fd < 0 || !build_id_is(fd, bid) || debuginfo_fetch__wait(f, 0) != -EALREADY) {
		fprintf(stderr, "  async fetch: %d\n", fd);
		debuginfo_fetch__free(f);
		goto out_kill;
	}
	debuginfo_fetch__free(f);
	close(fd);
	fd = -1;

	/* unknown to the server; and a fetch dropped while it runs */
	if (debuginfo__fetch("00112233445566778899aabbccddeeff00112233", &o) != -ENOENT)
		goto out_kill;
	f = debuginfo_fetch__start("00112233445566778899aabbccddeeff00112244", &o);
	if (!f)
		goto out_kill;
	debuginfo_fetch__free(f);
	if (debuginfo__fetch("not hex", &o) != -EINVAL)
		goto out_kill;
	err = TEST_OK;

out_kill:
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
	if (fd >= 0)
		close(fd);
	if (elf >= 0)
		close(elf);
out_rm:
	rm_tree(dir);
	return err;
}

TEST_MAIN("debuginfo", TEST(test_build_id_tree), TEST(test_debuglink),
	  TEST(test_debuglink_bad_crc), TEST(test_debuglink_hostile_name),
	  TEST(test_root_confinement), TEST(test_minidebuginfo), TEST(test_find_alt),
	  TEST(test_not_found),
	  TEST(test_debuginfod))
