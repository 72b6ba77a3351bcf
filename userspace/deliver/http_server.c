/* http_server.c -- pull endpoints: /debug/pprof/profile, /debug/pprof/, /metrics, /healthz */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include "http_request.h"
#include "http_server.h"
#include "lib/log.h"
#include "prom.h"

#define DEFAULT_MAX_CONNECTIONS 16
#define DEFAULT_MAX_PROFILE_SECONDS 300
#define DEFAULT_PROFILE_SECONDS 30	/* net/http/pprof's default */
/*
 * Per connection: the request line and headers must fit, and nothing we
 * accept needs more than a few hundred bytes; longer requests get 414/431.
 */
#define CONN_MEMORY_LIMIT (16 * 1024)
/* Idle clients hold one of the few connection slots; free it soon. */
#define CONN_TIMEOUT_S 10
#define MAX_LISTEN_LEN 64
#define TEXT_TYPE "text/plain; charset=utf-8"

struct http_server {
	struct MHD_Daemon *daemon;
	int (*profile)(void *ctx, int seconds, __u32 pid, void **data, size_t *len);
	int (*metrics)(void *ctx, FILE *out);
	int (*page)(void *ctx, const struct http_page_args *args, FILE *out);
	void *ctx;
	char *bearer_token;	/* owned; policy.bearer_token points to it */
	struct http_request_policy policy;
	int port;
};

typedef enum MHD_Result (*endpoint_fn)(struct http_server *s, struct MHD_Connection *conn,
					   const struct http_decision *d);

/* Queues resp, which may be NULL when creating it failed, with the headers every answer carries. */
static enum MHD_Result queue(struct MHD_Connection *conn, unsigned int status,
			     struct MHD_Response *resp, const char *type)
{
	enum MHD_Result ret;

	/* MHD_NO makes libmicrohttpd drop the connection: all we can do without memory */
	if (!resp)
		return MHD_NO;
	if (MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type) != MHD_YES ||
	    MHD_add_response_header(resp, MHD_HTTP_HEADER_X_CONTENT_TYPE_OPTIONS,
				    "nosniff") != MHD_YES)
		ret = MHD_NO;
	else
		ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* A text/plain answer with at most one extra header (header NULL: none). */
static enum MHD_Result send_text_hdr(struct MHD_Connection *conn, unsigned int status,
				     const char *text, const char *header, const char *value)
{
	struct MHD_Response *resp;

	resp = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
	if (resp && header && MHD_add_response_header(resp, header, value) != MHD_YES) {
		MHD_destroy_response(resp);
		resp = NULL;
	}
	return queue(conn, status, resp, TEXT_TYPE);
}

static enum MHD_Result send_text(struct MHD_Connection *conn, unsigned int status, const char *text)
{
	return send_text_hdr(conn, status, text, NULL, NULL);
}

/* Hands a malloc'd body to libmicrohttpd, which frees it after sending. */
static enum MHD_Result send_owned(struct MHD_Connection *conn, unsigned int status,
				  void *body, size_t len, const char *type,
				  const char *header, const char *value)
{
	struct MHD_Response *resp;

	resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
	} else if (header && MHD_add_response_header(resp, header, value) != MHD_YES) {
		MHD_destroy_response(resp);	/* frees body */
		resp = NULL;
	}
	return queue(conn, status, resp, type);
}

static enum MHD_Result handle_profile(struct http_server *s, struct MHD_Connection *conn,
				     const struct http_decision *d)
{
	void *data = NULL;
	size_t len = 0;
	char msg[128], ebuf[64];
	int err;

	if (!s->profile)
		return send_text(conn, MHD_HTTP_NOT_FOUND, "profiling is not enabled\n");
	err = s->profile(s->ctx, d->seconds, d->pid, &data, &len);
	if (err == -EBUSY)
		return send_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
				 "too many profiles in progress, retry later\n");
	if (!err && !data && len)
		err = -EINVAL;
	if (err) {
		snprintf(msg, sizeof(msg), "could not collect the profile: %s\n",
			 strerror_r(-err, ebuf, sizeof(ebuf)));
		return send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
	}
	return send_owned(conn, MHD_HTTP_OK, data, len, "application/octet-stream",
			  MHD_HTTP_HEADER_CONTENT_DISPOSITION, "attachment; filename=\"profile\"");
}

