/* otel_ctx.c -- an OpenTelemetry process context (OTEP 4719) read from another process: its thread-context key map */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "lib/pbread.h"
#include "lib/proc_mem.h"
#include "symbolize/proc_maps.h"
#include "otel_ctx.h"

#define READ_TRIES 3	/* a context re-published as often as this while we read it: -EAGAIN */

/* the header at the start of the OTEL_CTX mapping, native byte order */
struct otel_header {
	char signature[8];	/* "OTEL_CTX", not NUL-ended */
	__u32 version;		/* 2; 1 while in development */
	__u32 payload_size;
	__u64 published_at;	/* monotonic_published_at_ns; 0 while it is being updated */
	__u64 payload;		/* a pointer in the process */
};

/* how the mapping is named, by how the writer made and named it (memfd and prctl, prctl only, memfd only) */
static const char *const ctx_names[] = { "[anon_shmem:OTEL_CTX]", "[anon:OTEL_CTX]", "/memfd:OTEL_CTX" };

/* ProcessContext, KeyValue, AnyValue and ArrayValue field numbers (opentelemetry-proto) */
enum { PC_ATTRIBUTES = 2, KV_KEY = 1, KV_VALUE = 2, AV_STRING = 1, AV_ARRAY = 5, ARR_VALUES = 1 };

static bool span_is(struct pb_span s, const char *text)
{
	size_t n = strlen(text);

	return (size_t)(s.end - s.p) == n && !memcmp(s.p, text, n);
}

/* The string_value of AnyValue V: 0 with *str, -ENOENT for another kind, -EBADMSG. */
static int any_string(struct pb_span v, struct pb_span *str)
{
	struct pb_span sub;
	__u64 x;
	__u32 num;
	int wire, found = -ENOENT;

	while (v.p < v.end) {
		if (pbread__field(&v, &num, &wire, &x, &sub))
			return -EBADMSG;
		if (num == AV_STRING && wire == 2) {
			*str = sub;
			found = 0;
		}
	}
	return found;
}

/* Entry I of the key map: the string cut to a label key, flagged; another kind of value stays "". */
static void set_key(struct otel_keys *out, int i, struct pb_span v)
{
	struct otel_key *k = &out->key[i];
	struct pb_span s;
	size_t n;

	memset(k, 0, sizeof(*k));
	if (any_string(v, &s))
		return;
	n = s.end - s.p;
	if (n > LABEL_KEY_MAX - 1) {
		n = LABEL_KEY_MAX - 1;
		k->flags = LABEL_SET_TRUNCATED;
	}
	memcpy(k->name, s.p, n);
	/* a name with a NUL in it is cut there: BPF and the profile see C strings */
	k->name[strnlen(k->name, n)] = '\0';
}

/* threadlocal.attribute_key_map: an AnyValue holding an ArrayValue of strings */
static int key_map(struct pb_span v, struct otel_keys *out)
{
	struct pb_span sub, arr = { 0 };
	__u64 x;
	__u32 num;
	int wire;

	out->n = 0;
	while (v.p < v.end) {
		if (pbread__field(&v, &num, &wire, &x, &sub))
			return -EBADMSG;
		if (num == AV_ARRAY && wire == 2)
			arr = sub;
	}
	while (arr.p < arr.end) {
		if (pbread__field(&arr, &num, &wire, &x, &sub))
			return -EBADMSG;
		if (num != ARR_VALUES || wire != 2)
			continue;
		/* entries past a u8's reach are no key index a record can name */
		if (out->n < OTEL_KEYS_MAX)
			set_key(out, out->n++, sub);
	}
	return 0;
}

/* one KeyValue of ProcessContext.attributes: the two keys we read, the rest ignored */
static int attribute(struct pb_span kv, struct otel_keys *out)
{
	struct pb_span sub, key = { 0 }, value = { 0 }, s;
	__u64 x;
	__u32 num;
	int wire;

	while (kv.p < kv.end) {
		if (pbread__field(&kv, &num, &wire, &x, &sub))
			return -EBADMSG;
		if (num == KV_KEY && wire == 2)
			key = sub;
		else if (num == KV_VALUE && wire == 2)
			value = sub;
	}
	if (span_is(key, "threadlocal.attribute_key_map"))
		return key_map(value, out);
	if (!span_is(key, "threadlocal.schema_version"))
		return 0;
	if (any_string(value, &s))
		out->schema = OTEL_SCHEMA_OTHER;
	else
		out->schema = span_is(s, "tls_v1") || span_is(s, "tlsdesc_v1_dev") ?
				      OTEL_SCHEMA_TLS_V1 : OTEL_SCHEMA_OTHER;
	return 0;
}

int otel_ctx__decode(const void *buf, size_t len, struct otel_keys *out)
{
	struct pb_span s = { buf, (const unsigned char *)buf + len }, sub;
	__u64 x;
	__u32 num;
	int wire, err = 0;

	out->schema = OTEL_SCHEMA_NONE;
	out->n = 0;
	while (!err && s.p < s.end) {
		err = pbread__field(&s, &num, &wire, &x, &sub);
		if (!err && num == PC_ATTRIBUTES && wire == 2)
			err = attribute(sub, out);
	}
	return err;
}

static bool is_ctx_mapping(const struct proc_map *m)
{
	for (size_t i = 0; i < sizeof(ctx_names) / sizeof(ctx_names[0]); i++)
		if (!strncmp(m->path, ctx_names[i], strlen(ctx_names[i])))
			return true;
	return false;
}

/* One read of the context whose header is at ADDR: header, payload, the header's timestamp again. */
static int read_once(__u32 pid, __u64 addr, struct otel_keys *out)
{
	struct otel_header h;
	unsigned char *payload = NULL;
	__u64 again;
	int err;

	if (proc_mem__read(pid, addr, &h, sizeof(h)))
		return -EFAULT;
	if (memcmp(h.signature, "OTEL_CTX", 8))
		return -ENOENT;
	if (h.version != 2 && h.version != 1)
		return -ENOTSUP;
	if (!h.published_at)
		return -EAGAIN;
	if (h.payload_size > OTEL_PAYLOAD_MAX)
		return -EBADMSG;
	payload = malloc(h.payload_size ? h.payload_size : 1);
	if (!payload)
		return -ENOMEM;
	err = proc_mem__read(pid, h.payload, payload, h.payload_size) ? -EFAULT : 0;
	if (!err && proc_mem__read(pid, addr + offsetof(struct otel_header, published_at), &again,
				   sizeof(again)))
		err = -EFAULT;
	if (!err && again != h.published_at)
		err = -EAGAIN;
	if (!err)
		err = otel_ctx__decode(payload, h.payload_size, out);
	out->published_at = h.published_at;
	free(payload);
	return err;
}

int otel_ctx__read(__u32 pid, const struct proc_map *maps, size_t n, struct otel_keys *out)
{
	int err = -ENOENT;

	for (size_t i = 0; i < n; i++) {
		if (!is_ctx_mapping(&maps[i]) || maps[i].end - maps[i].start < sizeof(struct otel_header))
			continue;
		/* a context being re-published is read again: its timestamp changed under us */
		err = -EAGAIN;
		for (int t = 0; t < READ_TRIES && err == -EAGAIN; t++)
			err = read_once(pid, maps[i].start, out);
		if (err != -ENOENT)
			return err;
	}
	return err;
}
