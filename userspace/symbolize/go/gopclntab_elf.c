/* gopclntab_elf.c -- where a Go pclntab lives in an ELF file: sections, scans, relocations */
#include <errno.h>
#include <gelf.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "lib/sigbus.h"
#include "gopclntab_int.h"
#include "lib/array.h"

#define SCAN_CHUNK (1u << 20)
#define SCAN_TOTAL_MAX (1ULL << 30)	/* bytes of segments one open may scan */
#define DYNAMIC_MAX (64u << 10)
#define RELOCS_MAX (16u << 20)
#define RELOC_BATCH 4096
#define WIN_SIZE (256u << 10)		/* read-ahead window for many small reads */

#ifndef EM_LOONGARCH
#define EM_LOONGARCH 258
#endif

int gopcln_elf_read(const struct gopcln_elf *ef, __u64 off, void *buf, size_t len)
{
	size_t done = 0;

	if (off > ef->file_size || len > ef->file_size - off)
		return -EINVAL;
	while (done < len) {
		ssize_t r = pread(ef->fd, (char *)buf + done, len - done, off + done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		/* the file shrank since fstat(): treat it as malformed */
		if (r == 0)
			return -EINVAL;
		done += r;
	}
	return 0;
}

int gopcln_elf_vaddr_span(const struct gopcln_elf *ef, __u64 vaddr, __u64 *off, __u64 *avail)
{
	for (size_t i = 0; i < ef->n_loads; i++) {
		const struct gopcln_load *l = &ef->loads[i];

		if (vaddr >= l->vaddr && vaddr - l->vaddr < l->filesz) {
			*off = l->offset + (vaddr - l->vaddr);
			*avail = l->filesz - (vaddr - l->vaddr);
			return 0;
		}
	}
	return -ENOENT;
}

/* LEN bytes at VADDR, all inside one segment's file bytes; small reads go through a window */
int gopcln_elf_read_vaddr(struct gopcln_elf *ef, __u64 vaddr, void *buf, size_t len)
{
	__u64 off, avail;
	int err;

	if (gopcln_elf_vaddr_span(ef, vaddr, &off, &avail) || len > avail)
		return -ENOENT;
	if (len > WIN_SIZE / 4)
		return gopcln_elf_read(ef, off, buf, len);
	if (!ef->win) {
		ef->win = malloc(WIN_SIZE);
		if (!ef->win)
			return -ENOMEM;
	}
	if (off < ef->win_off || off + len > ef->win_off + ef->win_len) {
		size_t n = ef->file_size - off < WIN_SIZE ? ef->file_size - off : WIN_SIZE;

		ef->win_len = 0;
		err = gopcln_elf_read(ef, off, ef->win, n);
		if (err)
			return err;
		ef->win_off = off;
		ef->win_len = n;
	}
	memcpy(buf, ef->win + (off - ef->win_off), len);
	return 0;
}

static __u32 relative_type(__u16 machine)
{
	switch (machine) {
	case EM_X86_64:
		return 8;	/* R_X86_64_RELATIVE */
	case EM_AARCH64:
		return 1027;	/* R_AARCH64_RELATIVE */
	case EM_PPC64:
		return 22;	/* R_PPC64_RELATIVE */
	case EM_S390:
		return 12;	/* R_390_RELATIVE */
	case EM_RISCV:
	case EM_LOONGARCH:
		return 3;	/* R_RISCV_RELATIVE, R_LARCH_RELATIVE */
	default:
		return 0;
	}
}

static __u64 ld_elf(const struct gopcln_elf *ef, const __u8 *p, bool wide)
{
	return wide ? ld64(p, ef->elf_be) : ld32(p, ef->elf_be);
}

static int cmp_reloc(const void *a, const void *b)
{
	const struct gopcln_reloc *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* DT_RELA, DT_RELASZ of the dynamic segment; 0 or -ENOENT */
static int find_rela(struct gopcln_elf *ef, __u64 *rela, __u64 *relasz)
{
	size_t ent = ef->elf64 ? 16 : 8;
	size_t len = ef->dyn_size < DYNAMIC_MAX ? ef->dyn_size : DYNAMIC_MAX;
	__u8 *buf = malloc(len ? len : 1);
	int err = -ENOENT;

	*rela = *relasz = 0;
	if (!buf)
		return -ENOMEM;
	if (len && !gopcln_elf_read(ef, ef->dyn_off, buf, len)) {
		for (size_t i = 0; i + ent <= len; i += ent) {
			__u64 tag = ld_elf(ef, buf + i, ef->elf64);
			__u64 val = ld_elf(ef, buf + i + ent / 2, ef->elf64);

			if (tag == DT_NULL)
				break;
			if (tag == DT_RELA)
				*rela = val;
			else if (tag == DT_RELASZ)
				*relasz = val;
			else if (tag == DT_RELAENT && val != (ef->elf64 ? 24 : 12))
				break;
		}
		err = *rela && *relasz ? 0 : -ENOENT;
	}
	free(buf);
	return err;
}

/*
 * The R_*_RELATIVE relocations of an ET_DYN file. A system linker (lld without
 * --apply-dynamic-relocs) may leave pointer words 0 in the file and keep their
 * value only as the addend; the addend is the ELF virtual address we want.
 */
static int read_relocs(struct gopcln_elf *ef)
{
	size_t ent = ef->elf64 ? 24 : 12, cap = 0, n;
	__u32 type = relative_type(ef->machine);
	__u64 rela, relasz, off, avail;
	__u8 *buf = NULL;
	int err;

	ef->relocs_read = true;
	if (!type || find_rela(ef, &rela, &relasz) || gopcln_elf_vaddr_span(ef, rela, &off, &avail))
		return 0;
	n = (relasz < avail ? relasz : avail) / ent;
	n = n < RELOCS_MAX ? n : RELOCS_MAX;
	buf = malloc(RELOC_BATCH * ent);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < n; i += RELOC_BATCH) {
		size_t m = n - i < RELOC_BATCH ? n - i : RELOC_BATCH;

		err = gopcln_elf_read(ef, off + i * ent, buf, m * ent);
		if (err)
			break;
		for (size_t j = 0; j < m; j++) {
			const __u8 *r = buf + j * ent;
			__u64 info = ld_elf(ef, r + ent / 3, ef->elf64);

			if ((ef->elf64 ? (info & 0xffffffff) : (info & 0xff)) != type)
				continue;
			err = ARRAY_RESERVE(ef->relocs, cap, ef->n_relocs + 1);
			if (err)
				goto out;
			ef->relocs[ef->n_relocs].off = ld_elf(ef, r, ef->elf64);
			ef->relocs[ef->n_relocs].addend = ld_elf(ef, r + 2 * ent / 3, ef->elf64);
			ef->n_relocs++;
		}
	}
	err = 0;
	if (ef->n_relocs)
		qsort(ef->relocs, ef->n_relocs, sizeof(*ef->relocs), cmp_reloc);
out:
	free(buf);
	return err;
}

__u64 gopcln_elf_reloc_addend(struct gopcln_elf *ef, __u64 vaddr)
{
	size_t lo = 0, hi;

	if (!ef->dyn || (!ef->relocs_read && read_relocs(ef)))
		return 0;
	hi = ef->n_relocs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ef->relocs[mid].off < vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ef->n_relocs && ef->relocs[lo].off == vaddr ? ef->relocs[lo].addend : 0;
}

/* offsets of up to MAX words relocated to ADDEND; how many */
int gopcln_elf_relocs_to(struct gopcln_elf *ef, __u64 addend, __u64 *offs, size_t max)
{
	size_t n = 0;

	if (!ef->dyn || (!ef->relocs_read && read_relocs(ef)))
		return 0;
	for (size_t i = 0; i < ef->n_relocs && n < max; i++)
		if (ef->relocs[i].addend == addend)
			offs[n++] = ef->relocs[i].off;
	return n;
}

/* a pointer-sized word of the loaded image, as the dynamic loader would relocate it (bias 0) */
int gopcln_elf_word(struct gopcln_elf *ef, __u64 vaddr, size_t size, bool be, __u64 *v)
{
	__u8 b[8];
	int err;

	if (size != 4 && size != 8)
		return -EINVAL;
	err = gopcln_elf_read_vaddr(ef, vaddr, b, size);
	if (err)
		return err;
	*v = size == 8 ? ld64(b, be) : ld32(b, be);
	if (!*v)
		*v = gopcln_elf_reloc_addend(ef, vaddr);
	return 0;
}

int gopcln_elf_open(struct gopcln_elf *ef, int fd)
{
	struct stat st;
	GElf_Ehdr eh;
	size_t nph;
	Elf *elf;

	memset(ef, 0, sizeof(*ef));
	ef->fd = fd;
	if (fstat(fd, &st))
		return -errno;
	ef->file_size = st.st_size;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ELIBACC;
	/* ELF_C_READ: headers come in by pread, never by mmap */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -ENOENT;
	ef->elf = elf;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &nph))
		return -ENOENT;
	ef->dyn = eh.e_type == ET_DYN;
	ef->elf64 = gelf_getclass(elf) == ELFCLASS64;
	ef->elf_be = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	ef->machine = eh.e_machine;
	for (size_t i = 0; i < nph; i++) {
		__u64 filesz;
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_offset > ef->file_size)
			continue;
		/* a segment runs no further than the file actually is */
		filesz = ph.p_filesz < ef->file_size - ph.p_offset ? ph.p_filesz :
								     ef->file_size - ph.p_offset;
		if (ph.p_type == PT_DYNAMIC) {
			ef->dyn_off = ph.p_offset;
			ef->dyn_size = filesz;
		} else if (ph.p_type == PT_LOAD && ef->n_loads < GOPCLN_LOADS_MAX && filesz) {
			ef->loads[ef->n_loads++] = (struct gopcln_load){
				.offset = ph.p_offset,
				.vaddr = ph.p_vaddr,
				.filesz = filesz,
				.flags = ph.p_flags,
			};
		}
	}
	return 0;
}

