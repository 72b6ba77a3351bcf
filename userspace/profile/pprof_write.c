/* pprof_write.c -- encodes the profile as profile.proto and gzips it to a FILE * as it goes */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "pbuf.h"
#include "pprof.h"
#include "pprof_int.h"

/* field numbers from github.com/google/pprof/proto/profile.proto */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,

	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,

	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,

	LABEL_KEY = 1,
	LABEL_STR = 2,
	LABEL_NUM = 3,
	LABEL_NUM_UNIT = 4,

	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,

	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,

	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,

	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
};

/* encoded bytes are handed to zlib whenever this many have piled up */
#define FLUSH_AT (64 * 1024)

struct gz_out {
	z_stream zs;
	FILE *out;
	size_t raw_len;		/* encoded bytes before compression */
	unsigned char buf[16 * 1024];
};

/* Compresses len bytes (Z_FINISH: and ends the stream), writing the output to g->out. */
static int deflate_to_file(struct gz_out *g, const unsigned char *data, size_t len, int flush)
{
	int ret;

	do {
		/* avail_in is a uInt: feed huge inputs in slices */
		uInt chunk = len > UINT_MAX / 2 ? UINT_MAX / 2 : (uInt)len;
		int mode = chunk == len ? flush : Z_NO_FLUSH;

		g->zs.next_in = (unsigned char *)data;
		g->zs.avail_in = chunk;
		do {
			size_t have;

			g->zs.next_out = g->buf;
			g->zs.avail_out = sizeof(g->buf);
			ret = deflate(&g->zs, mode);
			if (ret == Z_STREAM_ERROR)
				return -EIO;
			have = sizeof(g->buf) - g->zs.avail_out;
			if (have && fwrite(g->buf, 1, have, g->out) != have)
				return errno ? -errno : -EIO;
		} while (g->zs.avail_out == 0 || (mode == Z_FINISH && ret != Z_STREAM_END));
		data += chunk;
		len -= chunk;
	} while (len);
	return 0;
}

/* Passes what b holds to the compressor once it is big enough (always when force). */
static int drain(struct gz_out *g, struct pbuf *b, bool force)
{
	int err = pbuf__err(b);

	if (err || (!force && b->len < FLUSH_AT))
		return err;
	g->raw_len += b->len;
	err = deflate_to_file(g, b->data, b->len, force ? Z_FINISH : Z_NO_FLUSH);
	pbuf__reset(b);
	return err;
}

static void put_value_type(struct pbuf *b, __u32 field, const __u32 vt[2])
{
	size_t m = pbuf__begin(b, field);

	pbuf__int64(b, VALUE_TYPE_TYPE, vt[0]);
	pbuf__int64(b, VALUE_TYPE_UNIT, vt[1]);
	pbuf__end(b, m);
}

static void put_sample(struct pbuf *b, const struct pprof *p, size_t i)
{
	const struct pp_label *labels;
	const __u32 *locs;
	size_t n, m = pbuf__begin(b, PROFILE_SAMPLE);

	locs = pprof_sample_locs(p, i, &n);
	pbuf__packed_u32(b, SAMPLE_LOCATION_ID, locs, n);
	pbuf__packed_int64(b, SAMPLE_VALUE, pprof_sample_values(p, i), p->n_types);
	labels = pprof_labelset(p, p->samples[i].labelset, &n);
	for (size_t j = 0; j < n; j++) {
		size_t lm = pbuf__begin(b, SAMPLE_LABEL);

		pbuf__int64(b, LABEL_KEY, labels[j].key);
		pbuf__int64(b, LABEL_STR, labels[j].str);
		pbuf__int64(b, LABEL_NUM, labels[j].num);
		pbuf__int64(b, LABEL_NUM_UNIT, labels[j].num_unit);
		pbuf__end(b, lm);
	}
	pbuf__end(b, m);
}

static void put_mapping(struct pbuf *b, const struct pprof *p, size_t i)
{
	const struct pp_mapping *pm = &p->mappings[i];
	size_t m = pbuf__begin(b, PROFILE_MAPPING);

	pbuf__uint64(b, MAPPING_ID, i + 1);
	pbuf__uint64(b, MAPPING_MEMORY_START, pm->start);
	pbuf__uint64(b, MAPPING_MEMORY_LIMIT, pm->limit);
	pbuf__uint64(b, MAPPING_FILE_OFFSET, pm->file_offset);
	pbuf__int64(b, MAPPING_FILENAME, pm->filename);
	pbuf__int64(b, MAPPING_BUILD_ID, pm->build_id);
	pbuf__bool(b, MAPPING_HAS_FUNCTIONS, pm->has_functions);
	pbuf__bool(b, MAPPING_HAS_FILENAMES, pm->has_filenames);
	pbuf__bool(b, MAPPING_HAS_LINE_NUMBERS, pm->has_line_numbers);
	pbuf__bool(b, MAPPING_HAS_INLINE_FRAMES, pm->has_inline_frames);
	pbuf__end(b, m);
}

