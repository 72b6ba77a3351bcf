/* flame.c -- writes a profile (or two, as a diff) as a self-contained interactive HTML flame graph */

/*
 * The page (flame.html, embedded at build time) gets the profile as one
 * compact JSON object: a deduplicated string table, a frame table (name,
 * file, line, mapping, kind) and the call tree as a flat node array in
 * depth-first order, siblings by name (a parent always before its children), each node with its
 * total per sample type. Self values, shares, zoom and search are the
 * script's work; the tree is merged here so the browser never sees samples.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "lib/hashmap.h"
#include "pbuf.h"
#include "pprof.h"
#include "pprof_int.h"
#include "flame_html.h"

#define MAX_STATES 8		/* distinct `state` label values coloured apart; more share the last */
#define DATA_MARK "@DATA@"

enum frame_kind { KIND_NATIVE, KIND_KERNEL, KIND_GO, KIND_JIT, KIND_MARKER, KIND_PROCESS };

struct fl_frame {
	__u32 name, file, mapping;	/* our string ids */
	__s32 line;
	__u8 kind;
};

struct fl_node {
	__u32 parent;		/* node id; the root (id 1) has 0 */
	__u32 frame;		/* frame id; the root has 0 */
	__u32 state_of;		/* 1 + index in state_vals of its state breakdown; 0: none */
};

struct flame {
	/* strings: NUL-terminated in text, their offsets in off */
	struct pbuf text;
	__u32 *off;
	size_t n_strs, strs_cap;
	struct hmap *str_ix;

	struct fl_frame *frames;
	size_t n_frames, frames_cap;
	struct hmap *frame_ix;

	struct fl_node *nodes;
	size_t n_nodes, nodes_cap;
	struct hmap *node_ix;
	__s64 *vals;		/* n_vals per node */
	size_t vals_cap;
	int n_vals;

	__u32 states[MAX_STATES];	/* string ids of the `state` values seen */
	int n_states;
	__s64 *state_vals;	/* MAX_STATES per node that has off-CPU time with a state */
	size_t n_state_rows, state_cap;

	/* per source profile while adding it */
	const struct pprof *p;
	__u32 *line_frame;	/* line index -> frame id + 1 */
	__u32 *loc_frame;	/* location id - 1 -> frame id + 1 of its unnamed frame */
	__u32 comm_key, state_key;
	bool has_comm, has_state;
	int off_cpu_type;	/* index of off_cpu in p, -1 */
};

/* strings */

struct str_key {
	const char *s;
};

static int str_eq(__u32 id, const void *key, const void *ctx)
{
	const struct flame *f = ctx;

	return !strcmp((const char *)f->text.data + f->off[id - 1], ((const struct str_key *)key)->s);
}

static int intern(struct flame *f, const char *s, __u32 *id)
{
	struct str_key k = { s ? s : "" };
	__u64 h = hash_bytes(k.s, strlen(k.s), 7);

	*id = hmap__find(f->str_ix, h, str_eq, &k, f);
	if (*id) {
		(*id)--;
		return 0;
	}
	if (ARRAY_RESERVE(f->off, f->strs_cap, f->n_strs + 1))
		return -ENOMEM;
	f->off[f->n_strs] = f->text.len;
	pbuf__append(&f->text, k.s, strlen(k.s) + 1);
	if (pbuf__err(&f->text) || hmap__insert(f->str_ix, h, f->n_strs + 1))
		return -ENOMEM;
	*id = f->n_strs++;
	return 0;
}

/* frames */

static int frame_eq(__u32 id, const void *key, const void *ctx)
{
	const struct flame *f = ctx;
	const struct fl_frame *a = &f->frames[id - 1], *b = key;

	return a->name == b->name && a->file == b->file && a->mapping == b->mapping &&
	       a->kind == b->kind;
}

