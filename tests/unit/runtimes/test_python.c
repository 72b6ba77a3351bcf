/* test_python.c -- unit tests for runtimes/python/: offsets against each CPython's headers, line tables against CPython's own answers, str objects, a full code cache */
#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include "unwind.h"
#include "runtimes/python/python_int.h"
#include "runtimes/python/python_runtime.h"
#include "test.h"
#include "test_files.h"

#define OFFSETS_SRC "tests/fixtures/python/py_offsets.c"
#define LINES_PY "tests/fixtures/python/lines.py"

struct named { const char *name; __u16 value; };

/* our offsets of l, by the names py_offsets.c prints */
static int our_offsets(const struct py_layout *l, struct named *out)
{
	const struct named all[] = {
		{ "rt_interp_head", l->bpf.rt_interp_head },
		{ "interp_tstate_head", l->bpf.interp_tstate_head },
		{ "ts_next", l->bpf.ts_next }, { "ts_thread_id", l->bpf.ts_thread_id },
		{ "ts_interp", l->ts_interp }, { "ts_frame", l->bpf.ts_frame },
		{ "cframe_frame", l->bpf.cframe_frame }, { "fr_code", l->bpf.fr_code },
		{ "fr_previous", l->bpf.fr_previous }, { "fr_instr", l->bpf.fr_instr },
		{ "fr_entry", l->bpf.fr_entry }, { "co_qualname", l->co_qualname },
		{ "co_code_adaptive", l->co_code_adaptive }, { "co_linetable", l->co_linetable },
		{ "co_firstlineno", l->bpf.co_firstlineno },
		{ "co_version_word", l->bpf.co_version_word }, { "co_name", l->co_name },
		{ "str_hash", l->bpf.str_hash },
		{ "co_filename", l->co_filename }, { "unicode_ascii_size", l->unicode_ascii_size },
		{ "unicode_compact_size", l->unicode_compact_size },
	};

	memcpy(out, all, sizeof(all));
	return sizeof(all) / sizeof(all[0]);
}

/* each "name value" line the headers gave must equal ours; how many were compared, or -1 */
static int compare(FILE *f, const struct py_layout *l, const char *version)
{
	struct named ours[32];
	int n = our_offsets(l, ours), compared = 0;
	char name[64];
	unsigned long v;

	while (fscanf(f, "%63s %lu", name, &v) == 2) {
		int found = 0;

		for (int i = 0; i < n; i++) {
			if (strcmp(ours[i].name, name))
				continue;
			found = 1;
			if (ours[i].value != v) {
				fprintf(stderr, "  %s: %s is %lu in its headers, %u in ours\n", version,
					name, v, ours[i].value);
				return -1;
			}
		}
		if (!found)
			return -1;
		compared++;
	}
	return compared;
}

/* runs a shell command; its output, or NULL */
static FILE *run(const char *fmt, const char *a, const char *b)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	return popen(cmd, "r");
}

/* 3.13's _PyRuntime from a running interpreter, through our reader of _Py_DebugOffsets */
static int debug_offsets_of(const char *python, struct py_layout *l)
{
	__u8 buf[PY_DEBUG_OFFSETS_SIZE];
	FILE *f = run("%s -c 'import ctypes,sys; r=ctypes.c_char.in_dll(ctypes.pythonapi,\"_PyRuntime\");"
		      " sys.stdout.buffer.write(ctypes.string_at(ctypes.addressof(r), %s))'",
		      python, "568");
	size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;

	if (f)
		pclose(f);
	if (n != sizeof(buf))
		return -EIO;
	return py_layout__from_debug_offsets(buf, n, l);
}

