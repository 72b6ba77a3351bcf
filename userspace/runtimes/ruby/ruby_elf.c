/* ruby_elf.c -- finds CRuby in a mapped file: its version, vm_exec, ruby_current_ec's TLS slot, the symbol table */
#include <errno.h>
#include <stdbool.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lib/proc_mem.h"
#include "runtimes/thread_local.h"
#include "symbolize/elf_find.h"
#include "symbolize/elf_syms.h"
#include "symbolize/proc_maps.h"
#include "symbolize/procfs.h"
#include "ruby_int.h"

#define HDR_MAX (4u << 20)	/* an .eh_frame_hdr larger than this is refused */
#define CODE_SCAN 512		/* bytes of a function scanned for what it references */
#define JUMPS_MAX 16
#define RB_LE_MAX 65536		/* a local-exec offset past a static TLS block's largest is no offset */

/*
 * Debian's libruby exports neither vm_exec nor ruby_current_ec nor the
 * symbol table (3.3 exports its public API only), so they are found in the
 * code of exported functions that use them, each checked: rb_iseq_eval_main
 * reads ruby_current_ec first (__tls_get_addr's general or local dynamic
 * sequence; a static CRuby's executable has it as a symbol of its own block)
 * and ends in a tail jump to vm_exec; rb_id2str jumps to the function that
 * reads ruby_global_symbols' last_id and, 16 bytes on, ids.
 */
enum { SYM_VERSION, SYM_EVAL_MAIN, SYM_ID2STR, SYM_VM_EXEC, SYM_COUNT };
static const char *const wanted[SYM_COUNT] = { "ruby_version", "rb_iseq_eval_main", "rb_id2str",
					       "rb_vm_exec" };

/* the vaddr of the file's PT_GNU_EH_FRAME and its size */
static int eh_frame_hdr(int fd, __u64 *vaddr, __u64 *size)
{
	int err = -ENOENT;
	Elf *elf = elf_open_read(fd, &err);
	size_t n;
	GElf_Phdr ph;

	if (!elf)
		return -EINVAL;
	err = -ENOENT;
	if (!elf_getphdrnum(elf, &n))
		for (size_t i = 0; i < n; i++)
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME) {
				*vaddr = ph.p_vaddr;
				*size = ph.p_memsz;
				err = 0;
			}
	elf_end(elf);
	return err;
}

/*
 * The end of the function starting at START (a process address): the next
 * function's start by .eh_frame_hdr's sorted table, which must hold START
 * itself (the check that START is a function). HDR is the process's copy.
 */
