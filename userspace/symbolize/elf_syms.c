/* elf_syms.c -- function symbols, load segments and GNU build ID of one ELF file (libelf) */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "elf_syms.h"
#include "lib/array.h"
#include "lib/hashmap.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

#define LOADS_MAX 64
#define NOTE_HDR_SIZE 12	/* namesz, descsz, type: three 32-bit words in every class */
#define NAME_CHUNK 256		/* a name in the file is read this much at a time */
#define NAME_MAX_LEN (1u << 20)	/* a name in the file longer than this is not read */

/* tables whose names take this much stay in their file; at most this many files at once */
static size_t names_in_file_min = 64 * 1024;
static unsigned names_in_file_max = 64;
static unsigned names_in_file_held;	/* descriptors held for names; atomic */

struct esym {			/* 16 bytes a symbol */
	__u64 addr;
	__u32 size;		/* 0: unknown, reaches to the next symbol */
	__u32 name;		/* offset into names */
};

struct eload {
	__u64 offset;
	__u64 vaddr;
	__u64 filesz;
};

/* a name read from the file at its first lookup, kept until the table is freed */
struct kept_name {
	__u32 off;		/* in the string table */
	char *str;
};

struct elf_syms {
	struct esym *syms;
	size_t n;
	char *names;		/* NULL: the names stay in the file at fd */
	size_t names_len;
	int fd;			/* names in the file: the string table is [str_off, str_off + str_size) */
	__u64 str_off, str_size;
	pthread_mutex_t lock;	/* the kept names: lookups are const */
	struct hmap *kept_index;
	struct kept_name *kept;
	size_t n_kept, cap_kept, kept_bytes;
	struct eload loads[LOADS_MAX];
	size_t n_loads;
	char build_id[ELF_BUILD_ID_HEX_SIZE];
};

/* a symbol before aliases are merged; name is an offset into its table's strings */
struct cand {
	__u64 addr;
	__u32 size;
	__u32 name;
	__u32 len;		/* strlen(name), measured once while bounds-checking it */
	__u8 table;
	__u8 rank;
};

struct cands {
	struct cand *c;
	size_t n, cap;
	const char *strs[2];	/* string table of .symtab and .dynsym */
	GElf_Shdr str_shs[2];	/* their section headers */
	size_t str_lens[2];	/* and the bytes libelf read of them */
};

static int elf_ready(void)
{
	return elf_version(EV_CURRENT) == EV_NONE ? -ELIBACC : 0;
}

static bool host_endian(Elf *elf)
{
	const char *ident = elf_getident(elf, NULL);

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return ident && ident[EI_DATA] == ELFDATA2LSB;
#else
	return ident && ident[EI_DATA] == ELFDATA2MSB;
#endif
}

static size_t round_up(size_t v, size_t align)
{
	return (v + align - 1) & ~(align - 1);
}

int elf_parse_build_id_notes(const void *buf, size_t len, size_t align, char *hex, size_t size)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *p = buf;
	size_t off = 0;

	if (align != 4 && align != 8)
		return -EINVAL;
	/* offsets are size_t and every size is a __u32, so no sum below can wrap */
	while (len - off >= NOTE_HDR_SIZE) {
		__u32 namesz, descsz, type;
		size_t name_off, desc_off, desc_end;

		memcpy(&namesz, p + off, 4);
		memcpy(&descsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		name_off = off + NOTE_HDR_SIZE;
		/* the descriptor starts at the next ALIGN boundary after the name */
		desc_off = off + round_up(NOTE_HDR_SIZE + (size_t)namesz, align);
		desc_end = desc_off + descsz;
		if (name_off + namesz > len || desc_end > len)
			return -EINVAL;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(p + name_off, "GNU", 4)) {
			if (!descsz || descsz > ELF_BUILD_ID_MAX || size < 2 * (size_t)descsz + 1)
				return -EINVAL;
			for (size_t i = 0; i < descsz; i++) {
				hex[2 * i] = digits[p[desc_off + i] >> 4];
				hex[2 * i + 1] = digits[p[desc_off + i] & 0xf];
			}
			hex[2 * descsz] = '\0';
			return 0;
		}
		off = off + round_up(desc_end - off, align);
		if (off > len)
			break;
	}
	return -ENOENT;
}

