/* python.c -- CPython processes: detection, the BPF table, and naming code objects read from their memory */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include "lib/array.h"
#include "lib/clock.h"
#include "lib/file_set.h"
#include "lib/hashmap.h"
#include "lib/log.h"
#include "lib/proc_mem.h"
#include "symbolize/proc_maps.h"
#include "symbolize/procfs.h"
#include "unwind.h"
#include "python_elf.h"
#include "python_int.h"
#include "python_runtime.h"
#include "runtimes/rt_images.h"

#define STR_MAX 4096			/* bytes of a str object: longer names are cut */
#define LINETABLE_MAX (1u << 20)	/* a line table larger than this is refused */
#define CODES_PER_PID_MAX 65536		/* code objects cached per process (python_opts.codes_max) */
#define NOT_PYTHON_MAX 4096		/* executables remembered as holding no interpreter */

/* One code object as read from the process. */
struct py_code {
	__u64 addr;
	__u32 asked;		/* the tag the frame or event gave (py_code_tag): with addr, the key */
	__u32 tag;		/* the tag as read: not asked, another code object was there */
	__s32 first;		/* co_firstlineno */
	bool ok;		/* read in full; else function says unknown */
	char *function;		/* module.qualname */
	char *file;
	__u8 *lines;		/* co_linetable / co_lnotab bytes */
	__u32 n_lines;
};

struct py_pid {
	RT_IMAGE_HEAD;		/* img, superseded, dead: rt_images.h */
	bool unknown;		/* a CPython we do not know: counted, not walked */
	struct py_layout layout;
	struct hmap *index;	/* (code address, tag) -> codes[] id + 1 */
	struct py_code *codes;
	size_t n_codes, cap_codes;
};

struct python {
	struct python_opts opts;
	struct rt_images pids;
	struct python_stats stats;
	__u8 said[2][256];	/* versions already reported unknown / mismatched, by minor */
	/*
	 * Files whose symbols hold no interpreter, by the device and inode their
	 * maps line names: every exec of /bin/sleep would read its symbol table
	 * again otherwise. A file rewritten in place keeps its inode and would be
	 * missed; binaries are replaced (a new inode), as the unwind cache assumes.
	 */
	struct file_set *not_python;
};

/* One line per version and reason for the whole run: a fleet of one Python says it once. */
static bool first_time(struct python *py, int reason, __u32 version)
{
	__u8 *said = &py->said[reason][version & 0xff];

	if (*said)
		return false;
	*said = 1;
	return true;
}

struct python *python__new(const struct python_opts *opts)
{
	struct python *py = calloc(1, sizeof(*py));

	if (!py)
		return NULL;
	py->opts = *opts;
	if (!py->opts.proc_root)
		py->opts.proc_root = "/proc";
	py->not_python = file_set__new(NOT_PYTHON_MAX);
	if (!py->not_python) {
		free(py);
		return NULL;
	}
	return py;
}

/* Frees what c holds, not c (an element of its process's array). */
static void code_free(struct py_code *c)
{
	free(c->function);
	free(c->file);
	free(c->lines);
	c->function = c->file = NULL;
	c->lines = NULL;
}

static __u64 code_size(const struct py_code *c);

/* Frees state H (an rt_image_fn), counting out what its code objects held */
static void free_pid(void *ctx, struct rt_image *h)
{
	struct py_pid *p = (struct py_pid *)h;
	struct python *py = ctx;

	for (size_t i = 0; i < p->n_codes; i++) {
		py->stats.code_bytes -= code_size(&p->codes[i]);
		code_free(&p->codes[i]);
	}
	free(p->codes);
	hmap__free(p->index);
	free(p);
}

void python__free(struct python *py)
{
	if (!py)
		return;
	rt_images__release(&py->pids, free_pid, py);
	file_set__free(py->not_python);
	free(py);
}

/* The state of image IMG (rt_images__find) */
static struct py_pid *find_image(struct python *py, const struct proc_image *img)
{
	return (struct py_pid *)rt_images__find(&py->pids, img);
}

/* Frees P, the state of an image whose samples were all named, and unlinks it */
static void drop_pid(struct python *py, struct py_pid *p)
{
	rt_images__remove(&py->pids, &p->head);
	free_pid(py, &p->head);
}

/* "libpython3.11.so.1.0" or "python3.9": the minor version its name says, else -1 */
static int version_from_name(const char *path)
{
	const char *base = strrchr(path, '/');
	int minor;

	base = base ? base + 1 : path;
	if (sscanf(base, "libpython3.%d", &minor) == 1 || sscanf(base, "python3.%d", &minor) == 1)
		return minor;
	return -1;
}

