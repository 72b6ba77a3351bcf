/* test_rt_images.c -- unit tests for a runtime's states per process image: found, adopted, superseded, swept */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include "runtimes/rt_images.h"
#include "test.h"

/* a runtime's state as the runtimes declare theirs: the head first, then its own fields */
struct state {
	RT_IMAGE_HEAD;
	int id;
	int *freed;	/* counted by free_state */
};

static struct state *add(struct rt_images *s, __u32 pid, __u64 start, __u32 exec, int id, int *freed)
{
	struct state *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->id = id;
	p->freed = freed;
	if (rt_images__add(s, &p->head, &(struct proc_image){ .pid = pid, .start = start, .exec = exec })) {
		free(p);
		return NULL;
	}
	return p;
}

static void free_state(void *ctx, struct rt_image *h)
{
	struct state *p = (struct state *)h;

	(*p->freed)++;
	free(p);
}

/* the state found, by id (0: none) */
static int find(struct rt_images *s, __u32 pid, __u64 start, __u32 exec)
{
	struct state *p = (struct state *)rt_images__find(
		s, &(struct proc_image){ .pid = pid, .start = start, .exec = exec });

	return p ? p->id : 0;
}

static int current(const struct rt_images *s, __u32 pid)
{
	struct state *p = (struct state *)rt_images__current(s, pid);

	return p ? p->id : 0;
}

/* RT_IMAGE_HEAD's names are the head's fields: p->img is p->head.img */
static int test_head(void)
{
	struct rt_images s = { 0 };
	int freed = 0;
	struct state *p = add(&s, 7, 70, 1, 1, &freed);

	CHECK(p && (void *)&p->head == (void *)p);
	CHECK(p->img.pid == 7 && p->head.img.start == 70 && p->img.exec == 1);
	p->superseded = true;
	CHECK(p->head.superseded);
	p->head.dead = true;
	CHECK(p->dead);
	rt_images__release(&s, free_state, NULL);
	CHECK(freed == 1 && !s.all && !s.n);
	return TEST_OK;
}

/* an image's own state, never another image's at its pid nor another pid's */
static int test_find_exact(void)
{
	struct rt_images s = { 0 };
	int freed = 0;

	CHECK(add(&s, 100, 5, 1, 1, &freed) && add(&s, 200, 5, 1, 2, &freed));
	CHECK(find(&s, 100, 5, 1) == 1 && find(&s, 200, 5, 1) == 2);
	CHECK(find(&s, 100, 5, 2) == 0);	/* a later exec of 100's */
	CHECK(find(&s, 100, 6, 1) == 0);	/* a recycled pid */
	CHECK(find(&s, 300, 5, 1) == 0);
	CHECK(find(&s, 100, 5, PROC_EXEC_ANY) == 0);	/* a known exec is no found-running one */
	rt_images__release(&s, free_state, NULL);
	CHECK(freed == 2);
	return TEST_OK;
}

/* a process found running (exec unknown) is its first image's, by pid and start, then only that one's */
static int test_adopt(void)
{
	struct rt_images s = { 0 };
	int freed = 0;
	struct state *p = add(&s, 300, 7, PROC_EXEC_ANY, 3, &freed);

	CHECK(p);
	CHECK(find(&s, 300, 8, 2) == 0);	/* another process at the pid: not adopted */
	CHECK(p->img.exec == PROC_EXEC_ANY);
	CHECK(find(&s, 300, 7, 2) == 3);
	CHECK(p->img.exec == 2);		/* adopted: now that image's */
	CHECK(find(&s, 300, 7, 2) == 3);
	CHECK(find(&s, 300, 7, 3) == 0);	/* a later exec is not it */
	rt_images__release(&s, free_state, NULL);
	CHECK(freed == 1);
	return TEST_OK;
}

/* a superseded state names its own image, is no pid's current one, and adopts nothing */
static int test_superseded(void)
{
	struct rt_images s = { 0 };
	int freed = 0;
	struct state *old = add(&s, 100, 5, 1, 1, &freed), *any = add(&s, 400, 1, PROC_EXEC_ANY, 4, &freed);

	CHECK(old && any);
	CHECK(current(&s, 100) == 1 && current(&s, 400) == 4 && current(&s, 500) == 0);
	old->superseded = true;		/* exec 2 of pid 100 came */
	CHECK(current(&s, 100) == 0);
	CHECK(add(&s, 100, 5, 2, 2, &freed));
	CHECK(current(&s, 100) == 2);
	CHECK(find(&s, 100, 5, 1) == 1 && find(&s, 100, 5, 2) == 2);
	any->superseded = true;
	CHECK(find(&s, 400, 1, 2) == 0 && any->img.exec == PROC_EXEC_ANY);
	CHECK(current(&s, 400) == 0);
	rt_images__release(&s, free_state, NULL);
	CHECK(freed == 3);
	return TEST_OK;
}

