/* test_symbolizer.c -- end to end: fixtures, file cache, exits, deleted files, fake /proc, forget */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include "symbolize/symbolizer.h"
#include "test.h"
#include "lib/clock.h"
#include "lib/proc_image.h"

/*
 * PID's image as BPF names it: its start from /proc for a process of this
 * test (itself, its children), remembered from the first look so it names
 * the process after it exits too; 0 for the pids of fake proc trees.
 */
static struct proc_image image_of(__u32 pid)
{
	static struct proc_image known[64];
	static unsigned n_known;
	struct proc_image img = { .pid = pid };
	char path[64], buf[1024];
	unsigned ppid = 0;
	FILE *f;
	size_t n;

	for (unsigned i = 0; i < n_known && i < 64; i++)
		if (known[i].pid == pid)
			return known[i];
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return img;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (strrchr(buf, ')') && sscanf(strrchr(buf, ')') + 1, " %*c %u", &ppid) == 1 &&
	    (pid == (__u32)getpid() || ppid == (unsigned)getpid()) &&
	    !proc_image__parse_stat(buf, n, &img.start))
		known[n_known++ % 64] = img;
	return img;
}

#define IMG(pid) ((struct proc_image[]){ image_of(pid) })

#define FIX FIXTURES_DIR
#define MAX_FNS 16

/* a running fixture: what it printed ("name address" lines) and its pipes */
struct proc {
	pid_t pid;
	int in;		/* its stdin: closing it ends the process */
	FILE *out;	/* its stdout */
	int n;
	char names[MAX_FNS][64];
	__u64 addrs[MAX_FNS];
};

static bool have(const char *path)
{
	return access(path, X_OK) == 0;
}