/*
 * The files that may hold the interpreter: libpython3.X, and the executable
 * (the first file mapped), which a static build links it into whatever its
 * name. Other libraries are not read: their symbols are not ours to scan.
 */
static bool candidate(const struct proc_map *m, bool first_file)
{
	const char *base = strrchr(m->path, '/');

	if (!m->inode || m->path[0] != '/')
		return false;
	base = base ? base + 1 : m->path;
	return first_file || !strncmp(base, "libpython3.", 11);
}

/* the version from Py_Version (3.11+) in memory, else the file's name */
static __u32 find_version(__u32 pid, const struct py_elf *e, __u64 bias, const char *path)
{
	__u64 v;
	int minor;

	if (e->sym[PY_SYM_VERSION].value &&
	    !proc_mem__read(pid, e->sym[PY_SYM_VERSION].value + bias, &v, sizeof(v)) && (v >> 24) == 3)
		return (__u32)(v >> 16) & 0xffff;
	minor = version_from_name(path);
	return minor >= 0 && minor < 256 ? 0x0300 | (__u32)minor : 0;
}

/* The layout of the process's version, or -ENOTSUP. */
static int find_layout(__u32 pid, __u32 version, __u64 runtime, struct py_layout *out)
{
	const struct py_layout *l;
	__u8 buf[PY_DEBUG_OFFSETS_SIZE];

	if (version >= 0x030d) {
		if (proc_mem__read(pid, runtime, buf, sizeof(buf)) ||
		    py_layout__from_debug_offsets(buf, sizeof(buf), out))
			return -ENOTSUP;
		return 0;
	}
	l = py_layout__table(version);
	if (!l)
		return -ENOTSUP;
	*out = *l;
	return 0;
}

/*
 * Our offsets against the process: the first thread state must point back at
 * its interpreter. A process still starting (no interpreter yet) passes.
 */
static int check_layout(__u32 pid, const struct py_layout *l, __u64 runtime)
{
	__u64 interp, ts, back;

	if (proc_mem__read(pid, runtime + l->bpf.rt_interp_head, &interp, 8))
		return -EFAULT;
	if (!interp)
		return 0;
	if (proc_mem__read(pid, interp + l->bpf.interp_tstate_head, &ts, 8))
		return -EINVAL;
	if (!ts)
		return 0;
	if (proc_mem__read(pid, ts + l->ts_interp, &back, 8) || back != interp)
		return -EINVAL;
	return 0;
}

/* Fills *proc from the file mapped at m if it holds an interpreter. */
static int probe_file(struct python *py, __u32 pid, const struct proc_map *m,
		      struct py_layout *layout, struct py_proc *proc)
{
	struct py_elf e;
	struct stat st;
	__u64 bias;
	__u32 version;
	int fd, err;

	err = procfs__open_mapped(py->opts.proc_root, pid, m, &fd, &st);
	if (err)
		return err;
	err = py_elf__read(fd, m->pgoff, &e);
	close(fd);
	if (err == -ENOENT && !e.sym[PY_SYM_EVAL].value && !e.sym[PY_SYM_RUNTIME].value)
		file_set__add(py->not_python, makedev(m->dev_major, m->dev_minor), m->inode);
	if (err == -ENOENT && e.sym[PY_SYM_EVAL].value && !e.sym[PY_SYM_RUNTIME].value) {
		/* an interpreter loop without _PyRuntime: CPython 3.6, older than we walk */
		if (first_time(py, 0, 0))
			p_warn("pid %u: %s is a CPython older than 3.7: its processes get native frames only",
			       pid, m->path);
		return -ENOTSUP;
	}
	if (err)
		return err;
	bias = m->start - e.map_vaddr;
	version = find_version(pid, &e, bias, m->path);
	if (version < 0x0308 || find_layout(pid, version, e.sym[PY_SYM_RUNTIME].value + bias, layout)) {
		if (first_time(py, 0, version))
			p_warn("pid %u: CPython %u.%u in %s is a version we do not know: its processes get native frames only",
			       pid, version >> 8, version & 0xff, m->path);
		return -ENOTSUP;
	}
	*proc = layout->bpf;
	proc->version = version;
	proc->runtime = e.sym[PY_SYM_RUNTIME].value + bias;
	for (int k = 0; k < 2; k++) {
		enum py_sym s = k ? PY_SYM_EVAL_COLD : PY_SYM_EVAL;

		if (!e.sym[s].value)
			continue;
		proc->eval_start[k] = e.sym[s].value + bias;
		/* a symbol without size: the loop is large, 64 KiB covers its calls */
		proc->eval_end[k] = proc->eval_start[k] + (e.sym[s].size ? e.sym[s].size : 65536);
	}
	if (check_layout(pid, layout, proc->runtime)) {
		py->stats.layout_mismatch++;
		if (first_time(py, 1, version))
			p_warn("pid %u: CPython %u.%u does not match our offsets: its processes get native frames only",
			       pid, version >> 8, version & 0xff);
		return -ENOTSUP;
	}
	return 0;
}

