/* debuginfod_dl.h -- libdebuginfod, opened on first use instead of linked */
#ifndef EBPFPROF_DEBUGINFOD_DL_H
#define EBPFPROF_DEBUGINFOD_DL_H

#include <elfutils/debuginfod.h>

/* The entry points of libdebuginfod.so.1 that debuginfo.c calls. */
struct debuginfod_api {
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *c);
	int (*find_debuginfo)(debuginfod_client *c, const unsigned char *build_id, int len,
			      char **path);
	void (*set_user_data)(debuginfod_client *c, void *data);
	void *(*get_user_data)(debuginfod_client *c);
	void (*set_progressfn)(debuginfod_client *c, debuginfod_progressfn_t fn);
};

/*
 * The library, opened on the first call (thread-safe); NULL when it cannot be
 * opened or lacks an entry point, said once on stderr with dlerror()'s reason.
 */
const struct debuginfod_api *debuginfod_dl__get(void);

#endif /* EBPFPROF_DEBUGINFOD_DL_H */