static bool has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* What colours a frame: its mapping, its source file's language, or a marker name. */
static enum frame_kind frame_kind(const char *name, const char *file, const char *mapping, bool kernel)
{
	if (has_prefix(name, "[lost ") || has_prefix(name, "[truncated ") ||
	    has_prefix(name, "[python frames lost") || has_prefix(name, "[php frames lost") ||
	    has_prefix(name, "[unknown") ||
	    !strcmp(name, "[other]"))
		return KIND_MARKER;
	if (kernel || has_suffix(name, "_[k]") || has_suffix(name, " [k]"))
		return KIND_KERNEL;
	if (has_suffix(file, ".go"))
		return KIND_GO;
	if (has_suffix(file, ".py") || has_suffix(file, ".rb") || has_suffix(file, ".js") ||
	    has_suffix(file, ".php") || !strcmp(name, "[php jit code]") ||
	    has_suffix(file, ".java") || has_prefix(mapping, "/tmp/perf-") ||
	    strstr(mapping, "[jit") || has_prefix(mapping, "[anon") || has_prefix(mapping, "//anon"))
		return KIND_JIT;
	return KIND_NATIVE;
}

static int frame_id(struct flame *f, const char *name, const char *file, __s64 line,
		    const char *mapping, enum frame_kind kind, __u32 *id)
{
	struct fl_frame k = { .kind = kind, .line = line > 0 && line <= INT32_MAX ? line : 0 };
	__u64 h;
	int err;

	err = intern(f, name, &k.name);
	if (!err)
		err = intern(f, file, &k.file);
	if (!err)
		err = intern(f, mapping, &k.mapping);
	if (err)
		return err;
	h = hash_u64((__u64)k.name << 32 | k.file, hash_u64((__u64)k.mapping << 8 | kind, 0));
	*id = hmap__find(f->frame_ix, h, frame_eq, &k, f);
	if (*id)
		return 0;
	if (ARRAY_RESERVE(f->frames, f->frames_cap, f->n_frames + 1) ||
	    hmap__insert(f->frame_ix, h, f->n_frames + 1))
		return -ENOMEM;
	f->frames[f->n_frames] = k;
	*id = ++f->n_frames;
	return 0;
}

static const char *mapping_name(const struct pprof *p, const struct pp_location *loc)
{
	return loc->mapping_id ? pprof_str(p, p->mappings[loc->mapping_id - 1].filename) : "";
}

/* The frame of line li (absolute index) of location loc_id, cached per line. */
static int line_frame(struct flame *f, __u32 loc_id, size_t li, __u32 *id)
{
	const struct pprof *p = f->p;
	const struct pp_location *loc = pprof_location(p, loc_id);
	const struct pp_function *fn;
	const char *name, *file, *map;
	char buf[320];
	int err;

	if (f->line_frame[li]) {
		*id = f->line_frame[li];
		return 0;
	}
	fn = &p->functions[p->lines[li].function_id - 1];
	name = pprof_str(p, fn->name);
	file = pprof_str(p, fn->filename);
	map = mapping_name(p, loc);
	if (!*name) {
		pprof__unnamed_frame(p, loc_id, buf, sizeof(buf));
		name = buf;
	}
	err = frame_id(f, name, file, p->lines[li].line, map,
		       frame_kind(name, file, map, pprof_location_is_kernel(p, loc)), id);
	if (!err)
		f->line_frame[li] = *id;
	return err;
}

static int unnamed_frame(struct flame *f, __u32 loc_id, __u32 *id)
{
	const struct pp_location *loc = pprof_location(f->p, loc_id);
	const char *map = mapping_name(f->p, loc);
	char buf[320];
	int err;

	if (f->loc_frame[loc_id - 1]) {
		*id = f->loc_frame[loc_id - 1];
		return 0;
	}
	pprof__unnamed_frame(f->p, loc_id, buf, sizeof(buf));
	err = frame_id(f, buf, "", 0, map,
		       frame_kind(buf, "", map, pprof_location_is_kernel(f->p, loc)), id);
	if (!err)
		f->loc_frame[loc_id - 1] = *id;
	return err;
}

/* nodes */

struct node_key {
	__u32 parent, frame;
};

static int node_eq(__u32 id, const void *key, const void *ctx)
{
	const struct flame *f = ctx;
	const struct node_key *k = key;

	return f->nodes[id - 1].parent == k->parent && f->nodes[id - 1].frame == k->frame;
}

