/* debuginfo.c -- debug files: root-confined opens, debuglink CRC, xz MiniDebugInfo, debuginfod */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <lzma.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include "debuginfo.h"
#include "debuginfod_dl.h"
#include "elf_syms.h"
#include "lib/fdio.h"

#define DEBUG_DIR "/usr/lib/debug"
/* a .gnu_debuglink section is a file name, padding and a CRC: anything larger is not one */
#define DEBUGLINK_MAX 4096
#define IO_CHUNK (64u << 10)
/* xz -9 needs 65 MiB to decompress; MiniDebugInfo is made with far less */
#define XZ_MEMLIMIT (128u << 20)
/* without openat2: directories deep, and symlinks followed (the kernel's own limit) */
#define WALK_DEPTH_MAX 64
#define WALK_LINKS_MAX 40

/* where the lookup looks: the process's root, and what is known of the binary */
struct search {
	int root_fd;		/* O_PATH directory standing for "/" */
	bool host;		/* root_fd is the host's own root */
	struct stat elf_st;	/* the binary, so it is never taken for its own debug file */
	char bid[ELF_BUILD_ID_HEX_SIZE];	/* "" when unknown */
};

/* lower-cases a hex build ID into OUT; -EINVAL when it is not one */
static int copy_build_id(const char *in, char *out, size_t size)
{
	size_t n = strlen(in);

	/* two hex digits name the directory, and the rest must not be empty */
	if (n < 4 || n % 2 || n >= size)
		return -EINVAL;
	for (size_t i = 0; i <= n; i++) {
		char c = in[i];

		if (c >= 'A' && c <= 'F')
			c += 'a' - 'A';
		if (i < n && !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return -EINVAL;
		out[i] = c;
	}
	return 0;
}

static bool same_build_id(int fd, const char *bid)
{
	char hex[ELF_BUILD_ID_HEX_SIZE];

	return !elf_read_build_id(fd, hex, sizeof(hex)) && !strcmp(hex, bid);
}

/*
 * RESOLVE_IN_ROOT done by hand, for kernels before 5.6 (and valgrind, which
 * lacks openat2): one component at a time, never following a symlink in the
 * kernel; a link's target is walked from the root when absolute; ".." pops
 * our own stack of directories, so it stops at the root. (openat2 also holds
 * against directories renamed out of the root during the walk; this does not.)
 */
static int walk_in_root(int root_fd, const char *path, int flags)
{
	char rem[PATH_MAX], target[PATH_MAX], next[PATH_MAX];
	int dirs[WALK_DEPTH_MAX], depth = 0, links = 0, fd;
	size_t pos = 0;

	if (strlen(path) >= sizeof(rem))
		return -ENAMETOOLONG;
	strcpy(rem, path);
	for (;;) {
		char *comp, *end, *rest;
		struct stat st;
		bool last;
		ssize_t n;
		int cur;

		while (rem[pos] == '/')
			pos++;
		if (!rem[pos]) {
			fd = -EISDIR;	/* the path named a directory */
			break;
		}
		comp = rem + pos;
		end = strchrnul(comp, '/');
		last = !end[strspn(end, "/")];
		rest = *end ? end + 1 : end;
		*end = '\0';
		pos = rest - rem;
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			if (depth)
				close(dirs[--depth]);
			continue;
		}
		cur = depth ? dirs[depth - 1] : root_fd;
		fd = openat(cur, comp, (last ? flags : O_PATH | O_CLOEXEC) | O_NOFOLLOW);
		if (fd < 0 && (errno != ELOOP || (last && (flags & O_NOFOLLOW)))) {
			fd = -errno;
			break;
		}
		if (fd >= 0 && last)
			break;
		if (fd >= 0) {
			if (fstat(fd, &st) || !S_ISDIR(st.st_mode)) {
				bool link = !fstat(fd, &st) && S_ISLNK(st.st_mode);

				close(fd);
				if (!link) {
					fd = -ENOTDIR;
					break;
				}
			} else if (depth == WALK_DEPTH_MAX) {
				close(fd);
				fd = -ENAMETOOLONG;
				break;
			} else {
				dirs[depth++] = fd;
				continue;
			}
		}
		/* a symlink: go on from its target, then the rest */
		n = readlinkat(cur, comp, target, sizeof(target) - 1);
		if (n < 0 || ++links > WALK_LINKS_MAX) {
			fd = n < 0 ? -errno : -ELOOP;
			break;
		}
		target[n] = '\0';
		n = snprintf(next, sizeof(next), "%s/%s", target, rest);
		if (n < 0 || (size_t)n >= sizeof(next)) {
			fd = -ENAMETOOLONG;
			break;
		}
		if (target[0] == '/')
			while (depth)
				close(dirs[--depth]);
		memcpy(rem, next, n + 1);
		pos = 0;
	}
	while (depth)
		close(dirs[--depth]);
	return fd;
}

