/* dwarf.c -- source lines and inline chains from DWARF (libdw), with per-unit function indexes */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <gelf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <dwarf.h>
#include "dwarf.h"
#include "lib/array.h"
#include "elf_syms.h"

/* zlib cannot compress better than about 1032:1, so a larger claim is a lie */
#define COMPRESS_RATIO_MAX 1100
/* scopes (functions, inlines, blocks) followed from a function down to the address */
#define SCOPE_DEPTH_MAX 256
/* an overlapping range earlier in a sorted index is looked for this far back */
#define OVERLAP_SCAN 64
/*
 * libdw's mark for "the supplementary file was looked for, not found": its
 * dwarf_getalt() tests for it, and dwarf_end() frees no alt it did not open
 * itself. A convention of libdw's source (0.188), not of its API, that
 * test_dwz_alt_not_searched watches. Set so that libdw never searches by
 * itself: it would open(2) a path the file names, blocking on a FIFO, and
 * mmap what it finds.
 */
#define ALT_NOT_FOUND ((Dwarf *)-1)

/*
 * What libdw holds per line-table row once a unit's table is parsed, with its
 * other per-unit tables (file names, abbreviations) spread over the rows:
 * measured 50-62 bytes on libpython, docker and libnccl. For accounting.
 */
#define LINE_ROW_BYTES 56

struct dw_range {		/* a code range of a unit or of a function */
	__u64 low, high;	/* [low, high) */
	size_t idx;		/* into cus[] or into the unit's funcs[] */
};

struct dw_cu {
	Dwarf_Die die;		/* the unit */
	struct dw_range *funcs;	/* subprogram ranges, sorted; built on first use */
	size_t n_funcs, cap_funcs;
	Dwarf_Die *func_dies;	/* the subprogram of each funcs[].idx */
	size_t n_dies, cap_dies;
	bool indexed;
	size_t line_bytes;	/* libdw's line table of the unit, once parsed */
};

struct dwarf_info {
	Elf *elf;
	Dwarf *dw;
	struct dw_cu *cus;
	size_t n_cus, cap_cus;
	struct dw_range *ranges;	/* unit ranges, sorted by low */
	size_t n_ranges, cap_ranges;
	size_t debug_bytes;		/* .debug_* sections as libdw holds them */
	size_t index_bytes;		/* function indexes and line tables built so far */
	/* the dwz supplementary file (.gnu_debugaltlink), once given */
	const char *alt_path;		/* as the section names it; NULL: none needed */
	char alt_build_id[ELF_BUILD_ID_HEX_SIZE];
	Elf *alt_elf;
	Dwarf *alt_dw;
};

static int cmp_range(const void *a, const void *b)
{
	const struct dw_range *x = a, *y = b;

	if (x->low != y->low)
		return x->low < y->low ? -1 : 1;
	return x->high < y->high ? -1 : x->high > y->high;
}

/* the range holding PC among N sorted by low; NULL when none does */
static const struct dw_range *find_range(const struct dw_range *r, size_t n, __u64 pc)
{
	size_t lo = 0, hi = n;

	/* find the first range with low > pc; the ones before may hold pc */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].low <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ranges should not overlap, but a few broken producers nest them */
	for (size_t i = lo, seen = 0; i > 0 && seen < OVERLAP_SCAN; i--, seen++)
		if (pc < r[i - 1].high)
			return &r[i - 1];
	return NULL;
}

/* appends DIE's code ranges to *r with index IDX; a DIE without any adds none */
static int add_ranges(Dwarf_Die *die, size_t idx, struct dw_range **r, size_t *n, size_t *cap)
{
	Dwarf_Addr base, low, high;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &low, &high)) > 0) {
		/* GNU ld resolves code of discarded sections to 0: not real code */
		if (low == 0 || low >= high)
			continue;
		if (array__reserve((void **)r, cap, *n + 1, sizeof(**r)))
			return -ENOMEM;
		(*r)[(*n)++] = (struct dw_range){ .low = low, .high = high, .idx = idx };
	}
	return 0;
}

/*
 * Refuses files libdw would inflate past what we accept: compressed sections
 * declare their size, and libelf allocates it before inflating.
 */
