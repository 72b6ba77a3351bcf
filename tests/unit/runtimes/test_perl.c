/* test_perl.c -- unit tests for runtimes/perl/: our layouts against each perl's headers, the namer on a live perl's subs */
#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "runtimes/perl/perl_int.h"
#include "lib/proc_mem.h"
#include "test.h"

#define OFFSETS_SRC "tests/fixtures/perl/perl_offsets.c"
#define TRIXIE_CORE "/var/cache/ebpfprof/trixie/usr/lib/x86_64-linux-gnu/perl/5.40.*/CORE"

struct named { const char *name; unsigned long value; };

/* our offsets and constants of l, by the names perl_offsets.c prints */
static int ours(const struct perl_layout *l, struct named *out)
{
	const struct named all[] = {
		{ "interp_curstackinfo", l->bpf.interp_curstackinfo },
		{ "interp_curcop", l->bpf.interp_curcop }, { "si_cxstack", l->bpf.si_cxstack },
		{ "si_prev", l->bpf.si_prev }, { "si_cxix", l->bpf.si_cxix },
		{ "cx_size", l->bpf.cx_size }, { "cx_type", l->bpf.cx_type },
		{ "cx_oldcop", l->bpf.cx_oldcop }, { "cx_sub_cv", l->bpf.cx_sub_cv },
		{ "cx_sub_retop", l->bpf.cx_retop }, { "cop_line", l->bpf.cop_line },
		{ "cop_file", l->bpf.cop_file }, { "sv_flags", l->bpf.sv_flags },
		{ "xcv_stash", l->xcv_stash }, { "xcv_start", l->bpf.xcv_start },
		{ "xcv_gv", l->xcv_gv }, { "xcv_file", l->xcv_file }, { "xcv_flags", l->xcv_flags },
		{ "padlist_id", l->bpf.padlist_id },
		{ "CVf_NAMED", l->cvf_named }, { "xgv_namehek", l->xgv_name },
		{ "xgv_stash", l->xgv_stash }, { "hek_len", l->hek_len }, { "hek_key", l->hek_key },
		{ "xhv_aux", l->xhv_aux }, { "aux_name", l->aux_name },
		{ "aux_name_count", l->aux_name_count }, { "hv_has_aux", l->hv_has_aux },
		{ "SVt_PVCV", PERL_SVt_PVCV }, { "SVt_PVGV", 9 }, { "SVt_PVHV", 12 },
		{ "CXt_SUB", PERL_CXt_SUB }, { "CXt_FORMAT", PERL_CXt_FORMAT },
		{ "CXt_EVAL", PERL_CXt_EVAL }, { "CXTYPEMASK", PERL_CXTYPEMASK },
		{ "CXp_TRYBLOCK", PERL_CXp_TRYBLOCK }, { "CXp_SUB_RE_FAKE", PERL_CXp_SUB_RE_FAKE },
	};

	memcpy(out, all, sizeof(all));
	return sizeof(all) / sizeof(all[0]);
}

/* the headers in CORE, compiled and run: every line must be one of ours, equal. How many, or -1 */
static int compare_headers(const char *core, const struct perl_layout *l)
{
	char cmd[1024], name[64], bin[64];
	struct named our[64];
	int n = ours(l, our), compared = 0, bad = 0;
	unsigned long v;
	FILE *f;

	/* offsetof only: perl.h's inline functions name libperl's symbols, never called (-O1 drops them) */
	snprintf(bin, sizeof(bin), "/tmp/ebpfprof-perl-offsets-%d", (int)getpid());
	snprintf(cmd, sizeof(cmd),
		 "cc -w -O1 -no-pie -D_GNU_SOURCE -D_REENTRANT -D_FILE_OFFSET_BITS=64 -I%s "
		 "-Wl,--unresolved-symbols=ignore-all -o %s " OFFSETS_SRC " >&2 && %s", core, bin, bin);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %lu", name, &v) == 2) {
		int i;

		for (i = 0; i < n && strcmp(our[i].name, name); i++)
			;
		if (i == n || our[i].value != v) {
			fprintf(stderr, "  %s: %s is %lu in its headers, %s\n", core, name, v,
				i == n ? "not in ours" : "another in ours");
			bad = 1;
		}
		compared++;
	}
	unlink(bin);
	if (pclose(f) || bad)
		return -1;
	return compared;
}

/* Debian 12's 5.36 (the host's) against our table */
static int test_layout_5_36(void)
{
	if (access("/usr/lib/x86_64-linux-gnu/perl/5.36/CORE/perl.h", R_OK))
		SKIP("no perl 5.36 headers (/usr/lib/x86_64-linux-gnu/perl/5.36/CORE)");
	CHECK(perl_layout__of(36));
	CHECK(compare_headers("/usr/lib/x86_64-linux-gnu/perl/5.36/CORE", perl_layout__of(36)) == 37);
	return TEST_OK;
}