/* SHT_NOTE sections first (cheap, kept by strip), then PT_NOTE segments */
static int find_build_id(Elf *elf, char *hex, size_t size)
{
	Elf_Scn *scn = NULL;
	size_t nph;

	if (!host_endian(elf))
		return -ENOTSUP;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_rawdata(scn, NULL);
		if (d && d->d_buf &&
		    !elf_parse_build_id_notes(d->d_buf, d->d_size, sh.sh_addralign == 8 ? 8 : 4,
					      hex, size))
			return 0;
	}
	if (elf_getphdrnum(elf, &nph))
		return -ENOENT;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_NOTE)
			continue;
		/* libelf checks the chunk against the file size */
		d = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_BYTE);
		if (d && d->d_buf &&
		    !elf_parse_build_id_notes(d->d_buf, d->d_size, ph.p_align == 8 ? 8 : 4, hex,
					      size))
			return 0;
	}
	return -ENOENT;
}

static int read_loads(Elf *elf, struct elf_syms *es)
{
	size_t nph;

	if (elf_getphdrnum(elf, &nph))
		return -EINVAL;
	for (size_t i = 0; i < nph && es->n_loads < LOADS_MAX; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		es->loads[es->n_loads].offset = ph.p_offset;
		es->loads[es->n_loads].vaddr = ph.p_vaddr;
		es->loads[es->n_loads].filesz = ph.p_filesz;
		es->n_loads++;
	}
	return 0;
}

/* smaller is preferred among aliases: fewer leading underscores, then global, weak, local */
static __u8 rank_of(const char *name, unsigned char bind)
{
	unsigned us = 0;

	while (us < 15 && name[us] == '_')
		us++;
	return us * 4 + (bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2);
}

static int cands_push(struct cands *c, const struct cand *x)
{
	if (c->n >= ELF_SYMS_MAX)
		return -E2BIG;
	if (ARRAY_RESERVE(c->c, c->cap, c->n + 1))
		return -ENOMEM;
	c->c[c->n++] = *x;
	return 0;
}

/*
 * A sizeless symbol (_init, hand-written assembly) reaches to the next symbol
 * at most, and never past the end of its section: PLT stubs after .init are
 * not _init. 0 when the section is unknown.
 */
static __u64 size_to_section_end(Elf *elf, const GElf_Sym *sym)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE)
		return 0;
	scn = elf_getscn(elf, sym->st_shndx);
	if (!scn || !gelf_getshdr(scn, &sh) || sym->st_value < sh.sh_addr ||
	    sym->st_value - sh.sh_addr >= sh.sh_size)
		return 0;
	return sh.sh_size - (sym->st_value - sh.sh_addr);
}

