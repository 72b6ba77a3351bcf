/* labels_elf.c -- what an ELF file says of its labels: Go version, custom-labels symbols, TLS block, thread-context variable */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>
#include "runtimes/thread_local.h"
#include "symbolize/elf_find.h"
#include "go_layout.h"
#include "labels_elf.h"

#define BUILDINFO_READ 512	/* the header and the version string: the rest is not needed */

/*
 * custom-labels (github.com/polarsignals/custom-labels): v0 exports the
 * thread's table itself, custom_labels_thread_local_data {storage, count};
 * v1 (custom-labels-v1.md) a pointer to it, custom_labels_current_set.
 */
enum { CL_VERSION, CL_DATA, CL_SET, CL_COUNT };
static const char *const cl_symbols[CL_COUNT] = { "custom_labels_abi_version",
						  "custom_labels_thread_local_data",
						  "custom_labels_current_set" };

/*
 * The version in .go.buildinfo, whose first bytes are read from the file
 * at its offset (its size from the file only bounds the read).
 */
static int read_version(int fd, Elf *e, struct labels_exe *x)
{
	unsigned char buf[BUILDINFO_READ];
	Elf_Scn *scn = NULL;
	size_t shstrndx, n;
	const char *name;
	GElf_Shdr sh;
	ssize_t got;

	if (elf_getshdrstrndx(e, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".go.buildinfo"))
			continue;
		n = sh.sh_size < sizeof(buf) ? sh.sh_size : sizeof(buf);
		got = pread(fd, buf, n, sh.sh_offset);
		if (got <= 0)
			return -EINVAL;
		return go_layout__version(buf, got, x->go_version, sizeof(x->go_version)) ? -EINVAL : 0;
	}
	return -ENOENT;
}

/* The executable's TLS block (thread_local.h): none, 0 bytes */
static void read_tls(Elf *e, struct labels_exe *x)
{
	bool interp;

	if (thread_local__exe_block(e, &interp, &x->tls_base, &x->tls_block))
		x->tls_base = 0, x->tls_block = 0;
}

/* Whether the thread-local F of at least SIZE bytes lies in a block of BLOCK bytes. */
static bool in_block(const struct elf_found *f, __u64 size, __u64 block)
{
	/* a TLS symbol's value is its offset in the block: 0 is one, its size says it is there */
	return f->size >= size && f->value <= block && block - f->value >= size;
}

/*
 * custom-labels' symbols: the version with the size the ABI gives, and the
 * thread-local of either version in the block; which one the process uses
 * is its version's word, read there (labels.c). The ABI has the executable
 * export them, so .dynsym alone is read: a large .symtab (a compiler's, a
 * Rust program's) cost most of the agent's CPU on a host that builds
 * software.
 */
static void read_custom(int fd, __u64 map_off, struct labels_exe *x)
{
	struct elf_found f[CL_COUNT];

	if (elf_find__exported(fd, map_off, cl_symbols, CL_COUNT, f, &x->map_vaddr))
		return;
	if (!f[CL_VERSION].value || f[CL_VERSION].size != 4)
		return;
	if (in_block(&f[CL_DATA], 16, x->tls_block))
		x->cl_data = f[CL_DATA].value, x->cl_tables |= LABELS_CL_V0;
	if (in_block(&f[CL_SET], 8, x->tls_block))
		x->cl_set = f[CL_SET].value, x->cl_tables |= LABELS_CL_V1;
	x->custom = true;
	x->cl_version = f[CL_VERSION].value;
}

int labels_elf__read(int fd, __u64 map_off, struct labels_exe *out)
{
	Elf *e;
	int err = 0;

	memset(out, 0, sizeof(*out));
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);	/* pread, not mmap: a truncated file cannot SIGBUS us */
	if (!e || elf_kind(e) != ELF_K_ELF) {
		err = -ENOENT;
		goto out;
	}
	out->go = read_version(fd, e, out);
	read_tls(e, out);
	/* the ABI's table is thread-local: without a TLS block, no symbol table is read */
	if (out->go == -ENOENT && out->tls_block)
		read_custom(fd, map_off, out);
out:
	elf_end(e);
	return err;
}