/* every CPython 3.8+ under pyenv: our table (3.13: the interpreter's own offsets) against its headers */
static int test_layout_headers(void)
{
	glob_t g;
	int checked = 0;

	if (glob("/root/.pyenv/versions/3.*/include/python3.*", 0, NULL, &g))
		SKIP("no CPython headers under /root/.pyenv/versions");
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *inc = g.gl_pathv[i], *ver = strrchr(inc, '/') + 7;
		char python[512], bin[256];
		struct py_layout dbg;
		const struct py_layout *l;
		unsigned minor;
		FILE *f;
		int n;

		if (sscanf(ver, "3.%u", &minor) != 1 || minor < 8)
			continue;
		snprintf(python, sizeof(python), "%.*s/bin/python3.%u", (int)(strstr(inc, "/include") - inc),
			 inc, minor);
		l = py_layout__table(0x0300 | minor);
		if (!l) {
			CHECK(minor >= 13 && !debug_offsets_of(python, &dbg));
			l = &dbg;
		}
		snprintf(bin, sizeof(bin), "/tmp/ebpfprof-py-offsets-3.%u", minor);
		f = run("cc -w -I%s -o %s " OFFSETS_SRC " >&2", inc, bin);
		CHECK(f && pclose(f) == 0);
		f = run("%s%s", bin, "");
		CHECK(f);
		n = compare(f, l, ver);
		pclose(f);
		unlink(bin);
		CHECK(n >= 15);	/* every field this version has */
		/* the tag: the version from 3.12, else the name BPF reads is the one we name by */
		CHECK(minor >= 12 ? l->bpf.co_version_word != 0 : l->bpf.co_name == l->co_name);
		checked++;
	}
	globfree(&g);
	CHECK(checked > 0);
	return TEST_OK;
}

/* the line of every instruction, as CPython itself gives it, from our reader of the table */
static int check_lines(const char *python)
{
	FILE *f = run("%s " LINES_PY "%s", python, "");
	char kind[8], hex[1 << 17];
	__u8 *tab = malloc(sizeof(hex) / 2);
	unsigned fmt = 0, first = 0, off, line, n_tab = 0, codes = 0, ats = 0, bad = 0;

	while (f && tab && fscanf(f, "%7s", kind) == 1) {
		if (!strcmp(kind, "code") && fscanf(f, "%u %u %131071s", &fmt, &first, hex) == 3) {
			n_tab = (unsigned)strlen(hex) / 2;
			for (unsigned i = 0; i < n_tab; i++)
				sscanf(hex + 2 * i, "%2hhx", &tab[i]);
			codes++;
		} else if (!strcmp(kind, "at") && fscanf(f, "%u %u", &off, &line) == 2) {
			__u32 got = py_lines__find(fmt, tab, n_tab, (int)first, off);

			if (got != line && bad++ < 3)
				fprintf(stderr, "  %s: offset %u: line %u, CPython says %u\n", python, off,
					got, line);
			ats++;
		}
	}
	if (f)
		pclose(f);
	free(tab);
	return codes == 3 && ats > 100 && !bad ? 0 : -1;
}

static int test_lines_real(void)
{
	glob_t g;
	int checked = 0;

	if (glob("/root/.pyenv/versions/3.*/bin/python3.*[0-9]", 0, NULL, &g))
		SKIP("no CPython under /root/.pyenv/versions");
	for (size_t i = 0; i < g.gl_pathc; i++) {
		unsigned minor;

		if (sscanf(strrchr(g.gl_pathv[i], '/'), "/python3.%u", &minor) != 1 || minor < 8 ||
		    strchr(strrchr(g.gl_pathv[i], '/') + 9, '-'))
			continue;
		CHECK(!check_lines(g.gl_pathv[i]));
		checked++;
	}
	globfree(&g);
	CHECK(checked > 0);
	return TEST_OK;
}