static int check_sections(Elf *elf, size_t *debug_bytes, bool *has_info)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, total = 0;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -EINVAL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Chdr ch;
		const char *name;
		__u64 size;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || (strncmp(name, ".debug_", 7) && strncmp(name, ".zdebug_", 8)))
			continue;
		size = sh.sh_size;
		if (sh.sh_flags & SHF_COMPRESSED) {
			if (!gelf_getchdr(scn, &ch))
				return -EINVAL;
			if (ch.ch_size / COMPRESS_RATIO_MAX > sh.sh_size)
				return -EFBIG;
			size = ch.ch_size;
		}
		if (size > ELF_FILE_MAX || total + size > ELF_FILE_MAX)
			return -EFBIG;
		total += size;
		if (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"))
			*has_info = *has_info || size > 0;
	}
	*debug_bytes = total;
	return 0;
}

/*
 * libdw before 0.190 runs strlen() on string sections: one whose last string
 * lacks its NUL (a cut section) would be read past. Checked on the data libdw
 * holds, decompressed.
 */
static int check_strings(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -EINVAL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		Elf_Data *data;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || (!strstr(name, "debug_str") && !strstr(name, "debug_line_str")))
			continue;
		data = elf_getdata(scn, NULL);
		if (data && data->d_size && ((const char *)data->d_buf)[data->d_size - 1])
			return -EINVAL;
	}
	return 0;
}

/* the supplementary file the DWARF refers to, if any; libdw is kept from looking for it */
static int read_altlink(struct dwarf_info *d)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *id;
	const void *idp;
	const char *name;
	ssize_t n;

	dwarf_setalt(d->dw, ALT_NOT_FOUND);
	n = dwelf_dwarf_gnu_debugaltlink(d->dw, &name, &idp);
	/* a malformed link: the units that need the file lose names, the rest still serves */
	if (n <= 0 || n > ELF_BUILD_ID_MAX || !*name)
		return 0;
	id = idp;
	for (ssize_t i = 0; i < n; i++) {
		d->alt_build_id[2 * i] = digits[id[i] >> 4];
		d->alt_build_id[2 * i + 1] = digits[id[i] & 0xf];
	}
	d->alt_build_id[2 * n] = '\0';
	d->alt_path = name;
	return 0;
}

/* one entry per unit with code, and the sorted index of their ranges */
static int index_units(struct dwarf_info *d)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Half version;
	Dwarf_Die cudie;
	__u8 type;
	int err;

	/*
	 * No subdie asked for: for a skeleton unit libdw would open(2) the .dwo
	 * its DW_AT_dwo_name names. Split DWARF is not read; type and partial
	 * units hold no code.
	 */
	while (dwarf_get_units(d->dw, cu, &cu, &version, &type, &cudie, NULL) == 0) {
		if (type != DW_UT_compile)
			continue;
		err = ARRAY_RESERVE(d->cus, d->cap_cus, d->n_cus + 1);
		if (err)
			return err;
		err = add_ranges(&cudie, d->n_cus, &d->ranges, &d->n_ranges, &d->cap_ranges);
		if (err)
			return err;
		d->cus[d->n_cus++] = (struct dw_cu){ .die = cudie };
	}
	if (d->n_ranges)
		qsort(d->ranges, d->n_ranges, sizeof(*d->ranges), cmp_range);
	return 0;
}

/*
 * Opens the DWARF of the regular file at FD into *elf and *dw, after checking
 * what libdw will allocate (at most MAX); adds the bytes it holds to *bytes.
 */
static int begin(int fd, size_t max, Elf **elf, Dwarf **dw, size_t *bytes)
{
	bool has_info = false;
	struct stat st;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ELIBACC;
	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((__u64)st.st_size > ELF_FILE_MAX)
		return -EFBIG;
	/* ELF_C_READ: sections come in by pread into our memory, never by mmap */
	*elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!*elf || elf_kind(*elf) != ELF_K_ELF)
		return -EINVAL;
	err = check_sections(*elf, bytes, &has_info);
	if (err)
		return err;
	if (!has_info)
		return -ENOENT;
	/* over budget: refused before libdw inflates sections it would have to drop */
	if (*bytes > max)
		return -E2BIG;
	*dw = dwarf_begin_elf(*elf, DWARF_C_READ, NULL);
	if (!*dw)
		return -EINVAL;
	/* libdw has read every debug section it uses: nothing more comes from FD */
	elf_cntl(*elf, ELF_C_FDDONE);
	return check_strings(*elf);
}