static int new_node(struct flame *f, __u32 parent, __u32 frame, __u64 h, __u32 *id)
{
	if (ARRAY_RESERVE(f->nodes, f->nodes_cap, f->n_nodes + 1) ||
	    ARRAY_RESERVE(f->vals, f->vals_cap, (f->n_nodes + 1) * f->n_vals) ||
	    (parent && hmap__insert(f->node_ix, h, f->n_nodes + 1)))
		return -ENOMEM;
	f->nodes[f->n_nodes] = (struct fl_node){ .parent = parent, .frame = frame };
	memset(&f->vals[f->n_nodes * f->n_vals], 0, f->n_vals * sizeof(*f->vals));
	*id = ++f->n_nodes;
	return 0;
}

static int child(struct flame *f, __u32 parent, __u32 frame, __u32 *id)
{
	struct node_key k = { parent, frame };
	__u64 h = hash_u64((__u64)parent << 32 | frame, 0);

	*id = hmap__find(f->node_ix, h, node_eq, &k, f);
	return *id ? 0 : new_node(f, parent, frame, h, id);
}

static const char *sample_label(const struct flame *f, size_t i, bool has, __u32 key)
{
	const struct pp_label *labels;
	size_t n;

	if (!has)
		return NULL;
	labels = pprof_labelset(f->p, f->p->samples[i].labelset, &n);
	for (size_t j = 0; j < n; j++)
		if (labels[j].key == key && labels[j].str)
			return pprof_str(f->p, labels[j].str);
	return NULL;
}

/* The slot of a state value: a new one while there is room, else the last. */
static int state_slot(struct flame *f, const char *state, int *slot)
{
	__u32 id;
	int err = intern(f, state, &id);

	if (err)
		return err;
	for (int i = 0; i < f->n_states; i++)
		if (f->states[i] == id) {
			*slot = i;
			return 0;
		}
	if (f->n_states < MAX_STATES)
		f->states[f->n_states++] = id;
	*slot = f->n_states - 1;
	return 0;
}

static int add_state(struct flame *f, __u32 node, int slot, __s64 v)
{
	struct fl_node *n = &f->nodes[node - 1];

	if (!n->state_of) {
		if (ARRAY_RESERVE(f->state_vals, f->state_cap, (f->n_state_rows + 1) * MAX_STATES))
			return -ENOMEM;
		memset(&f->state_vals[f->n_state_rows * MAX_STATES], 0, MAX_STATES * sizeof(__s64));
		n->state_of = ++f->n_state_rows;
	}
	f->state_vals[(n->state_of - 1) * MAX_STATES + slot] += v;
	return 0;
}

/* Adds v (values from first, one per type) to every node on the path; the path is built as it goes. */
static int add_path_value(struct flame *f, __u32 node, const __s64 *v, int first, int n, int slot,
			  __s64 off_cpu)
{
	for (int k = 0; k < n; k++)
		f->vals[(node - 1) * f->n_vals + first + k] += v[k];
	if (slot >= 0 && off_cpu)
		return add_state(f, node, slot, off_cpu);
	return 0;
}

/* Walks sample i root first, adding its values at columns first.. (n of them). */
static int add_sample(struct flame *f, size_t i, const __s64 *v, int first, int n)
{
	const struct pprof *p = f->p;
	const char *comm = sample_label(f, i, f->has_comm, f->comm_key);
	const char *state = sample_label(f, i, f->has_state, f->state_key);
	__s64 off_cpu = f->off_cpu_type >= 0 ? pprof_sample_values(p, i)[f->off_cpu_type] : 0;
	const __u32 *locs;
	__u32 node = 1, fr;
	size_t n_locs;
	int slot = -1, err = 0;

	if (state && off_cpu)
		err = state_slot(f, state, &slot);
	if (!err)
		err = add_path_value(f, node, v, first, n, slot, off_cpu);
	if (!err && comm) {
		err = frame_id(f, comm, "", 0, "", KIND_PROCESS, &fr);
		if (!err)
			err = child(f, node, fr, &node);
		if (!err)
			err = add_path_value(f, node, v, first, n, slot, off_cpu);
	}
	locs = pprof_sample_locs(p, i, &n_locs);
	for (size_t j = n_locs; j-- > 0 && !err;) {
		const struct pp_location *loc = pprof_location(p, locs[j]);
		size_t n_lines;

		pprof_location_lines(p, locs[j], &n_lines);
		if (!n_lines) {
			err = unnamed_frame(f, locs[j], &fr);
			if (!err)
				err = child(f, node, fr, &node);
			if (!err)
				err = add_path_value(f, node, v, first, n, slot, off_cpu);
		}
		/* callers come after their inlined callees in a location's lines */
		for (size_t k = n_lines; k-- > 0 && !err;) {
			err = line_frame(f, locs[j], loc->line_start + k, &fr);
			if (!err)
				err = child(f, node, fr, &node);
			if (!err)
				err = add_path_value(f, node, v, first, n, slot, off_cpu);
		}
	}
	return err;
}

