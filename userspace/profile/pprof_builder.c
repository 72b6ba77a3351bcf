/* pprof_builder.c -- adds resolved stacks to one pprof, keeping its mapping ids per symbolizer mapping */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "pprof_builder.h"

/*
 * The symbolizer reuses a mapping id once the mapping is gone (after a trim),
 * and a builder can outlive a trim (a long pull request): each slot keeps the
 * serial of the mapping it was made for, and a new serial gets a new Mapping.
 */
struct mapping_slot {
	__u32 pprof_id;		/* 0: not added yet */
	__u64 serial;
};

struct pprof_builder {
	struct pprof *prof;
	enum demangle_mode demangle;
	struct mapping_slot *maps;	/* indexed by symbolizer mapping id */
	size_t cap_maps;
	__u32 locs[STACK_MAX_FRAMES];
};

struct pprof_builder *pprof_builder__new(const struct pprof_opts *opts, enum demangle_mode mode)
{
	struct pprof_builder *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->demangle = mode;
	b->prof = pprof__new(opts);
	if (!b->prof) {
		free(b);
		return NULL;
	}
	return b;
}

static __u32 mapping_id(struct pprof_builder *b, const struct sym_mapping *m)
{
	struct pprof_mapping_desc d;
	struct mapping_slot *slot;

	if (m->id >= b->cap_maps) {
		size_t old = b->cap_maps;

		if (ARRAY_RESERVE(b->maps, b->cap_maps, m->id + 1))
			return 0;
		memset(b->maps + old, 0, (b->cap_maps - old) * sizeof(*b->maps));
	}
	slot = &b->maps[m->id];
	if (slot->pprof_id && slot->serial == m->serial)
		return slot->pprof_id;
	d = (struct pprof_mapping_desc){
		.start = m->start,
		.limit = m->limit,
		.file_offset = m->file_offset,
		.filename = m->path,
		.build_id = m->build_id,
		.has_functions = m->has_symbols,
		.has_filenames = m->has_filenames,
		.has_line_numbers = m->has_line_numbers,
		.has_inline_frames = m->has_inline_frames,
		.is_kernel = m->is_kernel,
	};
	*slot = (struct mapping_slot){ pprof__add_mapping(b->prof, &d), m->serial };
	return slot->pprof_id;
}

/*
 * A new Location: its source lines (or its function name alone), names
 * demangled. Runs once per (mapping, address) of a profile, not per sample.
 */
static __u32 add_location(struct pprof_builder *b, __u32 map, const struct frame *f)
{
	struct pprof_line lines[SRC_LINES_MAX] = {};
	char *owned[SRC_LINES_MAX] = {};
	int n = 0;
	__u32 id;

	if (f->n_lines) {
		for (; n < f->n_lines && n < SRC_LINES_MAX; n++)
			lines[n] = (struct pprof_line){ f->lines[n].function, f->lines[n].file,
							f->lines[n].line };
	} else if (f->name) {
		lines[n++] = (struct pprof_line){ .function = f->name };
	}
	for (int i = 0; i < n; i++) {
		owned[i] = lines[i].function ? demangle(lines[i].function, b->demangle) : NULL;
		if (owned[i])
			lines[i].function = owned[i];
	}
	id = pprof__add_location(b->prof, map, f->addr, lines, n);
	for (int i = 0; i < n; i++)
		free(owned[i]);
	return id;
}

int pprof_builder__add(struct pprof_builder *b, const struct stack *st, const __s64 *values,
		       const struct pprof_label *labels, int n_labels)
{
	for (int i = 0; i < st->n; i++) {
		const struct frame *f = &st->frames[i];
		__u32 map = 0;

		if (f->mapping) {
			map = mapping_id(b, f->mapping);
			if (!map)
				return -ENOMEM;
		}
		b->locs[i] = pprof__find_location(b->prof, map, f->addr);
		if (!b->locs[i])
			b->locs[i] = add_location(b, map, f);
		if (!b->locs[i])
			return -ENOMEM;
	}
	return pprof__add_sample(b->prof, b->locs, st->n, values, labels, n_labels);
}

struct pprof *pprof_builder__pprof(struct pprof_builder *b)
{
	return b->prof;
}

struct pprof *pprof_builder__finish(struct pprof_builder *b)
{
	struct pprof *p = b->prof;

	b->prof = NULL;
	pprof_builder__free(b);
	return p;
}

void pprof_builder__free(struct pprof_builder *b)
{
	if (!b)
		return;
	pprof__free(b->prof);
	free(b->maps);
	free(b);
}
