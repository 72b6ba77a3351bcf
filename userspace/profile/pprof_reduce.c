/* pprof_reduce.c -- a copy of a profile within a backend's limits: labels left out or cut, coldest samples folded */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pprof.h"
#include "pprof_int.h"

/*
 * "[other]" lives in no mapping at an address no real frame can have (below
 * mmap_min_addr) and apart from stack.c's lost-stack pseudo frames (1..5).
 */
#define OTHER_ADDRESS 0x100
#define MAX_LABELS 64		/* per sample; ours carry at most 10 */

/* src's header without its samples */
static struct pprof *empty_copy(const struct pprof *src)
{
	struct pprof_opts o = {
		.n_sample_types = src->n_types,
		.period_type = { pprof_str(src, src->period_type[0]),
				 pprof_str(src, src->period_type[1]) },
		.period = src->period,
		.time_nanos = src->time_nanos,
		.duration_nanos = src->duration_nanos,
		.default_sample_type = src->default_sample_type ?
					       pprof_str(src, src->default_sample_type) : NULL,
	};

	for (int t = 0; t < src->n_types; t++)
		o.sample_types[t] = (struct pprof_value_type){ pprof_str(src, src->sample_types[t][0]),
							       pprof_str(src, src->sample_types[t][1]) };
	return pprof__new(&o);
}

/* every mapping, in order, so mapping ids stay the same */
static int copy_mappings(struct pprof *dst, const struct pprof *src)
{
	for (size_t i = 0; i < src->n_mappings; i++) {
		const struct pp_mapping *m = &src->mappings[i];
		struct pprof_mapping_desc d = {
			.start = m->start,
			.limit = m->limit,
			.file_offset = m->file_offset,
			.filename = pprof_str(src, m->filename),
			.build_id = pprof_str(src, m->build_id),
			.has_functions = m->has_functions,
			.has_filenames = m->has_filenames,
			.has_line_numbers = m->has_line_numbers,
			.has_inline_frames = m->has_inline_frames,
			.is_kernel = m->is_kernel,
		};

		if (pprof__add_mapping(dst, &d) != i + 1)
			return -ENOMEM;
	}
	return 0;
}

/* dst's id of src's location id, copied on first use; 0 on error */
static __u32 copy_location(struct pprof *dst, const struct pprof *src, __u32 id, __u32 *ids)
{
	const struct pp_location *loc = pprof_location(src, id);
	const struct pp_line *l;
	struct pprof_line *lines;
	size_t n;

	if (ids[id - 1])
		return ids[id - 1];
	l = pprof_location_lines(src, id, &n);
	lines = calloc(n ? n : 1, sizeof(*lines));
	if (!lines)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const struct pp_function *f = &src->functions[l[i].function_id - 1];

		lines[i] = (struct pprof_line){ pprof_str(src, f->name), pprof_str(src, f->filename),
						l[i].line };
	}
	ids[id - 1] = pprof__add_location(dst, loc->mapping_id, loc->address, lines, n);
	free(lines);
	return ids[id - 1];
}

static bool dropped(const struct pprof_limits *lim, const char *key)
{
	for (const char *const *k = lim->drop_labels; k && *k; k++)
		if (!strcmp(*k, key))
			return true;
	return false;
}

/* cuts s to at most max bytes without splitting a UTF-8 sequence; NULL: keep s */
static char *cut_value(const char *s, size_t max)
{
	size_t len = strlen(s);
	char *out;

	if (!max || len <= max)
		return NULL;
	len = max;
	while (len && ((unsigned char)s[len] & 0xc0) == 0x80)
		len--;
	out = malloc(len + 1);
	if (out) {
		memcpy(out, s, len);
		out[len] = '\0';
	}
	return out;
}

/* sample i of src, labels reduced, added to dst */
static int copy_sample(struct pprof *dst, const struct pprof *src, size_t i, __u32 *loc_ids,
		       const struct pprof_limits *lim, struct pprof_reduce_stats *st)
{
	struct pprof_label labels[MAX_LABELS];
	char *owned[MAX_LABELS] = {};
	size_t n_locs, n_src_labels;
	const __u32 *locs = pprof_sample_locs(src, i, &n_locs);
	const struct pp_label *sl = pprof_labelset(src, src->samples[i].labelset, &n_src_labels);
	__u32 *ids = calloc(n_locs ? n_locs : 1, sizeof(*ids));
	int n = 0, err = 0;

	if (!ids)
		return -ENOMEM;
	for (size_t k = 0; k < n_locs && !err; k++) {
		ids[k] = copy_location(dst, src, locs[k], loc_ids);
		if (!ids[k])
			err = -ENOMEM;
	}
	for (size_t k = 0; k < n_src_labels && !err; k++) {
		const char *key = pprof_str(src, sl[k].key);

		if (dropped(lim, key))
			continue;
		if (n == MAX_LABELS || (lim->max_label_names && n >= lim->max_label_names)) {
			st->dropped_labels++;
			continue;
		}
		labels[n] = (struct pprof_label){ .key = key, .num = sl[k].num,
						  .num_unit = pprof_str(src, sl[k].num_unit) };
		if (sl[k].str) {
			labels[n].str = pprof_str(src, sl[k].str);
			owned[n] = cut_value(labels[n].str, lim->max_label_value);
			if (owned[n]) {
				labels[n].str = owned[n];
				st->cut_values++;
			}
		}
		n++;
	}
	if (!err)
		err = pprof__add_sample(dst, ids, n_locs, pprof_sample_values(src, i), labels, n);
	for (int k = 0; k < n; k++)
		free(owned[k]);
	free(ids);
	return err;
}

