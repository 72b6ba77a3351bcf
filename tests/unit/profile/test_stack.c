/* test_stack.c -- stacks of return PCs: the PCs a Go traceback gives inlined calls fold into their caller's frame */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "profile/stack.h"
#include "gopcln_synth.h"
#include "test.h"

static char fake[] = "/tmp/ebpfprof-stack-XXXXXX";
static struct stack st;

/*
 * A fake /proc whose pid 4242 maps the synthetic Go binary's text: main.outer
 * (main.inl inlined at [0x20, 0x40)) and main.leaf. 0 or -errno.
 */
static int fake_proc(void)
{
	char path[PATH_MAX], maps[256];
	__u8 *img = calloc(1, SYN_SIZE);
	struct stat sb;
	int fd, err = -ENOMEM;
	FILE *f;

	if (!img || !mkdtemp(fake))
		goto out;
	build_synth(SYN_120, img);
	snprintf(path, sizeof(path), "%s/4242", fake);
	err = mkdir(path, 0755) ? -errno : 0;
	snprintf(path, sizeof(path), "%s/4242/root", fake);
	if (!err && mkdir(path, 0755))
		err = -errno;
	snprintf(path, sizeof(path), "%s/4242/root/syn", fake);
	fd = err ? -1 : open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (!err && (fd < 0 || write(fd, img, SYN_SIZE) != SYN_SIZE || fstat(fd, &sb)))
		err = -EIO;
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s/4242/maps", fake);
	f = err ? NULL : fopen(path, "w");
	if (!err && !f)
		err = -errno;
	if (f) {
		snprintf(maps, sizeof(maps), "%llx-%llx r-xp 00001000 %x:%x %llu /syn\n",
			 SYN_TEXT, SYN_TEXT + 0x1000, major(sb.st_dev), minor(sb.st_dev),
			 (unsigned long long)sb.st_ino);
		fputs(maps, f);
		fclose(f);
	}
out:
	free(img);
	return err;
}

/* whether frame I of st names FN... (innermost first), nothing else */
static int frame_is(int i, const char *fn0, const char *fn1)
{
	const struct frame *fr = &st.frames[i];
	int want = fn1 ? 2 : 1;

	if (i >= st.n || fr->n_lines != want || strcmp(fr->lines[0].function, fn0) ||
	    (fn1 && strcmp(fr->lines[1].function, fn1))) {
		fprintf(stderr, "  frame %d of %d: %d lines, %s\n", i, st.n, i < st.n ? fr->n_lines : 0,
			i < st.n && fr->n_lines ? fr->lines[0].function : "none");
		return 0;
	}
	return 1;
}

static int test_go_inlined(void)
{
	struct symbolizer_opts opts = { .no_kernel = true, .proc_root = fake };
	struct proc_image img = { .pid = 4242 };
	/* a return address inside main.inl, the PC Go gives the call it was inlined into, main.leaf's */
	const __u64 inl = SYN_TEXT + 0x31, mark = SYN_TEXT + 0x6, leaf = SYN_TEXT + 0x151;
	const __u64 go[] = { inl, mark, leaf }, twice[] = { inl, mark, mark }, none[] = { inl, leaf };
	struct symbolizer *s = NULL;
	char rm[PATH_MAX + 16];
	int ret = TEST_FAIL;

	if (fake_proc())
		goto out;
	s = symbolizer__new(&opts);
	if (!s || symbolizer__add_image(s, &img))
		goto out;
	/* Go's: main.outer's own PC folds into the frame that names it, as runtime/pprof folds it */
	stack__resolve_return_pcs(&st, s, &img, go, 3, true);
	if (st.n != 2 || !frame_is(0, "main.inl", "main.outer") || !frame_is(1, "main.leaf", NULL))
		goto out;
	/* one PC folds per inlined call: a second main.outer is a real call (recursion) */
	stack__resolve_return_pcs(&st, s, &img, twice, 3, true);
	if (st.n != 2 || !frame_is(0, "main.inl", "main.outer") || !frame_is(1, "main.outer", NULL))
		goto out;
	/* a PC that names another function is not folded */
	stack__resolve_return_pcs(&st, s, &img, none, 2, true);
	if (st.n != 2 || !frame_is(1, "main.leaf", NULL))
		goto out;
	/* a frame-pointer walk's PCs are machine frames: each is named whole */
	stack__resolve_return_pcs(&st, s, &img, go, 3, false);
	if (st.n != 3 || !frame_is(0, "main.inl", "main.outer") || !frame_is(1, "main.outer", NULL) ||
	    !frame_is(2, "main.leaf", NULL))
		goto out;
	ret = TEST_OK;
out:
	symbolizer__free(s);
	snprintf(rm, sizeof(rm), "rm -rf %s", fake);
	if (system(rm))
		ret = TEST_FAIL;
	return ret;
}

TEST_MAIN("stack", { "go_inlined", test_go_inlined })