static struct py_pid *new_pid(struct python *py, const struct proc_image *img)
{
	struct py_pid *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->index = hmap__new();
	if (!p->index || rt_images__add(&py->pids, &p->head, img)) {
		hmap__free(p->index);
		free(p);
		return NULL;
	}
	return p;
}

int python__add_image(struct python *py, const struct proc_image *img)
{
	bool said = false, counted;
	__u32 pid = img->pid;
	struct proc_map *maps = NULL;
	struct py_layout layout;
	struct py_proc proc = {};
	struct py_pid *p;
	size_t n = 0;
	int err, found = -ENOENT;
	__u64 last_inode = 0;

	if (!py)
		return -EINVAL;
	err = runtime__read_maps(py->opts.proc_root, pid, &maps, &n);
	if (err)
		return err;	/* gone: its state stays (runtime__read_maps) */
	for (size_t i = 0; i < n && found == -ENOENT; i++) {
		if (!candidate(&maps[i], !last_inode) || maps[i].inode == last_inode)
			continue;
		last_inode = maps[i].inode;	/* a file's several mappings: probed once */
		if (file_set__has(py->not_python, makedev(maps[i].dev_major, maps[i].dev_minor),
				  maps[i].inode)) {
			py->stats.files_skipped++;
			continue;
		}
		err = probe_file(py, pid, &maps[i], &layout, &proc);
		p_debug("pid %u: %s: %d", pid, maps[i].path, err);
		if (!err || err == -ENOTSUP)
			found = err;
	}
	proc_maps__free(maps);
	p_debug("pid %u: python probe %d", pid, found);
	p = (struct py_pid *)rt_images__current(&py->pids, pid);
	counted = runtime__counted(p ? &p->img : NULL, p && !p->unknown, img);
	if (p && proc_image__eq(&p->img, img)) {
		/* known already: a re-read of the maps found the same, or nothing new */
		if (found == -ENOENT || (!p->dead && ((found == -ENOTSUP && p->unknown) ||
		    (!found && !p->unknown && p->layout.version == layout.version))))
			return found;
		drop_pid(py, p);	/* the same image, another layout: what it read is replaced */
	} else if (p) {
		/* another image: its code objects name its own samples until the second sweep */
		said = p->unknown && runtime__same_process(&p->img, img);
		p->superseded = true;
		if (found == -ENOENT)
			bpf_map_delete_elem(py->opts.procs_fd, &pid);
	}
	if (found == -ENOENT)
		return found;
	p = new_pid(py, img);
	if (!p)
		return -ENOMEM;
	if (found == -ENOTSUP) {
		p->unknown = true;
		py->stats.unknown_versions += !said;	/* per process */
		return found;
	}
	p->layout = layout;
	err = runtime__set_table(py->opts.pids_fd, py->opts.procs_fd, UNWIND_RT_PYTHON, pid, &proc);
	if (err)
		return err;
	py->stats.procs += !counted;
	p_debug("pid %u: CPython %u.%u, its frames walked in BPF", pid, proc.version >> 8,
		proc.version & 0xff);
	return 0;
}

/* a str object of the process as UTF-8, or NULL */
static char *read_str(__u32 pid, __u64 addr, const struct py_layout *l)
{
	__u8 *buf = malloc(STR_MAX);
	char *out = NULL;
	ssize_t n;

	if (!buf || !addr)
		goto out;
	n = proc_mem__read_some(pid, addr, buf, STR_MAX);
	if (n <= 0)
		goto out;
	out = malloc(STR_MAX);
	if (out && py_unicode__utf8(buf, (size_t)n, l, out, STR_MAX)) {
		free(out);
		out = NULL;
	}
out:
	free(buf);
	return out;
}