/*
 * Opens the regular file PATH (absolute) as the process with root ROOT_FD
 * sees it: RESOLVE_IN_ROOT makes "/" and ".." stop at that root, for the
 * symlinks met on the way too. EXTRA is O_NOFOLLOW for names the binary chose.
 */
static int open_in_root(const struct search *s, const char *path, int extra)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | extra,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	struct stat st;
	int fd, err;

	fd = syscall(SYS_openat2, s->root_fd, path, &how, sizeof(how));
	if (fd < 0)
		fd = errno == ENOSYS ? walk_in_root(s->root_fd, path, how.flags) : -errno;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode) || (__u64)st.st_size > ELF_FILE_MAX ||
	    (st.st_dev == s->elf_st.st_dev && st.st_ino == s->elf_st.st_ino)) {
		err = -ENOENT;
		goto out_close;
	}
	return fd;

out_close:
	close(fd);
	return err;
}

static int open_root(const char *root, struct search *s)
{
	s->host = !root || !*root;
	s->root_fd = open(s->host ? "/" : root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return s->root_fd < 0 ? -errno : 0;
}

/* step 1: /usr/lib/debug/.build-id/xx/rest.debug */
static int find_by_build_id(const struct search *s)
{
	char path[PATH_MAX];
	int n, fd;

	n = snprintf(path, sizeof(path), DEBUG_DIR "/.build-id/%.2s/%s.debug", s->bid, s->bid + 2);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open_in_root(s, path, 0);
	if (fd >= 0 && !same_build_id(fd, s->bid)) {
		close(fd);
		fd = -ENOENT;
	}
	return fd;
}

/* step 1 under the process's root, then the host's */
static int find_by_build_id_anywhere(const struct search *s)
{
	struct search host = *s;
	int fd = find_by_build_id(s);

	if (fd >= 0 || s->host || open_root(NULL, &host))
		return fd;
	fd = find_by_build_id(&host);
	close(host.root_fd);
	return fd;
}

/*
 * Copies section NAME of the ELF open at FD into a malloc'ed *buf, if it has
 * at most MAX bytes. *swap tells whether the file's byte order is not ours.
 */
static int read_section(int fd, const char *name, size_t max, void **buf, size_t *len,
			bool *swap)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int err = -ENOENT;
	const char *ident;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ELIBACC;
	/* ELF_C_READ: pread into memory, never mmap */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -EINVAL;
	ident = elf_getident(elf, NULL);
	if (elf_kind(elf) != ELF_K_ELF || !ident || elf_getshdrstrndx(elf, &shstrndx)) {
		err = -EINVAL;
		goto out_end;
	}
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	*swap = ident[EI_DATA] != ELFDATA2LSB;
#else
	*swap = ident[EI_DATA] != ELFDATA2MSB;
#endif
	while ((scn = elf_nextscn(elf, scn))) {
		const char *sname;
		Elf_Data *d;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		sname = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!sname || strcmp(sname, name))
			continue;
		if (sh.sh_size > max) {
			err = -EFBIG;
			break;
		}
		/* libelf checks the section lies within the file before reading it */
		d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf || !d->d_size) {
			err = -EINVAL;
			break;
		}
		*buf = malloc(d->d_size);
		if (!*buf) {
			err = -ENOMEM;
			break;
		}
		memcpy(*buf, d->d_buf, d->d_size);
		*len = d->d_size;
		err = 0;
		break;
	}
out_end:
	elf_end(elf);
	return err;
}

/*
 * The file name and CRC of the binary's .gnu_debuglink: a NUL-terminated
 * name, padding to 4 bytes, a 32-bit CRC in the file's byte order.
 */
static int read_debuglink(int elf_fd, char *name, size_t size, __u32 *crc)
{
	size_t len, n, crc_off;
	bool swap = false;
	void *buf = NULL;
	int err;

	err = read_section(elf_fd, ".gnu_debuglink", DEBUGLINK_MAX, &buf, &len, &swap);
	if (err)
		return err;
	n = strnlen(buf, len);
	crc_off = (n + 1 + 3) & ~(size_t)3;
	err = -EINVAL;
	if (n == 0 || n >= size || n > NAME_MAX || crc_off + 4 > len)
		goto out_free;
	memcpy(name, buf, n + 1);
	/* a name, not a path: it must not lead out of the directories searched */
	if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		goto out_free;
	memcpy(crc, (char *)buf + crc_off, 4);
	if (swap)
		*crc = __builtin_bswap32(*crc);
	err = 0;
out_free:
	free(buf);
	return err;
}