/* starts PATH and reads its "name address" lines up to "ready" */
static int spawn(const char *path, struct proc *p)
{
	int in[2], out[2];
	char line[256];

	memset(p, 0, sizeof(*p));
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -errno;
	p->pid = fork();
	if (p->pid < 0)
		return -errno;
	if (!p->pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->in = in[1];
	p->out = fdopen(out[0], "r");
	if (!p->out)
		return -errno;
	while (fgets(line, sizeof(line), p->out)) {
		unsigned long long addr;
		char name[64];

		if (!strcmp(line, "ready\n"))
			return 0;
		if (p->n < MAX_FNS && sscanf(line, "%63s %llx", name, &addr) == 2) {
			strcpy(p->names[p->n], name);
			p->addrs[p->n++] = addr;
		}
	}
	return -EIO;
}

static void stop(struct proc *p)
{
	if (p->pid <= 0)
		return;
	close(p->in);
	if (p->out)
		fclose(p->out);
	waitpid(p->pid, NULL, 0);
	p->pid = 0;
}

static __u64 addr_of(const struct proc *p, const char *name)
{
	for (int i = 0; i < p->n; i++)
		if (!strcmp(p->names[i], name))
			return p->addrs[i];
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* ADDR (and ADDR + 2) of PID resolve to NAME in a mapping whose path ends in FILE */
static int check_user(struct symbolizer *s, __u32 pid, __u64 addr, const char *name,
		      const char *file)
{
	struct sym_frame f;

	CHECK(addr);
	CHECK(symbolizer__user(s, IMG(pid), addr, &f) == 0);
	CHECK(f.mapping);
	if (!f.name || strcmp(f.name, name))
		fprintf(stderr, "  %s at %#llx resolved to %s in %s\n", name,
			(unsigned long long)addr, f.name ? f.name : "(null)", f.mapping->path);
	CHECK(f.name && !strcmp(f.name, name) && f.offset == 0);
	CHECK(f.mapping->has_symbols && !f.mapping->is_kernel && !f.module);
	CHECK(f.mapping->id > 0);
	CHECK(addr >= f.mapping->start && addr < f.mapping->limit);
	if (file)
		CHECK(ends_with(f.mapping->path, file));
	CHECK(symbolizer__user(s, IMG(pid), addr + 2, &f) == 0);
	CHECK(f.name && !strcmp(f.name, name) && f.offset == 2);
	return TEST_OK;
}

static struct symbolizer *user_only(void)
{
	struct symbolizer_opts opts = { .no_kernel = true };

	return symbolizer__new(&opts);
}

static int test_pie(void)
{
	struct symbolizer *s;
	struct sym_frame a, b;
	struct proc p;
	int ret = TEST_FAIL;

	if (!have(FIX "fixture_pie"))
		SKIP("run make fixtures");
	CHECK(spawn(FIX "fixture_pie", &p) == 0);
	s = user_only();
	if (!s || symbolizer__add_image(s, IMG(p.pid)))
		goto out;
	if (check_user(s, p.pid, addr_of(&p, "fixture_main_leaf"), "fixture_main_leaf",
		       "/fixture_pie") ||
	    check_user(s, p.pid, addr_of(&p, "fixture_main_caller"), "fixture_main_caller",
		       "/fixture_pie") ||
	    check_user(s, p.pid, addr_of(&p, "getpid"), "getpid", NULL))
		goto out;
	/* both functions: the same mapping object, with the file's build ID */
	symbolizer__user(s, IMG(p.pid), addr_of(&p, "fixture_main_leaf"), &a);
	symbolizer__user(s, IMG(p.pid), addr_of(&p, "fixture_main_caller"), &b);
	if (a.mapping != b.mapping || strlen(a.mapping->build_id) != 40)
		goto out;
	ret = TEST_OK;
out:
	symbolizer__free(s);
	stop(&p);
	return ret;
}

/* load bias of a shared library, and the static (non-PIE) binary */
static int test_shared_and_static(void)
{
	struct symbolizer *s = user_only();
	struct proc p, q = {};
	int ret = TEST_FAIL;

	if (!have(FIX "fixture_uselib"))
		SKIP("run make fixtures");
	CHECK(s);
	CHECK(spawn(FIX "fixture_uselib", &p) == 0);
	if (symbolizer__add_image(s, IMG(p.pid)) ||
	    check_user(s, p.pid, addr_of(&p, "fixture_lib_alpha"), "fixture_lib_alpha",
		       "/libfixture.so") ||
	    check_user(s, p.pid, addr_of(&p, "fixture_lib_beta"), "fixture_lib_beta",
		       "/libfixture.so") ||
	    check_user(s, p.pid, addr_of(&p, "fixture_lib_hidden"), "fixture_lib_hidden",
		       "/libfixture.so") ||
	    check_user(s, p.pid, addr_of(&p, "fixture_main_leaf"), "fixture_main_leaf",
		       "/fixture_uselib"))
		goto out;
	if (have(FIX "fixture_static")) {
		if (spawn(FIX "fixture_static", &q) || symbolizer__add_image(s, IMG(q.pid)) ||
		    check_user(s, q.pid, addr_of(&q, "fixture_main_leaf"), "fixture_main_leaf",
			       "/fixture_static") ||
		    check_user(s, q.pid, addr_of(&q, "getpid"), "getpid", "/fixture_static"))
			goto out;
	}
	ret = TEST_OK;
out:
	symbolizer__free(s);
	stop(&p);
	stop(&q);
	return ret;
}

/* two processes mapping the same files: each file is read once */
static int test_cache(void)
{
	struct symbolizer_stats a, b;
	struct symbolizer *s = user_only();
	struct sym_frame f1, f2;
	struct proc p, q;
	int ret = TEST_FAIL;

	if (!have(FIX "fixture_uselib"))
		SKIP("run make fixtures");
	CHECK(s);
	CHECK(spawn(FIX "fixture_uselib", &p) == 0);
	CHECK(spawn(FIX "fixture_uselib", &q) == 0);
	if (symbolizer__add_image(s, IMG(p.pid)))
		goto out;
	symbolizer__stats(s, &a);
	if (symbolizer__add_image(s, IMG(q.pid)))
		goto out;
	symbolizer__stats(s, &b);
	fprintf(stderr, "  files loaded %llu -> %llu, cache hits %llu -> %llu\n",
		(unsigned long long)a.files_loaded, (unsigned long long)b.files_loaded,
		(unsigned long long)a.file_cache_hits, (unsigned long long)b.file_cache_hits);
	/* fixture_uselib, libfixture.so, libc, ld.so (and the vDSO) */
	if (a.files_loaded < 4 || b.files_loaded != a.files_loaded ||
	    b.file_cache_hits < a.file_cache_hits + 4 || b.pids != 2 || a.pids != 1 ||
	    b.symbols != a.symbols)
		goto out;
	/* libc in both: different mappings (ids), the same build ID string */
	if (symbolizer__user(s, IMG(p.pid), addr_of(&p, "getpid"), &f1) ||
	    symbolizer__user(s, IMG(q.pid), addr_of(&q, "getpid"), &f2) || !f1.name || !f2.name ||
	    strcmp(f1.name, "getpid") || strcmp(f2.name, "getpid") ||
	    f1.mapping->id == f2.mapping->id || f1.mapping->build_id != f2.mapping->build_id)
		goto out;
	ret = TEST_OK;
out:
	symbolizer__free(s);
	stop(&p);
	stop(&q);
	return ret;
}

/* a process that exited after add_image still symbolizes; an unknown dead one is -ESRCH */
static int test_exited(void)
{
	struct symbolizer *s = user_only();
	__u64 leaf;
	struct proc p;
	pid_t pid;

	if (!have(FIX "fixture_pie"))
		SKIP("run make fixtures");
	CHECK(s);
	CHECK(spawn(FIX "fixture_pie", &p) == 0);
	pid = p.pid;
	leaf = addr_of(&p, "fixture_main_leaf");
	CHECK(symbolizer__add_image(s, IMG(pid)) == 0);
	stop(&p);
	CHECK(kill(pid, 0) == -1 && errno == ESRCH);
	CHECK(check_user(s, pid, leaf, "fixture_main_leaf", "/fixture_pie") == TEST_OK);
	CHECK(symbolizer__add_image(s, IMG(pid)) == 0);	/* known: a no-op */
	symbolizer__free(s);

	s = user_only();
	CHECK(s);
	CHECK(symbolizer__add_image(s, IMG(pid)) == -ESRCH);
	CHECK(symbolizer__add_image(s, IMG(pid)) == -ESRCH);
	symbolizer__free(s);
	return TEST_OK;
}

/* an image's name for ADDR, or NULL */
static const char *name_in(struct symbolizer *s, const struct proc_image *img, __u64 addr)
{
	struct sym_frame f;

	return symbolizer__user(s, img, addr, &f) ? NULL : f.name;
}

/*
 * Images of one pid: an exec after a read keeps the old image's names; maps
 * read after an exec are the new image's, across it nobody's; an image met
 * after a later one is not read; a trim frees the superseded.
 */
static int test_images(void)
{
	struct symbolizer *s = user_only();
	struct symbolizer_stats st;
	struct proc_image img, next, late, img2;
	__u64 leaf, live;
	struct proc p;

	if (!have(FIX "fixture_pie"))
		SKIP("run make fixtures");
	CHECK(s);
	CHECK(spawn(FIX "fixture_pie", &p) == 0);
	leaf = addr_of(&p, "fixture_main_leaf");
	img = *IMG(p.pid);
	img.exec = 5;	/* /proc does not show it: any count, so long as later ones are larger */
	CHECK(symbolizer__add_image(s, &img) == 0);
	symbolizer__stats(s, &st);
	live = st.pids_live;
	/* an exec after the read: the old image names its samples still, the new is read when added */
	next = img;
	next.exec++;
	symbolizer__image_began(s, &next, clock_ns(CLOCK_MONOTONIC) + 1000000000LL);
	CHECK(name_in(s, &img, leaf) && !strcmp(name_in(s, &img, leaf), "fixture_main_leaf"));
	CHECK(symbolizer__add_image(s, &next) == 0);	/* the same process: its maps, read now */
	/* an earlier exec count, met only now: too late to read */
	late = img;
	late.exec--;
	CHECK(symbolizer__add_image(s, &late) == -ESTALE);
	CHECK(!name_in(s, &late, leaf));
	/* an exec that ended before the last read began: what was read is the new image's */
	late = next;
	late.exec++;
	symbolizer__image_began(s, &late, 1);
	CHECK(!name_in(s, &next, leaf));
	CHECK(name_in(s, &late, leaf) && !strcmp(name_in(s, &late, leaf), "fixture_main_leaf"));
	/* one that ended as it was read (or just after): those maps are nobody's for sure */
	img2 = late;
	img2.exec++;
	symbolizer__image_began(s, &img2, clock_ns(CLOCK_MONOTONIC));
	CHECK(!name_in(s, &late, leaf));
	symbolizer__stats(s, &st);
	CHECK(st.images_superseded == 3 && st.images_unread == 1 && st.images_read_late == 2);
	CHECK(st.pids_live == live + 3);	/* read, read, too late, handed on; an exec adds none */
	/* a trim frees the superseded, their samples named; never read again after it */
	symbolizer__trim(s, 0);
	symbolizer__stats(s, &st);
	CHECK(st.pids_live == live);	/* the newest only */
	CHECK(!name_in(s, &img, leaf));
	symbolizer__stats(s, &st);
	CHECK(st.images_unread == 2);
	stop(&p);
	symbolizer__free(s);
	return TEST_OK;
}

/*
 * A fork child not exec'd since, named from its parent's maps: nothing of it
 * is read (no process holds its pid at all here). Its exec keeps those
 * names for its old image (they were never read across the exec). An
 * unknown parent, or a child known already, is not copied.
 */
static int test_fork(void)
{
	struct symbolizer *s = user_only();
	struct proc_image parent, child = { .pid = 4194301, .start = 1, .exec = 3 };
	struct proc_image other = { .pid = 4194302, .start = 1, .exec = 3 }, next;
	struct symbolizer_stats st;
	__u64 leaf;
	struct proc p;

	if (!have(FIX "fixture_pie"))
		SKIP("run make fixtures");
	CHECK(s);
	CHECK(spawn(FIX "fixture_pie", &p) == 0);
	leaf = addr_of(&p, "fixture_main_leaf");
	parent = *IMG(p.pid);
	CHECK(symbolizer__add_fork(s, &child, &parent) == -ENOENT);	/* the parent not read yet */
	CHECK(symbolizer__add_image(s, &parent) == 0);
	CHECK(symbolizer__add_fork(s, &child, &parent) == 0);
	CHECK(symbolizer__add_fork(s, &child, &parent) == -ENOENT);	/* known already */
	CHECK(name_in(s, &child, leaf) && !strcmp(name_in(s, &child, leaf), "fixture_main_leaf"));
	next = child;
	next.exec++;
	symbolizer__image_began(s, &next, clock_ns(CLOCK_MONOTONIC));
	CHECK(name_in(s, &child, leaf) && !strcmp(name_in(s, &child, leaf), "fixture_main_leaf"));
	symbolizer__stats(s, &st);
	CHECK(st.images_read_late == 0);
	CHECK(st.forks_parent_unknown == 1 && st.forks_parent_unsettled == 0);
	/* the parent's exec announced after its read: read again, at its child's copy, which follows */
	symbolizer__image_began(s, &parent, clock_ns(CLOCK_MONOTONIC));
	CHECK(symbolizer__add_fork(s, &other, &parent) == 0);
	symbolizer__stats(s, &st);
	CHECK(st.forks_parent_unsettled == 0);
	CHECK(name_in(s, &other, leaf) && !strcmp(name_in(s, &other, leaf), "fixture_main_leaf"));
	/* a parent image that is not the one known (another exec count): not copied */
	other.pid++;
	parent.exec++;
	CHECK(symbolizer__add_fork(s, &other, &parent) == -ENOENT);
	symbolizer__stats(s, &st);
	CHECK(st.forks_parent_unknown == 2 && st.forks_parent_unsettled == 0);
	stop(&p);
	symbolizer__free(s);
	return TEST_OK;
}

static int count_fds(void)
{
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;

	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		n += d->d_name[0] != '.';
	closedir(dir);
	return n;
}

/* lazy_files: add_image only opens the files; one read after the process is gone still names it */
static int test_lazy(void)
{
	struct symbolizer_opts opts = { .no_kernel = true, .lazy_files = true };
	struct symbolizer_stats a, b, c;
	struct symbolizer *s;
	int fds = count_fds();
	__u64 leaf;
	struct proc p;
	pid_t pid;

	if (!have(FIX "fixture_pie"))
		SKIP("run make fixtures");
	s = symbolizer__new(&opts);
	CHECK(s && fds > 0);
	CHECK(spawn(FIX "fixture_pie", &p) == 0);
	pid = p.pid;
	leaf = addr_of(&p, "fixture_main_leaf");
	CHECK(symbolizer__add_image(s, IMG(pid)) == 0);
	symbolizer__stats(s, &a);
	stop(&p);
	CHECK(kill(pid, 0) == -1 && errno == ESRCH);
	CHECK(check_user(s, pid, leaf, "fixture_main_leaf", "/fixture_pie") == TEST_OK);
	symbolizer__stats(s, &b);
	fprintf(stderr, "  added: %llu files pending, %llu read; after one lookup: %llu pending, %llu read\n",
		(unsigned long long)a.files_pending, (unsigned long long)a.files_loaded,
		(unsigned long long)b.files_pending, (unsigned long long)b.files_loaded);
	/* fixture_pie, libc, ld.so held open; only the one looked up is read */
	CHECK(a.files_loaded == 0 && a.files_pending >= 3);
	CHECK(b.files_loaded == 1 && b.files_pending == a.files_pending - 1);
	CHECK(count_fds() == fds + (int)b.files_pending);

	/* forgotten and trimmed: every descriptor held is closed */
	symbolizer__forget_pid(s, pid);
	symbolizer__trim(s, 0);
	symbolizer__stats(s, &c);
	CHECK(c.files_pending == 0 && c.files_cached == 0 && count_fds() == fds);
	symbolizer__free(s);
	return TEST_OK;
}

/* copies FROM into the open file TO */
static int copy_file(const char *from, int to)
{
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY);

	if (in < 0)
		return -errno;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(to, buf, n) != n)
			break;
	close(in);
	return n == 0 ? 0 : -EIO;
}

