/* test_truncated_files.c -- files that shrink or change while being read: every reader fails cleanly, never faults */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "symbolize/binary.h"
#include "symbolize/elf_syms.h"
#include "symbolize/go/gopclntab.h"
#include "symbolize/perfmap.h"
#include "test.h"
#include "test_files.h"

#define FIX FIXTURES_DIR
#define CHURN_SECONDS 1.5

/* ELF symbols, a Go table, DWARF with inline frames, a separate debug file, a shared library */
static const char *const files[] = { FIX "fixture_pie", FIX "gofix", FIX "gofix-noshdr",
				     FIX "debug_inline", FIX "debug_stack", FIX "libfixture.so" };
#define NFILES (sizeof(files) / sizeof(files[0]))

static volatile size_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int write_all(int fd, const __u8 *buf, size_t len)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = pwrite(fd, buf + done, len - done, done);

		if (n <= 0)
			return -1;
		done += n;
	}
	return 0;
}

/* every lookup in the text answers or not; the strings it returns are whole */
static void sweep(const struct binary *b, size_t len)
{
	struct src_line lines[SRC_LINES_MAX];

	for (__u64 off = 0; off < len; off += 251) {
		const char *name = NULL;
		__u64 o;
		int n = binary__lookup(b, off, &name, &o, lines, SRC_LINES_MAX);

		sink += name ? strlen(name) : 0;
		for (int i = 0; i < n; i++)
			sink += lines[i].function ? strlen(lines[i].function) : 0;
	}
}

/* everything this process's readers do with one open file */
static int read_all(int fd, size_t len, int *opened)
{
	struct binary_opts o = { .dwarf_max = 8 << 20 };
	struct binary *b = binary__open(fd, &o);
	struct elf_syms *es;
	struct gopclntab *t;

	if (b) {
		(*opened)++;
		sweep(b, len);
		binary__free(b);
	}
	es = elf_syms__read_fd(fd);
	elf_syms__free(es);
	t = gopclntab__open(fd);
	gopclntab__free(t);
	return TEST_OK;
}

/* the file shrinks between open and read: the reader sees a short file */
static int test_truncated_after_open(void)
{
	char path[64];
	int opened = 0, tries = 0;

	if (access(FIX "gofix", R_OK) || access(FIX "debug_inline", R_OK))
		SKIP("run make fixtures");
	for (size_t f = 0; f < NFILES; f++) {
		size_t len;
		__u8 *orig = test__slurp(files[f], &len);

		CHECK(orig);
		for (int cut = 0; cut <= 8; cut++) {
			int wfd, rfd;

			strcpy(path, "/tmp/test_truncated_XXXXXX");
			wfd = mkstemp(path);

			CHECK(wfd >= 0);
			CHECK(write_all(wfd, orig, len) == 0);
			rfd = open(path, O_RDONLY);
			CHECK(rfd >= 0);
			unlink(path);
			/* cut 8 is a file that became empty; 0..7 keep the headers and some data */
			CHECK(ftruncate(wfd, cut == 8 ? 0 : 64 + (len - 64) * cut / 8) == 0);
			CHECK(read_all(rfd, len, &opened) == TEST_OK);
			tries++;
			close(rfd);
			close(wfd);
		}
		free(orig);
	}
	fprintf(stderr, "  %d of %d truncated files still named something\n", opened, tries);
	return TEST_OK;
}

struct churn {
	const char *path;
	const __u8 *orig;
	size_t len;
	atomic_bool stop;
	unsigned long rewrites;
};

/* truncates, rewrites, scribbles: what an upgrade or a linker writing in place does */
static void *churn_file(void *arg)
{
	struct churn *c = arg;
	unsigned int seed = 1;
	int fd = open(c->path, O_WRONLY);

	if (fd < 0)
		return NULL;
	while (!atomic_load(&c->stop)) {
		size_t cut = rand_r(&seed) % (c->len + 1);
		__u8 junk[512];

		if (ftruncate(fd, cut) || write_all(fd, c->orig, c->len))
			break;
		for (size_t i = 0; i < sizeof(junk); i++)
			junk[i] = rand_r(&seed);
		if (pwrite(fd, junk, sizeof(junk), rand_r(&seed) % c->len) < 0 ||
		    ftruncate(fd, rand_r(&seed) % (c->len + 1)))
			break;
		c->rewrites++;
	}
	close(fd);
	return NULL;
}

/* another process rewrites the file while we read it, for a while */
static int test_rewritten_while_read(void)
{
	char path[64];
	unsigned long reads = 0, rewrites = 0;
	int opened = 0;

	if (access(FIX "gofix", R_OK) || access(FIX "debug_inline", R_OK))
		SKIP("run make fixtures");
	for (size_t f = 0; f < NFILES; f++) {
		struct churn c = { .path = path };
		pthread_t th;
		__u8 *orig = test__slurp(files[f], &c.len);
		double end;
		int fd;

		CHECK(orig);
		c.orig = orig;
		strcpy(path, "/tmp/test_rewritten_XXXXXX");
		fd = mkstemp(path);
		CHECK(fd >= 0 && write_all(fd, orig, c.len) == 0);
		close(fd);
		CHECK(pthread_create(&th, NULL, churn_file, &c) == 0);
		end = now() + CHURN_SECONDS / NFILES;
		while (now() < end) {
			fd = open(path, O_RDONLY);
			CHECK(fd >= 0);
			CHECK(read_all(fd, c.len, &opened) == TEST_OK);
			close(fd);
			reads++;
		}
		atomic_store(&c.stop, true);
		pthread_join(th, NULL);
		rewrites += c.rewrites;
		unlink(path);
		free(orig);
	}
	fprintf(stderr, "  %lu reads during %lu rewrites, %d named something\n", reads, rewrites,
		opened);
	CHECK(reads > 0 && rewrites > 0);
	return TEST_OK;
}

/* a JIT's perf map truncated and rewritten under the reader */
static int test_perfmap_rewritten(void)
{
	char path[64], line[128];
	struct perfmap *m;
	__u8 *text = NULL;
	size_t len = 0;
	struct churn c = { .path = path };
	FILE *mem = open_memstream((char **)&text, &len);
	pthread_t th;
	double end;
	int fd, refreshes = 0;

	CHECK(mem);
	for (int i = 0; i < 4000; i++) {
		snprintf(line, sizeof(line), "%x %x LazyCompile:~fn%d /app/x.js:%d\n",
			 0x10000 + 64 * i, 48, i, i);
		fputs(line, mem);
	}
	fclose(mem);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write_all(fd, text, len) == 0);
	close(fd);
	c.orig = text;
	c.len = len;
	m = perfmap__open("/proc", getpid());
	CHECK(m);
	CHECK(pthread_create(&th, NULL, churn_file, &c) == 0);
	for (end = now() + 0.5; now() < end; refreshes++) {
		__u64 off;
		const char *name;

		perfmap__refresh(m);
		name = perfmap__lookup(m, 0x10000 + 64 * (refreshes % 4000) + 5, &off);
		sink += name ? strlen(name) : 0;
	}
	atomic_store(&c.stop, true);
	pthread_join(th, NULL);
	unlink(path);
	perfmap__free(m);
	free(text);
	fprintf(stderr, "  %d refreshes during %lu rewrites\n", refreshes, c.rewrites);
	return TEST_OK;
}

TEST_MAIN("truncated_files", TEST(test_truncated_after_open), TEST(test_rewritten_while_read),
	  TEST(test_perfmap_rewritten))