/* a bytes object's contents (PyBytesObject: ob_size at 16, ob_sval at 32), bounded */
static __u8 *read_bytes(__u32 pid, __u64 addr, __u32 *len)
{
	__u64 size;
	__u8 *buf;

	if (!addr || proc_mem__read(pid, addr + 16, &size, sizeof(size)) || size > LINETABLE_MAX)
		return NULL;
	buf = malloc(size ? size : 1);
	if (buf && proc_mem__read(pid, addr + 32, buf, size)) {
		free(buf);
		return NULL;
	}
	*len = (__u32)size;
	return buf;
}

/* "app" for /srv/app.py; a package's __init__.py is named after its folder */
static char *module_name(const char *file)
{
	const char *base = strrchr(file, '/'), *dot;
	size_t len;

	base = base ? base + 1 : file;
	if (!strcmp(base, "__init__.py") && base > file + 1) {
		const char *end = base - 1, *start = end;

		while (start > file && start[-1] != '/')
			start--;
		return strndup(start, (size_t)(end - start));
	}
	dot = strrchr(base, '.');
	len = dot ? (size_t)(dot - base) : strlen(base);
	return strndup(base, len);
}

static __u64 code_size(const struct py_code *c)
{
	return c->ok ? sizeof(*c) + c->n_lines + strlen(c->function) + strlen(c->file) + 2 : 0;
}

static __u64 u64_at(const __u8 *h, __u16 off)
{
	__u64 v;

	memcpy(&v, h + off, sizeof(v));
	return v;
}

/*
 * The tag BPF gives the code object whose header is h (py_code_tag_read in
 * python.bpf.h, the same reads). The layout keeps the words in h.
 */
static int code_tag(__u32 pid, const struct py_layout *l, const __u8 *h, __u32 *tag)
{
	__u32 w[PY_CODE_WORDS], version = 0;
	__u64 hash = 0;

	memcpy(w, h + l->bpf.co_firstlineno, sizeof(w));
	if (l->bpf.co_version_word)
		version = w[l->bpf.co_version_word & (PY_CODE_WORDS - 1)];
	else if (l->bpf.co_name != PY_NO_OFFSET &&
		 proc_mem__read(pid, u64_at(h, l->bpf.co_name) + l->bpf.str_hash, &hash, sizeof(hash)))
		return -EFAULT;
	*tag = py_code_tag(w[0], version, hash);
	return 0;
}

/* Reads code object addr into c (c->ok says whether every part was read). */
static void read_code(__u32 pid, const struct py_layout *l, __u64 addr, struct py_code *c)
{
	__u8 h[CODE_HEADER_MAX];
	char *name = NULL, *module = NULL;

	memset(c, 0, sizeof(*c));
	c->addr = addr;
	if (proc_mem__read(pid, addr, h, CODE_HEADER_MAX) || code_tag(pid, l, h, &c->tag))
		return;
	memcpy(&c->first, h + l->bpf.co_firstlineno, sizeof(c->first));
	name = read_str(pid, u64_at(h, l->co_qualname ? l->co_qualname : l->co_name), l);
	c->file = read_str(pid, u64_at(h, l->co_filename), l);
	c->lines = read_bytes(pid, u64_at(h, l->co_linetable), &c->n_lines);
	module = c->file ? module_name(c->file) : NULL;
	if (name && module && asprintf(&c->function, "%s.%s", module, name) < 0)
		c->function = NULL;
	c->ok = c->function && c->file && c->lines;
	free(name);
	free(module);
}

struct code_key {
	__u64 addr;
	__u32 tag;
};

static int code_eq(__u32 id, const void *key, const void *ctx)
{
	const struct py_pid *p = ctx;
	const struct code_key *k = key;

	return p->codes[id - 1].addr == k->addr && p->codes[id - 1].asked == k->tag;
}

/*
 * The code object at addr whose tag is tag, read now if not yet. Code made
 * at run time (exec, compile) is freed and its address reused by the next:
 * each (address, tag) is its own entry, so the frames of both name what ran.
 * One read that finds another tag there (the one asked for is gone) is not
 * named: never by the code object now there.
 */
static struct py_code *get_code(struct python *py, struct py_pid *p, __u64 addr, __u32 tag)
{
	struct code_key k = { addr, tag };
	__u64 h = hash_u64(addr, tag), t0;
	__u32 id = hmap__find(p->index, h, code_eq, &k, p);
	struct py_code *c;