/* Debian 13's 5.40, in tests/lib/trixie_root.sh's root */
static int test_layout_5_40(void)
{
	glob_t g;
	int n;

	if (glob(TRIXIE_CORE "/perl.h", 0, NULL, &g))
		SKIP("no perl 5.40 headers (bash tests/lib/trixie_root.sh builds them)");
	*strrchr(g.gl_pathv[0], '/') = 0;
	n = compare_headers(g.gl_pathv[0], perl_layout__of(40));
	globfree(&g);
	CHECK(perl_layout__of(40));
	CHECK(n == 37);
	return TEST_OK;
}

/* versions we did not check stay native */
static int test_unknown_versions(void)
{
	CHECK(!perl_layout__of(34));
	CHECK(!perl_layout__of(38));
	CHECK(!perl_layout__of(42));
	CHECK(!perl_layout__of(0));
	return TEST_OK;
}

static int read_pid(void *ctx, __u64 addr, void *buf, size_t len)
{
	return proc_mem__read(*(const __u32 *)ctx, addr, buf, len);
}

/*
 * A live perl prints, through B, the CV, first op, root op, pad list and
 * pad list id of a package sub, an anonymous one and a lexical one, then
 * the five words of its body from xcv_start (5.36's offset, 40) that with
 * the id make its generation; our namer reads them from its memory.
 */
#define SUBS_PL                                                                              \
	"use B; package Foo::Bar; sub baz { 1 } my $anon = sub { 2 }; my sub lex { 3 }"      \
	" sub word { unpack(q(Q), unpack(q(P8), pack(q(Q), $_[0]))) }"                         \
	" for my $c (\\&baz, $anon, \\&lex) { my $o = B::svref_2object($c); my $d = word($$o);"\
	" printf qq(%d %d %d %d %d), $$o, ${$o->START}, ${$o->ROOT}, ${$o->PADLIST},"        \
	" $o->PADLIST->id; printf qq( %d), word($d + 40 + 8 * $_) for 0 .. 4; print qq(\\n) }"\
	" $| = 1; print qq(end\\n); sleep 30"

static int test_names_live(void)
{
	const char *want[] = { "Foo::Bar::baz", "Foo::Bar::__ANON__", "Foo::Bar::lex" };
	int fds[2], ret = TEST_FAIL;
	unsigned long long cv[3], start[3], root[3], pads[3], ids[3], w[3][PERL_CV_WORDS];
	__u32 gen[3];
	char name[PERL_NAME_MAX], file[PERL_NAME_MAX];
	pid_t pid;
	FILE *f;

	if (access("/usr/bin/perl", X_OK))
		SKIP("no /usr/bin/perl");
	CHECK(!pipe(fds));
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		dup2(fds[1], 1);
		execl("/usr/bin/perl", "perl", "-e", SUBS_PL, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	for (int i = 0; i < 3; i++) {
		__u64 words[PERL_CV_WORDS];

		if (!f || fscanf(f, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &cv[i],
				 &start[i], &root[i], &pads[i], &ids[i], &w[i][0], &w[i][1], &w[i][2],
				 &w[i][3], &w[i][4]) != 10)
			goto out;
		/* B's first op, root op and pad list are where the generation's words say */
		if (w[i][0] != start[i] || w[i][1] != root[i] || w[i][4] != pads[i]) {
			fprintf(stderr, "  sub %d: body words %llx %llx %llx, B: %llx %llx %llx\n",
				i, w[i][0], w[i][1], w[i][4], start[i], root[i], pads[i]);
			goto out;
		}
		for (int k = 0; k < PERL_CV_WORDS; k++)
			words[k] = w[i][k];
		/* B's pad list id: the namer reads it as BPF does, or finds another generation */
		gen[i] = perl_cv_gen(words, (__u32)ids[i]);
	}
	{
		__u32 version = 0, p = (__u32)pid;
		FILE *v = popen("/usr/bin/perl -e 'print $]*1000 % 1000'", "r");
		struct perl_mem m = { .read = read_pid, .ctx = &p };

		if (!v || fscanf(v, "%u", &version) != 1 || !(m.l = perl_layout__of(version))) {
			fprintf(stderr, "  perl 5.%u: no layout\n", version);
			if (v)
				pclose(v);
			goto out;
		}
		pclose(v);
		for (int i = 0; i < 3; i++) {
			int err = perl_mem__sub(&m, cv[i], gen[i], name, sizeof(name), file,
						sizeof(file));

			if (err || strcmp(name, want[i]) || strcmp(file, "-e")) {
				fprintf(stderr, "  sub %d: %d '%s' '%s', want '%s' '-e'\n", i, err, name,
					file, want[i]);
				goto out;
			}
		}
		/* another generation: a CV freed and reused is not named as the one BPF saw */
		if (perl_mem__sub(&m, cv[0], gen[0] + 1, name, sizeof(name), file,
				  sizeof(file)) != -ESTALE)
			goto out;
		/* not a CV: its first op, an OP */
		if (perl_mem__sub(&m, start[0], 0, name, sizeof(name), file, sizeof(file)) != -EINVAL)
			goto out;
	}
	ret = TEST_OK;
out:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (f)
		fclose(f);
	return ret;
}

TEST_MAIN("perl", { "layout_5_36", test_layout_5_36 }, { "layout_5_40", test_layout_5_40 },
	  { "unknown_versions", test_unknown_versions }, { "names_live", test_names_live });
