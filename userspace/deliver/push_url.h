/* push_url.h -- what goes on the wire to Pyroscope: series keys, /ingest URLs, push API requests */
#ifndef EBPFPROF_PUSH_URL_H
#define EBPFPROF_PUSH_URL_H

#include <stddef.h>
#include <linux/types.h>
#include "pusher.h"

/* Pyroscope v1 rejects longer label values; longer ones are cut at a UTF-8 boundary. */
#define PUSH_URL_MAX_VALUE 1024

/*
 * The series key Pyroscope parses from the name parameter: NAME{k=v,...}.
 * Its grammar has no escapes, so characters it would misread are replaced
 * with '_': the name keeps [A-Za-z0-9_./-]; keys keep [A-Za-z0-9_] (the
 * intersection of Pyroscope's and Prometheus' rules) and get a '_' prefix
 * when they start with a digit; values lose ',', '{', '}' and control
 * characters and are trimmed of spaces, as the server would. Labels with an
 * empty key or value, or the reserved key __name__, are left out.
 * Returns a malloc'd string, or NULL with errno set (EINVAL: empty name).
 */
char *push_url__series_key(const char *name, const struct push_label *labels, int n_labels);

/*
 * "BASE/ingest?name=KEY&from=S&until=S&format=pprof&sampleRate=HZ&spyName=ebpfprof"
 * with KEY percent-encoded. from/until are unix seconds (the unit the docs
 * name), both rounded down (see push_url__window), so each is within a
 * second of the profile's time_nanos and time_nanos + duration_nanos.
 * Returns a malloc'd string, or NULL with errno set.
 */
char *push_url__ingest(const char *base, const char *key, __s64 from_ns, __s64 until_ns,
		       int sample_rate);

/* Window bounds in unix seconds as push_url__ingest sends them. */
void push_url__window(__s64 from_ns, __s64 until_ns, __s64 *from_s, __s64 *until_s);

/*
 * The push API's profile type (__name__), by Pyroscope's conventions: a CPU
 * profile of processes is "process_cpu" (as Grafana Alloy's eBPF profiler
 * names it), off-CPU time "off_cpu", wall-clock time "wall".
 */
#define PUSH_URL_PROFILE_TYPE "process_cpu"

struct pbuf;

/*
 * Encodes a push.v1.PushRequest (the connect API's POST
 * /push.v1.PusherService/Push body) into out: one series whose labels are
 * __name__=TYPE (NULL: PUSH_URL_PROFILE_TYPE), service_name=NAME and the
 * labels of key (from push_url__series_key), sorted by name, with one raw
 * sample, body. Returns 0, -EINVAL for a key that is not NAME{k=v,...} or a
 * type that is not a Prometheus name, or -ENOMEM.
 */
int push_url__push_request(const char *key, const char *type, const void *body, size_t len,
			   struct pbuf *out);

/* Percent-encodes all but RFC 3986's unreserved characters into out; returns the length. */
size_t push_url__escape(const char *s, char *out, size_t size);

#endif /* EBPFPROF_PUSH_URL_H */