void gopcln_elf_close(struct gopcln_elf *ef)
{
	if (ef->elf)
		elf_end(ef->elf);
	free(ef->relocs);
	free(ef->scan_buf);
	free(ef->trees);
	free(ef->win);
	memset(ef, 0, sizeof(*ef));
}

/* the callback at one position, when its first four bytes are one of the patterns */
static int scan_at(struct gopcln_elf *ef, const __u8 (*pats)[4], int npats, const __u8 *p,
		   size_t avail, __u64 vaddr, __u64 rest, gopcln_scan_cb cb, void *arg)
{
	for (int k = 0; k < npats; k++)
		if (!memcmp(p, pats[k], 4))
			return cb(ef, p, avail, vaddr, rest, arg);
	return 0;
}

int gopcln_elf_scan(struct gopcln_elf *ef, const __u8 (*pats)[4], int npats, size_t align,
		    bool writable_first, gopcln_scan_cb cb, void *arg)
{
	__u8 *buf = malloc(SCAN_CHUNK + GOPCLN_SCAN_PEEK);
	__u64 total = 0;
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	ef->scan_buf = buf;	/* CB reads the mapped table: a jump out of it leaves buf to close */
	for (int pass = 0; pass < 2 && !ret; pass++) {
		for (size_t li = 0; li < ef->n_loads && !ret; li++) {
			const struct gopcln_load *l = &ef->loads[li];
			bool w = l->flags & PF_W;

			if ((l->flags & PF_X) || w != (writable_first == !pass))
				continue;
			for (__u64 pos = 0; pos < l->filesz && !ret; pos += SCAN_CHUNK) {
				__u64 left = l->filesz - pos;
				size_t len = left < SCAN_CHUNK + GOPCLN_SCAN_PEEK ?
						     left : SCAN_CHUNK + GOPCLN_SCAN_PEEK;
				size_t lim = len < SCAN_CHUNK ? len : SCAN_CHUNK;
				size_t i = (align - (l->vaddr + pos) % align) % align;

				total += len;
				if (total > SCAN_TOTAL_MAX)
					goto out;
				ret = gopcln_elf_read(ef, l->offset + pos, buf, len);
				for (; !ret && i < lim && len - i >= 4; i += align)
					ret = scan_at(ef, pats, npats, buf + i, len - i,
						      l->vaddr + pos + i, left - i, cb, arg);
			}
		}
	}
out:
	free(buf);
	ef->scan_buf = NULL;
	return ret;
}