static const char index_html[] =
	"<html>\n"
	"<head>\n"
	"<title>/debug/pprof/</title>\n"
	"</head>\n"
	"<body>\n"
	"/debug/pprof/<br>\n"
	"<br>\n"
	"Types of profiles available:\n"
	"<table>\n"
	"<thead><td>Profile</td></thead>\n"
	"<tr><td><a href=\"profile\">profile</a></td></tr>\n"
	"</table>\n"
	"<p>\n"
	"Profile Descriptions:\n"
	"<ul>\n"
	"<li><div class=profile-name>profile: </div> CPU profile of the whole system, sampled "
	"with eBPF. You can specify the duration in the seconds GET parameter (default 30), and "
	"restrict it to one process with the pid GET parameter. After you get the profile file, "
	"use the go tool pprof command to investigate the profile.</li>\n"
	"</ul>\n"
	"</p>\n"
	"<p>\n"
	"No other profiles are available: heap, goroutine, block, mutex and the other Go runtime "
	"profiles describe a Go program's own state, and this agent is not profiling itself.\n"
	"</p>\n"
	"</body>\n"
	"</html>\n";

static enum MHD_Result handle_index(struct http_server *s, struct MHD_Connection *conn,
				     const struct http_decision *d)
{
	struct MHD_Response *resp;

	resp = MHD_create_response_from_buffer(sizeof(index_html) - 1, (void *)index_html,
					       MHD_RESPMEM_PERSISTENT);
	return queue(conn, MHD_HTTP_OK, resp, "text/html; charset=utf-8");
}

/* Like net/http's ServeMux: the index's relative links need the trailing slash. */
static enum MHD_Result handle_index_redirect(struct http_server *s, struct MHD_Connection *conn,
				     const struct http_decision *d)
{
	return send_text_hdr(conn, MHD_HTTP_MOVED_PERMANENTLY, "moved to /debug/pprof/\n",
			     MHD_HTTP_HEADER_LOCATION, "/debug/pprof/");
}

static enum MHD_Result handle_unknown_profile(struct http_server *s, struct MHD_Connection *conn,
				     const struct http_decision *d)
{
	return send_text(conn, MHD_HTTP_NOT_FOUND,
			 "unknown profile: only \"profile\" (CPU) is available\n");
}

static enum MHD_Result handle_metrics(struct http_server *s, struct MHD_Connection *conn,
				     const struct http_decision *d)
{
	char *buf = NULL, msg[128], ebuf[64];
	size_t len = 0;
	FILE *out;
	int err;

	if (!s->metrics)
		return send_text(conn, MHD_HTTP_NOT_FOUND, "metrics are not enabled\n");
	out = open_memstream(&buf, &len);
	if (!out)
		return send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	err = s->metrics(s->ctx, out);
	/* fclose() flushes: a failure there is a lost body too */
	if (fclose(out) && !err)
		err = -errno;
	if (err) {
		free(buf);
		snprintf(msg, sizeof(msg), "could not collect metrics: %s\n",
			 strerror_r(-err, ebuf, sizeof(ebuf)));
		return send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
	}
	return send_owned(conn, MHD_HTTP_OK, buf, len, PROM_CONTENT_TYPE, NULL, NULL);
}

static enum MHD_Result handle_page(struct http_server *s, struct MHD_Connection *conn,
				  const struct http_decision *d)
{
	struct http_page_args args = { .seconds = d->seconds, .seconds_given = d->seconds_given,
				       .windows = d->windows, .pid = d->pid, .series = d->series,
				       .label = d->label };
	char *buf = NULL, msg[160], ebuf[64];
	size_t len = 0;
	FILE *out;
	int err;

	if (!s->page)
		return send_text(conn, MHD_HTTP_NOT_FOUND, "not found\n");
	out = open_memstream(&buf, &len);
	if (!out)
		return send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	err = s->page(s->ctx, &args, out);
	if (fclose(out) && !err)
		err = -errno;
	if (err) {
		free(buf);
		if (err == -EBUSY)
			return send_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
					 "too many profiles in progress, retry later\n");
		if (err == -ENOENT)
			return send_text(conn, MHD_HTTP_NOT_FOUND, "no such series\n");
		snprintf(msg, sizeof(msg), "could not make the page: %s\n",
			 strerror_r(-err, ebuf, sizeof(ebuf)));
		return send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
	}
	return send_owned(conn, MHD_HTTP_OK, buf, len, "text/html; charset=utf-8", NULL, NULL);
}