	if (id)
		return &p->codes[id - 1];
	if (p->superseded)
		return NULL;	/* its memory is a later image's now: unnamed, counted */
	/*
	 * Full: not emptied, since the names handed out stay valid until the
	 * process's cache goes (python_runtime.h); the frame is unnamed, counted.
	 */
	if (p->n_codes >= (py->opts.codes_max ? py->opts.codes_max : CODES_PER_PID_MAX)) {
		py->stats.code_cache_full++;
		return NULL;
	}
	if (ARRAY_RESERVE(p->codes, p->cap_codes, p->n_codes + 1) ||
	    hmap__insert(p->index, h, (__u32)p->n_codes + 1))
		return NULL;
	c = &p->codes[p->n_codes++];
	t0 = (__u64)clock_ns(CLOCK_MONOTONIC);
	read_code(p->img.pid, &p->layout, addr, c);
	py->stats.read_ns += (__u64)clock_ns(CLOCK_MONOTONIC) - t0;
	c->asked = tag;
	if (c->ok && c->tag != tag) {
		code_free(c);
		c->ok = false;
	}
	if (c->ok) {
		py->stats.codes++;
		py->stats.code_bytes += code_size(c);
	} else {
		py->stats.codes_failed++;
	}
	return c;
}

void python__code_seen(struct python *py, const struct proc_image *img, __u64 code, __u32 tag)
{
	struct py_pid *p = py ? find_image(py, img) : NULL;

	/* a superseded image's memory is another's now: not read */
	if (p && !p->unknown && !p->superseded)
		get_code(py, p, code, tag);
}

bool python__is_frame(__u64 slot)
{
	return slot >> FRAME_TAG_SHIFT == PY_TAG_FRAME;
}

bool python__is_lost(__u64 slot)
{
	return slot >> FRAME_TAG_SHIFT == PY_TAG_LOST;
}

bool python__fold_trampoline(struct python *py, __u64 slot)
{
	if (slot >> FRAME_TAG_SHIFT != PY_TAG_TRAMPOLINE)
		return false;
	py->stats.trampolines++;
	return true;
}

const char *python__lost_name(struct python *py, __u64 slot)
{
	py->stats.frames_lost[(slot & 0xff) < 4 ? slot & 0xff : 0]++;
	switch (slot & 0xff) {
	case PY_LOST_NO_THREAD:
		return "[python frames lost: no thread state]";
	case PY_LOST_RUN:
		return "[python frames lost: too deep]";
	default:
		return "[python frames lost: unreadable frame]";
	}
}

/* bytes from the first instruction, by how the version records where a frame is */
static __u32 byte_offset(const struct py_layout *l, __u32 raw)
{
	if (l->lines == PY_LINES_LNOTAB)
		return raw;			/* f_lasti in bytes */
	if (l->lines == PY_LINES_310)
		return raw * 2;			/* f_lasti in code units */
	return raw - l->co_code_adaptive;	/* instruction pointer - code object */
}

int python__frame(struct python *py, const struct proc_image *img, __u64 a, __u64 b,
		  struct src_line *out, __u64 *loc)
{
	struct py_pid *p = find_image(py, img);
	__u64 code = a & FRAME_ADDR_MASK;
	__u32 tag = (__u32)(b >> 32), raw = (__u32)b;
	struct py_code *c = p && !p->unknown ? get_code(py, p, code, tag) : NULL;

	*loc = hash_u64(b, hash_u64(code, proc_image__hash(img))) | 1ull << 63;
	if (!c || !c->ok) {
		py->stats.frames_unnamed++;
		*out = (struct src_line){ .function = "[unknown python function]" };
		return -ENOENT;
	}
	py->stats.frames_named++;
	*out = (struct src_line){ .function = c->function, .file = c->file };
	/* f_lasti -1: the frame has not started; its first line is the best truth */
	if (raw == 0xffffffffu && p->layout.lines != PY_LINES_311)
		out->line = (__u32)c->first;
	else
		out->line = py_lines__find(p->layout.lines, c->lines, c->n_lines, c->first,
					   byte_offset(&p->layout, raw));
	return 0;
}

/* An image ended at two sweeps in a row: its names go, with its BPF table if still its own. */
void python__sweep(struct python *py)
{
	rt_images__sweep(&py->pids, py->opts.proc_root, py->opts.procs_fd, free_pid, py);
}

void python__stats(const struct python *py, struct python_stats *out)
{
	*out = py->stats;
}