/*
 * Maps LEN bytes of the file at OFF read-only into T: pages are read from the
 * page cache as lookups touch them, and the kernel may drop them again, so a
 * large table (17 MB for dockerd) costs memory only for what is looked up.
 * The reads are guarded against a truncation underneath (lib/sigbus.h).
 */
static int map_table(struct gopcln_elf *ef, struct gopclntab *t, __u64 off, __u64 len)
{
	long page = sysconf(_SC_PAGESIZE);
	__u64 start = off & ~(__u64)(page - 1);
	void *m;

	if (page <= 0 || sigbus__install())
		return -ENOTSUP;
	m = mmap(NULL, len + (off - start), PROT_READ, MAP_PRIVATE, ef->fd, start);
	if (m == MAP_FAILED)
		return -errno;
	t->map = m;
	t->map_len = len + (off - start);
	t->data = (__u8 *)m + (off - start);
	return 0;
}

/* LEN bytes of the file at OFF copied into T, one NUL after them */
static int copy_table(struct gopcln_elf *ef, struct gopclntab *t, __u64 off, __u64 len)
{
	__u8 *d = malloc(len + 1);
	int err;

	if (!d)
		return -ENOMEM;
	err = gopcln_elf_read(ef, off, d, len);
	if (err) {
		free(d);
		return err;
	}
	d[len] = '\0';
	t->data = d;
	return 0;
}