/* a removed state is found no more, the others still are; it is the caller's to free */
static int test_remove(void)
{
	struct rt_images s = { 0 };
	int freed = 0;
	struct state *p[4];

	for (int i = 0; i < 4; i++)
		CHECK((p[i] = add(&s, 10 + (__u32)i, 1, 1, i + 1, &freed)));
	rt_images__remove(&s, &p[1]->head);
	CHECK(s.n == 3 && find(&s, 11, 1, 1) == 0 && current(&s, 11) == 0);
	for (int i = 0; i < 4; i++)
		CHECK(i == 1 || (find(&s, 10 + (__u32)i, 1, 1) == i + 1 && current(&s, 10 + (__u32)i) == i + 1));
	rt_images__remove(&s, &p[1]->head);	/* not there: nothing moves */
	CHECK(s.n == 3);
	CHECK(!freed);
	free_state(NULL, &p[1]->head);
	rt_images__release(&s, free_state, NULL);
	CHECK(freed == 4);
	return TEST_OK;
}

/* a pid and its start, of a child stopped until killed */
static pid_t child(__u64 *start)
{
	pid_t pid = fork();

	if (!pid) {
		pause();
		_exit(0);
	}
	if (pid > 0 && proc_image__start_of("/proc", (__u32)pid, start)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

/*
 * An ended image goes at its second sweep, with its BPF table; a superseded
 * one too, leaving the table (the later image's); a live image stays.
 */
static int test_sweep(void)
{
	struct rt_images s = { 0 };
	struct state *old;
	__u64 live_start, dead_start, v = 1;
	pid_t live, dead;
	int freed = 0, fd = bpf_map_create(BPF_MAP_TYPE_HASH, "rt_images_test", 4, 8, 8, NULL);
	__u32 k;

	if (fd < 0)
		SKIP("cannot create a BPF map (root needed)");
	live = child(&live_start);
	dead = child(&dead_start);
	CHECK(live > 0 && dead > 0);
	kill(dead, SIGKILL);
	waitpid(dead, NULL, 0);
	CHECK(add(&s, (__u32)live, live_start, 1, 1, &freed) && add(&s, (__u32)dead, dead_start, 1, 2, &freed));
	/* the image before exec 1, superseded by it */
	CHECK((old = add(&s, (__u32)live, live_start, 0, 3, &freed)));
	old->superseded = true;
	CHECK(current(&s, (__u32)live) == 1);
	k = (__u32)live;
	CHECK(!bpf_map_update_elem(fd, &k, &v, BPF_ANY));
	k = (__u32)dead;
	CHECK(!bpf_map_update_elem(fd, &k, &v, BPF_ANY));

	rt_images__sweep(&s, "/proc", fd, free_state, NULL);
	CHECK(s.n == 3 && !freed);	/* gone once: its samples may still be named */
	rt_images__sweep(&s, "/proc", fd, free_state, NULL);
	CHECK(s.n == 1 && freed == 2 && current(&s, (__u32)live) == 1);
	CHECK(find(&s, (__u32)live, live_start, 0) == 0 && find(&s, (__u32)dead, dead_start, 1) == 0);
	k = (__u32)dead;
	CHECK(bpf_map_lookup_elem(fd, &k, &v) && errno == ENOENT);	/* its own: gone */
	k = (__u32)live;
	CHECK(!bpf_map_lookup_elem(fd, &k, &v));	/* the live image's: kept */

	kill(live, SIGKILL);
	waitpid(live, NULL, 0);
	rt_images__sweep(&s, "/proc", fd, free_state, NULL);
	rt_images__sweep(&s, "/proc", fd, free_state, NULL);
	CHECK(s.n == 0 && freed == 3);
	CHECK(bpf_map_lookup_elem(fd, &k, &v) && errno == ENOENT);
	rt_images__release(&s, free_state, NULL);
	close(fd);
	return TEST_OK;
}

TEST_MAIN("rt_images", TEST(test_head), TEST(test_find_exact), TEST(test_adopt), TEST(test_superseded),
	  TEST(test_remove), TEST(test_sweep))
