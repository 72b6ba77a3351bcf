/* pprof.h -- an in-memory pprof profile (profile.proto) with deduplicated tables, and its writers */
#ifndef EBPFPROF_PPROF_H
#define EBPFPROF_PPROF_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

/*
 * Ownership: pprof__new() returns a profile the caller frees with
 * pprof__free(). Every string passed in is copied into the profile's string
 * table, so callers may free theirs right after the call.
 */
struct pprof;

struct pprof_value_type {
	const char *type;	/* "samples", "cpu" */
	const char *unit;	/* "count", "nanoseconds" */
};

#define PPROF_MAX_SAMPLE_TYPES 4

struct pprof_opts {
	struct pprof_value_type sample_types[PPROF_MAX_SAMPLE_TYPES];
	int n_sample_types;
	struct pprof_value_type period_type;
	__s64 period;
	__s64 time_nanos;	/* start of the profile, ns since the epoch */
	__s64 duration_nanos;
	const char *default_sample_type;	/* NULL: unset */
};

struct pprof_mapping_desc {
	__u64 start;		/* memory_start */
	__u64 limit;		/* memory_limit */
	__u64 file_offset;
	const char *filename;	/* "/usr/lib/x86_64-linux-gnu/libc.so.6", "[kernel.kallsyms]" */
	const char *build_id;	/* hex string, NULL or "" when unknown */
	bool has_functions;
	bool has_filenames;
	bool has_line_numbers;
	bool has_inline_frames;
	bool is_kernel;		/* not in profile.proto: folded output suffixes these frames _[k] */
};

/* One Line of a Location; several lines mean inlined calls, callee first. */
struct pprof_line {
	const char *function;	/* function name (also used as system_name) */
	const char *filename;	/* NULL or "" when unknown */
	__s64 line;		/* 0 when unknown */
};

/* A sample label: string when str != NULL, else numeric (num, optional num_unit). */
struct pprof_label {
	const char *key;
	const char *str;
	__s64 num;
	const char *num_unit;
};

struct pprof *pprof__new(const struct pprof_opts *opts);
void pprof__free(struct pprof *p);

/* Adds a Mapping; no deduplication (callers key their own). Returns its id (>= 1), 0 on error. */
__u32 pprof__add_mapping(struct pprof *p, const struct pprof_mapping_desc *m);

/* Returns the id of the Location at (mapping_id, address), 0 when there is none yet. */
__u32 pprof__find_location(const struct pprof *p, __u32 mapping_id, __u64 address);

/*
 * Returns the Location at (mapping_id, address), adding it with these lines when it
 * does not exist yet (mapping_id 0: no mapping). n_lines 0 is a location pprof
 * must symbolize later. Functions are deduplicated by (name, filename).
 * Returns its id (>= 1), 0 on error.
 */
__u32 pprof__add_location(struct pprof *p, __u32 mapping_id, __u64 address,
			  const struct pprof_line *lines, int n_lines);

/*
 * Adds values (n_sample_types of them) to the sample with these locations
 * (leaf first) and labels, creating it when it does not exist. Labels are
 * compared as given (same keys in the same order make the same sample).
 * Returns 0 or a negative errno.
 */
int pprof__add_sample(struct pprof *p, const __u32 *location_ids, int n_locations,
		      const __s64 *values, const struct pprof_label *labels, int n_labels);

/* Number of distinct samples so far. */
size_t pprof__sample_count(const struct pprof *p);

/* Sets time_nanos and duration_nanos, for profiles whose end is known only when they close. */
void pprof__set_time(struct pprof *p, __s64 time_nanos, __s64 duration_nanos);

/* Writes the profile as gzip-compressed profile.proto. Returns 0 or a negative errno. */
int pprof__write(const struct pprof *p, FILE *out);

/* pprof__write, also telling the size of the profile.proto before compression. */
int pprof__write_sized(const struct pprof *p, FILE *out, size_t *raw_len);

/* What a backend accepts of one profile; 0 in a field: no limit. */
struct pprof_limits {
	const char *const *drop_labels;	/* sample label keys left out (NULL-terminated), or NULL */
	size_t max_samples;		/* past it the coldest samples fold into one "[other]" */
	size_t max_label_value;		/* bytes; longer values are cut at a UTF-8 boundary */
	int max_label_names;		/* sample label keys kept per sample, first ones first */
};

/* What pprof__reduce changed, to count and say. */
struct pprof_reduce_stats {
	size_t folded_samples;		/* samples merged into "[other]" */
	size_t cut_values;		/* label values cut to max_label_value */
	size_t dropped_labels;		/* labels left out past max_label_names */
};

