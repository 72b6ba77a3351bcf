/* sigbus.c -- SIGBUS from a truncated file mapping jumps back to the reader that armed a guard */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include "sigbus.h"

static __thread sigjmp_buf *armed;
static struct sigaction previous;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int install_err;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	sigjmp_buf *env = armed;

	if (env) {
		armed = NULL;
		siglongjmp(*env, 1);
	}
	/* not a guarded read: the handler before ours, or the default action, takes the refault */
	sigaction(SIGBUS, &previous, NULL);
	(void)sig, (void)si, (void)uc;
}

static void install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	/* SA_NODEFER: the jump leaves the handler without restoring the mask (sigsetjmp(env, 0) is a plain call, no syscall) */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &previous))
		install_err = -errno;
}

int sigbus__install(void)
{
	pthread_once(&once, install);
	return install_err;
}

void sigbus__arm(sigjmp_buf *env)
{
	armed = env;
}

void sigbus__disarm(void)
{
	armed = NULL;
}
