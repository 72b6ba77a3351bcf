/* fuzz_pprof.c -- libFuzzer target: a pprof built by operations read from the input, then every writer */
#include <errno.h>
#include <zlib.h>
#include "fuzz.h"
#include "profile/pprof.h"
#include "profile/pprof_int.h"

#define MAX_OPS 256
#define MAX_STRS 32

/* Names worth meeting often: the label keys the writers look for, separators, paths. */
static const char *const dict[] = {
	"", "comm", "pid", "tid", "main", "[unknown]", "/usr/lib/x86_64-linux-gnu/libc.so.6",
	"[kernel.kallsyms]", "a;b", "x\ny", "/", "samples", "cpu", "count", "nanoseconds",
	"[vdso]", "do_syscall_64", "0123456789abcdef", "foo.c", "libfoo.so/",
};

struct strs {
	char *owned[MAX_STRS];
	int n;
};

/* A string from the input: the dictionary, NULL, or bytes (owned until strs_free). */
static const char *take_str(struct fuzz_in *in, struct strs *s, int may_be_null)
{
	uint8_t b = fin_u8(in);

	if (may_be_null && b == 0xff)
		return NULL;
	if (b < 0xc0 || s->n == MAX_STRS)
		return dict[b % (sizeof(dict) / sizeof(dict[0]))];
	return s->owned[s->n++] = fin_str(in, 512);
}

static void strs_free(struct strs *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->owned[i]);
	s->n = 0;
}

static void op_mapping(struct pprof *p, struct fuzz_in *in, struct strs *s)
{
	struct pprof_mapping_desc m = {};
	size_t before = p->n_mappings;
	uint8_t flags = fin_u8(in);

	m.start = fin_uint(in, flags & 1 ? 8 : 2) << 12;
	m.limit = m.start + (fin_uint(in, 2) << 12);
	m.file_offset = fin_uint(in, flags & 2 ? 8 : 1) << 12;
	m.has_functions = flags & 4;
	m.has_filenames = flags & 8;
	m.has_line_numbers = flags & 16;
	m.has_inline_frames = flags & 32;
	m.is_kernel = flags & 64;
	m.filename = take_str(in, s, 1);
	m.build_id = take_str(in, s, 1);
	FUZZ_CHECK(pprof__add_mapping(p, &m) == before + 1);
}

static void op_location(struct pprof *p, struct fuzz_in *in, struct strs *s)
{
	struct pprof_line lines[4];
	uint8_t b = fin_u8(in), nl = fin_u8(in);
	__u32 mapping_id = b & 0x80 ? b & 0x7f : b % (p->n_mappings + 1), id, existing;
	__u64 address = fin_uint(in, nl & 0x80 ? 8 : 1);
	int n_lines = nl == 0xff ? -1 : nl % 5;
	size_t before = p->n_locations;

	for (int i = 0; i < n_lines; i++) {
		lines[i].function = take_str(in, s, 0);
		lines[i].filename = take_str(in, s, 1);
		lines[i].line = (__s64)fin_uint(in, fin_u8(in) & 1 ? 8 : 1);
	}
	existing = pprof__find_location(p, mapping_id, address);
	id = pprof__add_location(p, mapping_id, address, lines, n_lines);
	if (mapping_id > p->n_mappings || n_lines < 0) {
		FUZZ_CHECK(!id && errno == EINVAL && p->n_locations == before);
		return;
	}
	FUZZ_CHECK(id && id == (existing ? existing : before + 1));
	FUZZ_CHECK(pprof__find_location(p, mapping_id, address) == id);
}

static void op_sample(struct pprof *p, struct fuzz_in *in, struct strs *s)
{
	struct pprof_label labels[4];
	__s64 values[PPROF_MAX_SAMPLE_TYPES];
	__u32 locs[8];
	int n_locs = fin_u8(in) % 9, n_labels = fin_u8(in) % 5, valid = 1, err;
	size_t before = p->n_samples;

	for (int i = 0; i < n_locs; i++) {
		uint8_t b = fin_u8(in);

		locs[i] = b & 0x80 || !p->n_locations ? b & 0x7f : b % p->n_locations + 1;
		valid &= locs[i] >= 1 && locs[i] <= p->n_locations;
	}
	/* 32-bit values: sums of many stay far from overflowing 64 bits, as counts do */
	for (int t = 0; t < p->n_types; t++)
		values[t] = (__s32)fin_uint(in, 4);
	for (int i = 0; i < n_labels; i++) {
		labels[i].key = take_str(in, s, 1);
		labels[i].str = take_str(in, s, 1);
		labels[i].num = (__s64)fin_uint(in, 8);
		labels[i].num_unit = take_str(in, s, 1);
		valid &= labels[i].key != NULL;
	}
	err = pprof__add_sample(p, locs, n_locs, values, labels, n_labels);
	FUZZ_CHECK(valid ? err == 0 : err == -EINVAL);
	FUZZ_CHECK(pprof__sample_count(p) - before <= 1);
}

/* protobuf read-back: every length fits, the schema's sub-messages parse, leaves are varints */

enum msg { MSG_PROFILE, MSG_SAMPLE, MSG_LOCATION, MSG_LEAF };

static const uint8_t *varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int i = 0; i < 10 && p < end; i++, p++) {
		*v |= (uint64_t)(*p & 0x7f) << (7 * i);
		if (!(*p & 0x80))
			return p + 1;
	}
	return NULL;
}