/* adds the function symbols of one symbol table; every index and offset is bounds-checked */
static int collect(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, int table, struct cands *c)
{
	Elf_Data *data, *strs;
	Elf_Scn *str_scn;
	GElf_Shdr str_sh;
	GElf_Sym sym;

	str_scn = elf_getscn(elf, sh->sh_link);
	if (!str_scn || !gelf_getshdr(str_scn, &str_sh) || str_sh.sh_type != SHT_STRTAB)
		return -EINVAL;
	/* libelf refuses data whose size runs past the end of the file */
	data = elf_getdata(scn, NULL);
	strs = elf_getdata(str_scn, NULL);
	if (!data || !strs || !strs->d_buf || !strs->d_size || (data->d_size && !data->d_buf))
		return -EINVAL;
	c->strs[table] = strs->d_buf;
	c->str_shs[table] = str_sh;
	c->str_lens[table] = strs->d_size;
	/* gelf_getsym() returns NULL past the symbols actually read */
	for (int i = 1; gelf_getsym(data, i, &sym); i++) {
		unsigned char type = GELF_ST_TYPE(sym.st_info);
		const char *name, *nul;
		struct cand x;
		__u64 size;
		int err;

		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    !sym.st_value || !sym.st_name || sym.st_name >= strs->d_size)
			continue;
		name = c->strs[table] + sym.st_name;
		nul = memchr(name, '\0', strs->d_size - sym.st_name);
		if (!nul || nul == name)
			continue;
		x.addr = sym.st_value;
		size = sym.st_size ? sym.st_size : size_to_section_end(elf, &sym);
		/* no function spans 4 GiB: such a size is garbage, treat it as unknown */
		x.size = size > 0xffffffffULL ? 0 : size;
		x.name = sym.st_name;
		x.len = nul - name;
		x.table = table;
		x.rank = rank_of(name, GELF_ST_BIND(sym.st_info));
		err = cands_push(c, &x);
		if (err == -E2BIG)
			break;	/* keep what fits under the cap */
		if (err)
			return err;
	}
	return 0;
}

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (int)x->rank - (int)y->rank;
}

#define RADIX_BITS 11
#define RADIX_MIN 4096		/* below this, qsort is as fast */

/* one stable counting-sort pass of FROM into TO by the digit (key >> shift) */
static void radix_pass(const struct cand *from, struct cand *to, size_t n, __u64 base, int shift,
		       bool by_rank)
{
	size_t count[1 << RADIX_BITS] = {}, sum = 0;
	const __u64 mask = (1 << RADIX_BITS) - 1;

	for (size_t i = 0; i < n; i++)
		count[by_rank ? from[i].rank : ((from[i].addr - base) >> shift) & mask]++;
	for (size_t d = 0; d <= mask; d++) {
		size_t c = count[d];

		count[d] = sum;
		sum += c;
	}
	for (size_t i = 0; i < n; i++)
		to[count[by_rank ? from[i].rank : ((from[i].addr - base) >> shift) & mask]++] = from[i];
}

/*
 * Sorts by (addr, rank). A big symbol table is the slow part of reading a
 * file with qsort, so large ones get an LSD radix sort: a stable pass by rank
 * (it fits one digit), then stable passes over only the address bits that
 * vary. Each pass keeps the order of the previous ones among equal digits,
 * so the result is ordered by the address first, then the rank.
 */
