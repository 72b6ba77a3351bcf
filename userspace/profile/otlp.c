/* otlp.c -- encodes a profile as an OpenTelemetry ExportProfilesServiceRequest (profiles v1development) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hexdigit.h"
#include "pbuf.h"
#include "pprof.h"
#include "pprof_int.h"

/*
 * Field numbers from opentelemetry-proto 1.11 (profiles/v1development,
 * collector/profiles/v1development, common/v1, resource/v1). Every
 * dictionary table starts with its zero value, so pprof's 1-based ids of
 * mappings, locations and functions are their OTLP indexes as they are, and
 * pprof's string table (with "" first) is the start of OTLP's.
 */
enum {
	REQ_RESOURCE_PROFILES = 1,
	REQ_DICTIONARY = 2,

	DICT_MAPPING = 1,
	DICT_LOCATION = 2,
	DICT_FUNCTION = 3,
	DICT_LINK = 4,
	DICT_STRING = 5,
	DICT_ATTRIBUTE = 6,
	DICT_STACK = 7,

	RP_RESOURCE = 1,
	RP_SCOPE_PROFILES = 2,
	RESOURCE_ATTRIBUTES = 1,
	KV_KEY = 1,
	KV_VALUE = 2,
	ANY_STRING = 1,
	ANY_INT = 3,
	SP_SCOPE = 1,
	SP_PROFILES = 2,
	SCOPE_NAME = 1,
	SCOPE_VERSION = 2,

	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLES = 2,
	PROFILE_TIME = 3,	/* fixed64 */
	PROFILE_DURATION = 4,
	PROFILE_PERIOD_TYPE = 5,
	PROFILE_PERIOD = 6,
	VT_TYPE = 1,
	VT_UNIT = 2,
	SAMPLE_STACK = 1,
	SAMPLE_ATTRIBUTES = 2,
	SAMPLE_LINK = 3,
	LINK_TRACE_ID = 1,
	LINK_SPAN_ID = 2,
	SAMPLE_VALUES = 4,

	MAPPING_START = 1,
	MAPPING_LIMIT = 2,
	MAPPING_OFFSET = 3,
	MAPPING_FILENAME = 4,
	STACK_LOCATIONS = 1,
	LOCATION_MAPPING = 1,
	LOCATION_ADDRESS = 2,
	LOCATION_LINES = 3,
	LINE_FUNCTION = 1,
	LINE_LINE = 2,
	FUNCTION_NAME = 1,
	FUNCTION_SYSTEM_NAME = 2,
	FUNCTION_FILENAME = 3,
	KVU_KEY = 1,
	KVU_VALUE = 2,
};

/* our sample label keys, as OpenTelemetry's semantic conventions name them */
static const struct {
	const char *ours, *otel;
	bool integer;
} attr_names[] = {
	{ "pid", "process.pid", true },
	{ "tid", "thread.id", true },
	{ "comm", "thread.name", false },
	{ "exe", "process.executable.path", false },
	{ "container_id", "container.id", false },
	{ "pod_uid", "k8s.pod.uid", false },
	{ "namespace", "k8s.namespace.name", false },
	{ "pod", "k8s.pod.name", false },
	{ "container", "k8s.container.name", false },
};

static const char *otel_name(const char *key, bool *integer)
{
	for (size_t i = 0; i < sizeof(attr_names) / sizeof(attr_names[0]); i++) {
		if (!strcmp(attr_names[i].ours, key)) {
			*integer = attr_names[i].integer;
			return attr_names[i].otel;
		}
	}
	*integer = false;
	return key;
}

static void put_any_string(struct pbuf *b, __u32 field, const char *s)
{
	size_t m = pbuf__begin(b, field);

	pbuf__string(b, ANY_STRING, s);
	pbuf__end(b, m);
}