/*
 * Adds every sample of p: all its types at column 0 (value_index < 0), or
 * the one type value_index at column col (a diff's before and after).
 */
static int add_profile(struct flame *f, const struct pprof *p, int value_index, int col)
{
	int err = 0;

	f->p = p;
	f->has_comm = pprof__find_string(p, "comm", &f->comm_key);
	f->has_state = pprof__find_string(p, "state", &f->state_key);
	f->off_cpu_type = value_index < 0 ? pprof__find_type(p, "off_cpu") : -1;
	f->line_frame = calloc(p->n_lines + 1, sizeof(*f->line_frame));
	f->loc_frame = calloc(p->n_locations + 1, sizeof(*f->loc_frame));
	if (!f->line_frame || !f->loc_frame)
		err = -ENOMEM;
	for (size_t i = 0; i < p->n_samples && !err; i++) {
		const __s64 *v = pprof_sample_values(p, i);
		bool any = false;

		for (int k = 0; k < p->n_types; k++)
			any |= v[k] != 0;
		if (!any)
			continue;
		if (value_index < 0)
			err = add_sample(f, i, v, 0, p->n_types);
		else if (v[value_index])
			err = add_sample(f, i, &v[value_index], col, 1);
	}
	free(f->line_frame);
	free(f->loc_frame);
	f->line_frame = f->loc_frame = NULL;
	return err;
}

/* JSON */

/* A JSON string; "</" is written "<\/" so that no name can end the script element. */
static void json_str(FILE *out, const char *s)
{
	putc('"', out);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(out, "\\%c", *c);
		else if (*c < 0x20 || *c == 0x7f)
			fprintf(out, "\\u%04x", *c);
		else if (*c == '/' && c > (const unsigned char *)s && c[-1] == '<')
			fputs("\\/", out);
		else
			putc(*c, out);
	}
	putc('"', out);
}

static const char *fstr(const struct flame *f, __u32 id)
{
	return (const char *)f->text.data + f->off[id];
}

static void json_types(FILE *out, const struct pprof *p, int only)
{
	fputs("\"types\":[", out);
	for (int i = 0; i < p->n_types; i++) {
		if (only >= 0 && i != only)
			continue;
		if (only < 0 && i)
			putc(',', out);
		putc('[', out);
		json_str(out, pprof_str(p, p->sample_types[i][0]));
		putc(',', out);
		json_str(out, pprof_str(p, p->sample_types[i][1]));
		putc(']', out);
	}
	fputs("],", out);
}

static void json_head(FILE *out, const struct flame *f, const struct pprof *p,
		      const struct pprof_html_opts *o, int def)
{
	fputs("{\"v\":1,\"title\":", out);
	json_str(out, o->title ? o->title : "ebpfprof");
	fprintf(out, ",\"diff\":%s,\"def\":%d,\"nv\":%d,\"time\":%" PRId64 ",\"duration\":%" PRId64 ",",
		o->base ? "true" : "false", o->base ? 0 : def, f->n_vals, (int64_t)p->time_nanos,
		(int64_t)p->duration_nanos);
	json_types(out, p, o->base ? def : -1);
	if (o->refresh_url) {
		fputs("\"refresh\":", out);
		json_str(out, o->refresh_url);
		putc(',', out);
	}
	if (o->series) {
		fputs("\"series\":[", out);
		for (int i = 0; o->series[i]; i++) {
			if (i)
				putc(',', out);
			json_str(out, o->series[i]);
		}
		fputs("],\"seriesCur\":", out);
		json_str(out, o->series_current ? o->series_current : "");
		putc(',', out);
	}
}

