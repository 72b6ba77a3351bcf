/* sigbus.h -- a read of a file mapping that a truncation underneath would fault ends in an error, not a crash */
#ifndef EBPFPROF_SIGBUS_H
#define EBPFPROF_SIGBUS_H

#include <setjmp.h>

/*
 * A file we map may be truncated by its owner while we read it; the read of a
 * page past the new end raises SIGBUS. Code that reads a mapping does so
 * between sigbus__arm() and sigbus__disarm(), with a sigsetjmp() right after
 * arming:
 *
 *	sigjmp_buf env;
 *
 *	sigbus__arm(&env);
 *	if (sigsetjmp(env, 0)) {
 *		(the mapping faulted: sigbus__arm() was undone, give up on it)
 *	}
 *	... reads of the mapping ...
 *	sigbus__disarm();
 *
 * The code between must not take locks or leave state half-changed that the
 * jump would skip. Arming is per thread; nesting is not supported.
 */

/*
 * Installs the SIGBUS handler once per process (thread-safe). A SIGBUS while
 * no guard is armed goes to the handler that was there before (or the default
 * action: the process dies as it would have). 0 or a negative errno.
 */
int sigbus__install(void);

void sigbus__arm(sigjmp_buf *env);
void sigbus__disarm(void);

#endif /* EBPFPROF_SIGBUS_H */
