/* spool.c -- the pusher's on-disk queue: one file per item, named by sequence so a directory listing is the order */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <zlib.h>
#include "lib/fdio.h"
#include "lib/array.h"
#include "spool.h"

#define SPOOL_MAGIC "EBPFSPL1"
#define SEQ_DIGITS 20
#define SUFFIX ".push"
#define TMP_SUFFIX ".push.tmp"

struct spool {
	int dir_fd;
};

static void put_u32(unsigned char *p, __u32 v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static void put_u64(unsigned char *p, __u64 v)
{
	for (int i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
}

static __u32 get_u32(const unsigned char *p)
{
	__u32 v = 0;

	for (int i = 0; i < 4; i++)
		v |= (__u32)p[i] << (8 * i);
	return v;
}

static __u64 get_u64(const unsigned char *p)
{
	__u64 v = 0;

	for (int i = 0; i < 8; i++)
		v |= (__u64)p[i] << (8 * i);
	return v;
}

static void file_name(char *buf, size_t size, __u64 seq, const char *suffix)
{
	snprintf(buf, size, "%0*llu%s", SEQ_DIGITS, (unsigned long long)seq, suffix);
}

/* mkdir -p: the spool usually lives under a state directory that may not exist yet */
static int make_dirs(const char *dir)
{
	char path[PATH_MAX];
	size_t len = strlen(dir);

	if (!len || len >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, len + 1);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

struct spool *spool__open(const char *dir)
{
	struct spool *s;
	int err;

	err = make_dirs(dir);
	if (err) {
		errno = -err;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dir_fd < 0) {
		err = errno;
		goto err_free;
	}
	/* two agents sharing a spool would send, and delete, each other's items */
	if (flock(s->dir_fd, LOCK_EX | LOCK_NB)) {
		err = errno == EWOULDBLOCK ? EBUSY : errno;
		close(s->dir_fd);
		goto err_free;
	}
	return s;

err_free:
	free(s);
	errno = err;
	return NULL;
}

void spool__free(struct spool *s)
{
	if (!s)
		return;
	close(s->dir_fd);
	free(s);
}

/* parses "<20 digits><suffix>" exactly; anything else is not ours */
static bool parse_name(const char *name, const char *suffix, __u64 *seq)
{
	unsigned long long v = 0;

	if (strlen(name) != SEQ_DIGITS + strlen(suffix) || strcmp(name + SEQ_DIGITS, suffix))
		return false;
	for (int i = 0; i < SEQ_DIGITS; i++) {
		unsigned d = name[i] - '0';

		if (d > 9 || v > (ULLONG_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*seq = v;
	return true;
}

static int cmp_seq(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

int spool__scan(struct spool *s, __u64 **seqs, size_t *n)
{
	__u64 *arr = NULL, seq;
	size_t cap = 0, cnt = 0;
	struct dirent *de;
	int fd, err = 0;
	DIR *d;

	fd = dup(s->dir_fd);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		if (parse_name(de->d_name, TMP_SUFFIX, &seq)) {
			/* a write that never reached its rename: the item was not queued */
			unlinkat(s->dir_fd, de->d_name, 0);
			continue;
		}
		if (!parse_name(de->d_name, SUFFIX, &seq))
			continue;
		if (ARRAY_RESERVE(arr, cap, cnt + 1)) {
			err = -ENOMEM;
			break;
		}
		arr[cnt++] = seq;
	}
	closedir(d);
	if (err) {
		free(arr);
		return err;
	}
	if (cnt)
		qsort(arr, cnt, sizeof(*arr), cmp_seq);
	*seqs = arr;
	*n = cnt;
	return 0;
}

static int read_full(int fd, void *buf, size_t len, off_t off)
{
	char *p = buf;

	while (len) {
		ssize_t r = pread(fd, p, len, off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EBADMSG;	/* shorter than it said */
		p += r;
		len -= r;
		off += r;
	}
	return 0;
}

static __u32 head_crc(const unsigned char *hdr, const char *key, size_t key_len)
{
	__u32 crc = crc32_z(0, hdr, 44);

	return crc32_z(crc, (const unsigned char *)key, key_len);
}

int spool__write(struct spool *s, struct spool_record *rec, const void *body, size_t len)
{
	size_t key_len = strlen(rec->key);
	unsigned char hdr[SPOOL_HEADER_SIZE];
	char name[64], tmp[64];
	int fd, err;

	if (!key_len || key_len > SPOOL_MAX_KEY || !len || len > SPOOL_MAX_BODY)
		return -EINVAL;
	rec->body_len = len;
	rec->body_crc = crc32_z(0, body, len);
	memcpy(hdr, SPOOL_MAGIC, 8);
	put_u32(hdr + 8, key_len);
	put_u32(hdr + 12, (__u32)rec->sample_rate);
	put_u64(hdr + 16, (__u64)rec->from_ns);
	put_u64(hdr + 24, (__u64)rec->until_ns);
	put_u64(hdr + 32, len);
	put_u32(hdr + 40, rec->body_crc);
	put_u32(hdr + 44, head_crc(hdr, rec->key, key_len));

	file_name(name, sizeof(name), rec->seq, SUFFIX);
	file_name(tmp, sizeof(tmp), rec->seq, TMP_SUFFIX);
	fd = openat(s->dir_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = fdio__write_all(fd, hdr, sizeof(hdr));
	if (!err)
		err = fdio__write_all(fd, rec->key, key_len);
	if (!err)
		err = fdio__write_all(fd, body, len);
	/* durable before it is visible: after a crash the name promises a whole file */
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(s->dir_fd, tmp, s->dir_fd, name))
		err = -errno;
	if (err) {
		unlinkat(s->dir_fd, tmp, 0);
		return err;
	}
	fsync(s->dir_fd);	/* the rename itself; a failure here only risks a resend */
	rec->file_size = SPOOL_HEADER_SIZE + key_len + len;
	return 0;
}

static int open_file(struct spool *s, __u64 seq, size_t *size)
{
	struct stat st;
	char name[64];
	int fd;

	file_name(name, sizeof(name), seq, SUFFIX);
	fd = openat(s->dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EBADMSG;
	}
	*size = st.st_size;
	return fd;
}

/* checks the fixed header against the bounds and the file's size */
static int parse_header(const unsigned char *hdr, size_t file_size, struct spool_record *rec)
{
	__u64 key_len = get_u32(hdr + 8), body_len = get_u64(hdr + 32);

	if (memcmp(hdr, SPOOL_MAGIC, 8))
		return -EBADMSG;
	if (!key_len || key_len > SPOOL_MAX_KEY || !body_len || body_len > SPOOL_MAX_BODY)
		return -EBADMSG;
	if (SPOOL_HEADER_SIZE + key_len + body_len != file_size)
		return -EBADMSG;
	rec->sample_rate = (int)get_u32(hdr + 12);
	rec->from_ns = (__s64)get_u64(hdr + 16);
	rec->until_ns = (__s64)get_u64(hdr + 24);
	if (rec->sample_rate <= 0 || rec->until_ns < rec->from_ns)
		return -EBADMSG;
	rec->body_len = body_len;
	rec->body_crc = get_u32(hdr + 40);
	rec->file_size = file_size;
	return 0;
}

int spool__read_meta(struct spool *s, __u64 seq, struct spool_record *rec)
{
	unsigned char hdr[SPOOL_HEADER_SIZE];
	size_t size, key_len;
	char *key = NULL;
	int fd, err;

	memset(rec, 0, sizeof(*rec));
	fd = open_file(s, seq, &size);
	if (fd < 0)
		return fd;
	err = size < SPOOL_HEADER_SIZE ? -EBADMSG : read_full(fd, hdr, sizeof(hdr), 0);
	if (!err)
		err = parse_header(hdr, size, rec);
	if (err)
		goto out;
	key_len = get_u32(hdr + 8);
	key = malloc(key_len + 1);
	if (!key) {
		err = -ENOMEM;
		goto out;
	}
	err = read_full(fd, key, key_len, SPOOL_HEADER_SIZE);
	if (err)
		goto out;
	key[key_len] = '\0';
	if (strlen(key) != key_len || head_crc(hdr, key, key_len) != get_u32(hdr + 44)) {
		err = -EBADMSG;
		goto out;
	}
	rec->seq = seq;
	rec->key = key;
	key = NULL;
out:
	free(key);
	close(fd);
	return err;
}

int spool__read_body(struct spool *s, const struct spool_record *rec, void **body)
{
	size_t size, key_len = strlen(rec->key);
	void *buf = NULL;
	int fd, err;

	fd = open_file(s, rec->seq, &size);
	if (fd < 0)
		return fd;
	/* the file must still be the one whose header was checked */
	if (size != rec->file_size || SPOOL_HEADER_SIZE + key_len + rec->body_len != size) {
		err = -EBADMSG;
		goto out;
	}
	buf = malloc(rec->body_len);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	err = read_full(fd, buf, rec->body_len, SPOOL_HEADER_SIZE + key_len);
	if (!err && crc32_z(0, buf, rec->body_len) != rec->body_crc)
		err = -EBADMSG;
	if (!err) {
		*body = buf;
		buf = NULL;
	}
out:
	free(buf);
	close(fd);
	return err;
}

int spool__remove(struct spool *s, __u64 seq)
{
	char name[64];

	file_name(name, sizeof(name), seq, SUFFIX);
	if (unlinkat(s->dir_fd, name, 0) && errno != ENOENT)
		return -errno;
	return 0;
}

void spool_record__clear(struct spool_record *rec)
{
	free(rec->key);
	rec->key = NULL;
}