/* compact str objects of every kind, cut where the read stopped, and a refused non-compact one */
static int test_unicode(void)
{
	struct py_layout l = { .unicode_ascii_size = 40, .unicode_compact_size = 56 };
	__u8 buf[128] = { 0 };
	char out[32];
	__u64 len = 3;
	__u32 state = 1u << 5 | 1u << 2 | 1u << 6;	/* compact, kind 1, ascii */

	memcpy(buf + 16, &len, 8);
	memcpy(buf + 32, &state, 4);
	memcpy(buf + 40, "abc", 3);
	CHECK(!py_unicode__utf8(buf, sizeof(buf), &l, out, sizeof(out)) && !strcmp(out, "abc"));
	CHECK(py_unicode__utf8(buf, 42, &l, out, sizeof(out)) == -EINVAL);	/* data not all read */
	/* kind 2, not ascii: U+00E9 U+20AC after the compact header */
	state = 1u << 5 | 2u << 2;
	len = 2;
	memcpy(buf + 16, &len, 8);
	memcpy(buf + 32, &state, 4);
	memcpy(buf + 56, "\xe9\x00\xac\x20", 4);
	CHECK(!py_unicode__utf8(buf, sizeof(buf), &l, out, sizeof(out)) &&
	      !strcmp(out, "\xc3\xa9\xe2\x82\xac"));
	/* kind 4 with a surrogate and a value past U+10FFFF: U+FFFD each */
	state = 1u << 5 | 4u << 2;
	memcpy(buf + 32, &state, 4);
	memcpy(buf + 56, "\x00\xd8\x00\x00\x00\x00\x11\x00", 8);
	CHECK(!py_unicode__utf8(buf, sizeof(buf), &l, out, sizeof(out)) &&
	      !strcmp(out, "\xef\xbf\xbd\xef\xbf\xbd"));
	/* a small buffer cuts between characters */
	CHECK(!py_unicode__utf8(buf, sizeof(buf), &l, out, 5) && !strcmp(out, "\xef\xbf\xbd"));
	CHECK(!py_unicode__utf8(buf, sizeof(buf), &l, out, 4) && !strcmp(out, ""));
	state = 2u << 2;	/* not compact */
	memcpy(buf + 32, &state, 4);
	CHECK(py_unicode__utf8(buf, sizeof(buf), &l, out, sizeof(out)) == -EINVAL);
	return TEST_OK;
}

/* _Py_DebugOffsets: the cookie, a version we have not read, an offset out of range or past the code header */
static int test_debug_offsets_refused(void)
{
	__u64 d[PY_DEBUG_OFFSETS_SIZE / 8] = { 0 };
	struct py_layout l;

	CHECK(py_layout__from_debug_offsets(d, sizeof(d), &l) == -EINVAL);
	memcpy(d, "xdebugpy", 8);
	d[1] = 0x030e00f0;	/* 3.14: its struct changed */
	CHECK(py_layout__from_debug_offsets(d, sizeof(d), &l) == -EINVAL);
	d[1] = 0x030d00f0;
	d[5] = 1u << 20;	/* runtime.interpreters_head far past any struct */
	CHECK(py_layout__from_debug_offsets(d, sizeof(d), &l) == -ERANGE);
	d[5] = 632;
	d[36] = 4000;	/* code.co_name: in range for the struct, past the code header we read */
	CHECK(py_layout__from_debug_offsets(d, sizeof(d), &l) == -ERANGE);
	d[36] = 0;
	d[39] = CODE_HEADER_MAX - 8;	/* code.co_firstlineno: its 8 words would end past the header */
	CHECK(py_layout__from_debug_offsets(d, sizeof(d), &l) == -ERANGE);
	d[39] = 68;
	CHECK(!py_layout__from_debug_offsets(d, sizeof(d), &l) && l.bpf.rt_interp_head == 632 &&
	      l.bpf.co_version_word == 6);
	CHECK(py_layout__from_debug_offsets(d, sizeof(d) - 8, &l) == -EINVAL);
	return TEST_OK;
}

#define CACHE_CODES 40
#define CACHE_MAX 16

/*
 * Makes CACHE_CODES functions, each its own code object of first line i + 1,
 * prints "address tag" for each (py_code_tag before 3.12: the first line and
 * the name's hash), then waits for stdin to close.
 */
static const char cache_script[] =
	"import sys\n"
	"fs = []\n"
	"for i in range(40):\n"
	"    ns = {}\n"
	"    exec(compile('\\n' * i + 'def cf%d():\\n    pass\\n' % i, 'cachefull.py', 'exec'), ns)\n"
	"    fs.append(ns['cf%d' % i])\n"
	"for f in fs:\n"
	"    h = hash(f.__code__.co_name) & (1 << 64) - 1\n"
	"    print(id(f.__code__), (f.__code__.co_firstlineno + (h ^ h >> 32)) & 0xffffffff)\n"
	"sys.stdout.flush()\n"
	"sys.stdin.read()\n";

