/* java.c -- HotSpot JVMs: detection, reading their tables, the BPF entry, looking again at starting ones */
#include <errno.h>
#include <gelf.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "lib/array.h"
#include "lib/log.h"
#include "symbolize/elf_syms.h"
#include "symbolize/proc_maps.h"
#include "symbolize/procfs.h"
#include "unwind.h"
#include "java_int.h"

#define RETRY_NS 200000000ull	/* a starting JVM is looked at again this often */
#define WAITING_MAX 256
#define UNSURE_NS 1000000000ull	/* tables found short are looked at again for this long */

static int mem_read(void *ctx, __u64 addr, void *buf, size_t len)
{
	return proc_mem__read(*(__u32 *)ctx, addr, buf, len);
}

struct java *java__new(const struct java_opts *opts)
{
	struct java *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->opts = *opts;
	if (!j->opts.proc_root)
		j->opts.proc_root = "/proc";
	return j;
}

/* Frees state H (an rt_image_fn), counting out what its names held */
static void free_pid(void *ctx, struct rt_image *h)
{
	jvm__free_names(ctx, (struct jvm_pid *)h);
	free(h);
}

void java__free(struct java *j)
{
	if (!j)
		return;
	rt_images__release(&j->pids, free_pid, j);
	free(j->waiting);
	free(j);
}

struct jvm_pid *jvm__find_image(struct java *j, const struct proc_image *img)
{
	return (struct jvm_pid *)rt_images__find(&j->pids, img);
}

static bool is_libjvm(const struct proc_map *m)
{
	const char *base = strrchr(m->path, '/');

	return m->inode && m->path[0] == '/' && base && !strcmp(base + 1, "libjvm.so");
}

/* The table symbols of libjvm.so open at fd, as the process's addresses (bias added). */
static int read_syms(int fd, __u64 map_off, __u64 map_start, __u64 sym[JVM_SYM_COUNT])
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	GElf_Sym s;
	size_t n_ph;
	__u64 vaddr = ~0ull;
	int err = 0;
	Elf *elf = elf_open_read(fd, &err);

	if (!elf)
		return err ? err : -EINVAL;
	memset(sym, 0, sizeof(__u64) * JVM_SYM_COUNT);
	/* the vaddr of the mapped file offset: the bias of every symbol */
	if (!elf_getphdrnum(elf, &n_ph))
		for (size_t i = 0; i < n_ph; i++)
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    map_off >= ph.p_offset && map_off < ph.p_offset + ph.p_filesz)
				vaddr = ph.p_vaddr + (map_off - ph.p_offset);
	while (vaddr != ~0ull && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *data = elf_getdata(scn, NULL);

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !data || !sh.sh_entsize)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *name;

			if (!gelf_getsym(data, (int)i, &s) || !s.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name || strncmp(name, "gHotSpotVM", 10))
				continue;
			for (int k = 0; k < JVM_SYM_COUNT; k++)
				if (!strcmp(name, jvm_sym_names[k]))
					sym[k] = s.st_value - vaddr + map_start;
		}
	}
	elf_end(elf);
	for (int k = 0; k < JVM_SYM_COUNT; k++)
		if (!sym[k])
			return -ENOTSUP;
	return 0;
}