static int file_crc(int fd, __u32 *crc)
{
	unsigned char *buf = malloc(IO_CHUNK);
	uLong c = crc32(0, NULL, 0);
	off_t off = 0;
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	while ((n = pread(fd, buf, IO_CHUNK, off)) > 0 && (__u64)off <= ELF_FILE_MAX) {
		c = crc32(c, buf, n);
		off += n;
	}
	free(buf);
	if (n < 0)
		return -errno;
	*crc = c;
	return 0;
}

/* the directory of an absolute BINARY_PATH, with its '/', into DIR; no ".." in it */
static int binary_dir(const char *binary_path, char *dir, size_t size)
{
	const char *slash;
	size_t n;

	if (!binary_path || binary_path[0] != '/')
		return -EINVAL;
	slash = strrchr(binary_path, '/');
	n = slash - binary_path + 1;
	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(dir, binary_path, n);
	dir[n] = '\0';
	/* ".." would climb out of /usr/lib/debug */
	if (strstr(dir, "/../"))
		return -EINVAL;
	return 0;
}

/* step 2: the .gnu_debuglink name next to the binary, in .debug/, under /usr/lib/debug */
static int find_by_debuglink(const struct search *s, int elf_fd, const char *binary_path)
{
	/* path = prefix, the binary's directory, middle, the name */
	static const char *const where[][2] = { { "", "" }, { "", ".debug/" }, { DEBUG_DIR, "" } };
	char name[NAME_MAX + 1], dir[PATH_MAX], path[PATH_MAX];
	__u32 want, got = 0;
	int err, fd, n;

	err = binary_dir(binary_path, dir, sizeof(dir));
	if (err)
		return err;
	err = read_debuglink(elf_fd, name, sizeof(name), &want);
	if (err)
		return err;
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		n = snprintf(path, sizeof(path), "%s%s%s%s", where[i][0], dir, where[i][1], name);
		if (n < 0 || (size_t)n >= sizeof(path))
			continue;
		fd = open_in_root(s, path, O_NOFOLLOW);
		if (fd < 0)
			continue;
		/* the CRC decides; a different build ID settles it sooner */
		if ((!s->bid[0] || same_build_id(fd, s->bid)) && !file_crc(fd, &got) && got == want)
			return fd;
		close(fd);
	}
	return -ENOENT;
}

/* decompresses the xz stream XZ into FD, at most DEBUGINFO_MINI_MAX bytes */
static int unxz(const void *xz, size_t len, int fd)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	unsigned char *out;
	size_t total = 0;
	lzma_ret ret;
	int err;

	out = malloc(IO_CHUNK);
	if (!out)
		return -ENOMEM;
	if (lzma_stream_decoder(&strm, XZ_MEMLIMIT, 0) != LZMA_OK) {
		err = -ENOMEM;
		goto out_free;
	}
	strm.next_in = xz;
	strm.avail_in = len;
	for (;;) {
		size_t n;

		strm.next_out = out;
		strm.avail_out = IO_CHUNK;
		ret = lzma_code(&strm, LZMA_FINISH);
		n = IO_CHUNK - strm.avail_out;
		if (n > DEBUGINFO_MINI_MAX - total) {
			err = -EFBIG;
			break;
		}
		err = fdio__write_all(fd, out, n);
		if (err)
			break;
		total += n;
		if (ret == LZMA_STREAM_END)
			break;
		if (ret != LZMA_OK) {
			err = ret == LZMA_MEM_ERROR ? -ENOMEM :
			      ret == LZMA_MEMLIMIT_ERROR ? -EFBIG : -EINVAL;
			break;
		}
	}
	lzma_end(&strm);
out_free:
	free(out);
	return err;
}

/* step 3: .gnu_debugdata, an xz'ed ELF with the symbols strip removed, as a sealed memfd */
static int find_mini(int elf_fd)
{
	unsigned char magic[SELFMAG];
	bool swap;
	void *xz = NULL;
	size_t len;
	int err, fd;

	err = read_section(elf_fd, ".gnu_debugdata", DEBUGINFO_MINI_XZ_MAX, &xz, &len, &swap);
	if (err)
		return err;
	fd = memfd_create("ebpfprof-minidebuginfo", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		err = -errno;
		goto out_free;
	}
	err = unxz(xz, len, fd);
	if (err)
		goto out_close;
	if (pread(fd, magic, SELFMAG, 0) != SELFMAG || memcmp(magic, ELFMAG, SELFMAG)) {
		err = -EINVAL;
		goto out_close;
	}
	/* sealed: whoever holds it cannot change the image under another reader */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) ||
	    lseek(fd, 0, SEEK_SET)) {
		err = -errno;
		goto out_close;
	}
	free(xz);
	return fd;

