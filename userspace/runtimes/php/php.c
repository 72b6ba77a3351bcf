/* php.c -- PHP processes (php, php-fpm, libphp.so): detection by symbols and version, the BPF table */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "lib/hashmap.h"
#include "lib/log.h"
#include "lib/proc_mem.h"
#include "symbolize/elf_find.h"
#include "symbolize/proc_maps.h"
#include "symbolize/procfs.h"
#include "php_int.h"

#define SCAN_CHUNK (1u << 20)		/* the version is looked for a megabyte at a time */
#define SCAN_MAX (256ull << 20)		/* ... in the first 256 MB of the file */
#define SCAN_OVERLAP 64			/* a version string across two chunks is still found */

enum { SYM_EG, SYM_EXEC, SYM_CALL, SYM_COUNT };
static const char *const wanted[SYM_COUNT] = { "executor_globals", "execute_ex",
						"zend_call_function" };

struct php_pid *php__find_image(struct php_rt *r, const struct proc_image *img)
{
	return (struct php_pid *)rt_images__find(&r->pids, img);
}

void php__free_pid(void *rt, struct rt_image *h)
{
	struct php_pid *p = (struct php_pid *)h;
	struct php_rt *r = rt;

	for (size_t i = 0; i < p->n_funcs; i++) {
		r->stats.func_bytes -= p->funcs[i].ok ? php_func__bytes(&p->funcs[i]) : 0;
		php_func_info__free(&p->funcs[i].info);
	}
	free(p->funcs);
	hmap__free(p->index);
	free(p);
}

/* the executable or library the Zend VM is in: php8.2, php-fpm8.4, php-cgi, libphp.so */
static bool candidate(const struct proc_map *m)
{
	const char *base = strrchr(m->path, '/');

	if (!m->inode || !base)
		return false;
	base++;
	return !strncmp(base, "php", 3) || !strncmp(base, "libphp", 6);
}

/* The PHP version the file open at FD says it is, or 0. */
static __u32 scan_version(int fd)
{
	char *buf = malloc(SCAN_CHUNK);
	__u64 off = 0;
	__u32 v = 0;
	ssize_t got;

	while (buf && !v && off < SCAN_MAX) {
		got = pread(fd, buf, SCAN_CHUNK, (off_t)off);
		if (got <= 0)
			break;
		v = php_version__parse(buf, (size_t)got);
		if ((size_t)got < SCAN_CHUNK)
			break;
		off += SCAN_CHUNK - SCAN_OVERLAP;
	}
	free(buf);
	return v;
}

/* What the file mapped at M is: read once per file (php-fpm's workers share one). */
static int probe_file(struct php_rt *r, __u32 pid, const struct proc_map *m, struct php_file *out)
{
	struct elf_found f[SYM_COUNT];
	struct php_file pf = { 0 };
	struct stat st;
	int fd, err = procfs__open_mapped(r->o.proc_root, pid, m, &fd, &st);

	if (err)
		return err;
	pf.dev = st.st_dev;
	pf.ino = st.st_ino;
	pf.mtime = (__u64)st.st_mtim.tv_sec * 1000000000ull + (__u64)st.st_mtim.tv_nsec;
	pf.map_off = m->pgoff;
	for (int i = 0; i < PHP_FILES; i++)
		if (r->files[i].ino == pf.ino && r->files[i].dev == pf.dev &&
		    r->files[i].mtime == pf.mtime && r->files[i].map_off == pf.map_off) {
			*out = r->files[i];
			close(fd);
			return 0;
		}
	err = elf_find__symbols(fd, m->pgoff, wanted, SYM_COUNT, f, &pf.map_vaddr);
	if (!err && (!f[SYM_EG].value || !f[SYM_EXEC].value || !f[SYM_EXEC].size))
		err = -ENOENT;
	if (!err) {
		pf.eg = f[SYM_EG].value;
		pf.exec = f[SYM_EXEC].value;
		pf.exec_size = f[SYM_EXEC].size;
		if (f[SYM_CALL].size) {	/* optional: without it, frames as before */
			pf.call = f[SYM_CALL].value;
			pf.call_size = f[SYM_CALL].size;
		}
		pf.version = scan_version(fd);
		r->files[r->next_file++ % PHP_FILES] = pf;
		*out = pf;
	}
	close(fd);
	return err;
}

/*
 * The layout checked against the process: the current frame, where there
 * is one, runs a function of a known type.
 */
static int check(__u32 pid, const struct php_proc *proc)
{
	__u64 ex = 0, func = 0;
	__u8 type = 0;

	if (proc_mem__read(pid, proc->current, &ex, sizeof(ex)))
		return -ENOTSUP;
	if (!ex)
		return 0;	/* nothing running yet (an idle php-fpm worker) */
	if (proc_mem__read(pid, ex + 8 * proc->ex_func, &func, sizeof(func)) || !func)
		return 0;	/* a frame popped as we looked: no verdict */
	if (proc_mem__read(pid, func, &type, 1) || (type != PHP_INTERNAL_FUNCTION && !php_user_code(type)))
		return -ENOTSUP;
	return 0;
}