/* The code heaps and the interpreter: -EAGAIN while the JVM has not made them yet. */
static int read_code_cache(__u32 pid, const struct jvm_layout *l, struct java_proc *p)
{
	__u64 arr, data, heap, buf, major = 0;
	__s32 len, limit, end, log2;

	if (proc_mem__read(pid, l->heaps, &arr, 8) ||
	    proc_mem__read(pid, l->low_bound, &p->code_low, 8) ||
	    proc_mem__read(pid, l->high_bound, &p->code_high, 8) ||
	    proc_mem__read(pid, l->interp_code, &buf, 8) ||
	    proc_mem__read(pid, l->vm_major, &major, 4))
		return -EFAULT;
	if (!arr || !buf || !p->code_low || p->code_high <= p->code_low)
		return -EAGAIN;
	if (proc_mem__read(pid, arr + l->ga_len, &len, 4) ||
	    proc_mem__read(pid, arr + l->ga_data, &data, 8))
		return -EFAULT;
	if (len <= 0 || len > JAVA_MAX_HEAPS)
		return len ? -EINVAL : -EAGAIN;
	for (int i = 0; i < len; i++) {
		struct java_heap *h = &p->heap[i];

		if (proc_mem__read(pid, data + 8 * (__u64)i, &heap, 8) ||
		    proc_mem__read(pid, heap + l->ch_memory + l->vs_low_boundary, &h->low, 8) ||
		    proc_mem__read(pid, heap + l->ch_memory + l->vs_high_boundary, &h->high, 8) ||
		    proc_mem__read(pid, heap + l->ch_segmap + l->vs_low_boundary, &h->segmap, 8) ||
		    proc_mem__read(pid, heap + l->ch_log2_seg, &log2, 4))
			return -EFAULT;
		if (log2 < 4 || log2 > 20 || h->low >= h->high || !h->segmap)
			return -EINVAL;
		h->log2_seg = (__u32)log2;
	}
	p->n_heaps = (__u32)len;
	if (proc_mem__read(pid, buf + l->sq_buffer, &p->interp_low, 8) ||
	    proc_mem__read(pid, buf + l->sq_limit, &limit, 4) ||
	    proc_mem__read(pid, buf + l->sq_end, &end, 4))
		return -EFAULT;
	/*
	 * The interpreter's queue is made larger than it needs, the code
	 * generated into it, then its unused tail handed back to the code heap
	 * (StubQueue::deallocate_unused_tail), where stubs and adapters go next:
	 * a range taken before that would call their frames interpreted ones.
	 * Ready once the queue ends at its limit.
	 */
	if (limit <= 0 || end <= 0 || end > limit)
		return -EFAULT;
	if (end < limit)
		return -EAGAIN;
	p->interp_high = p->interp_low + (__u64)end;
	return 0;
}

/* Reads the JVM mapped at m: its tables, layout and code cache; *missing names what its tables lack. */
static int probe(struct java *j, __u32 pid, const struct proc_map *m, struct jvm_layout *l,
		 struct java_proc *proc, const char **missing)
{
	__u64 sym[JVM_SYM_COUNT], major = 0;
	struct jvm_mem mem = { mem_read, &pid };
	struct vmstructs *v;
	struct stat st;
	int fd, err;

	err = procfs__open_mapped(j->opts.proc_root, pid, m, &fd, &st);
	if (err)
		return err;
	err = read_syms(fd, m->pgoff, m->start, sym);
	close(fd);
	if (err)
		return err;
	v = vmstructs__read(&mem, sym);
	if (!v) {
		*missing = "tables we can read";
		return errno == EFAULT ? -EAGAIN : -ENOTSUP;
	}
	err = jvm_layout__from_vmstructs(v, l, missing);
	vmstructs__free(v);
	if (err)
		return -ENOTSUP;
	if (proc_mem__read(pid, l->vm_major, &major, 4) == 0)
		l->major = (__u32)major;
	if (l->major >= 20)
		l->u5_x1 = true;	/* UNSIGNED5 came with JDK 20 */
	*proc = l->bpf;
	return read_code_cache(pid, l, proc);
}

static struct jvm_pid *new_pid(struct java *j, const struct proc_image *img)
{
	struct jvm_pid *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->m_index = hmap__new();
	p->nm_index = hmap__new();
	if (!p->m_index || !p->nm_index || rt_images__add(&j->pids, &p->head, img)) {
		hmap__free(p->m_index);
		hmap__free(p->nm_index);
		free(p);
		return NULL;
	}
	return p;
}

static void drop_pid(struct java *j, struct jvm_pid *p)
{
	rt_images__remove(&j->pids, &p->head);
	free_pid(j, &p->head);
}

static void wait_for(struct java *j, const struct proc_image *img)
{
	for (size_t i = 0; i < j->n_waiting; i++)
		if (proc_image__eq(&j->waiting[i], img))
			return;
	if (j->n_waiting < WAITING_MAX &&
	    !ARRAY_RESERVE(j->waiting, j->cap_waiting, j->n_waiting + 1))
		j->waiting[j->n_waiting++] = *img;
}