out_close:
	close(fd);
out_free:
	free(xz);
	return err;
}

/* libdebuginfod reads its server list and cache directory from the environment only */
static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;

struct env_saved {
	const char *name;
	bool changed;
	char *old;		/* NULL: was unset */
};

static int env_set(struct env_saved *e, const char *name, const char *value)
{
	const char *cur = getenv(name);

	*e = (struct env_saved){ .name = name };
	if (!value)
		return 0;
	if (cur && !(e->old = strdup(cur)))
		return -ENOMEM;
	if (setenv(name, value, 1))
		return -errno;
	e->changed = true;
	return 0;
}

static void env_restore(struct env_saved *e)
{
	if (e->changed) {
		if (e->old)
			setenv(e->name, e->old, 1);
		else
			unsetenv(e->name);
	}
	free(e->old);
}

/* called by libdebuginfod while it downloads: non-zero aborts */
static int fetch_progress(debuginfod_client *c, long done, long total)
{
	atomic_bool *cancel = debuginfod_dl__get()->get_user_data(c);

	return cancel && atomic_load(cancel);
}

static int fetch(const char *build_id, const struct debuginfo_opts *o, atomic_bool *cancel)
{
	const struct debuginfod_api *dfd = debuginfod_dl__get();
	struct env_saved urls, cache;
	char bid[ELF_BUILD_ID_HEX_SIZE];
	debuginfod_client *client;
	char *path = NULL;
	int fd, err;

	if (!build_id || copy_build_id(build_id, bid, sizeof(bid)))
		return -EINVAL;
	if (!dfd)
		return -ENOSYS;
	pthread_mutex_lock(&env_lock);
	err = env_set(&urls, DEBUGINFOD_URLS_ENV_VAR, o ? o->debuginfod_urls : NULL);
	if (!err)
		err = env_set(&cache, DEBUGINFOD_CACHE_PATH_ENV_VAR, o ? o->cache_dir : NULL);
	else
		cache = (struct env_saved){ 0 };
	fd = err;
	if (err)
		goto out_env;
	client = dfd->begin();
	if (!client) {
		fd = -ENOMEM;
		goto out_env;
	}
	dfd->set_user_data(client, cancel);
	dfd->set_progressfn(client, fetch_progress);
	/* a build ID length of 0 means: hex text */
	fd = dfd->find_debuginfo(client, (const unsigned char *)bid, 0, &path);
	dfd->end(client);
	free(path);
out_env:
	env_restore(&cache);
	env_restore(&urls);
	pthread_mutex_unlock(&env_lock);
	if (fd < 0)
		return cancel && atomic_load(cancel) ? -ECANCELED : fd;
	/* the cache file is ours to trust no more than the server was */
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) || !same_build_id(fd, bid)) {
		close(fd);
		return -EBADMSG;
	}
	return fd;
}

int debuginfo__fetch(const char *build_id, const struct debuginfo_opts *o)
{
	return fetch(build_id, o, NULL);
}

int debuginfo__find(int elf_fd, const char *build_id, const char *binary_path,
		    const struct debuginfo_opts *o, int *kind)
{
	struct search s = { .root_fd = -1 };
	int fd = -ENOENT, k = DEBUGINFO_NONE;

	if (kind)
		*kind = DEBUGINFO_NONE;
	if (fstat(elf_fd, &s.elf_st))
		return -errno;
	if (build_id && *build_id) {
		if (copy_build_id(build_id, s.bid, sizeof(s.bid)))
			s.bid[0] = '\0';
	} else if (elf_read_build_id(elf_fd, s.bid, sizeof(s.bid)))
		s.bid[0] = '\0';
	fd = open_root(o ? o->root : NULL, &s);
	if (fd < 0)
		return fd;

	if (s.bid[0]) {
		k = DEBUGINFO_BUILD_ID;
		fd = find_by_build_id_anywhere(&s);
	}
	if (fd < 0) {
		k = DEBUGINFO_DEBUGLINK;
		fd = find_by_debuglink(&s, elf_fd, binary_path);
	}
	if (fd < 0) {
		k = DEBUGINFO_MINI;
		fd = find_mini(elf_fd);
	}
	if (fd < 0 && o && o->use_debuginfod && s.bid[0]) {
		k = DEBUGINFO_DEBUGINFOD;
		fd = fetch(s.bid, o, NULL);
	}
	close(s.root_fd);
	if (fd < 0)
		return fd == -ENOMEM ? fd : -ENOENT;
	if (kind)
		*kind = k;
	return fd;
}