/* a binary deleted after it started is still read, through map_files */
static int test_deleted(void)
{
	struct symbolizer *s = NULL;
	char path[PATH_MAX];
	struct sym_frame f;
	struct proc p = {};
	int fd, ret = TEST_FAIL;

	if (!have(FIX "fixture_pie"))
		SKIP("run make fixtures");
	/* next to the fixtures, not in /tmp, which may be mounted noexec */
	CHECK(getcwd(path, sizeof(path) - 64));
	strcat(path, "/" FIX "deleted-XXXXXX");
	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (copy_file(FIX "fixture_pie", fd) || fchmod(fd, 0755)) {
		close(fd);
		goto out;
	}
	close(fd);	/* before exec: a file open for writing cannot run (ETXTBSY) */
	if (spawn(path, &p))
		goto out;
	unlink(path);
	s = user_only();
	if (!s || symbolizer__add_image(s, IMG(p.pid)) ||
	    check_user(s, p.pid, addr_of(&p, "fixture_main_leaf"), "fixture_main_leaf", path) ||
	    symbolizer__user(s, IMG(p.pid), addr_of(&p, "fixture_main_leaf"), &f) ||
	    strcmp(f.mapping->path, path))
		goto out;
	ret = TEST_OK;
out:
	unlink(path);
	symbolizer__free(s);
	stop(&p);
	return ret;
}