static int sort_cands(struct cands *c)
{
	__u64 lo = ~0ULL, hi = 0;
	struct cand *tmp, *from, *to;
	bool sorted = true;

	for (size_t i = 0; i < c->n; i++) {
		lo = c->c[i].addr < lo ? c->c[i].addr : lo;
		hi = c->c[i].addr > hi ? c->c[i].addr : hi;
		if (i && cmp_cand(&c->c[i - 1], &c->c[i]) > 0)
			sorted = false;
	}
	if (sorted)
		return 0;
	if (c->n < RADIX_MIN) {
		qsort(c->c, c->n, sizeof(*c->c), cmp_cand);
		return 0;
	}
	tmp = malloc(c->n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	from = c->c;
	to = tmp;
	radix_pass(from, to, c->n, 0, 0, true);
	for (int shift = 0; shift < 64 && (hi - lo) >> shift; shift += RADIX_BITS) {
		struct cand *t = from;

		from = to;
		to = t;
		radix_pass(from, to, c->n, lo, shift, false);
	}
	/* the last pass wrote into TO; keep that buffer, free the other */
	if (to != c->c) {
		free(c->c);
		c->c = to;
		c->cap = c->n;
	} else {
		free(tmp);
	}
	return 0;
}

/* takes one of the names_in_file_max descriptors; false when all are taken */
static bool hold_names_fd(void)
{
	unsigned held = __atomic_load_n(&names_in_file_held, __ATOMIC_RELAXED);

	do {
		if (held >= names_in_file_max)
			return false;
	} while (!__atomic_compare_exchange_n(&names_in_file_held, &held, held + 1, true,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return true;
}

/*
 * Whether the names (NAMES_LEN bytes, all of one table) stay in the file at
 * FD, read at their first lookup: a large table of a file (not an image in
 * memory), its strings stored plain. Most names of a library are never in a
 * sample, and a C++ library's take several times its symbols' 16 bytes.
 */
static bool keep_names_in_file(struct elf_syms *es, const struct cands *c, int fd,
			       size_t names_len)
{
	const GElf_Shdr *sh;
	int table;

	if (fd < 0 || !c->n || names_len < names_in_file_min)
		return false;
	table = c->c[0].table;
	sh = &c->str_shs[table];
	if (sh->sh_flags & SHF_COMPRESSED || c->str_lens[table] > sh->sh_size ||
	    c->str_lens[table] > 0xffffffffULL || !hold_names_fd())
		return false;
	es->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (es->fd < 0) {
		__atomic_fetch_sub(&names_in_file_held, 1, __ATOMIC_RELAXED);
		return false;
	}
	es->str_off = sh->sh_offset;
	es->str_size = c->str_lens[table];
	return true;
}

/* sorts, merges aliases (best name, largest size) and copies the kept names into one pool */
static int build_table(struct elf_syms *es, struct cands *c, int fd)
{
	size_t kept = 0, names_len = 0;
	int err = sort_cands(c);

	if (err)
		return err;
	for (size_t i = 0; i < c->n; i++) {
		if (kept && c->c[i].addr == c->c[kept - 1].addr) {
			if (c->c[i].size > c->c[kept - 1].size)
				c->c[kept - 1].size = c->c[i].size;
			continue;
		}
		c->c[kept++] = c->c[i];
		names_len += c->c[i].len + 1;
	}
	if (names_len > 0xffffffffULL)
		return -E2BIG;
	es->syms = malloc(kept * sizeof(*es->syms) + !kept);
	if (!es->syms)
		return -ENOMEM;
	es->n = kept;
	if (keep_names_in_file(es, c, fd, names_len)) {
		for (size_t i = 0; i < kept; i++) {
			es->syms[i].addr = c->c[i].addr;
			es->syms[i].size = c->c[i].size;
			es->syms[i].name = c->c[i].name;
		}
		return 0;
	}
	es->n = 0;
	es->names = malloc(names_len + 1);
	if (!es->names)
		return -ENOMEM;
	for (size_t i = 0; i < kept; i++) {
		const char *name = c->strs[c->c[i].table] + c->c[i].name;
		size_t len = c->c[i].len + 1;

		es->syms[i].addr = c->c[i].addr;
		es->syms[i].size = c->c[i].size;
		es->syms[i].name = es->names_len;
		memcpy(es->names + es->names_len, name, len);
		es->names_len += len;
	}
	es->n = kept;
	return 0;
}

/*
 * .symtab when it is readable and names functions: the linker puts every
 * .dynsym symbol there too, so reading both would only double the work.
 * Else .dynsym, all that a stripped file keeps.
 */
static int read_symbols(Elf *elf, struct elf_syms *es, int fd)
{
	Elf_Scn *scn = NULL, *tabs[2] = {};
	GElf_Shdr shs[2];
	struct cands c = {};
	int err = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		int table;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			table = 0;
		else if (sh.sh_type == SHT_DYNSYM)
			table = 1;
		else
			continue;
		if (!tabs[table]) {
			tabs[table] = scn;
			shs[table] = sh;
		}
	}
	for (int t = 0; t < 2 && !c.n; t++) {
		if (!tabs[t])
			continue;
		err = collect(elf, tabs[t], &shs[t], t, &c);
		if (err == -ENOMEM)
			goto out;
	}
	/* tables that exist but cannot be read make a malformed file */
	if (err && !c.n)
		goto out;
	err = build_table(es, &c, fd);
out:
	free(c.c);
	return err;
}

/* FD: the file ELF reads, -1 for an image in memory */
static struct elf_syms *read_elf(Elf *elf, int fd)
{
	struct elf_syms *es;
	GElf_Ehdr eh;
	int err;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
		errno = ENOEXEC;
		return NULL;
	}
	es = calloc(1, sizeof(*es));
	if (!es)
		return NULL;
	es->fd = -1;
	pthread_mutex_init(&es->lock, NULL);
	err = read_loads(elf, es);
	if (err)
		goto out_free;
	if (find_build_id(elf, es->build_id, sizeof(es->build_id)))
		es->build_id[0] = '\0';
	err = read_symbols(elf, es, fd);
	if (err)
		goto out_free;
	return es;

out_free:
	elf_syms__free(es);
	errno = -err;
	return NULL;
}

Elf *elf_open_read(int fd, int *err)
{
	struct stat st;
	Elf *elf;

	*err = elf_ready();
	if (*err)
		return NULL;
	if (fstat(fd, &st)) {
		*err = -errno;
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		*err = -EINVAL;
		return NULL;
	}
	if ((__u64)st.st_size > ELF_FILE_MAX) {
		*err = -EFBIG;
		return NULL;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		*err = -EINVAL;
	return elf;
}

struct elf_syms *elf_syms__read_fd(int fd)
{
	struct elf_syms *es;
	int err;
	Elf *elf;

	elf = elf_open_read(fd, &err);
	if (!elf) {
		errno = -err;
		return NULL;
	}
	es = read_elf(elf, fd);
	err = errno;
	elf_end(elf);
	errno = err;
	return es;
}

struct elf_syms *elf_syms__load(const char *path)
{
	struct elf_syms *es;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	es = elf_syms__read_fd(fd);
	err = errno;
	close(fd);
	errno = err;
	return es;
}

struct elf_syms *elf_syms__read_mem(const void *image, size_t size)
{
	struct elf_syms *es = NULL;
	char *copy;
	int err;
	Elf *elf;

	err = elf_ready();
	if (err) {
		errno = -err;
		return NULL;
	}
	/* libelf wants a writable image; never hand it memory we do not own */
	copy = malloc(size);
	if (!copy)
		return NULL;
	memcpy(copy, image, size);
	elf = elf_memory(copy, size);
	if (!elf) {
		err = EINVAL;
		goto out_free;
	}
	es = read_elf(elf, -1);
	err = errno;
	elf_end(elf);
out_free:
	free(copy);
	errno = err;
	return es;
}

void elf_syms__free(struct elf_syms *es)
{
	if (!es)
		return;
	free(es->syms);
	free(es->names);
	if (es->fd >= 0) {
		close(es->fd);
		__atomic_fetch_sub(&names_in_file_held, 1, __ATOMIC_RELAXED);
	}
	for (size_t i = 0; i < es->n_kept; i++)
		free(es->kept[i].str);
	free(es->kept);
	hmap__free(es->kept_index);
	pthread_mutex_destroy(&es->lock);
	free(es);
}

void elf_syms__names_in_file(size_t min_bytes, unsigned max_files)
{
	names_in_file_min = min_bytes;
	names_in_file_max = max_files;
}

/* the name at OFF of the string table in the file, read up to its NUL: a new string or NULL */
static char *read_name(const struct elf_syms *es, __u32 off)
{
	size_t cap = es->str_size - off < NAME_MAX_LEN ? es->str_size - off : NAME_MAX_LEN;
	size_t len = 0, alloc = 0;
	char *buf = NULL, *nul = NULL;

	while (!nul && len < cap) {
		size_t want = cap - len < NAME_CHUNK ? cap - len : NAME_CHUNK;
		ssize_t got;

		if (ARRAY_RESERVE(buf, alloc, len + want + 1))
			break;
		got = pread(es->fd, buf + len, want, (off_t)(es->str_off + off + len));
		if (got <= 0)
			break;	/* an error, or the file shrank since it was read */
		nul = memchr(buf + len, '\0', got);
		len += got;
	}
	/* unterminated, or empty: the file changed under the table */
	if (!nul || nul == buf) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int kept_eq(__u32 id, const void *key, const void *ctx)
{
	const struct elf_syms *es = ctx;

	return es->kept[id - 1].off == *(const __u32 *)key;
}

/* the name at OFF of a table whose names stay in the file: read once, then kept */
static const char *file_name(struct elf_syms *es, __u32 off)
{
	__u64 h = hash_u64(off, 0);
	const char *name = NULL;
	__u32 id;
	char *str;

	pthread_mutex_lock(&es->lock);
	if (!es->kept_index && !(es->kept_index = hmap__new()))
		goto out;
	id = hmap__find(es->kept_index, h, kept_eq, &off, es);
	if (id) {
		name = es->kept[id - 1].str;
		goto out;
	}
	if (ARRAY_RESERVE(es->kept, es->cap_kept, es->n_kept + 1))
		goto out;
	str = read_name(es, off);
	if (!str)
		goto out;
	if (hmap__insert(es->kept_index, h, es->n_kept + 1)) {
		free(str);
		goto out;
	}
	es->kept[es->n_kept++] = (struct kept_name){ .off = off, .str = str };
	es->kept_bytes += strlen(str) + 1 + sizeof(struct kept_name);
	name = str;
out:
	pthread_mutex_unlock(&es->lock);
	return name;
}

int elf_syms__offset_to_vaddr(const struct elf_syms *es, __u64 off, __u64 *vaddr)
{
	for (size_t i = 0; i < es->n_loads; i++) {
		const struct eload *l = &es->loads[i];

		if (off >= l->offset && off - l->offset < l->filesz) {
			*vaddr = off - l->offset + l->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

const char *elf_syms__lookup(const struct elf_syms *es, __u64 vaddr, __u64 *offset)
{
	size_t lo = 0, hi = es->n;
	const struct esym *s;

	/*
	 * find the largest sym addr <= vaddr: syms is sorted by address and the
	 * loop keeps syms[i].addr <= vaddr for every i < lo and > vaddr for every
	 * i >= hi, so when lo == hi the answer is lo - 1 (none when lo is 0).
	 */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (es->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &es->syms[lo - 1];
	if (s->size && vaddr - s->addr >= s->size)
		return NULL;	/* in padding or code no symbol names */
	if (offset)
		*offset = vaddr - s->addr;
	if (es->names)
		return es->names + s->name;
	/* the lookup is const to callers; only the kept names change, under their lock */
	return file_name((struct elf_syms *)es, s->name);
}

const char *elf_syms__build_id(const struct elf_syms *es)
{
	return es->build_id;
}

size_t elf_syms__count(const struct elf_syms *es)
{
	return es->n;
}

size_t elf_syms__mem_size(const struct elf_syms *es)
{
	size_t kept;

	pthread_mutex_lock((pthread_mutex_t *)&es->lock);
	kept = es->kept_bytes + (es->kept_index ? hmap__bytes(es->kept_index) : 0);
	pthread_mutex_unlock((pthread_mutex_t *)&es->lock);
	return sizeof(*es) + es->n * sizeof(*es->syms) + es->names_len + kept;
}

int elf_read_build_id(int fd, char *hex, size_t size)
{
	int err;
	Elf *elf;

	elf = elf_open_read(fd, &err);
	if (!elf)
		return err;
	if (elf_kind(elf) != ELF_K_ELF)
		err = -ENOEXEC;
	else
		err = find_build_id(elf, hex, size);
	elf_end(elf);
	return err;
}