static void put_resource(struct pbuf *b, const struct otlp_attr *attrs, int n)
{
	size_t m = pbuf__begin(b, RP_RESOURCE);

	for (int i = 0; i < n; i++) {
		size_t kv = pbuf__begin(b, RESOURCE_ATTRIBUTES);

		pbuf__string(b, KV_KEY, attrs[i].key);
		put_any_string(b, KV_VALUE, attrs[i].value);
		pbuf__end(b, kv);
	}
	pbuf__end(b, m);
}

/* an integer label value ("1234") as a number */
static bool parse_int(const char *s, __s64 *v)
{
	char *end;

	if (!*s)
		return false;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return !*end && !errno;
}

/* attribute keys: OpenTelemetry's names of our label keys, each once */
struct otlp_keys {
	const char **names;	/* distinct, appended to the string table after pprof's */
	size_t n;
	__u32 *of_label;	/* string index of each label's key */
};

static int keys_build(struct otlp_keys *k, const struct pprof *p)
{
	k->names = calloc(p->n_labels + 1, sizeof(*k->names));
	k->of_label = calloc(p->n_labels + 1, sizeof(*k->of_label));
	if (!k->names || !k->of_label)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_labels; i++) {
		bool integer;
		const char *name = otel_name(pprof_str(p, p->labels[i].key), &integer);
		size_t j = 0;

		while (j < k->n && strcmp(k->names[j], name))
			j++;
		if (j == k->n)
			k->names[k->n++] = name;
		k->of_label[i] = p->n_strings + j;
	}
	return 0;
}

/*
 * Trace links: a label set with a trace_id of 32 hex digits and a span_id
 * of 16 (the processes' own labels: Go's, custom labels) is also a Link,
 * as the format has them for spans; one per such set, in set order.
 */
struct otlp_link {
	unsigned char trace[16], span[8];
};

struct otlp_links {
	__u32 *of_set;			/* by label set id: its link's index, 0: none */
	struct otlp_link *links;	/* link_table[1...] */
	size_t n;
};

/* the string label KEY of label set ID, or NULL */
static const char *set_label(const struct pprof *p, __u32 id, const char *key)
{
	size_t n;
	const struct pp_label *l = pprof_labelset(p, id, &n);

	for (size_t k = 0; k < n; k++)
		if (l[k].str && !strcmp(pprof_str(p, l[k].key), key))
			return pprof_str(p, l[k].str);
	return NULL;
}

/* exactly 2 * len hex digits, not all zero (an invalid id, to the spec), into out */
static bool parse_id(const char *hex, unsigned char *out, size_t len)
{
	int any = 0;

	if (!hex || strlen(hex) != 2 * len)
		return false;
	for (size_t i = 0; i < len; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return false;
		out[i] = hi << 4 | lo;
		any |= out[i];
	}
	return any;
}

static int links_build(struct otlp_links *l, const struct pprof *p)
{
	l->of_set = calloc(p->n_labelsets + 1, sizeof(*l->of_set));
	l->links = calloc(p->n_labelsets + 1, sizeof(*l->links));
	if (!l->of_set || !l->links)
		return -ENOMEM;
	for (__u32 id = 1; id <= p->n_labelsets; id++) {
		struct otlp_link *k = &l->links[l->n];

		if (parse_id(set_label(p, id, "trace_id"), k->trace, sizeof(k->trace)) &&
		    parse_id(set_label(p, id, "span_id"), k->span, sizeof(k->span)))
			l->of_set[id] = ++l->n;
	}
	return 0;
}

/*
 * The attribute table: the zero value, then one entry per label of the
 * label array (pprof->labels), so a sample's attributes are its label set's
 * run of that array, shifted by one.
 */
