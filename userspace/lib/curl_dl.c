/* curl_dl.c -- libcurl, opened on first use instead of linked */
#define CURL_DISABLE_TYPECHECK	/* the typecheck macros would rename the definitions below */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <curl/curl.h>
#include "curl_dl.h"
#include "log.h"

/*
 * Linked, libcurl and what it links (OpenSSL, GnuTLS through librtmp, p11-kit,
 * Kerberos, LDAP, SSH) are loaded, relocated and initialized in every run:
 * about 8 MB of resident memory, a third of the agent's, in one-shot runs and
 * agents that never push. Opened on first use, they cost nothing until a push
 * URL or the Kubernetes API needs them. Each function below forwards to the
 * library's own; only the ones ebpfprof calls are here.
 */
#define CURL_SONAME "libcurl.so.4"

static struct {
	CURLcode (*global_init)(long flags);
	void (*global_cleanup)(void);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *c, CURLoption o, ...);
	CURLcode (*easy_perform)(CURL *c);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO i, ...);
	const char *(*easy_strerror)(CURLcode rc);
	void (*easy_cleanup)(CURL *c);
	void (*easy_reset)(CURL *c);
	char *(*easy_escape)(CURL *c, const char *s, int len);
	void (*free)(void *p);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
	time_t (*getdate)(const char *s, const time_t *unused);
	CURLU *(*url)(void);
	void (*url_cleanup)(CURLU *u);
	CURLUcode (*url_set)(CURLU *u, CURLUPart what, const char *part, unsigned int flags);
	CURLUcode (*url_get)(CURLU *u, CURLUPart what, char **part, unsigned int flags);
} fn;
static bool loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const struct {
	const char *name;
	void **slot;
} syms[] = {
#define SYM(field, name) { name, (void **)&fn.field }
	SYM(global_init, "curl_global_init"), SYM(global_cleanup, "curl_global_cleanup"),
	SYM(easy_init, "curl_easy_init"), SYM(easy_setopt, "curl_easy_setopt"),
	SYM(easy_perform, "curl_easy_perform"), SYM(easy_getinfo, "curl_easy_getinfo"),
	SYM(easy_strerror, "curl_easy_strerror"), SYM(easy_cleanup, "curl_easy_cleanup"),
	SYM(easy_reset, "curl_easy_reset"), SYM(easy_escape, "curl_easy_escape"),
	SYM(free, "curl_free"), SYM(slist_append, "curl_slist_append"),
	SYM(slist_free_all, "curl_slist_free_all"), SYM(getdate, "curl_getdate"),
	SYM(url, "curl_url"), SYM(url_cleanup, "curl_url_cleanup"), SYM(url_set, "curl_url_set"),
	SYM(url_get, "curl_url_get"),
#undef SYM
};

static void load(void)
{
	void *h = dlopen(CURL_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		p_err("%s", dlerror());
		return;
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		*syms[i].slot = dlsym(h, syms[i].name);
		if (!*syms[i].slot) {
			p_err("%s: %s", CURL_SONAME, dlerror());
			dlclose(h);
			return;
		}
	}
	/* kept open for the life of the process: handles and callbacks point into it */
	loaded = true;
}

bool curl_dl__ready(void)
{
	pthread_once(&once, load);
	return loaded;
}

CURLcode curl_global_init(long flags)
{
	return curl_dl__ready() ? fn.global_init(flags) : CURLE_FAILED_INIT;
}

/* the functions below are only reached after curl_global_init() succeeded */
void curl_global_cleanup(void)
{
	if (loaded)
		fn.global_cleanup();
}

CURL *curl_easy_init(void)
{
	return loaded ? fn.easy_init() : NULL;
}

/* the argument's type follows from the option's number range, as libcurl reads it */
CURLcode curl_easy_setopt(CURL *c, CURLoption o, ...)
{
	CURLcode rc = CURLE_FAILED_INIT;
	va_list ap;

	if (!loaded)
		return rc;
	va_start(ap, o);
	if (o < CURLOPTTYPE_OBJECTPOINT)
		rc = fn.easy_setopt(c, o, va_arg(ap, long));
	else if (o >= CURLOPTTYPE_OFF_T && o < CURLOPTTYPE_BLOB)
		rc = fn.easy_setopt(c, o, va_arg(ap, curl_off_t));
	else	/* data, string, list, blob and function pointers alike */
		rc = fn.easy_setopt(c, o, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

CURLcode curl_easy_perform(CURL *c)
{
	return loaded ? fn.easy_perform(c) : CURLE_FAILED_INIT;
}

/* every CURLINFO argument is a pointer to where the answer goes */
CURLcode curl_easy_getinfo(CURL *c, CURLINFO i, ...)
{
	CURLcode rc = CURLE_FAILED_INIT;
	va_list ap;

	if (!loaded)
		return rc;
	va_start(ap, i);
	rc = fn.easy_getinfo(c, i, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

const char *curl_easy_strerror(CURLcode rc)
{
	return loaded ? fn.easy_strerror(rc) : CURL_SONAME " is not loaded";
}

void curl_easy_cleanup(CURL *c)
{
	if (loaded)
		fn.easy_cleanup(c);
}

void curl_easy_reset(CURL *c)
{
	if (loaded)
		fn.easy_reset(c);
}

char *curl_easy_escape(CURL *c, const char *s, int len)
{
	return loaded ? fn.easy_escape(c, s, len) : NULL;
}

void curl_free(void *p)
{
	if (loaded)
		fn.free(p);
}

struct curl_slist *curl_slist_append(struct curl_slist *l, const char *s)
{
	return loaded ? fn.slist_append(l, s) : NULL;
}

void curl_slist_free_all(struct curl_slist *l)
{
	if (loaded)
		fn.slist_free_all(l);
}

time_t curl_getdate(const char *s, const time_t *unused)
{
	return loaded ? fn.getdate(s, unused) : -1;
}

CURLU *curl_url(void)
{
	return loaded ? fn.url() : NULL;
}

void curl_url_cleanup(CURLU *u)
{
	if (loaded)
		fn.url_cleanup(u);
}

CURLUcode curl_url_set(CURLU *u, CURLUPart what, const char *part, unsigned int flags)
{
	return loaded ? fn.url_set(u, what, part, flags) : CURLUE_OUT_OF_MEMORY;
}

CURLUcode curl_url_get(CURLU *u, CURLUPart what, char **part, unsigned int flags)
{
	return loaded ? fn.url_get(u, what, part, flags) : CURLUE_OUT_OF_MEMORY;
}
