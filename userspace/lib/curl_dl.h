/* curl_dl.h -- libcurl, opened on first use instead of linked */
#ifndef EBPFPROF_CURL_DL_H
#define EBPFPROF_CURL_DL_H

#include <stdbool.h>

/*
 * curl_dl.c defines the libcurl functions ebpfprof calls, under their own
 * names, so callers include <curl/curl.h> and call libcurl as usual. The
 * first call opens libcurl.so.4; if it cannot be opened, curl_global_init()
 * fails (CURLE_FAILED_INIT) and the reason is said once on stderr.
 */

/* Whether libcurl is open, opening it now if it was not (thread-safe). */
bool curl_dl__ready(void);

#endif /* EBPFPROF_CURL_DL_H */
