/* pprof_read.c -- reads a pprof file (gzip or plain profile.proto) from untrusted bytes into the profile model */

/*
 * Why by hand and not protobuf-c: there is no profile.proto in Debian's
 * protobuf-c packages, and generated code would hold the whole profile a
 * second time as its own structs. The decoder here reads only the fields of
 * profile.proto, checks every length against the bytes it has, every index
 * against its table, and builds the profile through pprof.c's own API, so a
 * file read here is exactly what a collected profile is to the writers.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "pprof.h"
#include "pprof_int.h"
#include "lib/array.h"
#include "lib/pbread.h"

struct id_ix;

struct rd_mapping {
	__u64 id, start, limit, offset, filename, build_id;
	bool flags[4];
	__u32 ours;
};

struct rd_function {
	__u64 id, name, system_name, filename;
};

struct rd_location {
	__u64 id, mapping_id, address;
	struct pb_span body;	/* for its lines, read when the location is added */
	__u32 ours;		/* 0: not added yet */
};

struct reader {
	struct pb_span *strs;
	size_t n_strs, strs_cap;
	char *text;		/* every string NUL-terminated, str_off into it */
	size_t *str_off;
	struct rd_mapping *maps;
	size_t n_maps, maps_cap;
	struct rd_function *funcs;
	size_t n_funcs, funcs_cap;
	struct rd_location *locs;
	size_t n_locs, locs_cap;
	struct pb_span *samples;
	size_t n_samples, samples_cap;
	struct id_ix *map_ix, *func_ix, *loc_ix;
	__u64 types[PPROF_MAX_SAMPLE_TYPES][2];
	int n_types;
	__u64 period_type[2];
	__s64 period, time_nanos, duration_nanos;
	__u64 default_type;
	/* scratch for one sample / location */
	__u32 *ids;
	size_t ids_cap;
	__s64 *vals;
	size_t vals_cap;
	struct pprof_label *labels;
	size_t labels_cap;
	struct pprof_line *lines;
	size_t lines_cap;
	char *why;
	size_t why_len;
};