static void put_attributes(struct pbuf *b, const struct pprof *p, const struct otlp_keys *keys)
{
	pbuf__bytes(b, DICT_ATTRIBUTE, NULL, 0);
	for (size_t i = 0; i < p->n_labels; i++) {
		const struct pp_label *l = &p->labels[i];
		size_t m = pbuf__begin(b, DICT_ATTRIBUTE), v;
		bool integer;
		__s64 num = l->num;

		otel_name(pprof_str(p, l->key), &integer);
		pbuf__int64(b, KVU_KEY, keys->of_label[i]);
		v = pbuf__begin(b, KVU_VALUE);
		if (l->str && !(integer && parse_int(pprof_str(p, l->str), &num)))
			pbuf__string(b, ANY_STRING, pprof_str(p, l->str));
		else
			pbuf__int64(b, ANY_INT, num);
		pbuf__end(b, v);
		pbuf__end(b, m);
	}
}

static void put_dictionary(struct pbuf *b, const struct pprof *p, const struct otlp_keys *keys,
			   const struct otlp_links *links)
{
	size_t d = pbuf__begin(b, REQ_DICTIONARY), m;

	pbuf__bytes(b, DICT_MAPPING, NULL, 0);
	for (size_t i = 0; i < p->n_mappings; i++) {
		const struct pp_mapping *mp = &p->mappings[i];

		m = pbuf__begin(b, DICT_MAPPING);
		pbuf__uint64(b, MAPPING_START, mp->start);
		pbuf__uint64(b, MAPPING_LIMIT, mp->limit);
		pbuf__uint64(b, MAPPING_OFFSET, mp->file_offset);
		pbuf__int64(b, MAPPING_FILENAME, mp->filename);
		pbuf__end(b, m);
	}
	pbuf__bytes(b, DICT_LOCATION, NULL, 0);
	for (__u32 id = 1; id <= p->n_locations; id++) {
		const struct pp_location *loc = pprof_location(p, id);
		size_t n;
		const struct pp_line *lines = pprof_location_lines(p, id, &n);

		m = pbuf__begin(b, DICT_LOCATION);
		pbuf__int64(b, LOCATION_MAPPING, loc->mapping_id);
		pbuf__uint64(b, LOCATION_ADDRESS, loc->address);
		for (size_t k = 0; k < n; k++) {
			size_t lm = pbuf__begin(b, LOCATION_LINES);

			pbuf__int64(b, LINE_FUNCTION, lines[k].function_id);
			pbuf__int64(b, LINE_LINE, lines[k].line);
			pbuf__end(b, lm);
		}
		pbuf__end(b, m);
	}
	pbuf__bytes(b, DICT_FUNCTION, NULL, 0);
	for (size_t i = 0; i < p->n_functions; i++) {
		m = pbuf__begin(b, DICT_FUNCTION);
		pbuf__int64(b, FUNCTION_NAME, p->functions[i].name);
		pbuf__int64(b, FUNCTION_SYSTEM_NAME, p->functions[i].name);
		pbuf__int64(b, FUNCTION_FILENAME, p->functions[i].filename);
		pbuf__end(b, m);
	}
	/* link_table[0] as the spec asks: 16 and 8 zero bytes */
	m = pbuf__begin(b, DICT_LINK);
	pbuf__bytes(b, 1, (const char[16]){ 0 }, 16);
	pbuf__bytes(b, 2, (const char[8]){ 0 }, 8);
	pbuf__end(b, m);
	for (size_t i = 0; i < links->n; i++) {
		m = pbuf__begin(b, DICT_LINK);
		pbuf__bytes(b, LINK_TRACE_ID, (const char *)links->links[i].trace, 16);
		pbuf__bytes(b, LINK_SPAN_ID, (const char *)links->links[i].span, 8);
		pbuf__end(b, m);
	}
	for (size_t i = 0; i < p->n_strings; i++)
		pbuf__string(b, DICT_STRING, pprof_str(p, i));
	for (size_t i = 0; i < keys->n; i++)
		pbuf__string(b, DICT_STRING, keys->names[i]);
	put_attributes(b, p, keys);
	/* one stack per sample, in sample order: stack i + 1 belongs to sample i */
	pbuf__bytes(b, DICT_STACK, NULL, 0);
	for (size_t i = 0; i < p->n_samples; i++) {
		size_t n;
		const __u32 *locs = pprof_sample_locs(p, i, &n);

		m = pbuf__begin(b, DICT_STACK);
		pbuf__packed_u32(b, STACK_LOCATIONS, locs, n);
		pbuf__end(b, m);
	}
	pbuf__end(b, d);
}

