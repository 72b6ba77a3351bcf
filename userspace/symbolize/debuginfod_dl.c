/* debuginfod_dl.c -- libdebuginfod, opened on first use instead of linked */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include "debuginfod_dl.h"
#include "lib/log.h"

/*
 * Linked, libdebuginfod brings a second libcurl built on GnuTLS, whose
 * constructor initializes GnuTLS and p11-kit in every run: about 3 MB of
 * resident memory for a feature that is off unless --debuginfod is given.
 * elfutils' own libdw opens it the same way.
 */
#define DEBUGINFOD_SONAME "libdebuginfod.so.1"

static struct debuginfod_api api;
static const struct debuginfod_api *loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *sym(void *h, const char *name, int *missing)
{
	void *p = dlsym(h, name);

	if (!p && !*missing) {
		p_warn("debuginfod: %s: %s", DEBUGINFOD_SONAME, dlerror());
		*missing = 1;
	}
	return p;
}

static void load(void)
{
	int missing = 0;
	void *h;

	h = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		p_warn("debuginfod: %s; debug info is not fetched", dlerror());
		return;
	}
	api.begin = sym(h, "debuginfod_begin", &missing);
	api.end = sym(h, "debuginfod_end", &missing);
	api.find_debuginfo = sym(h, "debuginfod_find_debuginfo", &missing);
	api.set_user_data = sym(h, "debuginfod_set_user_data", &missing);
	api.get_user_data = sym(h, "debuginfod_get_user_data", &missing);
	api.set_progressfn = sym(h, "debuginfod_set_progressfn", &missing);
	if (missing) {
		dlclose(h);
		return;
	}
	/* kept open for the life of the process: clients may be begun from any thread */
	loaded = &api;
}

const struct debuginfod_api *debuginfod_dl__get(void)
{
	pthread_once(&once, load);
	return loaded;
}
