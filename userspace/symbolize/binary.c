/* binary.c -- everything we can name in one executable file: ELF symbols, Go line table, DWARF */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include "binary.h"
#include "debuginfo.h"
#include "dwarf.h"
#include "symbolize/go/gopclntab.h"

/*
 * DWARF is held in memory whole while a file is cached: a debug file larger
 * than this costs more than naming lines is worth on a node (say so, skip it).
 */
#define DWARF_FILE_MAX (64ULL << 20)

struct binary {
	struct elf_syms *syms;		/* the file's own: layout (PT_LOAD) and build ID */
	struct elf_syms *debug_syms;	/* the debug file's .symtab, when it has more */
	struct gopclntab *go;
	struct dwarf_info *dwarf;
};

struct binary *binary__from_syms(struct elf_syms *es)
{
	struct binary *b;

	if (!es)
		return NULL;
	b = calloc(1, sizeof(*b));
	if (!b) {
		elf_syms__free(es);
		return NULL;
	}
	b->syms = es;
	return b;
}

static bool small_enough(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && (__u64)st.st_size <= DWARF_FILE_MAX;
}

/* dwz-compressed debug data points at a shared supplementary file */
static void attach_alt(struct dwarf_info *d, const struct debuginfo_opts *dopts)
{
	const char *build_id = NULL, *path = dwarf_info__altlink(d, &build_id);
	int fd;

	if (!path && !build_id)
		return;
	fd = debuginfo__find_alt(path, build_id, dopts, NULL);
	if (fd >= 0) {
		dwarf_info__set_alt(d, fd);
		close(fd);
	}
}

/* Debug data from a separate file: its DWARF, and its symbols when they are more. */
static void open_debug_file(struct binary *b, int fd, const struct binary_opts *o)
{
	struct debuginfo_opts dopts = { .root = o->root, .use_debuginfod = o->debuginfod };
	int dfd, kind = DEBUGINFO_NONE;
	struct elf_syms *ds;

	dfd = debuginfo__find(fd, elf_syms__build_id(b->syms), o->path, &dopts, &kind);
	if (dfd < 0)
		return;
	ds = elf_syms__read_fd(dfd);
	/* a stripped binary kept .dynsym only: the debug .symtab names static functions too */
	if (ds && elf_syms__count(ds) > elf_syms__count(b->syms))
		b->debug_syms = ds;
	else
		elf_syms__free(ds);
	if (kind != DEBUGINFO_MINI && o->dwarf_max && small_enough(dfd)) {
		b->dwarf = dwarf_info__open(dfd, o->dwarf_max);
		if (b->dwarf)
			attach_alt(b->dwarf, &dopts);
	}
	close(dfd);
}

/* libdw holds the debug sections whole: past the budget, names without lines */
static void enforce_budget(struct binary *b, size_t max)
{
	if (b->dwarf && dwarf_info__mem_size(b->dwarf) > max) {
		dwarf_info__free(b->dwarf);
		b->dwarf = NULL;
	}
}

struct binary *binary__open(int fd, const struct binary_opts *o)
{
	struct binary *b = binary__from_syms(elf_syms__read_fd(fd));

	if (!b)
		return NULL;
	b->go = gopclntab__open(fd);
	if (b->go) {
		gopclntab__release_pages(b->go);	/* what the open's checks read */
		return b;	/* Go's own table is complete, inlining included */
	}
	errno = 0;
	if (o->dwarf_max && small_enough(fd))
		b->dwarf = dwarf_info__open(fd, o->dwarf_max);
	/* DWARF of its own, over the budget: a debug file would be too (and fetched for nothing) */
	if (!b->dwarf && errno != E2BIG)
		open_debug_file(b, fd, o);
	enforce_budget(b, o->dwarf_max);
	return b;
}

void binary__free(struct binary *b)
{
	if (!b)
		return;
	elf_syms__free(b->syms);
	elf_syms__free(b->debug_syms);
	gopclntab__free(b->go);
	dwarf_info__free(b->dwarf);
	free(b);
}

int binary__lookup(const struct binary *b, __u64 off, const char **name, __u64 *offset,
		   struct src_line *lines, int max)
{
	__u64 vaddr;
	int n = 0;

	*name = NULL;
	*offset = 0;
	if (elf_syms__offset_to_vaddr(b->syms, off, &vaddr))
		return 0;
	if (b->go)
		n = gopclntab__lookup(b->go, vaddr, lines, max);
	if (b->debug_syms)
		*name = elf_syms__lookup(b->debug_syms, vaddr, offset);
	if (!*name)
		*name = elf_syms__lookup(b->syms, vaddr, offset);
	if (!n && b->dwarf)
		n = dwarf_info__lookup(b->dwarf, vaddr, lines, max);
	/* a stripped Go binary has no symbols: its table names the function */
	if (n && !*name)
		*name = lines[n - 1].function;
	/* DWARF may not name assembly or a dwz-only name: the symbol does */
	if (n && !lines[n - 1].function)
		lines[n - 1].function = *name;
	for (int i = 0; i < n; i++)
		if (!lines[i].function)
			return 0;	/* an unnamed inline frame: keep the plain symbol */
	return n;
}

const char *binary__build_id(const struct binary *b)
{
	return elf_syms__build_id(b->syms);
}

size_t binary__symbol_count(const struct binary *b)
{
	return elf_syms__count(b->syms) + (b->debug_syms ? elf_syms__count(b->debug_syms) : 0) +
	       (b->go ? gopclntab__func_count(b->go) : 0);
}

void binary__release_pages(struct binary *b)
{
	if (b)
		gopclntab__release_pages(b->go);
}

size_t binary__mem_size(const struct binary *b)
{
	return sizeof(*b) + elf_syms__mem_size(b->syms) +
	       (b->debug_syms ? elf_syms__mem_size(b->debug_syms) : 0) +
	       (b->go ? gopclntab__mem_size(b->go) : 0) +
	       (b->dwarf ? dwarf_info__mem_size(b->dwarf) : 0);
}

size_t binary__dwarf_bytes(const struct binary *b)
{
	return b->dwarf ? dwarf_info__mem_size(b->dwarf) : 0;
}

bool binary__has_lines(const struct binary *b)
{
	return b->go || b->dwarf;
}

bool binary__has_inline(const struct binary *b)
{
	return (b->go && gopclntab__has_inline(b->go)) || b->dwarf;
}