static enum MHD_Result handle_healthz(struct http_server *s, struct MHD_Connection *conn,
				     const struct http_decision *d)
{
	return send_text(conn, MHD_HTTP_OK, "ok\n");
}

static const endpoint_fn endpoints[] = {
	[HTTP_EP_PROFILE] = handle_profile,
	[HTTP_EP_INDEX] = handle_index,
	[HTTP_EP_INDEX_REDIRECT] = handle_index_redirect,
	[HTTP_EP_UNKNOWN_PROFILE] = handle_unknown_profile,
	[HTTP_EP_METRICS] = handle_metrics,
	[HTTP_EP_HEALTHZ] = handle_healthz,
	[HTTP_EP_PAGE] = handle_page,
};

static bool has_body(struct MHD_Connection *conn)
{
	const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_CONTENT_LENGTH);

	return (cl && strcmp(cl, "0")) ||
	       MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
					   MHD_HTTP_HEADER_TRANSFER_ENCODING);
}

/*
 * Every request is answered on the first call, when only the headers have
 * been read: no route takes a body, and answering before one is read makes
 * libmicrohttpd close the connection instead of reading it. It also makes
 * every answer "Connection: close", which suits us: an idle keep-alive
 * connection would hold one of the few connection threads.
 */
static enum MHD_Result handle_request(void *cls, struct MHD_Connection *conn, const char *url,
				      const char *method, const char *version,
				      const char *upload_data, size_t *upload_data_size,
				      void **req_cls)
{
	struct http_server *s = cls;
	/* libmicrohttpd has split and percent-decoded the query; the first of duplicates wins */
	struct http_request req = {
		.method = method,
		.path = url,
		.seconds = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "seconds"),
		.pid = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "pid"),
		.authorization = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_AUTHORIZATION),
		.has_body = has_body(conn),
		.windows = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "windows"),
		.series = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "series"),
		.label = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "label"),
	};
	struct http_decision d;

	if (http_request__decide(&req, &s->policy, &d))
		return send_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "bad request state\n");
	if (d.endpoint == HTTP_EP_REFUSED)
		return send_text_hdr(conn, d.status, d.message, d.header, d.value);
	return endpoints[d.endpoint](s, conn, &d);
}

/* libmicrohttpd reports client mistakes and refused connections: noise unless debugging. */
static void log_mhd(void *cls, const char *fmt, va_list ap)
{
	char buf[256];
	size_t n;

	if (log_level < LOG_DEBUG)
		return;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	p_debug("http: %s", buf);
}

/* 0-65535 in decimal digits only. */
static int parse_port(const char *str, in_port_t *port)
{
	size_t n = strlen(str);
	long val = 0;

	if (n == 0 || n > 5)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (str[i] < '0' || str[i] > '9')
			return -EINVAL;
		val = val * 10 + (str[i] - '0');
	}
	if (val > 65535)
		return -EINVAL;
	*port = htons((in_port_t)val);
	return 0;
}

/*
 * "HOST:PORT" where HOST is a dotted IPv4 address, a bracketed IPv6 address
 * or "localhost" (127.0.0.1). No name is looked up, and an empty host is not
 * "all interfaces": the socket binds exactly the address written.
 */
static int parse_listen(const char *listen, struct sockaddr_storage *addr)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)addr;
	struct sockaddr_in *sin = (struct sockaddr_in *)addr;
	char host[INET6_ADDRSTRLEN];
	const char *host_start = listen, *host_end, *port;
	size_t host_len;

	if (!listen || strnlen(listen, MAX_LISTEN_LEN + 1) > MAX_LISTEN_LEN)
		return -EINVAL;
	if (listen[0] == '[') {
		host_start = listen + 1;
		host_end = strchr(host_start, ']');
		if (!host_end || host_end[1] != ':')
			return -EINVAL;
		port = host_end + 2;
	} else {
		host_end = strrchr(listen, ':');
		if (!host_end)
			return -EINVAL;
		port = host_end + 1;
	}
	host_len = host_end - host_start;
	if (host_len == 0 || host_len >= sizeof(host))
		return -EINVAL;
	memcpy(host, host_start, host_len);
	host[host_len] = '\0';

	memset(addr, 0, sizeof(*addr));
	if (listen[0] == '[') {
		sin6->sin6_family = AF_INET6;
		if (inet_pton(AF_INET6, host, &sin6->sin6_addr) != 1)
			return -EINVAL;
		return parse_port(port, &sin6->sin6_port);
	}
	sin->sin_family = AF_INET;
	if (!strcmp(host, "localhost"))
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
		return -EINVAL;
	return parse_port(port, &sin->sin_port);
}