/* a library loaded after add_image is found by one re-read; handed-out mappings stay valid */
static int test_reread(void)
{
	char cwd[PATH_MAX], line[256];
	struct symbolizer *s = user_only();
	struct sym_frame before, after, lib, miss;
	unsigned long long addr = 0;
	struct proc p;
	int ret = TEST_FAIL;

	if (!have(FIX "fixture_pie"))
		SKIP("run make fixtures");
	CHECK(s && getcwd(cwd, sizeof(cwd)));
	CHECK(spawn(FIX "fixture_pie", &p) == 0);
	if (symbolizer__add_image(s, IMG(p.pid)) ||
	    symbolizer__user(s, IMG(p.pid), addr_of(&p, "fixture_main_leaf"), &before))
		goto out;
	dprintf(p.in, "dlopen %s/" FIX "libfixture-stripped.so\n", cwd);
	if (!fgets(line, sizeof(line), p.out) || sscanf(line, "dlopen %llx", &addr) != 1 || !addr)
		goto out;
	if (symbolizer__user(s, IMG(p.pid), addr, &lib) || !lib.name ||
	    strcmp(lib.name, "fixture_lib_alpha") ||
	    !ends_with(lib.mapping->path, "/libfixture-stripped.so"))
		goto out;
	/* the unchanged executable mapping kept its object and id through the re-read */
	if (symbolizer__user(s, IMG(p.pid), addr_of(&p, "fixture_main_leaf"), &after) ||
	    after.mapping != before.mapping || strcmp(before.mapping->path, after.mapping->path))
		goto out;
	/* a miss right after a re-read is not re-read again, and reports nothing */
	if (symbolizer__user(s, IMG(p.pid), 0x1000, &miss) != -ENOENT || miss.mapping || miss.name)
		goto out;
	ret = TEST_OK;
out:
	symbolizer__free(s);
	stop(&p);
	return ret;
}

/* a library mapped after add_image is captured by a refresh, and named after the process exits */
static int test_refresh(void)
{
	struct symbolizer_opts opts = { .no_kernel = true, .lazy_files = true };
	struct symbolizer *s = symbolizer__new(&opts);
	char cwd[PATH_MAX], line[256];
	unsigned long long addr = 0;
	struct sym_frame lib;
	struct proc p;
	pid_t pid;
	int ret = TEST_FAIL;

	if (!have(FIX "fixture_pie"))
		SKIP("run make fixtures");
	CHECK(s && getcwd(cwd, sizeof(cwd)));
	CHECK(spawn(FIX "fixture_pie", &p) == 0);
	pid = p.pid;
	if (symbolizer__add_image(s, IMG(pid)))
		goto out;
	dprintf(p.in, "dlopen %s/" FIX "libfixture-stripped.so\n", cwd);
	if (!fgets(line, sizeof(line), p.out) || sscanf(line, "dlopen %llx", &addr) != 1 || !addr)
		goto out;
	if (symbolizer__refresh_image(s, IMG(pid)))
		goto out;
	stop(&p);
	if (symbolizer__user(s, IMG(pid), addr, &lib) || !lib.name ||
	    strcmp(lib.name, "fixture_lib_alpha") ||
	    !ends_with(lib.mapping->path, "/libfixture-stripped.so"))
		goto out;
	if (symbolizer__refresh_image(s, IMG(pid)) != -ESRCH)
		goto out;
	ret = TEST_OK;
out:
	symbolizer__free(s);
	stop(&p);
	return ret;
}

/*
 * Maps read just after an exec, maybe before ld.so mapped the libraries,
 * are read again at the new image's next add_image, so a library mapped in
 * between is named after the process exits. Two ways to such maps: read
 * for the image before, after the exec (handed on to the new one); or read
 * for the new image itself, at a sample inside the exec, which announced
 * it before the exec did (INSIDE).
 */