struct dwarf_info *dwarf_info__open(int fd, size_t max_bytes)
{
	struct dwarf_info *d;
	int err;

	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	err = begin(fd, max_bytes, &d->elf, &d->dw, &d->debug_bytes);
	if (!err)
		err = read_altlink(d);
	if (!err)
		err = index_units(d);
	if (err)
		goto out_free;
	return d;

out_free:
	dwarf_info__free(d);
	errno = -err;
	return NULL;
}

const char *dwarf_info__altlink(const struct dwarf_info *d, const char **build_id)
{
	if (!d || !d->alt_path)
		return NULL;
	if (build_id)
		*build_id = d->alt_build_id;
	return d->alt_path;
}

int dwarf_info__set_alt(struct dwarf_info *d, int fd)
{
	char hex[ELF_BUILD_ID_HEX_SIZE];
	size_t bytes = 0;
	Elf *elf = NULL;
	Dwarf *dw = NULL;
	int err;

	if (!d->alt_path)
		return -EINVAL;
	if (d->alt_dw)
		return -EEXIST;
	/* the build ID is what ties the two files together, whatever the path said */
	err = elf_read_build_id(fd, hex, sizeof(hex));
	if (err)
		return err == -ENOENT ? -EBADMSG : err;
	if (strcmp(hex, d->alt_build_id))
		return -EBADMSG;
	err = begin(fd, SIZE_MAX, &elf, &dw, &bytes);
	if (err)
		goto out_end;
	/* a supplementary file has no supplement of its own */
	dwarf_setalt(dw, ALT_NOT_FOUND);
	dwarf_setalt(d->dw, dw);
	d->alt_elf = elf;
	d->alt_dw = dw;
	d->debug_bytes += bytes;
	return 0;

out_end:
	dwarf_end(dw);
	elf_end(elf);
	return err;
}

void dwarf_info__free(struct dwarf_info *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n_cus; i++) {
		free(d->cus[i].funcs);
		free(d->cus[i].func_dies);
	}
	free(d->cus);
	free(d->ranges);
	/* the main Dwarf first: it refers to the supplementary one */
	dwarf_end(d->dw);
	elf_end(d->elf);
	dwarf_end(d->alt_dw);
	elf_end(d->alt_elf);
	free(d);
}

/* DIE's children that can hold subprograms with code, through namespaces and modules */
static int index_scope(struct dw_cu *cu, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;
	int err, r;

	if (depth > SCOPE_DEPTH_MAX || dwarf_child(parent, &child) != 0)
		return 0;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			/* declarations and abstract instances have no code: not kept */
			if (ARRAY_RESERVE(cu->func_dies, cu->cap_dies, cu->n_dies + 1))
				return -ENOMEM;
			err = add_ranges(&child, cu->n_dies, &cu->funcs, &cu->n_funcs,
					 &cu->cap_funcs);
			if (err)
				return err;
			if (cu->n_funcs && cu->funcs[cu->n_funcs - 1].idx == cu->n_dies)
				cu->func_dies[cu->n_dies++] = child;
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
			err = index_scope(cu, &child, depth + 1);
			if (err)
				return err;
			break;
		}
		/* libdw only follows DW_AT_sibling forwards, so this ends */
		r = dwarf_siblingof(&child, &child);
	} while (r == 0);
	return 0;
}

static void index_cu(struct dwarf_info *d, struct dw_cu *cu)
{
	cu->indexed = true;
	/* out of memory: no half index; the unit answers with lines only */
	if (index_scope(cu, &cu->die, 0))
		cu->n_funcs = 0;
	if (cu->n_funcs)
		qsort(cu->funcs, cu->n_funcs, sizeof(*cu->funcs), cmp_range);
	d->index_bytes += cu->cap_funcs * sizeof(*cu->funcs) +
			  cu->cap_dies * sizeof(*cu->func_dies);
}

static const char *die_name(Dwarf_Die *die)
{
	static const int names[] = { DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name };
	Dwarf_Attribute attr;
	const char *s;

	/* _integrate follows an inline's abstract origin and a definition's declaration */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (dwarf_attr_integrate(die, names[i], &attr) && (s = dwarf_formstring(&attr)))
			return s;
	return NULL;
}