static void unload_table(struct gopclntab *t)
{
	if (t->map)
		munmap(t->map, t->map_len);
	else
		free(t->data);
	/* everything a load sets; the lock and the kept strings (none yet) stay */
	memset(t, 0, offsetof(struct gopclntab, lock));
}

/* reads the table at file offset OFF (loaded at VADDR) and checks it */
static int load_table(struct gopcln_elf *ef, struct gopclntab *t, __u64 off, __u64 vaddr,
		      __u64 len, bool scanned)
{
	size_t used;
	__u8 *d;
	int err;

	if (len > GOPCLNTAB_MAX)
		return -EFBIG;
	if (len > ef->file_size || off > ef->file_size - len)
		return -EINVAL;
	/* a mapping where the file allows one (not every filesystem does) */
	if (map_table(ef, t, off, len) && (err = copy_table(ef, t, off, len)))
		return err;
	t->size = len;
	t->vaddr = vaddr;
	err = pcln_parse(t, ef);
	if (err) {
		unload_table(t);
		return err;
	}
	/* a scan read to the end of the segment: keep only the table */
	used = scanned ? pcln_table_end(t) : len;
	if (used < len && t->map) {
		t->size = used;
	} else if (used < len) {
		d = realloc(t->data, used + 1);
		if (d) {
			t->data = d;
			t->size = used;
			d[used] = '\0';
		}
	}
	return 0;
}

struct scan_state {
	struct gopclntab *t;
	bool saw_header;
};

static int try_table(struct gopcln_elf *ef, const __u8 *p, size_t avail, __u64 vaddr, __u64 rest,
		     void *arg)
{
	struct scan_state *s = arg;
	__u64 off, span;
	int err;

	if (!pcln_header_plausible(p, avail, rest) || gopcln_elf_vaddr_span(ef, vaddr, &off, &span))
		return 0;
	s->saw_header = true;
	err = load_table(ef, s->t, off, vaddr, rest < GOPCLNTAB_MAX ? rest : GOPCLNTAB_MAX, true);
	if (err == -EINVAL)
		return 0;
	return err ? err : 1;
}

static bool go_section_name(const char *name)
{
	static const char *const names[] = { ".go.buildinfo", ".note.go.buildid", ".gosymtab",
					     ".gopclntab", ".data.rel.ro.gopclntab" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/* the table by section name; -ENOENT when there is none, *go_hint when the file looks like Go */
static int find_section(struct gopcln_elf *ef, struct gopclntab *t, bool *go_hint)
{
	size_t shstrndx, nsec = 0;
	Elf_Scn *scn = NULL;

	*go_hint = false;
	if (elf_getshdrstrndx(ef->elf, &shstrndx))
		goto no_sections;
	while ((scn = elf_nextscn(ef->elf, scn))) {
		const char *name;
		GElf_Shdr sh;

		nsec++;
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(ef->elf, shstrndx, sh.sh_name)))
			continue;
		if (go_section_name(name))
			*go_hint = true;
		if (sh.sh_type == SHT_NOBITS ||
		    (strcmp(name, ".gopclntab") && strcmp(name, ".data.rel.ro.gopclntab")))
			continue;
		return load_table(ef, t, sh.sh_offset, sh.sh_addr, sh.sh_size, false);
	}
no_sections:
	/* no section headers at all: nothing tells Go apart, so scan */
	if (!nsec)
		*go_hint = true;
	return -ENOENT;
}

int gopcln_find(struct gopcln_elf *ef, struct gopclntab *t)
{
	static const __u8 pats[8][4] = {
		{ 0xfb, 0xff, 0xff, 0xff }, { 0xfa, 0xff, 0xff, 0xff },
		{ 0xf0, 0xff, 0xff, 0xff }, { 0xf1, 0xff, 0xff, 0xff },
		{ 0xff, 0xff, 0xff, 0xfb }, { 0xff, 0xff, 0xff, 0xfa },
		{ 0xff, 0xff, 0xff, 0xf0 }, { 0xff, 0xff, 0xff, 0xf1 },
	};
	struct scan_state s = { .t = t };
	bool go_hint;
	int err;

	err = find_section(ef, t, &go_hint);
	if (err != -ENOENT)
		return err;
	/* a non-Go file with section headers is not scanned: most files a profiler meets are */
	if (!go_hint)
		return -ENOENT;
	err = gopcln_elf_scan(ef, pats, 8, 4, false, try_table, &s);
	if (err < 0)
		return err;
	if (err > 0)
		return 0;
	return s.saw_header ? -EINVAL : -ENOENT;
}