static int function_end(const __u8 *hdr, size_t len, __u64 hdr_at, __u64 start, __u64 *end)
{
	__u32 count;
	size_t lo = 0, hi;
	__s32 loc;

	/* version 1; eh_frame_ptr pcrel sdata4; fde_count udata4; table datarel sdata4 */
	if (len < 12 || hdr[0] != 1 || hdr[1] != 0x1b || hdr[2] != 0x03 || hdr[3] != 0x3b)
		return -EINVAL;
	memcpy(&count, hdr + 8, 4);
	if (count < 2 || count > (len - 12) / 8)
		return -EINVAL;
	hi = count;
	while (lo < hi) {	/* first entry whose start is above START */
		size_t mid = lo + (hi - lo) / 2;

		memcpy(&loc, hdr + 12 + 8 * mid, 4);
		if (hdr_at + (__s64)loc <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || lo == count)
		return -ENOENT;
	memcpy(&loc, hdr + 12 + 8 * (lo - 1), 4);
	if (hdr_at + (__s64)loc != start)
		return -ENOENT;
	memcpy(&loc, hdr + 12 + 8 * lo, 4);
	*end = hdr_at + (__s64)loc;
	return 0;
}

static int read_version(__u32 pid, __u64 at, __u32 *version)
{
	char s[16] = "";
	unsigned a, b, c;

	if (proc_mem__read_some(pid, at, s, sizeof(s) - 1) <= 0 ||
	    sscanf(s, "%u.%u.%u", &a, &b, &c) != 3 || a > 9 || b > 99 || c > 99)
		return -EINVAL;
	*version = a << 16 | b << 8 | c;
	return 0;
}

/* The code of FUNC (process address), SIZE bytes at most CODE_SCAN, into b. */
static int read_code(__u32 pid, __u64 func, __u64 size, __u8 *b, size_t *len)
{
	*len = size && size < CODE_SCAN ? size : CODE_SCAN;
	return proc_mem__read(pid, func, b, *len);
}

/* The scanners of the file's instruction set (its e_machine): each reads its own code only. */
struct isa {
	bool x86;	/* the TLS sequences are x86-64's; AArch64's libruby is read by its TLSDESC slot */
	int (*jumps)(const __u8 *b, size_t len, __u64 at, __u64 *out, int max);
	int (*symbols)(const __u8 *b, size_t len, __u64 at, __u64 *symbols);
};
static const struct isa isa_x86 = { true, rb_code__jumps, rb_code__symbols };
static const struct isa isa_a64 = { false, rb_code__a64_jumps, rb_code__a64_symbols };

static const struct isa *isa_of(int fd)
{
	__u16 machine;

	if (pread(fd, &machine, sizeof(machine), 18) != sizeof(machine))	/* e_machine */
		return NULL;
	return machine == EM_X86_64 ? &isa_x86 : machine == EM_AARCH64 ? &isa_a64 : NULL;
}

/* The first of the jumps out of the code at AT that lands on a function's start: its start and end. */
static int tail_call(const struct isa *isa, const __u8 *b, size_t len, __u64 at, const __u8 *hdr,
		     size_t hdr_len, __u64 hdr_at, __u64 *start, __u64 *end)
{
	__u64 jumps[JUMPS_MAX];
	int n = isa->jumps(b, len, at, jumps, JUMPS_MAX);

	for (int i = 0; i < n; i++)
		if (!function_end(hdr, hdr_len, hdr_at, jumps[i], end)) {
			*start = jumps[i];
			return 0;
		}
	return -ENOENT;
}

/*
 * Where ruby_current_ec is, if the file did not say (f->tls_static unset),
 * from rb_iseq_eval_main's code B[0, len) at AT: 0, or -ENOTSUP.
 */
static int tls_from_code(const struct isa *isa, bool exe, const __u8 *b, size_t len, __u64 at,
			 struct rb_found *f)
{
	if (f->tls_static)
		return 0;
	if (!isa->x86)
		return -ENOTSUP;	/* AArch64's is read from the file only */
	/* a shared libruby's call of __tls_get_addr (general or local dynamic) */
	if (!rb_code__tls_index(b, len, at, &f->tls_index, &f->tls_add))
		return 0;
	/* a static CRuby stripped of its local symbols: its mov %fs:offset */
	if (exe && !rb_code__tls_local_exec(b, len, &f->tls_static) && f->tls_static >= -RB_LE_MAX)
		return 0;
	f->tls_static = 0;
	return -ENOTSUP;
}

/* vm_exec's range and the symbol table, from the code of the process's libruby */
static int find_code(const struct isa *isa, __u32 pid, const struct elf_found *sym, __u64 bias,
		     const __u8 *hdr, size_t hdr_len, __u64 hdr_at, bool exe, struct rb_found *f)
{
	__u8 b[CODE_SCAN];
	size_t len;
	__u64 main_at = sym[SYM_EVAL_MAIN].value + bias, id2str = sym[SYM_ID2STR].value + bias;
	__u64 next, next_end;

	if (read_code(pid, main_at, sym[SYM_EVAL_MAIN].size, b, &len) ||
	    tls_from_code(isa, exe, b, len, main_at, f))
		return -ENOTSUP;
	if (sym[SYM_VM_EXEC].value) {
		f->exec_start = sym[SYM_VM_EXEC].value + bias;	/* 3.1 exports it */
		if (function_end(hdr, hdr_len, hdr_at, f->exec_start, &f->exec_end))
			return -ENOTSUP;
	} else if (tail_call(isa, b, len, main_at, hdr, hdr_len, hdr_at, &f->exec_start, &f->exec_end)) {
		return -ENOTSUP;
	}
	/* rb_id2str reads the table (a static CRuby inlines it), or jumps to where it is read */
	if (sym[SYM_ID2STR].value && !read_code(pid, id2str, sym[SYM_ID2STR].size, b, &len) &&
	    isa->symbols(b, len, id2str, &f->symbols) &&
	    !tail_call(isa, b, len, id2str, hdr, hdr_len, hdr_at, &next, &next_end) &&
	    !read_code(pid, next, next_end - next, b, &len))
		isa->symbols(b, len, next, &f->symbols);
	return 0;
}

int rb_elf__probe(const char *proc_root, __u32 pid, const struct proc_map *m,
		  struct rb_found *f)
{
	struct elf_found sym[SYM_COUNT];
	struct stat st;
	__u64 vaddr, hdr_vaddr = 0, hdr_size = 0, bias;
	__u8 *hdr = NULL;
	const struct isa *isa = NULL;
	struct thread_local tls;
	bool exe = false;
	int fd, err = procfs__open_mapped(proc_root, pid, m, &fd, &st);

	memset(f, 0, sizeof(*f));
	if (err)
		return err;
	err = elf_find__symbols(fd, m->pgoff, wanted, SYM_COUNT, sym, &vaddr);
	if (!err && (!sym[SYM_VERSION].value || !sym[SYM_EVAL_MAIN].value))
		err = -ENOENT;
	/*
	 * ruby_current_ec where the file says: a static CRuby's own block, or an
	 * exported one's GOT slot the loader resolved (AArch64's TLSDESC)
	 */
	if (!err && !thread_local__elf(fd, m->pgoff, false, "ruby_current_ec",
				       THREAD_LOCAL_SYMTAB | THREAD_LOCAL_BY_INTERP, &tls)) {
		exe = tls.exe;
		if (tls.kind == THREAD_LOCAL_STATIC)
			f->tls_static = tls.value;
		else if ((tls.kind == THREAD_LOCAL_DESC || tls.kind == THREAD_LOCAL_TPOFF) &&
			 thread_local__got(pid, m, &tls, &f->tls_static))
			f->tls_static = 0;
	}
	if (!err && (!(isa = isa_of(fd)) || eh_frame_hdr(fd, &hdr_vaddr, &hdr_size)))
		err = -ENOTSUP;
	close(fd);
	if (err)
		return err;
	bias = m->start - vaddr;
	if (read_version(pid, sym[SYM_VERSION].value + bias, &f->version))
		return -ENOTSUP;
	if (!hdr_size || hdr_size > HDR_MAX || !(hdr = malloc(hdr_size)))
		return -ENOTSUP;
	err = proc_mem__read(pid, hdr_vaddr + bias, hdr, hdr_size) ? -ENOTSUP :
	      find_code(isa, pid, sym, bias, hdr, hdr_size, hdr_vaddr + bias, exe, f);
	free(hdr);
	return err;
}
