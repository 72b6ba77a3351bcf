/* http_server.h -- pull endpoints: /debug/pprof/profile, /debug/pprof/, /metrics, /healthz (libmicrohttpd) */
#ifndef EBPFPROF_HTTP_SERVER_H
#define EBPFPROF_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct http_server;

/* What GET / asks for. */
struct http_page_args {
	int seconds;		/* the last seconds of windows, or (no windows kept) to collect */
	bool seconds_given;
	int windows;		/* else: the last N windows */
	__u32 pid;		/* collecting: 0 is every process */
	const char *series;	/* one series; NULL: all */
	const char *label;	/* KEY:VALUE: only the samples with that label; NULL: all */
};

struct http_server_opts {
	const char *listen;		/* "127.0.0.1:7070", "[::1]:7070", "0.0.0.0:7070"; port 0 picks one */
	const char *bearer_token;	/* when set, every /debug/pprof/ path requires "Authorization: Bearer TOKEN" */
	int max_connections;		/* 0: 16 */
	int max_profile_seconds;	/* 0: 300; longer ?seconds= is refused with 400 */

	/*
	 * Collects a CPU profile over the next `seconds` seconds (pid 0: all
	 * processes) and returns it as gzip pprof in *data (malloc'd, the server
	 * frees it). Called from a server thread; blocks for the duration.
	 * Returns 0 or a negative errno (-EBUSY: too many profiles at once).
	 */
	int (*profile)(void *ctx, int seconds, __u32 pid, void **data, size_t *len);
	/*
	 * Writes the flame graph page (HTML) for GET /: the last windows (or
	 * the last seconds of them), or seconds collected now by an agent that
	 * keeps none. 0 or a negative errno (-ENOENT: no such series).
	 */
	int (*page)(void *ctx, const struct http_page_args *args, FILE *out);
	/* Writes the Prometheus text exposition of the agent's metrics. 0 or negative errno. */
	int (*metrics)(void *ctx, FILE *out);
	void *ctx;
};

/* Binds and starts serving in libmicrohttpd's threads. NULL with errno set (-EADDRINUSE...). */
struct http_server *http_server__new(const struct http_server_opts *opts);

/* The port actually bound (useful with port 0). */
int http_server__port(const struct http_server *s);

/* Stops accepting, waits for running requests to end. NULL is a no-op. */
void http_server__free(struct http_server *s);

#endif /* EBPFPROF_HTTP_SERVER_H */
