/* k8s.h -- names (namespace, pod, container) for pod UIDs and container ids, from the API server */
#ifndef EBPFPROF_K8S_H
#define EBPFPROF_K8S_H

#include <stdbool.h>

/*
 * A background thread lists the pods of this node every refresh_s seconds
 * (GET /api/v1/pods?fieldSelector=spec.nodeName=NODE with the in-cluster
 * service account) and keeps a table. Lookups only read that table, so
 * profiling never waits on the network; failures are logged, counted, and
 * leave names empty (callers fall back to ids).
 */
struct k8s;

struct k8s_opts {
	const char *api_url;	/* NULL: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT */
	const char *token_file;	/* NULL: /var/run/secrets/kubernetes.io/serviceaccount/token */
	const char *ca_file;	/* NULL: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt */
	const char *node_name;	/* NULL: $NODE_NAME, else all pods */
	int refresh_s;		/* 0: 30 */
	int timeout_ms;		/* 0: 5000 */
};

struct k8s_meta {
	char namespace[64];
	char pod[256];
	char container[256];	/* "" when the container id is unknown */
};

/*
 * Starts the refresher (the first list is fetched before returning, bounded by
 * timeout). An unreachable API server is no error: lookups fail until a list
 * arrives. NULL with errno set: ENOMEM, or EINVAL when there is no api_url and
 * KUBERNETES_SERVICE_HOST is unset (not in a cluster).
 */
struct k8s *k8s__new(const struct k8s_opts *opts);

/* Stops the refresher, aborting a request in flight within about a second. NULL is a no-op. */
void k8s__free(struct k8s *k);

/*
 * Lists the pods now, in the caller's thread (serialized with the refresher).
 * 0, or a negative errno with the previous table kept: -EIO (transport or
 * HTTP status), -EBADMSG (malformed response), -EFBIG (response too large).
 */
int k8s__refresh(struct k8s *k);

/*
 * Fills out from the table; 0, or -ENOENT when the pod is unknown (out zeroed).
 * pod_uid as cgroup__parse gives it (a static pod's config hash also finds its
 * mirror pod); with an empty pod_uid the container id alone finds the pod.
 */
int k8s__lookup(struct k8s *k, const char *pod_uid, const char *container_id,
		struct k8s_meta *out);

struct k8s_stats {
	unsigned long long refreshes, failures, pods;	/* lists taken, lists failed, pods now */
};
void k8s__stats(struct k8s *k, struct k8s_stats *out);

#endif /* EBPFPROF_K8S_H */