int java__add_image(struct java *j, const struct proc_image *img)
{
	__u32 pid = img->pid;
	bool counted = false, known;	/* counted unknown; counted as a JVM */
	struct proc_map *maps = NULL;
	struct jvm_layout layout;
	struct java_proc proc = {};
	const char *missing = "?";
	struct jvm_pid *p;
	size_t n = 0;
	int err, found = -ENOENT;

	if (!j)
		return -EINVAL;
	p = (struct jvm_pid *)rt_images__current(&j->pids, pid);
	if (p && runtime__outdated(&p->img, img))
		return -ESTALE;	/* a wait of an image that exec'd since (a shell's exec) */
	err = runtime__read_maps(j->opts.proc_root, pid, &maps, &n);
	if (err)
		return err;	/* gone or exiting: not an exec, its names stay */
	for (size_t i = 0; i < n && found == -ENOENT; i++)
		if (is_libjvm(&maps[i])) {
			found = probe(j, pid, &maps[i], &layout, &proc, &missing);
			if (found == -ENOENT)
				found = -EIO;	/* -ENOENT says no JVM; this one is there */
		}
	proc_maps__free(maps);
	p_debug("pid %u: java probe %d", pid, found);
	known = runtime__counted(p ? &p->img : NULL, p && !p->unknown, img);
	if (p && !proc_image__eq(&p->img, img)) {
		/* the same process counted unknown before (found running, or before its exec): once */
		counted = p->unknown && !p->unsure && runtime__same_process(&p->img, img);
		/* an exec, a recycled pid: its names stay for its own samples until the second sweep */
		p->superseded = true;
		bpf_map_delete_elem(j->opts.procs_fd, &pid);
		p = NULL;
	}
	if (found == -ENOENT)
		return -ENOENT;
	if (found == -EAGAIN) {
		j->stats.not_ready++;
		wait_for(j, img);
		return found;
	}
	if (found && found != -ENOTSUP)
		return found;
	layout.bpf = proc;
	if (p && !p->dead && ((found && p->unknown && !p->unsure) ||
			      (!found && !p->unknown && !memcmp(&p->layout, &layout, sizeof(layout)))))
		return found;	/* known already */
	if (found && p && !p->dead && p->unsure) {
		if ((__u64)clock_ns(CLOCK_MONOTONIC) - p->unsure_since_ns < UNSURE_NS) {
			j->stats.not_ready++;
			wait_for(j, img);
			return -EAGAIN;
		}
		/* still so a second later: this build lacks it */
		p->unsure = false;
		j->stats.unknown_layout++;
		if (!j->said_unknown)
			p_warn("pid %u: its JVM has no %s: its processes get native frames only",
			       pid, missing);
		j->said_unknown = true;
		return found;
	}
	if (p)
		drop_pid(j, p);	/* the same image, another JVM layout */
	p = new_pid(j, img);
	if (!p)
		return -ENOMEM;
	if (found && counted) {
		p->unknown = true;
		return found;
	}
	if (found) {
		/*
		 * Tables read while libjvm is still being loaded (relocated,
		 * its constructors run) lack fields too: seen at looks a
		 * millisecond apart in a JVM's first 60 ms. Believed only if
		 * still so a second later; not walked meanwhile.
		 */
		p->unknown = true;
		p->unsure = true;
		p->unsure_since_ns = (__u64)clock_ns(CLOCK_MONOTONIC);
		j->stats.not_ready++;
		wait_for(j, img);
		return -EAGAIN;
	}
	p->layout = layout;
	err = runtime__set_table(j->opts.pids_fd, j->opts.procs_fd, UNWIND_RT_JAVA, pid, &proc);
	if (err)
		return err;
	j->stats.jvms += !known;
	p->found_ns = (__u64)clock_ns(CLOCK_MONOTONIC);
	p_debug("pid %u: JDK %llu, %u code heaps, its Java frames walked in BPF", pid,
		(unsigned long long)layout.major, proc.n_heaps);
	return 0;
}

void java__retry(struct java *j)
{
	__u64 now;
	size_t n;

	if (!j || !j->n_waiting)
		return;
	now = (__u64)clock_ns(CLOCK_MONOTONIC);
	if (now < j->next_retry_ns)
		return;
	j->next_retry_ns = now + RETRY_NS;
	n = j->n_waiting;
	j->n_waiting = 0;
	/* an image still starting puts itself back */
	struct proc_image *imgs = malloc(n * sizeof(*imgs));

	if (!imgs)
		return;
	memcpy(imgs, j->waiting, n * sizeof(*imgs));
	for (size_t i = 0; i < n; i++)
		if (proc_image__lives(j->opts.proc_root, &imgs[i]))
			java__add_image(j, &imgs[i]);
	free(imgs);
}

/* An image ended at two sweeps in a row: its names go, with its BPF table if still its own. */
void java__sweep(struct java *j)
{
	if (j)
		rt_images__sweep(&j->pids, j->opts.proc_root, j->opts.procs_fd, free_pid, j);
}

void java__stats(const struct java *j, struct java_stats *out)
{
	*out = j->stats;
}