static int cmp_by_name(const void *a, const void *b, void *ctx)
{
	const struct flame *f = ctx;
	const struct fl_node *x = &f->nodes[*(const __u32 *)a - 1], *y = &f->nodes[*(const __u32 *)b - 1];

	return strcmp(fstr(f, f->frames[x->frame - 1].name), fstr(f, f->frames[y->frame - 1].name));
}

/*
 * The order nodes are written in: depth first, siblings by name, so the
 * page finds each node's children in place and in the order it draws them
 * (flamegraph.pl's), without sorting anything. order[k] is the node id at
 * position k, pos[id - 1] its position.
 */
static int order_nodes(const struct flame *f, __u32 **order_out, __u32 **pos_out)
{
	size_t n = f->n_nodes, top = 0;
	__u32 *first = calloc(n + 2, sizeof(*first)), *kids = malloc((n + 1) * sizeof(*kids));
	__u32 *fill = calloc(n + 1, sizeof(*fill)), *stack = malloc((n + 1) * sizeof(*stack));
	__u32 *order = malloc((n + 1) * sizeof(*order)), *pos = malloc((n + 1) * sizeof(*pos));
	size_t k = 0;

	if (!first || !kids || !fill || !stack || !order || !pos) {
		free(order);
		free(pos);
		order = pos = NULL;
		goto out;
	}
	/* children of node id i are kids[first[i]..first[i + 1]) */
	for (size_t i = 1; i < n; i++)
		first[f->nodes[i].parent + 1]++;
	for (size_t i = 1; i <= n; i++)
		first[i + 1] += first[i];
	for (size_t i = 1; i < n; i++) {
		__u32 p = f->nodes[i].parent;

		kids[first[p] + fill[p]++] = i + 1;
	}
	for (size_t i = 1; i <= n; i++)
		if (first[i + 1] - first[i] > 1)
			qsort_r(&kids[first[i]], first[i + 1] - first[i], sizeof(*kids), cmp_by_name, (void *)f);
	stack[top++] = 1;
	while (top) {
		__u32 id = stack[--top];

		pos[id - 1] = k;
		order[k++] = id;
		for (__u32 j = first[id + 1]; j-- > first[id];)
			stack[top++] = kids[j];
	}
out:
	free(first);
	free(kids);
	free(fill);
	free(stack);
	*order_out = order;
	*pos_out = pos;
	return order ? 0 : -ENOMEM;
}

static void json_tables(FILE *out, const struct flame *f, const __u32 *order, const __u32 *pos)
{
	fputs("\"strings\":[", out);
	for (size_t i = 0; i < f->n_strs; i++) {
		if (i)
			putc(',', out);
		json_str(out, fstr(f, i));
	}
	fputs("],\"frames\":[", out);
	for (size_t i = 0; i < f->n_frames; i++) {
		const struct fl_frame *fr = &f->frames[i];

		fprintf(out, "%s%u,%u,%d,%u,%u", i ? "," : "", fr->name, fr->file, fr->line,
			fr->mapping, fr->kind);
	}
	/* parent and frame are written 0-based, the root's as -1 */
	fputs("],\"nodes\":[", out);
	for (size_t k = 0; k < f->n_nodes; k++) {
		size_t i = order[k] - 1;

		fprintf(out, "%s%ld,%ld", k ? "," : "",
			f->nodes[i].parent ? (long)pos[f->nodes[i].parent - 1] : -1L,
			(long)f->nodes[i].frame - 1);
		for (int v = 0; v < f->n_vals; v++)
			fprintf(out, ",%" PRId64, (int64_t)f->vals[i * f->n_vals + v]);
	}
	putc(']', out);
}

