/* test_otel_ctx.c -- unit tests for runtimes/labels/otel_ctx: a ProcessContext's thread-context schema and key map */
#include <errno.h>
#include <string.h>
#include "runtimes/labels/otel_ctx.h"
#include "test.h"

static struct otel_keys k;

/* protobuf by hand, every length under 128: a length-delimited field NUM of B[0, n) at OUT */
static size_t field(unsigned char *out, int num, const void *b, size_t n)
{
	out[0] = (unsigned char)(num << 3 | 2);
	out[1] = (unsigned char)n;
	memcpy(out + 2, b, n);
	return n + 2;
}

/* ProcessContext.attributes[] = {key, AnyValue ANY[0, n)} appended at OUT */
static size_t attribute(unsigned char *out, const char *key, const unsigned char *any, size_t n)
{
	unsigned char kv[128];
	size_t k = field(kv, 1, key, strlen(key));

	k += field(kv + k, 2, any, n);
	return field(out, 2, kv, k);
}

static size_t schema(unsigned char *out, const char *version)
{
	unsigned char any[64];

	return attribute(out, "threadlocal.schema_version", any,
			 field(any, 1, version, strlen(version)));
}

/* the key map of NAMES[0, n), NULL giving an int value instead of a string */
static size_t key_map(unsigned char *out, const char *const *names, int n)
{
	unsigned char arr[120], one[48], any[124];
	size_t a = 0, o;

	for (int i = 0; i < n; i++) {
		if (names[i])
			o = field(one, 1, names[i], strlen(names[i]));
		else
			o = 2, one[0] = 3 << 3, one[1] = 7;	/* int_value: 7 */
		a += field(arr + a, 1, one, o);
	}
	return attribute(out, "threadlocal.attribute_key_map", any, field(any, 5, arr, a));
}

/* the schema and the key map in either order, a resource before them skipped; names by index */
static int test_key_map(void)
{
	const char *names[] = { "http_route", NULL, "a_key_longer_than_thirty_one_bytes", "" };
	unsigned char buf[512];
	size_t n = field(buf, 1, "\x0a\x00", 2);	/* a Resource with an empty KeyValue */

	n += key_map(buf + n, names, 4);
	n += schema(buf + n, "tls_v1");
	CHECK(otel_ctx__decode(buf, n, &k) == 0);
	CHECK(k.schema == OTEL_SCHEMA_TLS_V1 && k.n == 4);
	CHECK(!strcmp(k.key[0].name, "http_route") && !k.key[0].flags);
	CHECK(k.key[1].name[0] == '\0');	/* no string: no name */
	CHECK(!strcmp(k.key[2].name, "a_key_longer_than_thirty_one_by"));
	CHECK(k.key[2].flags == LABEL_SET_TRUNCATED);
	CHECK(k.key[3].name[0] == '\0');
	return TEST_OK;
}

/* the draft's schema name is ours too; Go's pprof-labels schema and no schema are not */
static int test_schemas(void)
{
	unsigned char buf[128];

	CHECK(!otel_ctx__decode(buf, schema(buf, "tlsdesc_v1_dev"), &k));
	CHECK(k.schema == OTEL_SCHEMA_TLS_V1 && k.n == 0);
	CHECK(!otel_ctx__decode(buf, schema(buf, "go_pprof_labels_v1"), &k));
	CHECK(k.schema == OTEL_SCHEMA_OTHER);
	CHECK(!otel_ctx__decode(buf, 0, &k) && k.schema == OTEL_SCHEMA_NONE);
	return TEST_OK;
}

/* a length past the end, a cut varint, a group: refused, never read past */
static int test_malformed(void)
{
	unsigned char buf[128];
	size_t n = schema(buf, "tls_v1");

	CHECK(otel_ctx__decode(buf, n - 1, &k) == -EBADMSG);
	CHECK(otel_ctx__decode("\x12\x80", 2, &k) == -EBADMSG);
	CHECK(otel_ctx__decode("\x13", 1, &k) == -EBADMSG);
	return TEST_OK;
}

TEST_MAIN("otel_ctx", { "key_map", test_key_map }, { "schemas", test_schemas },
	  { "malformed", test_malformed });