static void put_location(struct pbuf *b, const struct pprof *p, __u32 id)
{
	const struct pp_location *loc = pprof_location(p, id);
	const struct pp_line *lines;
	size_t n, m = pbuf__begin(b, PROFILE_LOCATION);

	pbuf__uint64(b, LOCATION_ID, id);
	pbuf__uint64(b, LOCATION_MAPPING_ID, loc->mapping_id);
	pbuf__uint64(b, LOCATION_ADDRESS, loc->address);
	lines = pprof_location_lines(p, id, &n);
	for (size_t j = 0; j < n; j++) {
		size_t lm = pbuf__begin(b, LOCATION_LINE);

		pbuf__uint64(b, LINE_FUNCTION_ID, lines[j].function_id);
		pbuf__int64(b, LINE_LINE, lines[j].line);
		pbuf__end(b, lm);
	}
	pbuf__end(b, m);
}

static void put_function(struct pbuf *b, const struct pprof *p, size_t i)
{
	const struct pp_function *f = &p->functions[i];
	size_t m = pbuf__begin(b, PROFILE_FUNCTION);

	pbuf__uint64(b, FUNCTION_ID, i + 1);
	pbuf__int64(b, FUNCTION_NAME, f->name);
	pbuf__int64(b, FUNCTION_SYSTEM_NAME, f->name);
	pbuf__int64(b, FUNCTION_FILENAME, f->filename);
	pbuf__end(b, m);
}

/* Encodes the whole Profile message, draining b into g as it grows. */
static int encode(struct gz_out *g, struct pbuf *b, const struct pprof *p)
{
	int err = 0;

	for (int t = 0; t < p->n_types; t++)
		put_value_type(b, PROFILE_SAMPLE_TYPE, p->sample_types[t]);
	for (size_t i = 0; i < p->n_samples && !err; i++) {
		put_sample(b, p, i);
		err = drain(g, b, false);
	}
	for (size_t i = 0; i < p->n_mappings && !err; i++) {
		put_mapping(b, p, i);
		err = drain(g, b, false);
	}
	for (size_t i = 0; i < p->n_locations && !err; i++) {
		put_location(b, p, i + 1);
		err = drain(g, b, false);
	}
	for (size_t i = 0; i < p->n_functions && !err; i++) {
		put_function(b, p, i);
		err = drain(g, b, false);
	}
	/* string_table[0] is "": written like the others, as an empty string */
	for (size_t i = 0; i < p->n_strings && !err; i++) {
		pbuf__string(b, PROFILE_STRING_TABLE, pprof_str(p, i));
		err = drain(g, b, false);
	}
	if (err)
		return err;
	pbuf__int64(b, PROFILE_TIME_NANOS, p->time_nanos);
	pbuf__int64(b, PROFILE_DURATION_NANOS, p->duration_nanos);
	put_value_type(b, PROFILE_PERIOD_TYPE, p->period_type);
	pbuf__int64(b, PROFILE_PERIOD, p->period);
	pbuf__int64(b, PROFILE_DEFAULT_SAMPLE_TYPE, p->default_sample_type);
	return drain(g, b, true);
}

int pprof__write(const struct pprof *p, FILE *out)
{
	return pprof__write_sized(p, out, NULL);
}

int pprof__write_sized(const struct pprof *p, FILE *out, size_t *raw_len)
{
	struct gz_out *g;
	struct pbuf b;
	int err;

	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->out = out;
	/* windowBits 15 + 16: a gzip wrapper, which is what pprof files carry */
	if (deflateInit2(&g->zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		return -ENOMEM;
	}
	pbuf__init(&b);
	errno = 0;
	err = encode(g, &b, p);
	if (raw_len)
		*raw_len = g->raw_len;
	if (!err && fflush(out))
		err = errno ? -errno : -EIO;
	if (!err && ferror(out))
		err = -EIO;
	pbuf__release(&b);
	deflateEnd(&g->zs);
	free(g);
	return err;
}