/* A token with spaces or control bytes could never match a trimmed header value. */
static bool token_valid(const char *token)
{
	for (; *token; token++) {
		if ((unsigned char)*token <= ' ' || (unsigned char)*token >= 0x7f)
			return false;
	}
	return true;
}

static int read_port(struct http_server *s)
{
	const union MHD_DaemonInfo *info;
	struct sockaddr_storage addr;
	socklen_t len = sizeof(addr);

	info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_LISTEN_FD);
	if (!info)
		return -EIO;
	if (getsockname(info->listen_fd, (struct sockaddr *)&addr, &len))
		return -errno;
	if (addr.ss_family == AF_INET6)
		s->port = ntohs(((struct sockaddr_in6 *)&addr)->sin6_port);
	else
		s->port = ntohs(((struct sockaddr_in *)&addr)->sin_port);
	return 0;
}

struct http_server *http_server__new(const struct http_server_opts *opts)
{
	/*
	 * One thread per connection: a profile request blocks its thread for
	 * `seconds`, and must not hold up /healthz or /metrics meanwhile.
	 * MHD_USE_AUTO picks poll(): select() fails on descriptors above 1023.
	 */
	unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			     MHD_USE_AUTO | MHD_USE_ERROR_LOG;
	struct http_server *s = NULL;
	struct sockaddr_storage addr;
	unsigned int max_connections;
	int err;

	if (!opts || opts->max_connections < 0 || opts->max_profile_seconds < 0 ||
	    (opts->bearer_token && !token_valid(opts->bearer_token))) {
		err = -EINVAL;
		goto err_out;
	}
	err = parse_listen(opts->listen, &addr);
	if (err)
		goto err_out;

	s = calloc(1, sizeof(*s));
	if (!s) {
		err = -ENOMEM;
		goto err_out;
	}
	s->profile = opts->profile;
	s->metrics = opts->metrics;
	s->page = opts->page;
	s->ctx = opts->ctx;
	s->policy.default_seconds = DEFAULT_PROFILE_SECONDS;
	s->policy.max_seconds = opts->max_profile_seconds ?: DEFAULT_MAX_PROFILE_SECONDS;
	/* "" is how configurations spell "no token" */
	if (opts->bearer_token && *opts->bearer_token) {
		s->bearer_token = strdup(opts->bearer_token);
		if (!s->bearer_token) {
			err = -ENOMEM;
			goto err_out;
		}
		s->policy.bearer_token = s->bearer_token;
		s->policy.token_len = strlen(s->bearer_token);
	}
	max_connections = opts->max_connections ?: DEFAULT_MAX_CONNECTIONS;
	if (addr.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;	/* without MHD_USE_DUAL_STACK: IPV6_V6ONLY */

	errno = 0;
	s->daemon = MHD_start_daemon(flags, 0, NULL, NULL, handle_request, s,
				     MHD_OPTION_EXTERNAL_LOGGER, log_mhd, NULL,
				     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
				     MHD_OPTION_CONNECTION_LIMIT, max_connections,
				     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY_LIMIT,
				     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)CONN_TIMEOUT_S,
				     MHD_OPTION_END);
	if (!s->daemon) {
		/* libmicrohttpd keeps the errno of the failed socket call (EADDRINUSE...) */
		err = errno ? -errno : -EIO;
		goto err_out;
	}
	err = read_port(s);
	if (err)
		goto err_out;
	return s;

err_out:
	http_server__free(s);
	errno = -err;
	return NULL;
}

int http_server__port(const struct http_server *s)
{
	return s ? s->port : -EINVAL;
}

void http_server__free(struct http_server *s)
{
	if (!s)
		return;
	/* joins every connection thread, so it waits for running profiles */
	if (s->daemon)
		MHD_stop_daemon(s->daemon);
	free(s->bearer_token);
	free(s);
}
