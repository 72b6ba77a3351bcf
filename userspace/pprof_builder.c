/* pprof_builder.c -- adds resolved stacks to one pprof, keeping its mapping ids per symbolizer mapping */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "hashmap.h"
#include "pprof_builder.h"

/*
 * The symbolizer reuses a mapping id once the mapping is gone (after a trim),
 * and a builder can outlive a trim (a long pull request), so each slot keeps
 * what the id stood for and a changed mapping gets a new pprof Mapping.
 */
struct mapping_slot {
	__u32 pprof_id;		/* 0: not added yet */
	__u64 start;
	__u64 limit;
	__u64 file_offset;
	__u64 path_hash;
};

struct pprof_builder {
	struct pprof *prof;
	struct mapping_slot *maps;	/* indexed by symbolizer mapping id */
	size_t cap_maps;
	__u32 locs[STACK_MAX_FRAMES];
};

struct pprof_builder *pprof_builder__new(const struct pprof_opts *opts)
{
	struct pprof_builder *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
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
	__u64 path_hash;

	if (m->id >= b->cap_maps) {
		size_t old = b->cap_maps;

		if (ARRAY_RESERVE(b->maps, b->cap_maps, m->id + 1))
			return 0;
		memset(b->maps + old, 0, (b->cap_maps - old) * sizeof(*b->maps));
	}
	slot = &b->maps[m->id];
	path_hash = hash_bytes(m->path, strlen(m->path), 0);
	if (slot->pprof_id && slot->start == m->start && slot->limit == m->limit &&
	    slot->file_offset == m->file_offset && slot->path_hash == path_hash)
		return slot->pprof_id;
	d = (struct pprof_mapping_desc){
		.start = m->start,
		.limit = m->limit,
		.file_offset = m->file_offset,
		.filename = m->path,
		.build_id = m->build_id,
		.has_functions = m->has_symbols,
		.is_kernel = m->is_kernel,
	};
	*slot = (struct mapping_slot){ pprof__add_mapping(b->prof, &d), m->start, m->limit,
				       m->file_offset, path_hash };
	return slot->pprof_id;
}

int pprof_builder__add(struct pprof_builder *b, const struct stack *st, const __s64 *values,
		       const struct pprof_label *labels, int n_labels)
{
	for (int i = 0; i < st->n; i++) {
		const struct frame *f = &st->frames[i];
		struct pprof_line line = { .function = f->name };
		__u32 map = 0;

		if (f->mapping) {
			map = mapping_id(b, f->mapping);
			if (!map)
				return -ENOMEM;
		}
		b->locs[i] = pprof__add_location(b->prof, map, f->addr, &line, f->name ? 1 : 0);
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