/* Each node's largest off-CPU state, -1 for none: what colours off-CPU time. */
static void json_states(FILE *out, const struct flame *f, const __u32 *order)
{
	if (!f->n_states)
		return;
	fputs(",\"states\":[", out);
	for (int i = 0; i < f->n_states; i++) {
		if (i)
			putc(',', out);
		json_str(out, fstr(f, f->states[i]));
	}
	fputs("],\"nodeState\":[", out);
	for (size_t k = 0; k < f->n_nodes; k++) {
		size_t i = order[k] - 1;
		int best = -1;

		if (f->nodes[i].state_of) {
			const __s64 *sv = &f->state_vals[(f->nodes[i].state_of - 1) * MAX_STATES];

			for (int s = 0; s < f->n_states; s++)
				if (sv[s] > 0 && (best < 0 || sv[s] > sv[best]))
					best = s;
		}
		fprintf(out, "%s%d", k ? "," : "", best);
	}
	putc(']', out);
}

static int write_page(FILE *out, const struct flame *f, const struct pprof *p,
		      const struct pprof_html_opts *o, int def)
{
	const char *tpl = (const char *)flame_html;
	const char *mark = memmem(tpl, flame_html_len, DATA_MARK, strlen(DATA_MARK));
	__u32 *order, *pos;
	size_t head;
	int err;

	if (!mark)
		return -EINVAL;
	err = order_nodes(f, &order, &pos);
	if (err)
		return err;
	head = mark - tpl;
	fwrite(tpl, 1, head, out);
	json_head(out, f, p, o, def);
	json_tables(out, f, order, pos);
	json_states(out, f, order);
	putc('}', out);
	fwrite(mark + strlen(DATA_MARK), 1, flame_html_len - head - strlen(DATA_MARK), out);
	free(order);
	free(pos);
	if (fflush(out) || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

static void flame_free(struct flame *f)
{
	pbuf__release(&f->text);
	free(f->off);
	hmap__free(f->str_ix);
	free(f->frames);
	hmap__free(f->frame_ix);
	free(f->nodes);
	hmap__free(f->node_ix);
	free(f->vals);
	free(f->state_vals);
}

/* The type a page opens with: the one asked for, else the profile's default, else the last. */
static int default_type(const struct pprof *p, int asked)
{
	if (asked >= 0 && asked < p->n_types)
		return asked;
	const char *def = pprof__default_type(p);

	if (def && pprof__find_type(p, def) >= 0)
		return pprof__find_type(p, def);
	return p->n_types - 1;
}

int pprof__write_html(const struct pprof *p, FILE *out, const struct pprof_html_opts *opts)
{
	struct pprof_html_opts none = { .value_index = -1 };
	const struct pprof_html_opts *o = opts ? opts : &none;
	struct flame f = { .n_vals = o->base ? 2 : p->n_types };
	int def = default_type(p, o->value_index), base_type = 0;
	__u32 root;
	int err = 0;

	pbuf__init(&f.text);
	f.str_ix = hmap__new();
	f.frame_ix = hmap__new();
	f.node_ix = hmap__new();
	if (!f.str_ix || !f.frame_ix || !f.node_ix) {
		err = -ENOMEM;
		goto out;
	}
	if (o->base) {
		/* the same type by name in both; else each one's own default */
		base_type = pprof__find_type(o->base, pprof_str(p, p->sample_types[def][0]));
		if (base_type < 0)
			base_type = default_type(o->base, -1);
	}
	err = intern(&f, "", &root);
	if (!err)
		err = new_node(&f, 0, 0, 0, &root);
	if (!err && o->base)
		err = add_profile(&f, o->base, base_type, 0);
	if (!err)
		err = add_profile(&f, p, o->base ? def : -1, o->base ? 1 : 0);
	for (int i = 0; i < o->n_more && !o->base && !err; i++) {
		if (o->more[i]->n_types != p->n_types)
			err = -EINVAL;	/* the values would land in other types' columns */
		else
			err = add_profile(&f, o->more[i], -1, 0);
	}
	if (!err)
		err = write_page(out, &f, p, o, def);
out:
	flame_free(&f);
	return err;
}