static int reread_after_exec(bool inside)
{
	struct symbolizer_opts opts = { .no_kernel = true, .lazy_files = true };
	struct symbolizer *s = symbolizer__new(&opts);
	char cwd[PATH_MAX], line[256];
	unsigned long long addr = 0;
	struct proc_image img, next;
	struct sym_frame lib;
	struct proc p;
	int ret = TEST_FAIL;

	if (!have(FIX "fixture_pie"))
		SKIP("run make fixtures");
	CHECK(s && getcwd(cwd, sizeof(cwd)));
	CHECK(spawn(FIX "fixture_pie", &p) == 0);
	img = *IMG(p.pid);
	img.exec = 5;
	next = img;
	next.exec += !inside;
	if (symbolizer__add_image(s, &img))	/* the read: of the image before, or inside */
		goto out;
	symbolizer__image_began(s, &next, 1);	/* the exec's announcement, after the read */
	dprintf(p.in, "dlopen %s/" FIX "libfixture-stripped.so\n", cwd);
	if (!fgets(line, sizeof(line), p.out) || sscanf(line, "dlopen %llx", &addr) != 1 || !addr)
		goto out;
	if (symbolizer__add_image(s, &next))	/* its first sample, or the exec's hand-on */
		goto out;
	stop(&p);
	if (symbolizer__user(s, &next, addr, &lib) || !lib.name ||
	    strcmp(lib.name, "fixture_lib_alpha")) {
		fprintf(stderr, "  %#llx: %s\n", addr, lib.name ? lib.name : "unnamed");
		goto out;
	}
	ret = TEST_OK;
out:
	symbolizer__free(s);
	stop(&p);
	return ret;
}

static int test_handed_reread(void)
{
	return reread_after_exec(false);
}

static int test_read_inside_exec(void)
{
	return reread_after_exec(true);
}

/* our own process: the test binary, libc and the vDSO */
static int test_self(void)
{
	unsigned long vdso = getauxval(AT_SYSINFO_EHDR);
	struct symbolizer *s = user_only();
	struct sym_frame f;
	bool named = false;

	CHECK(s);
	CHECK(check_user(s, getpid(), (__u64)(unsigned long)test_self, "test_self", NULL) ==
	      TEST_OK);
	CHECK(check_user(s, getpid(), (__u64)(unsigned long)getpid, "getpid", NULL) == TEST_OK);
	if (vdso) {
		CHECK(symbolizer__user(s, IMG(getpid()), vdso + 0x800, &f) == 0);
		CHECK(f.mapping && !strcmp(f.mapping->path, "[vdso]"));
		CHECK(f.mapping->has_symbols);
		for (__u64 a = vdso; a < f.mapping->limit && !named; a += 4) {
			struct sym_frame g;

			if (!symbolizer__user(s, IMG(getpid()), a, &g) && g.name)
				named = strstr(g.name, "gettimeofday") || strstr(g.name, "clock_get");
		}
		CHECK(named);
	}
	CHECK(symbolizer__user(s, IMG(99999999), 0x400000, &f) == -ENOENT && !f.mapping);
	CHECK(symbolizer__add_image(s, IMG(99999999)) == -ESRCH);
	symbolizer__free(s);
	symbolizer__free(NULL);
	return TEST_OK;
}

static int test_kernel(void)
{
	unsigned long long addr = 0;
	char line[512], name[256], type;
	struct symbolizer *s;
	struct sym_frame f;
	FILE *k;

	s = symbolizer__new(NULL);
	CHECK(s);
	if (symbolizer__kernel_status(s) == -EPERM) {
		symbolizer__free(s);
		SKIP("kernel addresses hidden (kptr_restrict)");
	}
	CHECK(symbolizer__kernel_status(s) == 0);
	k = fopen("/proc/kallsyms", "r");
	CHECK(k);
	while (fgets(line, sizeof(line), k))
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 &&
		    !strcmp(name, "schedule"))
			break;
	fclose(k);
	CHECK(!strcmp(name, "schedule") && addr);
	CHECK(symbolizer__kernel(s, addr + 3, &f) == 0);
	CHECK(f.mapping && f.mapping->is_kernel && f.mapping->has_symbols);
	CHECK(!strcmp(f.mapping->path, "[kernel.kallsyms]") && f.mapping->limit == ~0ULL);
	CHECK(f.mapping->start && f.mapping->start <= addr);
	CHECK(f.name && !strcmp(f.name, "schedule") && f.offset == 3 && !f.module);
	CHECK(f.mapping->id == 1);
	if (access("/sys/kernel/notes", R_OK) == 0)
		CHECK(strlen(f.mapping->build_id) == 40);
	symbolizer__free(s);

	/* no_kernel: frames still land in the kernel mapping, unnamed */
	s = user_only();
	CHECK(s);
	CHECK(symbolizer__kernel(s, addr, &f) == 0 && f.mapping && !f.name);
	CHECK(!f.mapping->has_symbols && symbolizer__kernel_status(s) == -ENODEV);
	symbolizer__free(s);
	return TEST_OK;
}

/* --- a fake /proc: the openat2 fallback must stay inside the process's root --- */

static char fake[] = "/tmp/ebpfprof-proc-XXXXXX";

static int put_maps(const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/4242/maps", fake);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fputs(text, f);
	fclose(f);
	return 0;
}