static int bad(struct reader *r, const char *fmt, ...)
{
	va_list ap;

	if (r->why && r->why_len && !r->why[0]) {
		va_start(ap, fmt);
		vsnprintf(r->why, r->why_len, fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

/* A repeated integer field, packed (wire 2) or one value (wire 0), appended to out as __u64. */
static int repeated(struct pb_span sub, int wire, __u64 v, __u64 **out, size_t *n, size_t *cap)
{
	if (wire == 0) {
		if (ARRAY_RESERVE(*out, *cap, *n + 1))
			return -ENOMEM;
		(*out)[(*n)++] = v;
		return 0;
	}
	if (wire != 2)
		return -EBADMSG;
	while (sub.p < sub.end) {
		if (ARRAY_RESERVE(*out, *cap, *n + 1))
			return -ENOMEM;
		if (pbread__varint(&sub, &(*out)[*n]))
			return -EBADMSG;
		(*n)++;
	}
	return 0;
}

static int value_type(struct pb_span s, __u64 vt[2])
{
	struct pb_span sub;
	__u32 num;
	int wire;
	__u64 v;

	vt[0] = vt[1] = 0;
	while (s.p < s.end) {
		if (pbread__field(&s, &num, &wire, &v, &sub))
			return -EBADMSG;
		if (wire == 0 && (num == 1 || num == 2))
			vt[num - 1] = v;
	}
	return 0;
}

static int read_mapping(struct reader *r, struct pb_span s)
{
	struct rd_mapping m = {};
	struct pb_span sub;
	__u32 num;
	int wire;
	__u64 v;

	while (s.p < s.end) {
		if (pbread__field(&s, &num, &wire, &v, &sub))
			return bad(r, "bad mapping");
		if (wire != 0)
			continue;
		switch (num) {
		case 1: m.id = v; break;
		case 2: m.start = v; break;
		case 3: m.limit = v; break;
		case 4: m.offset = v; break;
		case 5: m.filename = v; break;
		case 6: m.build_id = v; break;
		case 7: case 8: case 9: case 10: m.flags[num - 7] = v; break;
		}
	}
	if (ARRAY_RESERVE(r->maps, r->maps_cap, r->n_maps + 1))
		return -ENOMEM;
	r->maps[r->n_maps++] = m;
	return 0;
}

static int read_function(struct reader *r, struct pb_span s)
{
	struct rd_function f = {};
	struct pb_span sub;
	__u32 num;
	int wire;
	__u64 v;

	while (s.p < s.end) {
		if (pbread__field(&s, &num, &wire, &v, &sub))
			return bad(r, "bad function");
		if (wire != 0)
			continue;
		switch (num) {
		case 1: f.id = v; break;
		case 2: f.name = v; break;
		case 3: f.system_name = v; break;
		case 4: f.filename = v; break;
		}
	}
	if (ARRAY_RESERVE(r->funcs, r->funcs_cap, r->n_funcs + 1))
		return -ENOMEM;
	r->funcs[r->n_funcs++] = f;
	return 0;
}

static int read_location(struct reader *r, struct pb_span s)
{
	struct rd_location l = { .body = s };
	struct pb_span sub;
	__u32 num;
	int wire;
	__u64 v;

	while (s.p < s.end) {
		if (pbread__field(&s, &num, &wire, &v, &sub))
			return bad(r, "bad location");
		if (wire != 0)
			continue;
		switch (num) {
		case 1: l.id = v; break;
		case 2: l.mapping_id = v; break;
		case 3: l.address = v; break;
		}
	}
	if (ARRAY_RESERVE(r->locs, r->locs_cap, r->n_locs + 1))
		return -ENOMEM;
	r->locs[r->n_locs++] = l;
	return 0;
}

static int append_span(struct pb_span **arr, size_t *n, size_t *cap, struct pb_span s)
{
	if (ARRAY_RESERVE(*arr, *cap, *n + 1))
		return -ENOMEM;
	(*arr)[(*n)++] = s;
	return 0;
}

/* First pass: the tables, and where each sample is; samples are added once all tables are in. */
static int read_profile(struct reader *r, struct pb_span s)
{
	struct pb_span sub;
	__u32 num;
	int wire, err = 0;
	__u64 v;

	while (s.p < s.end && !err) {
		if (pbread__field(&s, &num, &wire, &v, &sub))
			return bad(r, "not a profile.proto message");
		if (wire == 2) {
			switch (num) {
			case 1:
				if (r->n_types == PPROF_MAX_SAMPLE_TYPES)
					return bad(r, "more than %d sample types", PPROF_MAX_SAMPLE_TYPES);
				err = value_type(sub, r->types[r->n_types++]);
				break;
			case 2: err = append_span(&r->samples, &r->n_samples, &r->samples_cap, sub); break;
			case 3: err = read_mapping(r, sub); break;
			case 4: err = read_location(r, sub); break;
			case 5: err = read_function(r, sub); break;
			case 6: err = append_span(&r->strs, &r->n_strs, &r->strs_cap, sub); break;
			case 11: err = value_type(sub, r->period_type); break;
			}
		} else if (wire == 0) {
			switch (num) {
			case 9: r->time_nanos = (__s64)v; break;
			case 10: r->duration_nanos = (__s64)v; break;
			case 12: r->period = (__s64)v; break;
			case 14: r->default_type = v; break;
			}
		}
	}
	if (err == -EBADMSG)
		return bad(r, "bad value type");
	return err;
}

/* Copies the string table NUL-terminated (a string holding a NUL ends there). */
static int strings(struct reader *r)
{
	size_t total = 0, off = 0;

	if (r->n_strs && r->strs[0].p != r->strs[0].end)
		return bad(r, "string_table[0] is not empty");
	for (size_t i = 0; i < r->n_strs; i++)
		total += (size_t)(r->strs[i].end - r->strs[i].p) + 1;
	r->text = malloc(total + 1);
	r->str_off = malloc((r->n_strs + 1) * sizeof(*r->str_off));
	if (!r->text || !r->str_off)
		return -ENOMEM;
	r->text[0] = '\0';
	for (size_t i = 0; i < r->n_strs; i++) {
		size_t len = r->strs[i].end - r->strs[i].p;

		r->str_off[i] = off;
		memcpy(r->text + off, r->strs[i].p, len);
		r->text[off + len] = '\0';
		off += len + 1;
	}
	return 0;
}

/* String idx, or NULL when the index is out of the table (index 0 is "" even in an empty table). */
static const char *str(const struct reader *r, __u64 idx)
{
	if (idx == 0 && !r->n_strs)
		return r->text;
	return idx < r->n_strs ? r->text + r->str_off[idx] : NULL;
}

/* id -> index + 1 of a table, sorted by id for bsearch */
struct id_ix {
	__u64 id;
	size_t i;
};

static int cmp_ix(const void *a, const void *b)
{
	const struct id_ix *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/*
 * Indexes a table of n entries whose first member is the id. Files number
 * ids 1..n in order, but nothing makes them, so lookups go through a sorted
 * index rather than trusting the position. A repeated or zero id is refused.
 */
static int index_ids(const void *table, size_t n, size_t elem, struct id_ix **out)
{
	const unsigned char *t = table;
	struct id_ix *ix = malloc((n ? n : 1) * sizeof(*ix));

	if (!ix)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		memcpy(&ix[i].id, t + i * elem, sizeof(ix[i].id));
		ix[i].i = i;
	}
	qsort(ix, n, sizeof(*ix), cmp_ix);
	for (size_t i = 0; i < n; i++) {
		if (!ix[i].id || (i && ix[i].id == ix[i - 1].id)) {
			free(ix);
			return -EBADMSG;
		}
	}
	*out = ix;
	return 0;
}

/* index + 1 of the entry with this id, 0 when there is none */
static size_t find_id(const struct id_ix *ix, size_t n, __u64 id)
{
	struct id_ix key = { .id = id };
	const struct id_ix *hit = id ? bsearch(&key, ix, n, sizeof(*ix), cmp_ix) : NULL;

	return hit ? hit->i + 1 : 0;
}

static int index_tables(struct reader *r)
{
	int err = index_ids(r->maps, r->n_maps, sizeof(*r->maps), &r->map_ix);

	if (!err)
		err = index_ids(r->funcs, r->n_funcs, sizeof(*r->funcs), &r->func_ix);
	if (!err)
		err = index_ids(r->locs, r->n_locs, sizeof(*r->locs), &r->loc_ix);
	if (err == -EBADMSG)
		return bad(r, "an id is 0 or repeated");
	return err;
}

static int add_mappings(struct reader *r, struct pprof *p)
{
	for (size_t i = 0; i < r->n_maps; i++) {
		struct rd_mapping *m = &r->maps[i];
		struct pprof_mapping_desc d = {
			.start = m->start, .limit = m->limit, .file_offset = m->offset,
			.filename = str(r, m->filename), .build_id = str(r, m->build_id),
			.has_functions = m->flags[0], .has_filenames = m->flags[1],
			.has_line_numbers = m->flags[2], .has_inline_frames = m->flags[3],
		};

		if (!d.filename || !d.build_id)
			return bad(r, "mapping string index out of range");
		/* profile.proto has no flag for it; the kernel's mapping is known by name */
		d.is_kernel = !strncmp(d.filename, "[kernel", 7) || !strcmp(d.filename, "vmlinux");
		m->ours = pprof__add_mapping(p, &d);
		if (!m->ours)
			return -errno;
	}
	return 0;
}

static int location_lines(struct reader *r, struct rd_location *l, size_t *n)
{
	struct pb_span s = l->body, sub;
	__u32 num;
	int wire;
	__u64 v;

	*n = 0;
	while (s.p < s.end) {
		if (pbread__field(&s, &num, &wire, &v, &sub))
			return -EBADMSG;
		if (num == 4 && wire == 2) {
			__u64 fid = 0, line = 0;
			struct pb_span ls = sub;
			struct rd_function *f;
			size_t fi;

			while (ls.p < ls.end) {
				if (pbread__field(&ls, &num, &wire, &v, &sub))
					return -EBADMSG;
				if (wire == 0 && num == 1)
					fid = v;
				else if (wire == 0 && num == 2)
					line = v;
			}
			fi = find_id(r->func_ix, r->n_funcs, fid);
			if (!fi)
				return bad(r, "line of location %llu names no function",
					   (unsigned long long)l->id);
			f = &r->funcs[fi - 1];
			if (ARRAY_RESERVE(r->lines, r->lines_cap, *n + 1))
				return -ENOMEM;
			r->lines[*n] = (struct pprof_line){ .function = str(r, f->name),
							     .filename = str(r, f->filename),
							     .line = (__s64)line };
			if (r->lines[*n].function && !*r->lines[*n].function)
				r->lines[*n].function = str(r, f->system_name);
			if (!r->lines[*n].function || !r->lines[*n].filename)
				return bad(r, "function string index out of range");
			(*n)++;
		}
	}
	return 0;
}

/*
 * Our model keys locations by (mapping, address); another writer may give
 * distinct named locations one address (0, when it had none). Those get an
 * address of their own above any real one, so their names stay apart.
 */
static __u32 add_location(struct reader *r, struct pprof *p, size_t i)
{
	struct rd_location *l = &r->locs[i];
	__u64 address = l->address;
	size_t mi = 0, n_lines;
	bool named = true;

	if (l->ours)
		return l->ours;
	if (l->mapping_id) {
		mi = find_id(r->map_ix, r->n_maps, l->mapping_id);
		if (!mi) {
			bad(r, "location %llu has no mapping %llu", (unsigned long long)l->id,
			    (unsigned long long)l->mapping_id);
			errno = EBADMSG;
			return 0;
		}
	}
	if (location_lines(r, l, &n_lines)) {
		bad(r, "bad location %llu", (unsigned long long)l->id);
		errno = EBADMSG;
		return 0;
	}
	for (size_t k = 0; k < n_lines; k++)
		named &= r->lines[k].function[0] != '\0';
	if (named && n_lines && pprof__find_location(p, mi ? r->maps[mi - 1].ours : 0, address))
		address = (1ULL << 63) | i;
	l->ours = pprof__add_location(p, mi ? r->maps[mi - 1].ours : 0, address, r->lines, n_lines);
	return l->ours;
}

static int read_label(struct reader *r, struct pb_span s, struct pprof_label *out)
{
	__u64 key = 0, sv = 0, num = 0, unit = 0, v;
	struct pb_span sub;
	__u32 n;
	int wire;

	while (s.p < s.end) {
		if (pbread__field(&s, &n, &wire, &v, &sub))
			return -EBADMSG;
		if (wire != 0)
			continue;
		switch (n) {
		case 1: key = v; break;
		case 2: sv = v; break;
		case 3: num = v; break;
		case 4: unit = v; break;
		}
	}
	out->key = str(r, key);
	out->str = sv ? str(r, sv) : NULL;
	out->num = (__s64)num;
	out->num_unit = unit ? str(r, unit) : NULL;
	if (!out->key || (sv && !out->str) || (unit && !out->num_unit))
		return bad(r, "label string index out of range");
	return 0;
}

static int add_sample(struct reader *r, struct pprof *p, struct pb_span s)
{
	size_t n_ids = 0, n_vals = 0, n_labels = 0;
	__u64 *ids = NULL, *vals = NULL;
	size_t ids_cap = 0, vals_cap = 0;
	struct pb_span sub;
	__u32 num;
	int wire, err = 0;
	__u64 v;

	while (s.p < s.end && !err) {
		if (pbread__field(&s, &num, &wire, &v, &sub)) {
			err = bad(r, "bad sample");
			break;
		}
		if (num == 1)
			err = repeated(sub, wire, v, &ids, &n_ids, &ids_cap);
		else if (num == 2)
			err = repeated(sub, wire, v, &vals, &n_vals, &vals_cap);
		else if (num == 3 && wire == 2) {
			err = ARRAY_RESERVE(r->labels, r->labels_cap, n_labels + 1);
			if (!err)
				err = read_label(r, sub, &r->labels[n_labels++]);
		}
	}
	if (!err && n_vals != (size_t)r->n_types)
		err = bad(r, "a sample has %zu values for %d sample types", n_vals, r->n_types);
	if (!err && n_ids > INT32_MAX)
		err = bad(r, "a sample is too deep");
	if (!err && (ARRAY_RESERVE(r->ids, r->ids_cap, n_ids + 1) ||
		     ARRAY_RESERVE(r->vals, r->vals_cap, n_vals + 1)))
		err = -ENOMEM;
	for (size_t i = 0; i < n_ids && !err; i++) {
		size_t li = find_id(r->loc_ix, r->n_locs, ids[i]);

		if (!li)
			err = bad(r, "a sample names no location %llu", (unsigned long long)ids[i]);
		else if (!(r->ids[i] = add_location(r, p, li - 1)))
			err = errno == EBADMSG ? -EBADMSG : -errno;
	}
	for (size_t i = 0; i < n_vals && !err; i++)
		r->vals[i] = (__s64)vals[i];
	if (!err)
		err = pprof__add_sample(p, r->ids, n_ids, r->vals, r->labels, n_labels);
	free(ids);
	free(vals);
	return err;
}

static struct pprof *build(struct reader *r)
{
	struct pprof_opts po = { .n_sample_types = r->n_types, .period = r->period,
				 .time_nanos = r->time_nanos, .duration_nanos = r->duration_nanos };
	struct pprof *p = NULL;
	int err;

	if (!r->n_types) {
		bad(r, "no sample types");
		errno = EBADMSG;
		return NULL;
	}
	err = strings(r);
	if (!err)
		err = index_tables(r);
	for (int i = 0; i < r->n_types && !err; i++) {
		po.sample_types[i].type = str(r, r->types[i][0]);
		po.sample_types[i].unit = str(r, r->types[i][1]);
		if (!po.sample_types[i].type || !po.sample_types[i].unit)
			err = bad(r, "sample type string index out of range");
	}
	if (!err) {
		po.period_type.type = str(r, r->period_type[0]);
		po.period_type.unit = str(r, r->period_type[1]);
		po.default_sample_type = r->default_type ? str(r, r->default_type) : NULL;
		if (!po.period_type.type || !po.period_type.unit ||
		    (r->default_type && !po.default_sample_type))
			err = bad(r, "string index out of range");
	}
	if (!err) {
		p = pprof__new(&po);
		err = p ? 0 : -errno;
	}
	if (!err)
		err = add_mappings(r, p);
	for (size_t i = 0; i < r->n_samples && !err; i++)
		err = add_sample(r, p, r->samples[i]);
	if (err) {
		pprof__free(p);
		errno = -err;
		return NULL;
	}
	return p;
}

static void reader_free(struct reader *r)
{
	free(r->strs);
	free(r->text);
	free(r->str_off);
	free(r->maps);
	free(r->funcs);
	free(r->locs);
	free(r->samples);
	free(r->map_ix);
	free(r->func_ix);
	free(r->loc_ix);
	free(r->ids);
	free(r->vals);
	free(r->labels);
	free(r->lines);
}

/* Inflates gzip or zlib data (several gzip members in a row too) into at most max bytes. */
static int inflate_all(const unsigned char *in, size_t len, size_t max, unsigned char **out,
		       size_t *out_len)
{
	z_stream zs = { .next_in = (unsigned char *)in, .avail_in = len > UINT32_MAX ? UINT32_MAX : len };
	unsigned char *buf = NULL;
	size_t cap = 0, n = 0;
	int zr = Z_OK, err = 0;

	if (len > UINT32_MAX || inflateInit2(&zs, 15 + 32) != Z_OK)
		return -ENOMEM;
	while (!err) {
		if (n == cap) {
			if (cap >= max) {
				err = -EFBIG;
				break;
			}
			cap = cap ? (cap * 2 > max ? max : cap * 2) : (len * 4 < max ? len * 4 + 4096 : max);
			unsigned char *tmp = realloc(buf, cap);

			if (!tmp) {
				err = -ENOMEM;
				break;
			}
			buf = tmp;
		}
		zs.next_out = buf + n;
		zs.avail_out = cap - n > UINT32_MAX ? UINT32_MAX : cap - n;
		zr = inflate(&zs, Z_NO_FLUSH);
		n = zs.next_out - buf;
		if (zr == Z_STREAM_END) {
			if (zs.avail_in < 2 || zs.next_in[0] != 0x1f || zs.next_in[1] != 0x8b)
				break;
			inflateReset(&zs);	/* concatenated gzip members */
		} else if (zr != Z_OK && !(zr == Z_BUF_ERROR && !zs.avail_out)) {
			err = -EBADMSG;
		}
	}
	inflateEnd(&zs);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*out_len = n;
	return 0;
}

struct pprof *pprof__read(const void *data, size_t len, size_t max_bytes, char *why, size_t why_len)
{
	const unsigned char *in = data;
	struct reader r = { .why = why, .why_len = why_len };
	unsigned char *raw = NULL;
	size_t raw_len = len;
	struct pprof *p = NULL;
	int err = 0;

	if (why && why_len)
		why[0] = '\0';
	/* gzip as pprof writes it, zlib, or the bare message */
	if (len >= 2 && ((in[0] == 0x1f && in[1] == 0x8b) || (in[0] == 0x78 && (in[0] << 8 | in[1]) % 31 == 0))) {
		err = inflate_all(in, len, max_bytes, &raw, &raw_len);
		if (err == -EFBIG)
			bad(&r, "larger than %zu bytes uncompressed", max_bytes);
		else if (err == -EBADMSG)
			bad(&r, "corrupt gzip data");
		in = raw;
	} else if (len > max_bytes) {
		err = bad(&r, "larger than %zu bytes", max_bytes);
	}
	if (!err)
		err = read_profile(&r, (struct pb_span){ in, in + raw_len });
	if (!err)
		p = build(&r);
	else
		errno = -err;
	if (!p && why && why_len && !why[0])
		snprintf(why, why_len, "%s", strerror(errno));
	err = errno;
	reader_free(&r);
	free(raw);
	errno = err;
	return p;
}