/*
 * A copy of src within lim: the dropped label keys left out (samples that
 * differed only by them merge), values cut, and past max_samples the
 * samples with the smallest first value folded into one sample whose only
 * frame is "[other]" (no labels): totals are kept. NULL with errno set.
 */
struct pprof *pprof__reduce(const struct pprof *src, const struct pprof_limits *lim,
			    struct pprof_reduce_stats *st);

/*
 * A copy of src with only the samples that carry the string label
 * KEY=VALUE (--label, the page's ?label=); *kept says how many did. NULL
 * with errno set.
 */
struct pprof *pprof__focus_label(const struct pprof *src, const char *key, const char *value,
				 size_t *kept);

/*
 * Folded stacks for flamegraph.pl: "comm;root;...;leaf count" per line, one
 * line per distinct stack, value index value_index (0: the first sample type).
 * comm is the sample's "comm" label; kernel frames end in "_[k]"; inline lines
 * of one location become separate frames; unnamed frames print as
 * "[unknown]" or "[MAPPING_BASENAME+0xOFFSET]" when a mapping is known.
 */
int pprof__write_folded(const struct pprof *p, FILE *out, int value_index);

/*
 * The top n functions by self (flat) value, with flat%, sum%, cum and cum%,
 * like `go tool pprof -top`, for value index value_index.
 */
int pprof__write_top(const struct pprof *p, FILE *out, int value_index, int n);

/*
 * Reads a pprof file's bytes (gzip, zlib or bare profile.proto, from any
 * writer) into a profile. Untrusted input: every length and index is
 * checked, the uncompressed size is capped at max_bytes. NULL with errno
 * set (EBADMSG: not a valid profile) and a one-line reason in why.
 */
struct pprof *pprof__read(const void *data, size_t len, size_t max_bytes, char *why, size_t why_len);

/* The index of the sample type named type ("cpu", "samples"...), -1 when there is none. */
int pprof__find_type(const struct pprof *p, const char *type);

/* The name of sample type i ("" out of range), and of the default sample type (NULL: unset). */
const char *pprof__type_name(const struct pprof *p, int i);
const char *pprof__default_type(const struct pprof *p);

/* How the top writer lays out its rows. */
struct pprof_top_opts {
	int width;	/* columns to fill; 0: the classic `go tool pprof -top` layout, no bar */
	bool unicode;	/* the bar in block characters (a terminal), else '#' */
	bool fit_names;	/* cut names to the width (a terminal); else whole, for grep */
};

/*
 * Top n functions by self value with self%, total and total% and a bar of
 * the self share; names are cut to fit width when opts->width > 0.
 */
int pprof__write_top_opts(const struct pprof *p, FILE *out, int value_index, int n,
			  const struct pprof_top_opts *opts);

/*
 * The functions whose share of the total changed most from before (type
 * tb) to after (type ta): self and total shares of each and the change in
 * percentage points, largest change first.
 */
int pprof__write_top_diff(const struct pprof *before, int tb, const struct pprof *after, int ta,
			  FILE *out, int n);

struct pprof_html_opts {
	const char *title;		/* shown on the page; NULL: "ebpfprof" */
	const struct pprof *base;	/* a differential graph against this profile; NULL: none */
	const struct pprof *const *more;	/* not a diff: merged in too (same sample types) */
	int n_more;
	int value_index;		/* the type shown first; -1: the profile's default */
	const char *refresh_url;	/* the agent's page: a reload link; NULL: none */
	const char *const *series;	/* the agent's page: series to pick (NULL-terminated) */
	const char *series_current;
};

/*
 * A self-contained interactive flame graph (one HTML file, inline script,
 * no network) of p: frames merged into a call tree, a string and frame
 * table, every sample type of p to switch between. 0 or a negative errno.
 */
int pprof__write_html(const struct pprof *p, FILE *out, const struct pprof_html_opts *opts);

struct pbuf;

/* A resource attribute of an OTLP export: service.name, host.name, k8s.pod.name... */
struct otlp_attr {
	const char *key;
	const char *value;
};

/*
 * Appends the profile to out as an OpenTelemetry ExportProfilesServiceRequest
 * (opentelemetry-proto 1.11, profiles/v1development): one resource with these
 * attributes, one Profile per sample type, sample labels as attributes under
 * their semantic-convention names (pid: process.pid...). 0 or a negative errno.
 */
int pprof__write_otlp(const struct pprof *p, const struct otlp_attr *resource, int n_resource,
		      struct pbuf *out);

#endif /* EBPFPROF_PPROF_H */