static bool is_function(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

/*
 * Walks down from FUNC to the innermost inlined subroutine holding PC, storing
 * FUNC and every inlined subroutine on the way (outermost first) in CHAIN.
 * Returns how many.
 */
static int inline_chain(Dwarf_Die *func, __u64 pc, Dwarf_Die *chain, int max)
{
	Dwarf_Die scope = *func, child;
	int n = 0, depth;

	chain[n++] = scope;
	for (depth = 0; depth < SCOPE_DEPTH_MAX && n < max; depth++) {
		bool found = false;

		if (dwarf_child(&scope, &child) != 0)
			break;
		do {
			int tag = dwarf_tag(&child);

			if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block) &&
			    dwarf_haspc(&child, pc) > 0) {
				found = true;
				break;
			}
		} while (dwarf_siblingof(&child, &child) == 0);
		if (!found)
			break;
		scope = child;
		if (is_function(&scope))
			chain[n++] = scope;
	}
	return n;
}

/* the source file named by index IDX of CU's file table; NULL when out of it */
static const char *cu_file(struct dw_cu *cu, Dwarf_Word idx)
{
	Dwarf_Files *files;
	size_t n;

	if (dwarf_getsrcfiles(&cu->die, &files, &n) || idx >= n)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

/* where the inlined subroutine INL was called from, into OUT's file and line */
static void call_site(struct dw_cu *cu, Dwarf_Die *inl, struct src_line *out)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;

	if (dwarf_attr(inl, DW_AT_call_file, &attr) && !dwarf_formudata(&attr, &v))
		out->file = cu_file(cu, v);
	if (dwarf_attr(inl, DW_AT_call_line, &attr) && !dwarf_formudata(&attr, &v) &&
	    v <= UINT32_MAX)
		out->line = v;
}

/* the line table's row for PC, into OUT's file and line */
static void pc_line(struct dwarf_info *d, struct dw_cu *cu, __u64 pc, struct src_line *out)
{
	Dwarf_Line *line;
	int lineno;

	if (!cu->line_bytes) {
		Dwarf_Lines *lines;
		size_t n;

		/* parsed (and kept by libdw) on the first lookup in the unit anyway */
		if (!dwarf_getsrclines(&cu->die, &lines, &n)) {
			cu->line_bytes = n * LINE_ROW_BYTES + 1;
			d->index_bytes += cu->line_bytes;
		}
	}
	line = dwarf_getsrc_die(&cu->die, pc);
	if (!line)
		return;
	out->file = dwarf_linesrc(line, NULL, NULL);
	if (!dwarf_lineno(line, &lineno) && lineno > 0)
		out->line = lineno;
}

int dwarf_info__lookup(struct dwarf_info *d, __u64 vaddr, struct src_line *out, int max)
{
	Dwarf_Die chain[SRC_LINES_MAX * 4];
	const struct dw_range *r;
	struct dw_cu *cu;
	int n, k;

	if (!d || max <= 0)
		return 0;
	r = find_range(d->ranges, d->n_ranges, vaddr);
	if (!r)
		return 0;
	cu = &d->cus[r->idx];
	if (!cu->indexed)
		index_cu(d, cu);

	memset(out, 0, sizeof(*out));
	pc_line(d, cu, vaddr, out);
	r = find_range(cu->funcs, cu->n_funcs, vaddr);
	if (!r)	/* no subprogram: an assembly unit, say; its line still helps */
		return out->file || out->line ? 1 : 0;

	n = inline_chain(&cu->func_dies[r->idx], vaddr, chain, sizeof(chain) / sizeof(chain[0]));
	/* chain[n - 1] is the innermost: frame 0; past MAX keep it and the outermost */
	out[0].function = die_name(&chain[n - 1]);
	for (k = 1; k < max && k < n; k++) {
		int f = (k == max - 1) ? 0 : n - 1 - k;

		out[k] = (struct src_line){ .function = die_name(&chain[f]) };
		/* a frame's line is where it called the frame inside it */
		call_site(cu, &chain[f + 1], &out[k]);
	}
	return k;
}

size_t dwarf_info__mem_size(const struct dwarf_info *d)
{
	if (!d)
		return 0;
	return sizeof(*d) + d->debug_bytes + d->index_bytes + d->cap_cus * sizeof(*d->cus) +
	       d->cap_ranges * sizeof(*d->ranges);
}
