/* pprof.c -- the pprof profile model: deduplicated strings, functions, locations and samples */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hashmap.h"
#include "pprof.h"
#include "pprof_int.h"
#include "lib/utf8.h"
#include "lib/array.h"

/* ids are __u32 and 0 means "none", so no table may reach this size */
#define PPROF_MAX_ENTRIES (UINT32_MAX - 1)

/* array__reserve, bounded so that ids always fit the 32 bits we store them in */
static int reserve(void **arr, size_t *cap, size_t need, size_t size)
{
	if (need > PPROF_MAX_ENTRIES)
		return -E2BIG;
	return array__reserve(arr, cap, need, size);
}

#define RESERVE(arr, cap, need) reserve((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* strings */

struct str_key {
	const char *s;
	size_t len;
};

static size_t str_len(const struct pprof *p, __u32 idx)
{
	size_t end = idx + 1 < p->n_strings ? p->str_off[idx + 1] : p->text_len;

	return end - p->str_off[idx] - 1;
}

static int str_eq(__u32 id, const void *key, const void *ctx)
{
	const struct str_key *k = key;
	const struct pprof *p = ctx;

	return str_len(p, id - 1) == k->len && !memcmp(pprof_str(p, id - 1), k->s, k->len);
}

bool pprof__find_string(const struct pprof *p, const char *s, __u32 *idx)
{
	struct str_key k = { s, strlen(s) };
	__u32 id = hmap__find(p->string_index, hash_bytes(k.s, k.len, 0), str_eq, &k, p);

	if (!id)
		return false;
	*idx = id - 1;
	return true;
}

static int intern_valid(struct pprof *p, const char *s, __u32 *idx);

/*
 * Stores the string table index of s (NULL: "") in *idx, adding s when new.
 * profile.proto's strings are UTF-8 and backends refuse a profile that has
 * one that is not (a process name cut inside a character): such bytes
 * become U+FFFD, so the string is kept, recognisably.
 */
static int intern(struct pprof *p, const char *s, __u32 *idx)
{
	char *clean;
	int err;

	if (!s || utf8__valid(s, strlen(s)))
		return intern_valid(p, s, idx);
	clean = utf8__dup(s);
	if (!clean)
		return -ENOMEM;
	err = intern_valid(p, clean, idx);
	free(clean);
	return err;
}

static int intern_valid(struct pprof *p, const char *s, __u32 *idx)
{
	struct str_key k = { s ? s : "", s ? strlen(s) : 0 };
	__u64 hash = hash_bytes(k.s, k.len, 0);
	__u32 id = hmap__find(p->string_index, hash, str_eq, &k, p);
	int err;

	if (id) {
		*idx = id - 1;
		return 0;
	}
	/* offsets are __u32 to keep the table at 4 bytes a string */
	if (k.len >= UINT32_MAX - p->text_len)
		return -E2BIG;
	err = RESERVE(p->str_off, p->strings_cap, p->n_strings + 1);
	if (!err)
		err = RESERVE(p->text, p->text_cap, p->text_len + k.len + 1);
	if (!err)
		err = hmap__insert(p->string_index, hash, p->n_strings + 1);
	if (err)
		return err;
	memcpy(p->text + p->text_len, k.s, k.len);
	p->text[p->text_len + k.len] = '\0';
	p->str_off[p->n_strings] = p->text_len;
	p->text_len += k.len + 1;
	*idx = p->n_strings++;
	return 0;
}

/* profile */

struct pprof *pprof__new(const struct pprof_opts *opts)
{
	struct pprof *p;
	__u32 empty;
	int err = 0;

	if (!opts || opts->n_sample_types < 1 || opts->n_sample_types > PPROF_MAX_SAMPLE_TYPES) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	p->string_index = hmap__new();
	p->function_index = hmap__new();
	p->location_index = hmap__new();
	p->labelset_index = hmap__new();
	p->sample_index = hmap__new();
	if (!p->string_index || !p->function_index || !p->location_index ||
	    !p->labelset_index || !p->sample_index) {
		err = -ENOMEM;
		goto out_free;
	}