static void walk(const uint8_t *p, const uint8_t *end, enum msg msg, size_t counts[16])
{
	while (p < end) {
		uint64_t tag, v;
		const uint8_t *q;

		p = varint(p, end, &tag);
		FUZZ_CHECK(p && tag >> 3);
		if (counts && tag >> 3 < 16)
			counts[tag >> 3]++;
		if ((tag & 7) == 0) {
			p = varint(p, end, &v);
			FUZZ_CHECK(p);
			continue;
		}
		FUZZ_CHECK((tag & 7) == 2 && msg != MSG_LEAF);
		p = varint(p, end, &v);
		FUZZ_CHECK(p && v <= (uint64_t)(end - p));
		switch (msg == MSG_PROFILE ? tag >> 3 : msg * 100 + (tag >> 3)) {
		case 2:
			walk(p, p + v, MSG_SAMPLE, NULL);
			break;
		case 4:
			walk(p, p + v, MSG_LOCATION, NULL);
			break;
		case 1: case 3: case 5: case 11:	/* ValueType, Mapping, Function */
		case MSG_SAMPLE * 100 + 3:		/* Label */
		case MSG_LOCATION * 100 + 4:		/* Line */
			walk(p, p + v, MSG_LEAF, NULL);
			break;
		case MSG_SAMPLE * 100 + 1:		/* packed location ids and values */
		case MSG_SAMPLE * 100 + 2:
			for (q = p; q < p + v;)
				FUZZ_CHECK((q = varint(q, p + v, &tag)));
			break;
		case 6:					/* string_table */
			break;
		default:
			FUZZ_CHECK(!"unexpected length-delimited field");
		}
		p += v;
	}
}

static void check_proto(const struct pprof *p, const char *gz, size_t gz_len)
{
	size_t cap = 1 << 16, len = 0, counts[16] = {};
	uint8_t *raw = malloc(cap);
	z_stream zs = {};
	int ret;

	FUZZ_CHECK(raw && inflateInit2(&zs, 15 + 16) == Z_OK);
	zs.next_in = (Bytef *)gz;
	zs.avail_in = gz_len;
	do {
		if (len == cap) {
			raw = realloc(raw, cap *= 2);
			FUZZ_CHECK(raw);
		}
		zs.next_out = raw + len;
		zs.avail_out = cap - len;
		ret = inflate(&zs, Z_NO_FLUSH);
		len = cap - zs.avail_out;
	} while (ret == Z_OK);
	FUZZ_CHECK(ret == Z_STREAM_END && zs.avail_in == 0);
	inflateEnd(&zs);
	walk(raw, raw + len, MSG_PROFILE, counts);
	FUZZ_CHECK(counts[1] == (size_t)p->n_types && counts[2] == p->n_samples &&
		   counts[3] == p->n_mappings && counts[4] == p->n_locations &&
		   counts[5] == p->n_functions && counts[6] == p->n_strings);
	free(raw);
}

/* one line per stack: "frames count", no control characters, a non-zero count */
static void check_folded(const char *text, size_t len)
{
	for (const char *line = text, *nl; line < text + len; line = nl + 1) {
		const char *sp;
		char *end;

		nl = memchr(line, '\n', text + len - line);
		FUZZ_CHECK(nl);
		for (const char *c = line; c < nl; c++)
			FUZZ_CHECK((unsigned char)*c >= 0x20 && *c != 0x7f);
		sp = memrchr(line, ' ', nl - line);
		FUZZ_CHECK(sp && sp > line && strtoll(sp + 1, &end, 10) != 0 && end == nl);
	}
}

static void write_all(struct pprof *p, int top_n)
{
	char *text = NULL;
	size_t len;
	FILE *f;

	f = open_memstream(&text, &len);
	FUZZ_CHECK(f && pprof__write(p, f) == 0 && fclose(f) == 0);
	check_proto(p, text, len);
	free(text);
	for (int t = -1; t <= p->n_types; t++) {
		int valid = t >= 0 && t < p->n_types;

		f = open_memstream(&text, &len);
		FUZZ_CHECK(f && pprof__write_folded(p, f, t) == (valid ? 0 : -EINVAL));
		FUZZ_CHECK(fclose(f) == 0);
		check_folded(text, len);
		free(text);
		f = open_memstream(&text, &len);
		FUZZ_CHECK(f && pprof__write_top(p, f, t, top_n) == (valid ? 0 : -EINVAL));
		FUZZ_CHECK(fclose(f) == 0);
		FUZZ_CHECK(!valid || !strncmp(text, "Showing top ", 12));
		free(text);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct pprof_opts opts = {};
	struct strs s = {};
	struct pprof *p;
	int top_n;

	opts.n_sample_types = fin_u8(&in) % PPROF_MAX_SAMPLE_TYPES + 1;
	for (int i = 0; i < opts.n_sample_types; i++) {
		opts.sample_types[i].type = take_str(&in, &s, 1);
		opts.sample_types[i].unit = take_str(&in, &s, 1);
	}
	opts.period_type.type = take_str(&in, &s, 1);
	opts.period_type.unit = take_str(&in, &s, 1);
	opts.period = (__s64)fin_uint(&in, 8);
	opts.default_sample_type = take_str(&in, &s, 1);
	top_n = (int)(int8_t)fin_u8(&in);
	p = pprof__new(&opts);
	FUZZ_CHECK(p);
	strs_free(&s);
	for (int i = 0; i < MAX_OPS && in.n; i++) {
		switch (fin_u8(&in) % 4) {
		case 0: op_mapping(p, &in, &s); break;
		case 1: op_location(p, &in, &s); break;
		case 2: op_sample(p, &in, &s); break;
		case 3: pprof__set_time(p, (__s64)fin_uint(&in, 8), (__s64)fin_uint(&in, 8)); break;
		}
		strs_free(&s);
	}
	write_all(p, top_n);
	pprof__free(p);
	return 0;
}