static int test_fake_root(void)
{
	char path[PATH_MAX], cwd[1024], maps[4096], esc[PATH_MAX];
	struct symbolizer_opts opts = { .no_kernel = true, .proc_root = fake };
	unsigned long long alpha = 0, v;
	struct symbolizer *s = NULL;
	char sym[256], t, line[512];
	struct sym_frame f;
	struct stat st, host;
	int fd, ret = TEST_FAIL;
	FILE *nm;

	if (!have(FIX "libfixture.so"))
		SKIP("run make fixtures");
	if (syscall(SYS_openat2, -1, "", NULL, 0) == -1 && errno == ENOSYS)
		SKIP("no openat2(2) here (valgrind does not know it): fallback path untestable");
	CHECK(getcwd(cwd, sizeof(cwd)) && mkdtemp(fake));
	nm = popen("nm " FIX "libfixture.so", "r");
	CHECK(nm);
	while (fgets(line, sizeof(line), nm))
		if (sscanf(line, "%llx %c %255s", &v, &t, sym) == 3 &&
		    !strcmp(sym, "fixture_lib_alpha"))
			alpha = v;
	pclose(nm);
	CHECK(alpha > 0x1000 && alpha < 0x2000);	/* in the text segment at offset 0x1000 */

	snprintf(path, sizeof(path), "%s/4242", fake);
	CHECK(!mkdir(path, 0755));
	snprintf(path, sizeof(path), "%s/4242/root", fake);
	CHECK(!mkdir(path, 0755));
	snprintf(path, sizeof(path), "%s/4242/root/lib", fake);
	CHECK(!mkdir(path, 0755));
	snprintf(path, sizeof(path), "%s/4242/root/lib/libfixture.so", fake);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(!copy_file(FIX "libfixture.so", fd) && !fstat(fd, &st));
	close(fd);
	/* absolute and relative symlinks aiming at the host's copy, and a FIFO */
	snprintf(esc, sizeof(esc), "%s/" FIX "libfixture.so", cwd);
	snprintf(path, sizeof(path), "%s/4242/root/abs.so", fake);
	CHECK(!symlink(esc, path));
	snprintf(path, sizeof(path), "%s/4242/root/rel.so", fake);
	snprintf(esc, sizeof(esc), "../../../../../../../../../..%s/" FIX "libfixture.so", cwd);
	CHECK(!symlink(esc, path));
	snprintf(path, sizeof(path), "%s/4242/root/fifo.so", fake);
	CHECK(!mkfifo(path, 0644));
	CHECK(!stat(FIX "libfixture.so", &host));

	/*
	 * the escapes claim the host file's identity, so only resolving inside
	 * the root stops them; the last file line claims a wrong inode
	 */
	snprintf(maps, sizeof(maps),
		 "10000000-10001000 r-xp 00001000 %x:%x %llu /lib/libfixture.so\n"
		 "20000000-20001000 r-xp 00001000 %x:%x %llu /abs.so\n"
		 "30000000-30001000 r-xp 00001000 %x:%x %llu /rel.so\n"
		 "40000000-40001000 r-xp 00001000 %x:%x %llu /fifo.so\n"
		 "50000000-50001000 r-xp 00001000 %x:%x %llu /lib/libfixture.so\n"
		 "60000000-60001000 r-xp 00000000 00:00 0 \n",
		 major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino,
		 major(host.st_dev), minor(host.st_dev), (unsigned long long)host.st_ino,
		 major(host.st_dev), minor(host.st_dev), (unsigned long long)host.st_ino,
		 major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino,
		 major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino + 1);
	if (put_maps(maps))
		goto out;
	s = symbolizer__new(&opts);
	if (!s || symbolizer__add_image(s, IMG(4242)))
		goto out;
	/* the real file inside the root, through openat2 (there is no map_files here) */
	if (symbolizer__user(s, IMG(4242), 0x10000000 + alpha - 0x1000, &f) || !f.name ||
	    strcmp(f.name, "fixture_lib_alpha") || !f.mapping->has_symbols)
		goto out;
	/* escapes resolve inside the root and find nothing; the FIFO does not block */
	for (__u64 base = 0x20000000; base <= 0x40000000; base += 0x10000000)
		if (symbolizer__user(s, IMG(4242), base + alpha - 0x1000, &f) || f.name ||
		    !f.mapping || f.mapping->has_symbols)
			goto out;
	/* the inode does not match the maps line: refused */
	if (symbolizer__user(s, IMG(4242), 0x50000000 + alpha - 0x1000, &f) || f.name ||
	    f.mapping->has_symbols)
		goto out;
	if (symbolizer__user(s, IMG(4242), 0x60000010, &f) || strcmp(f.mapping->path, "[anon]") ||
	    f.mapping->has_symbols)
		goto out;
	ret = TEST_OK;
out:
	symbolizer__free(s);
	snprintf(path, sizeof(path), "rm -rf %s", fake);
	if (system(path))
		ret = TEST_FAIL;
	return ret;
}

/* --- forgetting pids and trimming the file cache: a long-lived agent's memory --- */

static void print_stats(const char *when, const struct symbolizer_stats *st)
{
	fprintf(stderr, "  %s: %llu bytes, %llu files, %llu pids, %llu mappings, ids to %llu\n",
		when, (unsigned long long)st->bytes, (unsigned long long)st->files_cached,
		(unsigned long long)st->pids_live, (unsigned long long)st->mappings_live,
		(unsigned long long)st->mapping_ids);
}

static int forget_steps(struct symbolizer *s, struct proc *p)
{
	__u64 leaf = addr_of(p, "fixture_main_leaf"), alpha = addr_of(p, "fixture_lib_alpha");
	struct symbolizer_stats a, b, c;
	__u32 pid = p->pid, old_id;
	struct sym_frame f;

	CHECK(symbolizer__add_image(s, IMG(pid)) == 0);
	CHECK(check_user(s, pid, leaf, "fixture_main_leaf", "/fixture_uselib") == TEST_OK);
	CHECK(symbolizer__user(s, IMG(pid), leaf, &f) == 0);
	old_id = f.mapping->id;
	symbolizer__stats(s, &a);
	print_stats("added", &a);
	CHECK(a.pids_live == 1 && a.mappings_live > 4 && a.files_cached >= 4 && a.bytes > 0);

	/* the mappings go; the files stay cached, unused */
	symbolizer__forget_pid(s, pid);
	symbolizer__stats(s, &b);
	print_stats("forgotten", &b);
	CHECK(b.pids_live == 0 && b.mappings_live == 1);
	CHECK(b.files_cached == a.files_cached && b.bytes == a.bytes);
	symbolizer__forget_pid(s, pid);		/* unknown now: a no-op */

	/* still alive: added again on demand, from the cache, under ids not reused */
	CHECK(check_user(s, pid, leaf, "fixture_main_leaf", "/fixture_uselib") == TEST_OK);
	CHECK(check_user(s, pid, alpha, "fixture_lib_alpha", "/libfixture.so") == TEST_OK);
	CHECK(symbolizer__user(s, IMG(pid), leaf, &f) == 0);
	CHECK(f.mapping->id != old_id && f.mapping->id > a.mapping_ids);
	symbolizer__stats(s, &c);
	CHECK(c.pids_live == 1 && c.mappings_live == a.mappings_live);
	CHECK(c.files_loaded == a.files_loaded && c.file_cache_hits > a.file_cache_hits);

	/* exited and forgotten: an unknown dead pid */
	stop(p);
	symbolizer__forget_pid(s, pid);
	CHECK(symbolizer__user(s, IMG(pid), leaf, &f) == -ENOENT && !f.mapping && !f.name);
	CHECK(symbolizer__add_image(s, IMG(pid)) == -ESRCH);
	symbolizer__forget_pid(s, pid);
	symbolizer__stats(s, &c);
	CHECK(c.pids_live == 0 && c.mappings_live == 1);

	symbolizer__trim(s, 0);
	symbolizer__stats(s, &c);
	print_stats("trimmed to 0", &c);
	CHECK(c.files_cached == 0 && c.files_evicted == a.files_cached);
	return TEST_OK;
}