	/* profile.proto requires string_table[0] == "" */
	err = intern(p, "", &empty);
	p->n_types = opts->n_sample_types;
	for (int i = 0; i < p->n_types && !err; i++) {
		err = intern(p, opts->sample_types[i].type, &p->sample_types[i][0]);
		if (!err)
			err = intern(p, opts->sample_types[i].unit, &p->sample_types[i][1]);
	}
	if (!err)
		err = intern(p, opts->period_type.type, &p->period_type[0]);
	if (!err)
		err = intern(p, opts->period_type.unit, &p->period_type[1]);
	if (!err && opts->default_sample_type)
		err = intern(p, opts->default_sample_type, &p->default_sample_type);
	if (err)
		goto out_free;
	p->period = opts->period;
	p->time_nanos = opts->time_nanos;
	p->duration_nanos = opts->duration_nanos;
	return p;

out_free:
	pprof__free(p);
	errno = -err;
	return NULL;
}

void pprof__free(struct pprof *p)
{
	if (!p)
		return;
	hmap__free(p->string_index);
	hmap__free(p->function_index);
	hmap__free(p->location_index);
	hmap__free(p->labelset_index);
	hmap__free(p->sample_index);
	free(p->text);
	free(p->str_off);
	free(p->mappings);
	free(p->functions);
	free(p->locations);
	free(p->lines);
	free(p->labelsets);
	free(p->labels);
	free(p->samples);
	free(p->sample_locs);
	free(p->values);
	free(p);
}

/* mappings */

__u32 pprof__add_mapping(struct pprof *p, const struct pprof_mapping_desc *m)
{
	struct pp_mapping *pm;
	__u32 filename, build_id;
	int err;

	if (!m) {
		errno = EINVAL;
		return 0;
	}
	err = intern(p, m->filename, &filename);
	if (!err)
		err = intern(p, m->build_id, &build_id);
	if (!err)
		err = RESERVE(p->mappings, p->mappings_cap, p->n_mappings + 1);
	if (err) {
		errno = -err;
		return 0;
	}
	pm = &p->mappings[p->n_mappings];
	*pm = (struct pp_mapping){
		.start = m->start,
		.limit = m->limit,
		.file_offset = m->file_offset,
		.filename = filename,
		.build_id = build_id,
		.has_functions = m->has_functions,
		.has_filenames = m->has_filenames,
		.has_line_numbers = m->has_line_numbers,
		.has_inline_frames = m->has_inline_frames,
		.is_kernel = m->is_kernel,
	};
	return ++p->n_mappings;
}

/* functions */

static int function_eq(__u32 id, const void *key, const void *ctx)
{
	const struct pp_function *k = key;
	const struct pprof *p = ctx;

	return p->functions[id - 1].name == k->name && p->functions[id - 1].filename == k->filename;
}

static int function_id(struct pprof *p, const struct pprof_line *line, __u32 *id)
{
	struct pp_function f;
	__u64 hash;
	int err;

	err = intern(p, line->function, &f.name);
	if (!err)
		err = intern(p, line->filename, &f.filename);
	if (err)
		return err;
	hash = hash_u64((__u64)f.name << 32 | f.filename, 0);
	*id = hmap__find(p->function_index, hash, function_eq, &f, p);
	if (*id)
		return 0;
	err = RESERVE(p->functions, p->functions_cap, p->n_functions + 1);
	if (!err)
		err = hmap__insert(p->function_index, hash, p->n_functions + 1);
	if (err)
		return err;
	p->functions[p->n_functions] = f;
	*id = ++p->n_functions;
	return 0;
}

/* locations */

struct location_key {
	__u64 address;
	__u32 mapping_id;
};

static __u64 location_hash(__u32 mapping_id, __u64 address)
{
	return hash_u64(address, mapping_id);
}

static int location_eq(__u32 id, const void *key, const void *ctx)
{
	const struct location_key *k = key;
	const struct pp_location *loc = pprof_location(ctx, id);

	return loc->address == k->address && loc->mapping_id == k->mapping_id;
}

__u32 pprof__find_location(const struct pprof *p, __u32 mapping_id, __u64 address)
{
	struct location_key k = { address, mapping_id };

	return hmap__find(p->location_index, location_hash(mapping_id, address), location_eq,
			  &k, p);
}