/* every sample of src, labels reduced */
static struct pprof *copy_reduced(const struct pprof *src, const struct pprof_limits *lim,
				  struct pprof_reduce_stats *st)
{
	struct pprof *dst = empty_copy(src);
	__u32 *loc_ids = calloc(src->n_locations + 1, sizeof(*loc_ids));
	int err = dst && loc_ids ? copy_mappings(dst, src) : -ENOMEM;

	for (size_t i = 0; i < src->n_samples && !err; i++)
		err = copy_sample(dst, src, i, loc_ids, lim, st);
	free(loc_ids);
	if (err) {
		pprof__free(dst);
		errno = -err;
		return NULL;
	}
	return dst;
}

/* hottest first by the first value; ties by index, so the order is stable */
static int by_value_desc(const void *a, const void *b, void *ctx)
{
	const struct pprof *p = ctx;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	__s64 vi = pprof_sample_values(p, i)[0], vj = pprof_sample_values(p, j)[0];

	if (vi != vj)
		return vi < vj ? 1 : -1;
	return i < j ? -1 : 1;
}

/* the hottest max - 1 samples of src, the rest summed into one "[other]" sample */
static struct pprof *fold_coldest(const struct pprof *src, size_t max,
				  struct pprof_reduce_stats *st)
{
	static const struct pprof_line other_line = { .function = "[other]" };
	static const struct pprof_limits keep_all = {};
	__s64 other[PPROF_MAX_SAMPLE_TYPES] = {};
	struct pprof *dst = empty_copy(src);
	__u32 *loc_ids = calloc(src->n_locations + 1, sizeof(*loc_ids));
	size_t *order = calloc(src->n_samples, sizeof(*order));
	int err = dst && loc_ids && order ? copy_mappings(dst, src) : -ENOMEM;
	__u32 other_id;

	for (size_t i = 0; i < src->n_samples; i++)
		if (order)
			order[i] = i;
	if (!err)
		qsort_r(order, src->n_samples, sizeof(*order), by_value_desc, (void *)src);
	for (size_t k = 0; k < src->n_samples && !err; k++) {
		if (k + 1 < max) {
			err = copy_sample(dst, src, order[k], loc_ids, &keep_all, st);
			continue;
		}
		for (int t = 0; t < src->n_types; t++)
			other[t] += pprof_sample_values(src, order[k])[t];
		st->folded_samples++;
	}
	if (!err && src->n_samples >= max) {
		other_id = pprof__add_location(dst, 0, OTHER_ADDRESS, &other_line, 1);
		err = other_id ? pprof__add_sample(dst, &other_id, 1, other, NULL, 0) : -ENOMEM;
	}
	free(order);
	free(loc_ids);
	if (err) {
		pprof__free(dst);
		errno = -err;
		return NULL;
	}
	return dst;
}

/* whether sample i of p carries the string label key=value */
static bool has_label(const struct pprof *p, size_t i, const char *key, const char *value)
{
	size_t n;
	const struct pp_label *l = pprof_labelset(p, p->samples[i].labelset, &n);

	for (size_t k = 0; k < n; k++)
		if (l[k].str && !strcmp(pprof_str(p, l[k].key), key) &&
		    !strcmp(pprof_str(p, l[k].str), value))
			return true;
	return false;
}

struct pprof *pprof__focus_label(const struct pprof *src, const char *key, const char *value,
				 size_t *kept)
{
	static const struct pprof_limits keep_all = {};
	struct pprof_reduce_stats st;
	struct pprof *dst = empty_copy(src);
	__u32 *loc_ids = calloc(src->n_locations + 1, sizeof(*loc_ids));
	int err = dst && loc_ids ? copy_mappings(dst, src) : -ENOMEM;

	*kept = 0;
	for (size_t i = 0; i < src->n_samples && !err; i++) {
		if (!has_label(src, i, key, value))
			continue;
		err = copy_sample(dst, src, i, loc_ids, &keep_all, &st);
		++*kept;
	}
	free(loc_ids);
	if (err) {
		pprof__free(dst);
		errno = -err;
		return NULL;
	}
	return dst;
}

struct pprof *pprof__reduce(const struct pprof *src, const struct pprof_limits *lim,
			    struct pprof_reduce_stats *st)
{
	struct pprof *mid, *out;

	memset(st, 0, sizeof(*st));
	mid = copy_reduced(src, lim, st);
	if (!mid || !lim->max_samples || mid->n_samples <= lim->max_samples)
		return mid;
	out = fold_coldest(mid, lim->max_samples, st);
	pprof__free(mid);
	return out;
}