int debuginfo__find_alt(const char *alt_path, const char *build_id,
			const struct debuginfo_opts *o, int *kind)
{
	struct search s = { .root_fd = -1 };
	int fd, k = DEBUGINFO_BUILD_ID;

	if (kind)
		*kind = DEBUGINFO_NONE;
	if (!build_id || copy_build_id(build_id, s.bid, sizeof(s.bid)))
		return -EINVAL;
	fd = open_root(o ? o->root : NULL, &s);
	if (fd < 0)
		return fd;
	fd = find_by_build_id_anywhere(&s);
	if (fd < 0 && alt_path && alt_path[0] == '/') {
		k = DEBUGINFO_ALT_PATH;
		fd = open_in_root(&s, alt_path, 0);
		if (fd >= 0 && !same_build_id(fd, s.bid)) {
			close(fd);
			fd = -ENOENT;
		}
	}
	if (fd < 0 && o && o->use_debuginfod) {
		k = DEBUGINFO_DEBUGINFOD;
		fd = fetch(s.bid, o, NULL);
	}
	close(s.root_fd);
	if (fd < 0)
		return fd == -ENOMEM ? fd : -ENOENT;
	if (kind)
		*kind = k;
	return fd;
}

struct debuginfo_fetch {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* signalled once done */
	atomic_bool cancel;
	bool done, taken;
	int result;
	char build_id[ELF_BUILD_ID_HEX_SIZE];
	struct debuginfo_opts o;	/* strings below are copies */
	char *urls, *cache_dir;
};

static void *fetch_thread(void *arg)
{
	struct debuginfo_fetch *f = arg;
	int r = fetch(f->build_id, &f->o, &f->cancel);

	pthread_mutex_lock(&f->lock);
	f->result = r;
	f->done = true;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

static void fetch_free_copies(struct debuginfo_fetch *f)
{
	free(f->urls);
	free(f->cache_dir);
	free(f);
}

struct debuginfo_fetch *debuginfo_fetch__start(const char *build_id,
					       const struct debuginfo_opts *o)
{
	struct debuginfo_fetch *f;
	pthread_condattr_t ca;
	int err;

	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	if (!build_id || copy_build_id(build_id, f->build_id, sizeof(f->build_id))) {
		err = EINVAL;
		goto out_free;
	}
	err = ENOMEM;
	if (o && o->debuginfod_urls && !(f->urls = strdup(o->debuginfod_urls)))
		goto out_free;
	if (o && o->cache_dir && !(f->cache_dir = strdup(o->cache_dir)))
		goto out_free;
	f->o = (struct debuginfo_opts){ .use_debuginfod = true, .debuginfod_urls = f->urls,
					.cache_dir = f->cache_dir };
	pthread_mutex_init(&f->lock, NULL);
	/* timed waits count on the monotonic clock: wall clock steps must not stretch them */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&f->cond, &ca);
	pthread_condattr_destroy(&ca);
	err = pthread_create(&f->thread, NULL, fetch_thread, f);
	if (err)
		goto out_destroy;
	return f;

out_destroy:
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
out_free:
	fetch_free_copies(f);
	errno = err;
	return NULL;
}

int debuginfo_fetch__wait(struct debuginfo_fetch *f, int timeout_ms)
{
	struct timespec until;
	int r = 0;

	clock_gettime(CLOCK_MONOTONIC, &until);
	if (timeout_ms > 0) {
		until.tv_sec += timeout_ms / 1000;
		until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
	}
	pthread_mutex_lock(&f->lock);
	while (!f->done && r == 0) {
		if (timeout_ms == 0)
			r = ETIMEDOUT;
		else if (timeout_ms < 0)
			pthread_cond_wait(&f->cond, &f->lock);
		else
			r = pthread_cond_timedwait(&f->cond, &f->lock, &until);
	}
	if (!f->done)
		r = -EINPROGRESS;
	else if (f->taken)
		r = -EALREADY;
	else {
		r = f->result;
		f->taken = true;
	}
	pthread_mutex_unlock(&f->lock);
	return r;
}

void debuginfo_fetch__free(struct debuginfo_fetch *f)
{
	if (!f)
		return;
	atomic_store(&f->cancel, true);
	pthread_join(f->thread, NULL);
	if (!f->taken && f->result >= 0)
		close(f->result);
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
	fetch_free_copies(f);
}