__u32 pprof__add_location(struct pprof *p, __u32 mapping_id, __u64 address,
			  const struct pprof_line *lines, int n_lines)
{
	__u64 hash = location_hash(mapping_id, address);
	struct location_key k = { address, mapping_id };
	struct pp_line *staged;
	__u32 id;
	int err;

	if (mapping_id > p->n_mappings || n_lines < 0 || (n_lines && !lines)) {
		errno = EINVAL;
		return 0;
	}
	id = hmap__find(p->location_index, hash, location_eq, &k, p);
	if (id)
		return id;
	if (p->n_lines + n_lines > PPROF_MAX_ENTRIES) {
		errno = E2BIG;
		return 0;
	}

	/*
	 * lines are written past the end and only counted once the location is in;
	 * + 1: a location without lines must still point into an allocation
	 */
	err = RESERVE(p->lines, p->lines_cap, p->n_lines + n_lines + 1);
	if (!err)
		err = RESERVE(p->locations, p->locations_cap, p->n_locations + 1);
	staged = n_lines && !err ? p->lines + p->n_lines : NULL;
	for (int i = 0; i < n_lines && !err; i++) {
		__s64 line = lines[i].line;

		staged[i].line = line >= 0 && line <= INT32_MAX ? line : 0;
		err = function_id(p, &lines[i], &staged[i].function_id);
	}
	if (!err)
		err = hmap__insert(p->location_index, hash, p->n_locations + 1);
	if (err) {
		errno = -err;
		return 0;
	}
	p->locations[p->n_locations] = (struct pp_location){
		.address = address,
		.mapping_id = mapping_id,
		.line_start = p->n_lines,
	};
	p->n_lines += n_lines;
	return ++p->n_locations;
}

/* label sets */

struct labelset_key {
	const struct pp_label *labels;
	size_t n;
};