/*
 * A process's code cache is bounded: past the bound a code object is not
 * read, its frames are unnamed and counted, and the ones cached keep their
 * names. A real interpreter, its code objects by the addresses it gives.
 */
static int test_code_cache_full(void)
{
	const char *python = "/usr/bin/python3.11";
	__u64 addr[CACHE_CODES], loc;
	unsigned tag[CACHE_CODES];
	int procs_fd, bits_fd, to = -1, status, n = 0, ret = TEST_FAIL;
	struct python_opts o = { .codes_max = CACHE_MAX };
	struct python_stats st;
	struct python *py = NULL;
	struct src_line line;
	FILE *from = NULL;
	char want[32];
	struct proc_image img = {};
	pid_t pid;

	if (access(python, X_OK))
		SKIP("no /usr/bin/python3.11 (Debian's python3.11)");
	procs_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "py_test", 4, sizeof(struct py_proc), 8, NULL);
	bits_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "py_test_bits", 4,
				 sizeof(struct unwind_pid_bits), 1, NULL);
	CHECK(procs_fd >= 0 && bits_fd >= 0);
	o.procs_fd = procs_fd;
	o.pids_fd = bits_fd;
	pid = test__spawn_piped((char *const[]){ (char *)python, "-c", (char *)cache_script, NULL },
				&to, &from);
	CHECK(pid > 0);
	while (n < CACHE_CODES && from &&
	       fscanf(from, "%llu %u", (unsigned long long *)&addr[n], &tag[n]) == 2)
		n++;
	py = python__new(&o);
	img.pid = (__u32)pid;
	proc_image__start_of("/proc", img.pid, &img.start);
	if (n != CACHE_CODES || !py || python__add_image(py, &img)) {
		fprintf(stderr, "  %d of %d code objects printed, python__add_image failed\n", n,
			CACHE_CODES);
		goto out;
	}
	{
		struct unwind_pid_bits bits;
		__u32 zero = 0;

		/* BPF will look the process up as Python's, not as a JVM's */
		if (bpf_map_lookup_elem(bits_fd, &zero, &bits) ||
		    !unwind_pid_bits__has(&bits, (__u32)pid, UNWIND_RT_PYTHON) ||
		    unwind_pid_bits__has(&bits, (__u32)pid, UNWIND_RT_JAVA)) {
			fprintf(stderr, "  pid %d: its Python bit unset, or its Java bit set\n", (int)pid);
			goto out;
		}
	}
	for (int i = 0; i < n; i++)
		python__code_seen(py, &img, addr[i], tag[i]);
	for (int i = 0; i < n; i++) {
		int err = python__frame(py, &img, PY_TAG_FRAME << FRAME_TAG_SHIFT | addr[i],
					(__u64)tag[i] << 32, &line, &loc);

		snprintf(want, sizeof(want), "cachefull.cf%d", i);
		if (i < CACHE_MAX ? err || strcmp(line.function, want) : err != -ENOENT) {
			fprintf(stderr, "  code object %d: %d, %s\n", i, err, line.function);
			goto out;
		}
	}
	python__stats(py, &st);
	printf("  %llu code objects cached of %d, %llu not read: cache full, %llu frames unnamed\n",
	       (unsigned long long)st.codes, n, (unsigned long long)st.code_cache_full,
	       (unsigned long long)st.frames_unnamed);
	/* each code object past the bound counted twice: its sighting and its frame */
	if (st.codes == CACHE_MAX && st.code_cache_full == 2 * (CACHE_CODES - CACHE_MAX) &&
	    st.frames_unnamed == CACHE_CODES - CACHE_MAX)
		ret = TEST_OK;
out:
	python__free(py);
	close(to);
	if (from)
		fclose(from);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(procs_fd);
	close(bits_fd);
	return ret;
}

TEST_MAIN("python", { "layout_headers", test_layout_headers }, { "lines_real", test_lines_real },
	  { "unicode", test_unicode }, { "debug_offsets_refused", test_debug_offsets_refused },
	  { "code_cache_full", test_code_cache_full })