static int test_forget(void)
{
	struct symbolizer *s;
	struct proc p;
	int ret;

	if (!have(FIX "fixture_uselib"))
		SKIP("run make fixtures");
	CHECK(spawn(FIX "fixture_uselib", &p) == 0);
	s = user_only();
	ret = s ? forget_steps(s, &p) : TEST_FAIL;
	symbolizer__free(s);
	stop(&p);
	return ret;
}

/* P runs fixture_uselib; Q is spare */
static int trim_steps(struct symbolizer *s, struct proc *p, struct proc *q)
{
	struct symbolizer_stats base, a, b, c;

	symbolizer__stats(s, &base);
	print_stats("new", &base);
	CHECK(spawn(FIX "fixture_pie", q) == 0);
	CHECK(symbolizer__add_image(s, IMG(p->pid)) == 0 && symbolizer__add_image(s, IMG(q->pid)) == 0);
	CHECK(check_user(s, q->pid, addr_of(q, "fixture_main_leaf"), "fixture_main_leaf",
			 "/fixture_pie") == TEST_OK);
	symbolizer__stats(s, &a);
	print_stats("two pids", &a);

	/* only fixture_pie was Q's alone; libc and ld.so are P's too and stay */
	symbolizer__forget_pid(s, q->pid);
	stop(q);
	symbolizer__trim(s, 0);
	symbolizer__stats(s, &b);
	print_stats("one forgotten, trimmed to 0", &b);
	CHECK(b.files_cached == a.files_cached - 1 && b.files_evicted == 1 && b.bytes < a.bytes);
	CHECK(check_user(s, p->pid, addr_of(p, "fixture_lib_alpha"), "fixture_lib_alpha",
			 "/libfixture.so") == TEST_OK);
	CHECK(check_user(s, p->pid, addr_of(p, "getpid"), "getpid", NULL) == TEST_OK);
	CHECK(check_user(s, p->pid, addr_of(p, "fixture_main_leaf"), "fixture_main_leaf",
			 "/fixture_uselib") == TEST_OK);

	/* least recently used first: fixture_pie goes unused before P's files */
	CHECK(spawn(FIX "fixture_pie", q) == 0);
	CHECK(symbolizer__add_image(s, IMG(q->pid)) == 0);
	symbolizer__forget_pid(s, q->pid);
	stop(q);
	symbolizer__forget_pid(s, p->pid);
	symbolizer__stats(s, &b);
	CHECK(b.files_cached == a.files_cached && b.files_loaded == a.files_loaded + 1);
	symbolizer__trim(s, b.bytes - 1);
	symbolizer__stats(s, &c);
	CHECK(c.files_cached == b.files_cached - 1);
	CHECK(symbolizer__add_image(s, IMG(p->pid)) == 0);	/* P's files: all still cached */
	symbolizer__stats(s, &c);
	CHECK(c.files_loaded == b.files_loaded);
	CHECK(spawn(FIX "fixture_pie", q) == 0);
	CHECK(symbolizer__add_image(s, IMG(q->pid)) == 0);	/* fixture_pie: read again */
	symbolizer__stats(s, &c);
	CHECK(c.files_loaded == b.files_loaded + 1);

	/* nobody left: back to kallsyms and the vDSO image */
	symbolizer__forget_pid(s, p->pid);
	symbolizer__forget_pid(s, q->pid);
	symbolizer__trim(s, 0);
	symbolizer__stats(s, &c);
	print_stats("all forgotten, trimmed to 0", &c);
	CHECK(c.files_cached == 0 && c.pids_live == 0 && c.mappings_live == 1);
	CHECK(c.bytes >= base.bytes && c.bytes - base.bytes <= 64 * 1024);
	return TEST_OK;
}

static int test_trim(void)
{
	struct proc p, q = {};
	struct symbolizer *s;
	int ret;

	if (!have(FIX "fixture_uselib") || !have(FIX "fixture_pie"))
		SKIP("run make fixtures");
	CHECK(spawn(FIX "fixture_uselib", &p) == 0);
	s = symbolizer__new(NULL);	/* with kallsyms, which trim never drops */
	ret = s ? trim_steps(s, &p, &q) : TEST_FAIL;
	symbolizer__free(s);
	stop(&p);
	stop(&q);
	return ret;
}

static char stale_root[] = "/tmp/ebpfprof-stale-XXXXXX";

static int put_stale_maps(const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/4242/maps", stale_root);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fputs(text, f);
	fclose(f);
	return 0;
}