static int labelset_eq(__u32 id, const void *key, const void *ctx)
{
	const struct labelset_key *k = key;
	const struct pp_label *labels;
	size_t n;

	labels = pprof_labelset(ctx, id, &n);
	if (n != k->n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (labels[i].key != k->labels[i].key || labels[i].str != k->labels[i].str ||
		    labels[i].num != k->labels[i].num ||
		    labels[i].num_unit != k->labels[i].num_unit)
			return 0;
	return 1;
}

/* Stores the id of the label set equal to labels in *id, adding it when new. */
static int labelset_id(struct pprof *p, const struct pprof_label *labels, int n, __u32 *id)
{
	struct labelset_key k;
	struct pp_label *staged;
	__u64 hash = 0;
	int err;

	if (p->n_labels + n > PPROF_MAX_ENTRIES)
		return -E2BIG;
	/* + 1: staged below must point into an allocation even for an empty set */
	err = RESERVE(p->labels, p->labels_cap, p->n_labels + n + 1);
	if (err)
		return err;
	/* stage the interned labels past the end; they are kept only for a new set */
	staged = p->labels + p->n_labels;
	for (int i = 0; i < n; i++) {
		struct pp_label *l = &staged[i];

		if (!labels[i].key)
			return -EINVAL;
		l->num = labels[i].str ? 0 : labels[i].num;
		err = intern(p, labels[i].key, &l->key);
		if (!err)
			err = intern(p, labels[i].str, &l->str);
		if (!err)
			err = intern(p, labels[i].str ? NULL : labels[i].num_unit, &l->num_unit);
		if (err)
			return err;
		hash = hash_u64((__u64)l->key << 32 | l->str, hash);
		hash = hash_u64(l->num, hash);
		hash = hash_u64(l->num_unit, hash);
	}
	k.labels = staged;
	k.n = n;
	*id = hmap__find(p->labelset_index, hash, labelset_eq, &k, p);
	if (*id)
		return 0;
	err = RESERVE(p->labelsets, p->labelsets_cap, p->n_labelsets + 1);
	if (!err)
		err = hmap__insert(p->labelset_index, hash, p->n_labelsets + 1);
	if (err)
		return err;
	p->labelsets[p->n_labelsets] = p->n_labels;
	p->n_labels += n;
	*id = ++p->n_labelsets;
	return 0;
}

/* samples */

struct sample_key {
	const __u32 *locs;
	size_t n;
	__u32 labelset;
};

static int sample_eq(__u32 id, const void *key, const void *ctx)
{
	const struct sample_key *k = key;
	const struct pprof *p = ctx;
	const __u32 *locs;
	size_t n;

	if (p->samples[id - 1].labelset != k->labelset)
		return 0;
	locs = pprof_sample_locs(p, id - 1, &n);
	return n == k->n && !memcmp(locs, k->locs, n * sizeof(*locs));
}

int pprof__add_sample(struct pprof *p, const __u32 *location_ids, int n_locations,
		      const __s64 *values, const struct pprof_label *labels, int n_labels)
{
	struct sample_key k = { location_ids, n_locations };
	size_t i;
	__u64 hash;
	__u32 id;
	int err;

	if (n_locations < 0 || (n_locations && !location_ids) || !values || n_labels < 0 ||
	    (n_labels && !labels))
		return -EINVAL;
	for (int j = 0; j < n_locations; j++)
		if (!location_ids[j] || location_ids[j] > p->n_locations)
			return -EINVAL;
	err = labelset_id(p, labels, n_labels, &k.labelset);
	if (err)
		return err;

	hash = hash_bytes(location_ids, n_locations * sizeof(*location_ids), k.labelset);
	id = hmap__find(p->sample_index, hash, sample_eq, &k, p);
	if (id) {
		__s64 *sum = &p->values[(id - 1) * p->n_types];

		for (int t = 0; t < p->n_types; t++)
			sum[t] += values[t];
		return 0;
	}

	if (p->n_sample_locs + n_locations > PPROF_MAX_ENTRIES)
		return -E2BIG;
	i = p->n_samples;
	err = RESERVE(p->samples, p->samples_cap, i + 1);
	if (!err)
		/* + 1: as for lines, a sample without locations points into an allocation */
		err = RESERVE(p->sample_locs, p->sample_locs_cap, p->n_sample_locs + n_locations + 1);
	if (!err)
		err = RESERVE(p->values, p->values_cap, (i + 1) * p->n_types);
	if (!err)
		err = hmap__insert(p->sample_index, hash, i + 1);
	if (err)
		return err;
	p->samples[i].loc_start = p->n_sample_locs;
	p->samples[i].labelset = k.labelset;
	if (n_locations)
		memcpy(p->sample_locs + p->n_sample_locs, location_ids,
		       n_locations * sizeof(*location_ids));
	p->n_sample_locs += n_locations;
	memcpy(&p->values[i * p->n_types], values, p->n_types * sizeof(*values));
	p->n_samples++;
	return 0;
}

size_t pprof__sample_count(const struct pprof *p)
{
	return p->n_samples;
}

void pprof__set_time(struct pprof *p, __s64 time_nanos, __s64 duration_nanos)
{
	p->time_nanos = time_nanos;
	p->duration_nanos = duration_nanos;
}

/* shared by the text writers */

void pprof__unnamed_frame(const struct pprof *p, __u32 id, char *buf, size_t size)
{
	const struct pp_location *loc = pprof_location(p, id);
	const struct pp_mapping *m;
	const char *path, *base;

	if (!loc->mapping_id) {
		snprintf(buf, size, "[unknown]");
		return;
	}
	m = &p->mappings[loc->mapping_id - 1];
	path = pprof_str(p, m->filename);
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (!*base)
		snprintf(buf, size, "[unknown]");
	else
		snprintf(buf, size, "[%s+0x%" PRIx64 "]", base,
			 (uint64_t)(loc->address - m->start + m->file_offset));
}

int pprof__find_type(const struct pprof *p, const char *type)
{
	for (int i = 0; i < p->n_types; i++)
		if (!strcmp(pprof_str(p, p->sample_types[i][0]), type))
			return i;
	return -1;
}

const char *pprof__type_name(const struct pprof *p, int i)
{
	return i >= 0 && i < p->n_types ? pprof_str(p, p->sample_types[i][0]) : "";
}

const char *pprof__default_type(const struct pprof *p)
{
	return p->default_sample_type ? pprof_str(p, p->default_sample_type) : NULL;
}
