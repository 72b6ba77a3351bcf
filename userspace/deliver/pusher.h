/* pusher.h -- delivers profile windows to a Pyroscope-compatible backend: queue, retries, spool */
#ifndef EBPFPROF_PUSHER_H
#define EBPFPROF_PUSHER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/*
 * A pusher owns a worker thread that sends queued items in order, one at a
 * time. Enqueueing never blocks on the network. Ownership: the caller keeps
 * its push_item; pusher__enqueue copies everything it needs.
 */
struct pusher;

/*
 * Policy (pusher.c): items go out in order within their series (name and
 * labels), to BASE/ingest, or with push_api to
 * BASE/push.v1.PusherService/Push as a PushRequest labelled
 * __name__=profile_type, service_name=NAME and the item's labels. Connection
 * errors, timeouts, 408, 429, 5xx (and 422 from /ingest, which answers so for
 * the backend's transient errors) are retried with full-jitter exponential
 * backoff (a Retry-After wins, capped by max_backoff_ms). A series waiting
 * out its backoff never delays the others. Each item has a budget: at most
 * max_attempts answered failures (a connection that got nowhere does not
 * count: it says nothing of the window) and max_age_ms since the window
 * ended, by the wall clock (the backend refuses old windows); past either it
 * is dropped (expired_*). Any other non-2xx answer drops the item
 * (rejected). Without a spool dir the queue lives in memory. With one, every
 * item is written to disk when queued (write-through: it survives a crash as
 * well as a stop) and its body is also kept in memory while queue_max_bytes
 * allows; the spool is bounded by spool_max_bytes. Past a bound the oldest
 * item goes (dropped). A failed spool write keeps the item in memory
 * (spool_errors). An item counts its body plus its series key.
 */

struct pusher_opts {
	const char *url;		/* base URL, e.g. "http://127.0.0.1:4040" */
	const char *basic_auth;		/* "user:password" or NULL (read from a file or env by config) */
	const char *bearer_token;	/* or NULL */
	const char *tenant_id;		/* X-Scope-OrgID header, or NULL */
	const char *ca_file;		/* PEM CA bundle for https, or NULL for the system's */
	int timeout_ms;			/* per request; 0: 10000 */
	int max_backoff_ms;		/* cap of the exponential backoff; 0: 30000 */
	int max_attempts;		/* answered failures before an item is dropped; 0: 10, <0: no limit */
	long max_age_ms;		/* since the window ended; 0: 55 minutes, <0: no limit */
	size_t queue_max_bytes;		/* in memory; 0: 16 MiB */
	const char *spool_dir;		/* NULL: no disk spool */
	size_t spool_max_bytes;		/* 0: 256 MiB */
	bool push_api;			/* use /push.v1.PusherService/Push (connect, HTTP/1.1) */
	bool otlp;			/* POST items as they are to BASE/v1development/profiles */
	const char *profile_type;	/* the push API's __name__ (outlives the pusher); NULL: process_cpu */
};

struct push_label {
	const char *key;
	const char *value;
};

/* One window of one series: a self-contained gzip pprof. */
struct push_item {
	const char *name;		/* series (service) name, e.g. "nginx" */
	const struct push_label *labels;	/* series labels: name=SERVICE{k=v,...} */
	int n_labels;
	__s64 from_ns;			/* window start, ns since the epoch */
	__s64 until_ns;			/* window end */
	int sample_rate;		/* Hz */
	const void *data;		/* gzip pprof; with otlp an ExportProfilesServiceRequest */
	size_t len;
};

struct pusher_stats {
	__u64 sent;		/* items accepted by the backend (2xx) */
	__u64 failures;		/* failed attempts (connection errors, 429, 5xx, timeouts) */
	__u64 timeouts;		/* of the failures, those that hit timeout_ms */
	__u64 retries;		/* attempts after the first */
	__u64 rejected;		/* items dropped on another 4xx */
	__u64 expired_attempts;	/* items dropped after max_attempts failures */
	__u64 expired_age;	/* items dropped older than max_age_ms */
	__u64 dropped;		/* items dropped (oldest first) because the queue and spool were full */
	__u64 spooled;		/* items written to the spool dir */
	__u64 queue_items;	/* items waiting now (memory + spool) */
	__u64 queue_bytes;
	__u64 bytes_sent;
	__u64 spool_errors;	/* failed spool writes (ENOSPC...): the item stayed in memory */
};

/* Starts the worker; loads items a previous run left in spool_dir. NULL with errno set. */
struct pusher *pusher__new(const struct pusher_opts *opts);

/* Queues a copy of item. Past the bounds the oldest item is dropped (counted). 0 or -ENOMEM. */
int pusher__enqueue(struct pusher *p, const struct push_item *item);

/*
 * Waits up to timeout_ms for the queue to empty. Returns 0, or -ETIMEDOUT
 * with what is left still queued (and spooled, with a spool dir).
 */
int pusher__drain(struct pusher *p, int timeout_ms);

void pusher__stats(struct pusher *p, struct pusher_stats *out);

/* Stops the worker; items still queued are written to the spool dir if there is one. */
void pusher__free(struct pusher *p);

#endif /* EBPFPROF_PUSHER_H */