static void put_value_type(struct pbuf *b, __u32 field, const __u32 vt[2])
{
	size_t m = pbuf__begin(b, field);

	pbuf__int64(b, VT_TYPE, vt[0]);
	pbuf__int64(b, VT_UNIT, vt[1]);
	pbuf__end(b, m);
}

/* one Profile for value index t: OTLP profiles carry a single sample type */
static int put_profile(struct pbuf *b, const struct pprof *p, int t, __u32 *attr_idx,
		       const struct otlp_links *links)
{
	size_t m = pbuf__begin(b, SP_PROFILES);

	put_value_type(b, PROFILE_SAMPLE_TYPE, p->sample_types[t]);
	for (size_t i = 0; i < p->n_samples; i++) {
		__s64 v = pprof_sample_values(p, i)[t];
		size_t n_labels, s;
		__u32 first;

		if (!v)
			continue;
		pprof_labelset(p, p->samples[i].labelset, &n_labels);
		first = p->labelsets[p->samples[i].labelset - 1];
		for (size_t k = 0; k < n_labels; k++)
			attr_idx[k] = first + k + 1;
		s = pbuf__begin(b, PROFILE_SAMPLES);
		pbuf__int64(b, SAMPLE_STACK, i + 1);
		pbuf__packed_u32(b, SAMPLE_ATTRIBUTES, attr_idx, n_labels);
		if (links->of_set[p->samples[i].labelset])
			pbuf__int64(b, SAMPLE_LINK, links->of_set[p->samples[i].labelset]);
		pbuf__packed_int64(b, SAMPLE_VALUES, &v, 1);
		pbuf__end(b, s);
	}
	pbuf__fixed64(b, PROFILE_TIME, p->time_nanos);
	pbuf__uint64(b, PROFILE_DURATION, p->duration_nanos);
	put_value_type(b, PROFILE_PERIOD_TYPE, p->period_type);
	pbuf__int64(b, PROFILE_PERIOD, p->period);
	pbuf__end(b, m);
	return pbuf__err(b);
}

int pprof__write_otlp(const struct pprof *p, const struct otlp_attr *resource, int n_resource,
		      struct pbuf *out)
{
	struct otlp_keys keys = {};
	struct otlp_links links = {};
	size_t max_labels = 0, rp, sp, sc;
	__u32 *attr_idx;
	int err;

	for (__u32 id = 1; id <= p->n_labelsets; id++) {
		size_t n;

		pprof_labelset(p, id, &n);
		if (n > max_labels)
			max_labels = n;
	}
	attr_idx = calloc(max_labels + 1, sizeof(*attr_idx));
	err = attr_idx ? keys_build(&keys, p) : -ENOMEM;
	if (!err)
		err = links_build(&links, p);
	if (err)
		goto out;
	rp = pbuf__begin(out, REQ_RESOURCE_PROFILES);
	put_resource(out, resource, n_resource);
	sp = pbuf__begin(out, RP_SCOPE_PROFILES);
	sc = pbuf__begin(out, SP_SCOPE);
	pbuf__string(out, SCOPE_NAME, "ebpfprof");
	pbuf__end(out, sc);
	for (int t = 0; t < p->n_types && !err; t++)
		err = put_profile(out, p, t, attr_idx, &links);
	pbuf__end(out, sp);
	pbuf__end(out, rp);
	put_dictionary(out, p, &keys, &links);
out:
	free(keys.names);
	free(keys.of_label);
	free(links.of_set);
	free(links.links);
	free(attr_idx);
	return err ?: pbuf__err(out);
}