static int stale_steps(struct symbolizer *s)
{
	struct symbolizer_stats st;
	struct sym_frame a, b;
	__u64 ids;

	CHECK(!put_stale_maps("10000000-10001000 r-xp 00000000 00:00 0 \n"
			      "20000000-20001000 r-xp 00000000 00:00 0 \n"));
	CHECK(symbolizer__add_image(s, IMG(4242)) == 0);
	CHECK(symbolizer__user(s, IMG(4242), 0x10000010, &a) == 0 && !strcmp(a.mapping->path, "[anon]"));
	/* the first mapping went, the second stays (listed twice), a third came */
	CHECK(!put_stale_maps("20000000-20001000 r-xp 00000000 00:00 0 \n"
			      "20000000-20001000 r-xp 00000000 00:00 0 \n"
			      "30000000-30001000 r-xp 00000000 00:00 0 \n"));
	CHECK(symbolizer__user(s, IMG(4242), 0x30000010, &b) == 0 && b.mapping->start == 0x30000000);
	/* replaced by the re-read, but valid until a trim */
	CHECK(a.mapping->start == 0x10000000 && !strcmp(a.mapping->path, "[anon]"));
	symbolizer__stats(s, &st);
	CHECK(st.mappings_live == 5 && st.mapping_ids == 5);
	ids = st.mapping_ids;
	symbolizer__trim(s, 0);
	symbolizer__stats(s, &st);
	CHECK(st.mappings_live == 4);
	/* forgotten ids wait for the next trim; the trimmed one is given out again */
	symbolizer__forget_pid(s, 4242);
	CHECK(symbolizer__add_image(s, IMG(4242)) == 0);
	symbolizer__stats(s, &st);
	CHECK(st.mappings_live == 4 && st.mapping_ids == ids + 2);
	symbolizer__trim(s, 0);
	symbolizer__forget_pid(s, 4242);
	symbolizer__trim(s, 0);
	CHECK(symbolizer__add_image(s, IMG(4242)) == 0);
	symbolizer__stats(s, &st);
	CHECK(st.mappings_live == 4 && st.mapping_ids == ids + 2);
	return TEST_OK;
}

/* mappings replaced by re-reads go at trim; a duplicated maps line is freed once */
static int test_stale(void)
{
	struct symbolizer_opts opts = { .no_kernel = true, .proc_root = stale_root };
	struct symbolizer *s = NULL;
	char path[PATH_MAX];
	int ret = TEST_FAIL;

	CHECK(mkdtemp(stale_root));
	snprintf(path, sizeof(path), "%s/4242", stale_root);
	if (!mkdir(path, 0755)) {
		s = symbolizer__new(&opts);
		ret = s ? stale_steps(s) : TEST_FAIL;
	}
	symbolizer__free(s);
	snprintf(path, sizeof(path), "rm -rf %s", stale_root);
	if (system(path))
		ret = TEST_FAIL;
	return ret;
}

#define CHURN_PROCS 300
#define CHURN_WARM 20

/* even rounds: a fresh copy of fixture_pie under a new name, deleted once running */
static int churn_spawn(int round, struct proc *p)
{
	char path[PATH_MAX];
	int fd, err;

	if (round % 2)
		return spawn(FIX "fixture_uselib", p);
	if (!getcwd(path, sizeof(path) - 64))
		return -errno;
	strcat(path, "/" FIX "churn-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	err = copy_file(FIX "fixture_pie", fd);
	if (!err && fchmod(fd, 0755))
		err = -errno;
	close(fd);
	if (!err)
		err = spawn(path, p);
	unlink(path);
	return err;
}

static int churn_steps(struct symbolizer *s, struct proc *p)
{
	struct symbolizer_stats warm = {}, end;
	size_t heap_warm = 0, heap_end;

	for (int i = 0; i < CHURN_PROCS; i++) {
		CHECK(churn_spawn(i, p) == 0);
		CHECK(symbolizer__add_image(s, IMG(p->pid)) == 0);
		CHECK(check_user(s, p->pid, addr_of(p, "fixture_main_leaf"), "fixture_main_leaf",
				 NULL) == TEST_OK);
		symbolizer__forget_pid(s, p->pid);
		stop(p);
		symbolizer__trim(s, SIZE_MAX);	/* a window ends: ids come back */
		if (i == CHURN_WARM) {
			symbolizer__stats(s, &warm);
			heap_warm = mallinfo2().uordblks;
		}
	}
	symbolizer__stats(s, &end);
	heap_end = mallinfo2().uordblks;
	print_stats("after warm-up", &warm);
	print_stats("after churn", &end);
	fprintf(stderr, "  heap in use: %zu -> %zu bytes\n", heap_warm, heap_end);
	/* nothing grows with the number of processes seen */
	CHECK(end.bytes == warm.bytes && end.files_cached == warm.files_cached);
	CHECK(end.mappings_live == 1 && end.pids_live == 0);
	CHECK(end.mapping_ids == warm.mapping_ids && end.mapping_ids < 64);
	CHECK(end.files_loaded == warm.files_loaded);
	CHECK(end.pids == warm.pids + CHURN_PROCS - CHURN_WARM - 1);
	CHECK(heap_end <= heap_warm + 1024);
	return TEST_OK;
}

static int test_churn(void)
{
	struct symbolizer *s;
	struct proc p = {};
	int ret;

	if (!have(FIX "fixture_uselib") || !have(FIX "fixture_pie"))
		SKIP("run make fixtures");
	s = user_only();
	ret = s ? churn_steps(s, &p) : TEST_FAIL;
	symbolizer__free(s);
	stop(&p);
	return ret;
}

TEST_MAIN("symbolizer", TEST(test_pie), TEST(test_shared_and_static), TEST(test_cache),
	  TEST(test_exited),
	  TEST(test_images), TEST(test_fork), TEST(test_lazy), TEST(test_deleted), TEST(test_reread), TEST(test_refresh),
	  TEST(test_handed_reread),
	  TEST(test_read_inside_exec), TEST(test_self),
	  TEST(test_kernel), TEST(test_fake_root), TEST(test_forget), TEST(test_trim),
	  TEST(test_stale), TEST(test_churn))
