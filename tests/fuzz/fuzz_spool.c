/* fuzz_spool.c -- libFuzzer target: spool files read back by spool__scan, spool__read_meta and spool__read_body */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <unistd.h>
#include <zlib.h>
#include "fuzz.h"
#include "deliver/spool.h"

/*
 * Byte 0 holds flags, the rest is the file. A fuzzer does not find CRCs by
 * itself, so flag 1 recomputes the body CRC and flag 2 the header CRC (when
 * the lengths in the header fit the file), which lets mutated files get past
 * the checksums to the size checks behind them. Flag 4 names the file as a
 * leftover temp file instead, which the scan must remove.
 */
enum { FIX_BODY_CRC = 1, FIX_HEAD_CRC = 2, AS_TEMP = 4 };

#define NAME "00000000000000000001.push"
#define TMP_NAME "00000000000000000001.push.tmp"

static char dir[64];
static int dir_fd = -1;
static struct spool *spool;

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void cleanup(void)
{
	spool__free(spool);
	if (dir_fd >= 0)
		close(dir_fd);
	if (dir[0])
		nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* tmpfs when there is one: spool__write fsyncs */
	snprintf(dir, sizeof(dir), "%s/ebpfprof-fuzz-spool-XXXXXX",
		 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(1);
	}
	atexit(cleanup);
	spool = spool__open(dir);
	dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!spool || dir_fd < 0) {
		perror("spool__open");
		exit(1);
	}
	return 0;
}

static __u32 get_u32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (__u32)p[3] << 24;
}

static void put_u32(unsigned char *p, __u32 v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static void fix_crcs(unsigned char *f, size_t size, int flags)
{
	__u64 key_len, body_len = 0;

	if (size < SPOOL_HEADER_SIZE)
		return;
	key_len = get_u32(f + 8);
	for (int i = 0; i < 8; i++)
		body_len |= (__u64)f[32 + i] << (8 * i);
	if (key_len > size - SPOOL_HEADER_SIZE)
		return;
	/* the body CRC first: the header CRC covers it */
	if ((flags & FIX_BODY_CRC) && body_len <= size - SPOOL_HEADER_SIZE - key_len)
		put_u32(f + 40, crc32_z(0, f + SPOOL_HEADER_SIZE + key_len, body_len));
	if (flags & FIX_HEAD_CRC)
		put_u32(f + 44, crc32_z(crc32_z(0, f, 44), f + SPOOL_HEADER_SIZE, key_len));
}

static void write_file(const char *name, const void *buf, size_t len)
{
	int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || (len && write(fd, buf, len) != (ssize_t)len)) {
		perror("write spool file");
		abort();
	}
	close(fd);
}

/* A record read back is written again; the file must come out byte for byte the same. */
static void check_round_trip(struct spool_record *rec, const void *body, const void *file,
			     size_t size)
{
	struct spool_record w = *rec;
	unsigned char *again;
	int fd;

	w.seq = 2;
	FUZZ_CHECK(spool__write(spool, &w, body, rec->body_len) == 0);
	FUZZ_CHECK(w.file_size == size && w.body_crc == rec->body_crc);
	again = malloc(size);
	fd = openat(dir_fd, "00000000000000000002.push", O_RDONLY | O_CLOEXEC);
	FUZZ_CHECK(again && fd >= 0 && read(fd, again, size) == (ssize_t)size);
	FUZZ_CHECK(!memcmp(again, file, size));
	close(fd);
	free(again);
	FUZZ_CHECK(spool__remove(spool, 2) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spool_record rec;
	unsigned char *file;
	__u64 *seqs = NULL;
	size_t n = 0;
	int flags, err;

	if (!size || size > 1 << 20)
		return 0;
	flags = data[0];
	size--;
	file = malloc(size + 1);
	if (!file)
		return 0;
	memcpy(file, data + 1, size);
	fix_crcs(file, size, flags);
	write_file(flags & AS_TEMP ? TMP_NAME : NAME, file, size);

	FUZZ_CHECK(spool__scan(spool, &seqs, &n) == 0);
	if (flags & AS_TEMP) {
		FUZZ_CHECK(n == 0 && faccessat(dir_fd, TMP_NAME, F_OK, 0) && errno == ENOENT);
		goto out;
	}
	FUZZ_CHECK(n == 1 && seqs[0] == 1);
	err = spool__read_meta(spool, 1, &rec);
	FUZZ_CHECK(err == 0 || err == -EBADMSG || err == -ENOMEM);
	if (!err) {
		void *body = NULL;

		FUZZ_CHECK(rec.seq == 1 && rec.key && *rec.key && strlen(rec.key) <= SPOOL_MAX_KEY);
		FUZZ_CHECK(rec.sample_rate > 0 && rec.until_ns >= rec.from_ns);
		FUZZ_CHECK(rec.body_len && rec.file_size == size &&
			   rec.file_size == SPOOL_HEADER_SIZE + strlen(rec.key) + rec.body_len);
		err = spool__read_body(spool, &rec, &body);
		FUZZ_CHECK(err == 0 || err == -EBADMSG || err == -ENOMEM);
		if (!err)
			check_round_trip(&rec, body, file, size);
		free(body);
		spool_record__clear(&rec);
	} else {
		FUZZ_CHECK(!rec.key);
	}
	FUZZ_CHECK(spool__remove(spool, 1) == 0);
out:
	free(seqs);
	free(file);
	return 0;
}
