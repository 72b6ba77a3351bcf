/* spool.h -- the pusher's on-disk queue: one file per item, named by sequence so a directory listing is the order */
#ifndef EBPFPROF_SPOOL_H
#define EBPFPROF_SPOOL_H

#include <stddef.h>
#include <linux/types.h>

/*
 * File SEQ is "%020llu.push" (zero-padded: name order is sequence order),
 * written as "%020llu.push.tmp", fsync'd and renamed, so a crash leaves
 * either the whole file or a temp file that the next scan removes.
 *
 * Layout, little-endian:
 *	0  magic "EBPFSPL1"
 *	8  u32 key_len		series key, 1..SPOOL_MAX_KEY bytes
 *	12 s32 sample_rate	> 0
 *	16 s64 from_ns
 *	24 s64 until_ns		>= from_ns
 *	32 u64 body_len		1..SPOOL_MAX_BODY
 *	40 u32 body_crc		crc32 of the body
 *	44 u32 head_crc		crc32 of bytes 0..43 and the key
 *	48 key, then body; the file is exactly 48 + key_len + body_len bytes.
 * Nothing read back is trusted: every field is checked against these
 * bounds and the file's real size before it is used.
 */
#define SPOOL_HEADER_SIZE 48
#define SPOOL_MAX_KEY 16384
#define SPOOL_MAX_BODY (1ULL << 30)

struct spool;

struct spool_record {
	__u64 seq;
	char *key;		/* owned by the record (spool__read_meta allocates it) */
	__s64 from_ns;
	__s64 until_ns;
	int sample_rate;
	size_t body_len;
	__u32 body_crc;
	size_t file_size;	/* bytes on disk */
};

/* Opens and locks dir, creating it (mode 0700) when missing. NULL with errno set (EBUSY: in use). */
struct spool *spool__open(const char *dir);
void spool__free(struct spool *s);

/*
 * Sequence numbers of the complete files in the directory, ascending, in a
 * malloc'd array; removes temp files a crash left. Returns 0 or -errno.
 */
int spool__scan(struct spool *s, __u64 **seqs, size_t *n);

/* Writes rec's fields (seq, key, times, rate) and body; sets rec->file_size and body_crc. */
int spool__write(struct spool *s, struct spool_record *rec, const void *body, size_t len);

/* Reads and checks file seq's header and key into rec. -EBADMSG when the file is not valid. */
int spool__read_meta(struct spool *s, __u64 seq, struct spool_record *rec);

/* Reads the body of rec (from spool__read_meta or spool__write) into *body; checks size and crc. */
int spool__read_body(struct spool *s, const struct spool_record *rec, void **body);

int spool__remove(struct spool *s, __u64 seq);

/* Frees what spool__read_meta allocated in rec. */
void spool_record__clear(struct spool_record *rec);

#endif /* EBPFPROF_SPOOL_H */