/*
 * opcache's JIT code: the executable part of its shared memory, a
 * deleted /dev/zero mapping (anonymous shared memory) it made executable.
 * Nothing else of a PHP process maps that way.
 */
static void jit_range(const struct proc_map *maps, size_t n, struct php_proc *proc)
{
	for (size_t i = 0; i < n; i++)
		if (maps[i].perms[2] == 'x' && maps[i].deleted && !strcmp(maps[i].path, "/dev/zero")) {
			proc->jit_start = maps[i].start;
			proc->jit_end = maps[i].end;
			return;
		}
}

/* The process's table for BPF: 0, -ENOENT (no PHP), -ENOTSUP (a version we do not know). */
static int probe(struct php_rt *r, __u32 pid, const struct php_layout **lp, struct php_proc *proc)
{
	struct proc_map *maps = NULL;
	struct php_file pf;
	__u64 bias;
	size_t n = 0, i;
	int err = runtime__read_maps(r->o.proc_root, pid, &maps, &n);

	if (err)
		return err;
	for (i = 0; i < n && !candidate(&maps[i]); i++)
		;
	err = i < n ? probe_file(r, pid, &maps[i], &pf) : -ENOENT;
	if (err)
		goto out;
	*lp = php_layout__find(pf.version);
	if (!*lp) {
		err = -ENOTSUP;
		goto out;
	}
	bias = maps[i].start - pf.map_vaddr;
	*proc = (*lp)->bpf;
	proc->version = pf.version;
	proc->current = pf.eg + bias + (*lp)->eg_current;
	proc->exec_start = pf.exec + bias;
	proc->exec_end = pf.exec + bias + pf.exec_size;
	if (pf.call) {
		proc->call_start = pf.call + bias;
		proc->call_end = pf.call + bias + pf.call_size;
	}
	jit_range(maps, n, proc);
	err = check(pid, proc);
out:
	proc_maps__free(maps);
	return err;
}

static struct php_pid *new_pid(struct php_rt *r, const struct proc_image *img)
{
	struct php_pid *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->index = hmap__new();
	if (!p->index || rt_images__add(&r->pids, &p->head, img)) {
		hmap__free(p->index);
		free(p);
		return NULL;
	}
	return p;
}

static void drop_pid(struct php_rt *r, struct php_pid *p)
{
	rt_images__remove(&r->pids, &p->head);
	php__free_pid(r, &p->head);
}

/* An unknown version: its process stays native, said once per process. */
static int unknown(struct php_rt *r, const struct proc_image *img, bool said)
{
	struct php_pid *p = new_pid(r, img);

	if (!p)
		return -ENOMEM;
	p->unknown = true;
	if (!said) {
		r->stats.unknown_versions++;
		p_info("pid %u: a PHP whose version or layout we do not know: native frames only",
		       img->pid);
	}
	return -ENOTSUP;
}

int php__add_image(void *rt, const struct proc_image *img)
{
	struct php_rt *r = rt;
	__u32 pid = img->pid;
	struct php_pid *p = (struct php_pid *)rt_images__current(&r->pids, pid);
	const struct php_layout *l = NULL;
	struct php_proc proc;
	int err = probe(r, pid, &l, &proc);
	bool said = false, counted = runtime__counted(p ? &p->img : NULL, p && !p->unknown, img);

	if (err && err != -ENOENT)
		p_debug("pid %u: php probe %d", pid, err);
	if (err == -ESRCH)
		return err;	/* gone: what it held names its samples (runtime__read_maps) */
	if (p && !proc_image__eq(&p->img, img)) {
		said = p->unknown && runtime__same_process(&p->img, img);
		/* an exec, a recycled pid: its names stay for its own samples until the second sweep */
		p->superseded = true;
		bpf_map_delete_elem(r->o.procs_fd, &pid);
		p = NULL;
	}
	if (p && (err || p->unknown || memcmp(&p->proc, &proc, sizeof(proc)))) {
		if (p->unknown && err == -ENOTSUP)
			return err;	/* known already, and said */
		bpf_map_delete_elem(r->o.procs_fd, &pid);
		drop_pid(r, p);	/* the same image, read otherwise now */
		p = NULL;
	}
	if (err == -ENOTSUP)
		return unknown(r, img, said);
	if (err)
		return err;
	if (p && !p->dead)
		return 0;	/* known already: a re-read found the same */
	if (!p) {
		p = new_pid(r, img);
		if (!p)
			return -ENOMEM;
		r->stats.procs += !counted;
	}
	p->dead = false;
	p->layout = l;
	p->proc = proc;
	err = runtime__set_table(r->o.pids_fd, r->o.procs_fd, UNWIND_RT_PHP, pid, &proc);
	if (!err)
		p_debug("pid %u: PHP %u.%u, its frames walked in BPF", pid, proc.version / 100,
			proc.version % 100);
	return err;
}

/* An image ended at two sweeps in a row: its names go, with its BPF table if still its own. */
void php__sweep(void *rt)
{
	struct php_rt *r = rt;

	rt_images__sweep(&r->pids, r->o.proc_root, r->o.procs_fd, php__free_pid, r);
}
