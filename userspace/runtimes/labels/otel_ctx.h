/* otel_ctx.h -- an OpenTelemetry process context (OTEP 4719): the key names of its thread-context records */
#ifndef EBPFPROF_OTEL_CTX_H
#define EBPFPROF_OTEL_CTX_H

#include <stddef.h>
#include <linux/types.h>
#include "labels.h"

struct proc_map;

#define OTEL_KEYS_MAX 256	/* a record's key index is a u8 */
#define OTEL_PAYLOAD_MAX 65536	/* a larger payload is refused, never read in part */

enum otel_schema {
	OTEL_SCHEMA_NONE = 0,	/* no threadlocal.schema_version: no thread context (yet) */
	OTEL_SCHEMA_TLS_V1,	/* "tls_v1", or the draft's "tlsdesc_v1_dev": the record BPF reads */
	OTEL_SCHEMA_OTHER,	/* another schema (Go's pprof labels, a later version): not ours to read */
};

/* The thread-context half of a process context: its schema and key map. */
struct otel_keys {
	enum otel_schema schema;
	int n;				/* entries of threadlocal.attribute_key_map */
	__u64 published_at;		/* monotonic_published_at_ns of the read */
	struct otel_key key[OTEL_KEYS_MAX];	/* by index; "" where the entry was no string */
};

/*
 * Decodes a ProcessContext payload of LEN bytes at BUF (untrusted): the
 * attributes' threadlocal.schema_version and threadlocal.attribute_key_map,
 * names cut to LABEL_KEY_MAX - 1 bytes (flagged), past OTEL_KEYS_MAX left
 * out. 0, or -EBADMSG: not a well-formed message.
 */
int otel_ctx__decode(const void *buf, size_t len, struct otel_keys *out);

/*
 * Reads the process context of PID by the reading protocol of OTEP 4719:
 * the mapping named OTEL_CTX among MAPS[0, n), its header, the payload,
 * the header's timestamp again (a changed one: read anew, at most 3 times).
 * 0; -ENOENT: none published; -EAGAIN: being updated; -ENOTSUP: another
 * version; -EBADMSG: malformed; -EFAULT: unreadable.
 */
int otel_ctx__read(__u32 pid, const struct proc_map *maps, size_t n, struct otel_keys *out);

#endif /* EBPFPROF_OTEL_CTX_H */
