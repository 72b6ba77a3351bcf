/* table_builder.c -- CFI tables of large files built on a thread of their own, smallest first */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <libelf.h>
#include "lib/array.h"
#include "lib/clock.h"
#include "table_builder.h"
#include "unwind_table.h"

enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

struct job {
	int fd;
	off_t size;
	enum job_state state;
	struct built_table out;
};

/*
 * Jobs are pointers so that the thread may hold one while the array
 * changes; every field of a job and the array are under lock.
 */
struct table_builder {
	pthread_mutex_t lock;
	pthread_cond_t work;
	pthread_t thread;
	struct job **jobs;
	size_t n, cap;
	bool quit;
};

/* the smallest queued job, or NULL; under lock */
static struct job *next_job(struct table_builder *b)
{
	struct job *best = NULL;

	for (size_t i = 0; i < b->n; i++)
		if (b->jobs[i]->state == JOB_QUEUED && (!best || b->jobs[i]->size < best->size))
			best = b->jobs[i];
	return best;
}

static void *run(void *arg)
{
	struct table_builder *b = arg;

	pthread_mutex_lock(&b->lock);
	for (;;) {
		struct job *j;
		struct unwind_table *t;
		__s64 t0;
		int err;

		while (!b->quit && !(j = next_job(b)))
			pthread_cond_wait(&b->work, &b->lock);
		if (b->quit)
			break;
		j->state = JOB_RUNNING;
		pthread_mutex_unlock(&b->lock);
		t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		t = unwind_table__build(j->fd);
		err = t ? 0 : errno;
		close(j->fd);
		pthread_mutex_lock(&b->lock);
		j->fd = -1;
		j->out.table = t;
		j->out.err = err;
		j->out.cpu_ns = (__u64)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0);
		j->state = JOB_DONE;
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

struct table_builder *table_builder__new(void)
{
	struct table_builder *b = calloc(1, sizeof(*b));
	sigset_t all, old;
	int err;

	if (!b)
		return NULL;
	elf_version(EV_CURRENT);	/* libelf's one global, set before two threads use it */
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->work, NULL);
	/* signals are the main thread's: the builder starts with all of them blocked */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&b->thread, NULL, run, b);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_cond_destroy(&b->work);
		pthread_mutex_destroy(&b->lock);
		free(b);
		errno = err;
		return NULL;
	}
	return b;
}

void table_builder__free(struct table_builder *b, void (*free_arg)(void *arg))
{
	if (!b)
		return;
	pthread_mutex_lock(&b->lock);
	b->quit = true;
	pthread_cond_signal(&b->work);
	pthread_mutex_unlock(&b->lock);
	pthread_join(b->thread, NULL);
	for (size_t i = 0; i < b->n; i++) {
		struct job *j = b->jobs[i];

		if (j->fd >= 0)
			close(j->fd);
		unwind_table__free(j->out.table);
		if (free_arg)
			free_arg(j->out.arg);
		free(j);
	}
	free(b->jobs);
	pthread_cond_destroy(&b->work);
	pthread_mutex_destroy(&b->lock);
	free(b);
}

int table_builder__submit(struct table_builder *b, int fd, off_t size, void *arg)
{
	struct job *j = malloc(sizeof(*j));
	int err = 0;

	if (!j)
		return -ENOMEM;
	*j = (struct job){ .fd = fd, .size = size, .state = JOB_QUEUED, .out = { .arg = arg } };
	pthread_mutex_lock(&b->lock);
	if (ARRAY_RESERVE(b->jobs, b->cap, b->n + 1))
		err = -ENOMEM;
	else
		b->jobs[b->n++] = j;
	if (!err)
		pthread_cond_signal(&b->work);
	pthread_mutex_unlock(&b->lock);
	if (err)
		free(j);
	return err;
}

bool table_builder__take(struct table_builder *b, struct built_table *out)
{
	struct job *j = NULL;

	pthread_mutex_lock(&b->lock);
	for (size_t i = 0; i < b->n && !j; i++) {
		if (b->jobs[i]->state != JOB_DONE)
			continue;
		j = b->jobs[i];
		b->jobs[i] = b->jobs[--b->n];
	}
	pthread_mutex_unlock(&b->lock);
	if (!j)
		return false;
	*out = j->out;
	free(j);
	return true;
}

int table_builder__pending(struct table_builder *b)
{
	int n;

	pthread_mutex_lock(&b->lock);
	n = (int)b->n;
	pthread_mutex_unlock(&b->lock);
	return n;
}
