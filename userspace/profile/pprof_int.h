/* pprof_int.h -- the pprof model's tables, shared by the builder (pprof.c) and its writers */
#ifndef EBPFPROF_PPROF_INT_H
#define EBPFPROF_PPROF_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "pprof.h"

struct hmap;

/*
 * Layout: every table is a flat array indexed by id - 1 (string index for
 * strings). Variable-length parts (a location's lines, a sample's location
 * ids, a label set's labels) live in one shared array per kind, appended in
 * the same order as their owners, so an owner keeps only where its run starts
 * and the run ends where the next owner's starts.
 */

struct pp_mapping {
	__u64 start;
	__u64 limit;
	__u64 file_offset;
	__u32 filename;		/* string index */
	__u32 build_id;		/* string index */
	bool has_functions;
	bool has_filenames;
	bool has_line_numbers;
	bool has_inline_frames;
	bool is_kernel;
};

struct pp_function {
	__u32 name;		/* string index; also the system_name */
	__u32 filename;		/* string index */
};

struct pp_location {		/* 16 bytes */
	__u64 address;
	__u32 mapping_id;	/* 0: none */
	__u32 line_start;	/* index of its first line in pprof.lines */
};

struct pp_line {		/* 8 bytes */
	__u32 function_id;
	__s32 line;		/* source lines beyond 32 bits are stored as 0 (unknown) */
};

struct pp_sample {		/* 8 bytes, plus its values and location ids */
	__u32 loc_start;	/* index of its first location id in pprof.sample_locs */
	__u32 labelset;		/* id in pprof.labelsets */
};

struct pp_label {
	__s64 num;
	__u32 key;		/* string index */
	__u32 str;		/* string index; 0: numeric label */
	__u32 num_unit;		/* string index */
};

struct pprof {
	/* strings: NUL-terminated texts back to back; index 0 is "" */
	char *text;
	size_t text_len, text_cap;
	__u32 *str_off;
	size_t n_strings, strings_cap;
	struct hmap *string_index;

	struct pp_mapping *mappings;
	size_t n_mappings, mappings_cap;

	struct pp_function *functions;
	size_t n_functions, functions_cap;
	struct hmap *function_index;

	struct pp_location *locations;
	size_t n_locations, locations_cap;
	struct hmap *location_index;
	struct pp_line *lines;
	size_t n_lines, lines_cap;

	/* label sets: samples of one process share one (pid, comm) list */
	__u32 *labelsets;	/* index of the first label in pprof.labels */
	size_t n_labelsets, labelsets_cap;
	struct hmap *labelset_index;
	struct pp_label *labels;
	size_t n_labels, labels_cap;

	struct pp_sample *samples;
	size_t n_samples, samples_cap;
	struct hmap *sample_index;
	__u32 *sample_locs;
	size_t n_sample_locs, sample_locs_cap;
	__s64 *values;		/* n_types per sample */
	size_t values_cap;

	__u32 sample_types[PPROF_MAX_SAMPLE_TYPES][2];	/* (type, unit) string indexes */
	int n_types;
	__u32 period_type[2];
	__s64 period;
	__s64 time_nanos;
	__s64 duration_nanos;
	__u32 default_sample_type;
};

static inline const char *pprof_str(const struct pprof *p, __u32 idx)
{
	return p->text + p->str_off[idx];
}

static inline const struct pp_location *pprof_location(const struct pprof *p, __u32 id)
{
	return &p->locations[id - 1];
}

/* The lines of location id, callee first. */
static inline const struct pp_line *pprof_location_lines(const struct pprof *p, __u32 id,
							 size_t *n)
{
	size_t end = id < p->n_locations ? p->locations[id].line_start : p->n_lines;

	*n = end - p->locations[id - 1].line_start;
	return &p->lines[p->locations[id - 1].line_start];
}

/* The location ids of sample i (0-based), leaf first. */
static inline const __u32 *pprof_sample_locs(const struct pprof *p, size_t i, size_t *n)
{
	size_t end = i + 1 < p->n_samples ? p->samples[i + 1].loc_start : p->n_sample_locs;

	*n = end - p->samples[i].loc_start;
	return &p->sample_locs[p->samples[i].loc_start];
}

static inline const __s64 *pprof_sample_values(const struct pprof *p, size_t i)
{
	return &p->values[i * p->n_types];
}

static inline const struct pp_label *pprof_labelset(const struct pprof *p, __u32 id, size_t *n)
{
	size_t end = id < p->n_labelsets ? p->labelsets[id] : p->n_labels;

	*n = end - p->labelsets[id - 1];
	return &p->labels[p->labelsets[id - 1]];
}

static inline bool pprof_location_is_kernel(const struct pprof *p, const struct pp_location *loc)
{
	return loc->mapping_id && p->mappings[loc->mapping_id - 1].is_kernel;
}

/* Looks s up without adding it; false when the profile has no such string. */
bool pprof__find_string(const struct pprof *p, const char *s, __u32 *idx);

/*
 * Names a frame without a function name for the text writers:
 * "[BASENAME+0xOFFSET]" when location id has a mapping with a file name,
 * else "[unknown]". Truncates to size.
 */
void pprof__unnamed_frame(const struct pprof *p, __u32 id, char *buf, size_t size);

#endif /* EBPFPROF_PPROF_INT_H */
