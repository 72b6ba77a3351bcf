/* k8s.c -- pod and container names from the Kubernetes API server, listed in the background */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "lib/curl_dl.h"
#include "lib/array.h"
#include "cgroup.h"
#include "k8s.h"
#include "lib/mono_cond.h"
#include "lib/log.h"
#include "symbolize/symbolize.h"

#define DEFAULT_TOKEN_FILE "/var/run/secrets/kubernetes.io/serviceaccount/token"
#define DEFAULT_CA_FILE "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
#define DEFAULT_REFRESH_S 30
#define DEFAULT_TIMEOUT_MS 5000

/*
 * One node's pods list in a few MB; all pods of a large cluster (no node
 * name) in some tens. Past these bounds the response is refused or cut.
 */
#define RESPONSE_MAX (64 << 20)
#define MAX_PODS 65536
#define MAX_CONTAINERS (4 * MAX_PODS)
#define TOKEN_MAX (16 * 1024)
/* managedFields nest deeper than json-c's default depth of 32 */
#define JSON_DEPTH 64
#define POD_KEY_MAX 64
#define MIRROR_ANNOTATION "kubernetes.io/config.mirror"

/* outcomes of a list, so that repeating the same failure logs once */
enum {
	STATE_OK = 0,
	STATE_CUT = 1,		/* listed, but more than MAX_PODS pods */
	STATE_TOO_BIG = 2,
	STATE_BAD_JSON = 3,
	STATE_NOT_LIST = 4,
	STATE_NOMEM = 5,
	STATE_CURL = 1000,	/* + CURLcode */
	STATE_HTTP = 2000,	/* + HTTP status */
};

struct pod {
	char namespace[64];
	char name[256];
};

/* a pod's UID, or a static pod's config hash naming its mirror pod */
struct pod_key {
	char uid[POD_KEY_MAX];
	uint32_t pod;
};

struct ctr {
	char id[CONTAINER_ID_LEN + 1];
	uint32_t pod;
	char name[256];
};

/* immutable once published; keys and ctrs sorted for bsearch */
struct table {
	struct pod *pods;
	struct pod_key *keys;
	struct ctr *ctrs;
	size_t n_pods, n_keys, n_ctrs;
	size_t cap_pods, cap_keys, cap_ctrs;
	bool cut;
};

struct body {
	char *data;
	size_t len, cap;
	bool too_big;
};

struct k8s {
	char *list_url, *token_file, *ca_file;	/* ca_file NULL: the system's CAs */
	int refresh_s, timeout_ms;

	pthread_mutex_t refresh_lock;	/* one list at a time; guards curl and state */
	CURL *curl;			/* kept, so the connection to the API server is reused */
	int state;			/* outcome of the last list, STATE_* */
	bool listed_once;

	pthread_mutex_t lock;		/* guards the refresher's sleep */
	pthread_cond_t wake;
	atomic_bool stop;		/* also polled by curl's progress callback, unlocked */
	pthread_t thread;
	bool thread_started;

	pthread_rwlock_t table_lock;	/* guards table and stats; lookups only read */
	struct table *table;
	struct k8s_stats stats;

	bool sync_ready, curl_ready;
};

static void table_free(struct table *t)
{
	if (!t)
		return;
	free(t->pods);
	free(t->keys);
	free(t->ctrs);
	free(t);
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(((const struct pod_key *)a)->uid, ((const struct pod_key *)b)->uid);
}

static int cmp_ctr(const void *a, const void *b)
{
	return strcmp(((const struct ctr *)a)->id, ((const struct ctr *)b)->id);
}

/* a printable string member that fits dst with its NUL; the API is no reason to trust bytes */
static bool get_str(struct json_object *obj, const char *key, char *dst, size_t size)
{
	struct json_object *v;
	const char *s;
	int n, i;

	if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
		return false;
	s = json_object_get_string(v);
	n = json_object_get_string_len(v);
	if (n <= 0 || (size_t)n >= size)
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return true;
}

static void lower_str(char *s)
{
	for (; *s; s++)
		if (*s >= 'A' && *s <= 'Z')
			*s += 'a' - 'A';
}

/* "containerd://<id>", "docker://<id>", "cri-o://<id>": the id must be 64 hex digits */
static bool take_container_id(const char *ref, char id[CONTAINER_ID_LEN + 1])
{
	const char *p = strstr(ref, "://");
	size_t i;

	if (!p)
		return false;
	p += 3;
	if (strlen(p) != CONTAINER_ID_LEN)
		return false;
	for (i = 0; i < CONTAINER_ID_LEN; i++) {
		char c = p[i];

		if (c >= 'A' && c <= 'F')
			c += 'a' - 'A';
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
		id[i] = c;
	}
	id[CONTAINER_ID_LEN] = '\0';
	return true;
}

static int add_key(struct table *t, const char *uid, uint32_t pod)
{
	struct pod_key *k;

	if (ARRAY_RESERVE(t->keys, t->cap_keys, t->n_keys + 1))
		return -ENOMEM;
	k = &t->keys[t->n_keys++];
	snprintf(k->uid, sizeof(k->uid), "%s", uid);
	lower_str(k->uid);
	k->pod = pod;
	return 0;
}

/* containerStatuses and the like: entries without a (64-hex) id are not running yet */
static int add_containers(struct table *t, struct json_object *status, const char *key,
			  uint32_t pod)
{
	struct json_object *arr, *cs;
	char name[256], ref[128];
	size_t i, n;
	struct ctr *c;

	if (!json_object_object_get_ex(status, key, &arr) || !json_object_is_type(arr, json_type_array))
		return 0;
	n = json_object_array_length(arr);
	for (i = 0; i < n && t->n_ctrs < MAX_CONTAINERS; i++) {
		cs = json_object_array_get_idx(arr, i);
		if (!get_str(cs, "name", name, sizeof(name)) ||
		    !get_str(cs, "containerID", ref, sizeof(ref)))
			continue;
		if (ARRAY_RESERVE(t->ctrs, t->cap_ctrs, t->n_ctrs + 1))
			return -ENOMEM;
		c = &t->ctrs[t->n_ctrs];
		if (!take_container_id(ref, c->id))
			continue;
		memcpy(c->name, name, sizeof(name));
		c->pod = pod;
		t->n_ctrs++;
	}
	return 0;
}

/* one items[] entry; a pod without a usable uid, namespace or name is passed over */
static int add_pod(struct table *t, struct json_object *item)
{
	struct json_object *meta, *ann, *status;
	char uid[POD_KEY_MAX], hash[POD_KEY_MAX];
	uint32_t idx = t->n_pods;
	struct pod *p;
	int err;

	if (!json_object_object_get_ex(item, "metadata", &meta))
		return 0;
	if (ARRAY_RESERVE(t->pods, t->cap_pods, t->n_pods + 1))
		return -ENOMEM;
	p = &t->pods[idx];
	if (!get_str(meta, "uid", uid, sizeof(uid)) ||
	    !get_str(meta, "namespace", p->namespace, sizeof(p->namespace)) ||
	    !get_str(meta, "name", p->name, sizeof(p->name)))
		return 0;
	t->n_pods++;
	err = add_key(t, uid, idx);
	/* a static pod's cgroup is named by the hash, not by its mirror's uid */
	if (!err && json_object_object_get_ex(meta, "annotations", &ann) &&
	    get_str(ann, MIRROR_ANNOTATION, hash, sizeof(hash)))
		err = add_key(t, hash, idx);
	if (err || !json_object_object_get_ex(item, "status", &status))
		return err;
	err = add_containers(t, status, "initContainerStatuses", idx);
	if (!err)
		err = add_containers(t, status, "containerStatuses", idx);
	if (!err)
		err = add_containers(t, status, "ephemeralContainerStatuses", idx);
	return err;
}

/* a PodList, parsed with explicit length and depth; anything else is -EBADMSG */
static int parse_pod_list(const char *data, size_t len, struct table **out, int *state)
{
	struct json_object *root = NULL, *items;
	struct json_tokener *tok;
	struct table *t = NULL;
	size_t i, n, end;
	int err = 0;

	*out = NULL;
	tok = json_tokener_new_ex(JSON_DEPTH);
	if (!tok)
		return -ENOMEM;
	root = json_tokener_parse_ex(tok, data, (int)len);
	end = json_tokener_get_parse_end(tok);
	while (end < len && data[end] && strchr(" \t\r\n", data[end]))
		end++;
	if (!root || json_tokener_get_error(tok) != json_tokener_success || end != len) {
		*state = STATE_BAD_JSON;
		err = -EBADMSG;
		goto out;
	}
	if (!json_object_object_get_ex(root, "items", &items) ||
	    !json_object_is_type(items, json_type_array)) {
		*state = STATE_NOT_LIST;
		err = -EBADMSG;
		goto out;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		*state = STATE_NOMEM;
		err = -ENOMEM;
		goto out;
	}
	n = json_object_array_length(items);
	if (n > MAX_PODS) {
		n = MAX_PODS;
		t->cut = true;
	}
	for (i = 0; i < n && !err; i++)
		err = add_pod(t, json_object_array_get_idx(items, i));
	if (err) {
		*state = STATE_NOMEM;
		goto out;
	}
	/* an empty list leaves the arrays NULL, which qsort and bsearch may not see */
	if (t->n_keys)
		qsort(t->keys, t->n_keys, sizeof(*t->keys), cmp_key);
	if (t->n_ctrs)
		qsort(t->ctrs, t->n_ctrs, sizeof(*t->ctrs), cmp_ctr);
	*state = t->cut ? STATE_CUT : STATE_OK;
	*out = t;
	t = NULL;
out:
	table_free(t);
	json_object_put(root);
	json_tokener_free(tok);
	return err;
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct body *b = arg;
	size_t n = size * nmemb;

	if (n > RESPONSE_MAX - b->len) {
		b->too_big = true;
		return 0;	/* aborts the transfer */
	}
	if (ARRAY_RESERVE(b->data, b->cap, b->len + n + 1))
		return 0;
	memcpy(b->data + b->len, ptr, n);
	b->len += n;
	b->data[b->len] = '\0';
	return n;
}

/* lets k8s__free interrupt a request without waiting for its timeout */
static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct k8s *k = arg;

	return atomic_load(&k->stop);
}

/*
 * "Authorization: Bearer <token>", or NULL when the token file cannot be read
 * (the API server's 401 then says so). The file is re-read every time: bound
 * service account tokens are rotated by the kubelet.
 */
static char *auth_header(const struct k8s *k)
{
	char *tok = NULL, *hdr = NULL, *s, *e;
	size_t len, i;
	int err;

	err = procfs__read_file(AT_FDCWD, k->token_file, TOKEN_MAX, &tok, &len, NULL);
	if (err)
		return NULL;
	s = tok;
	e = tok + len;
	while (s < e && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		e--;
	/* no header injection through a token holding a line break or a NUL */
	for (i = 0; s + i < e; i++)
		if ((unsigned char)s[i] <= 0x20 || s[i] == 0x7f)
			goto out;
	if (e > s && asprintf(&hdr, "Authorization: Bearer %.*s", (int)(e - s), s) < 0)
		hdr = NULL;
out:
	explicit_bzero(tok, len);
	free(tok);
	return hdr;
}

/* GETs the pod list into b; on failure *state and why say what went wrong */
static int fetch(struct k8s *k, struct body *b, int *state, char *why, size_t why_len)
{
	char errbuf[CURL_ERROR_SIZE] = "", *auth;
	struct curl_slist *hdrs = NULL, *tmp;
	CURL *c = k->curl;
	long status = 0;
	CURLcode rc;
	int err = 0;

	auth = auth_header(k);
	hdrs = curl_slist_append(NULL, "Accept: application/json");
	tmp = hdrs && auth ? curl_slist_append(hdrs, auth) : hdrs;
	if (!tmp) {
		*state = STATE_NOMEM;
		snprintf(why, why_len, "out of memory");
		err = -ENOMEM;
		goto out;
	}
	hdrs = tmp;

	curl_easy_setopt(c, CURLOPT_URL, k->list_url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "ebpfprof");
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)RESPONSE_MAX);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, k);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)k->timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)k->timeout_ms);
	/* no signals from a worker thread (DNS timeouts would use SIGALRM) */
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	if (k->ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, k->ca_file);

	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (b->too_big || rc == CURLE_FILESIZE_EXCEEDED) {
		*state = STATE_TOO_BIG;
		snprintf(why, why_len, "response larger than %d MiB", RESPONSE_MAX >> 20);
		err = -EFBIG;
	} else if (rc == CURLE_ABORTED_BY_CALLBACK && atomic_load(&k->stop)) {
		err = -ECANCELED;
	} else if (rc != CURLE_OK) {
		*state = STATE_CURL + rc;
		snprintf(why, why_len, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
		err = -EIO;
	} else if (status != 200) {
		*state = STATE_HTTP + (int)status;
		snprintf(why, why_len, "HTTP status %ld%s", status,
			 (status == 401 || status == 403) && !auth ?
				 " (no usable token in the token file)" : "");
		err = -EIO;
	}
out:
	/* drop the pointers to our stack and headers; the connection and DNS cache stay */
	curl_easy_reset(c);
	curl_slist_free_all(hdrs);
	if (auth)
		explicit_bzero(auth, strlen(auth));
	free(auth);
	return err;
}

/* logs only when the outcome differs from the last one */
static void note_outcome(struct k8s *k, int state, const char *why, size_t pods)
{
	bool changed = state != k->state || !k->listed_once;

	k->listed_once = true;
	k->state = state;
	if (!changed)
		return;
	if (state == STATE_OK)
		p_info("kubernetes: %zu pods listed from %s", pods, k->list_url);
	else if (state == STATE_CUT)
		p_warn("kubernetes: more than %d pods from %s: names only for the first ones",
		       MAX_PODS, k->list_url);
	else
		p_warn("kubernetes: cannot list pods from %s: %s (names kept from the last list)",
		       k->list_url, why);
}

int k8s__refresh(struct k8s *k)
{
	char why[CURL_ERROR_SIZE + 64] = "out of memory";
	struct table *t = NULL, *old;
	struct body b = { 0 };
	int err, state = STATE_OK;
	size_t pods = 0;

	if (!k)
		return -EINVAL;
	pthread_mutex_lock(&k->refresh_lock);
	err = fetch(k, &b, &state, why, sizeof(why));
	if (!err) {
		err = parse_pod_list(b.data ?: "", b.len, &t, &state);
		if (err == -EBADMSG)
			snprintf(why, sizeof(why), "%s",
				 state == STATE_BAD_JSON ? "malformed JSON" : "no items[] array");
	}
	if (err == -ECANCELED)
		goto out;

	/* the new table is built; publishing it is a pointer swap */
	pthread_rwlock_wrlock(&k->table_lock);
	if (!err) {
		old = k->table;
		k->table = t;
		t = old;
		pods = k->table->n_pods;
		k->stats.refreshes++;
		k->stats.pods = pods;
	} else {
		k->stats.failures++;
	}
	pthread_rwlock_unlock(&k->table_lock);
	note_outcome(k, state, why, pods);
out:
	pthread_mutex_unlock(&k->refresh_lock);
	table_free(t);
	free(b.data);
	return err;
}

static void *refresher(void *arg)
{
	struct k8s *k = arg;
	struct timespec deadline;

	pthread_mutex_lock(&k->lock);
	while (!atomic_load(&k->stop)) {
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += k->refresh_s;
		while (!atomic_load(&k->stop) &&
		       pthread_cond_timedwait(&k->wake, &k->lock, &deadline) != ETIMEDOUT)
			;
		if (atomic_load(&k->stop))
			break;
		pthread_mutex_unlock(&k->lock);
		k8s__refresh(k);
		pthread_mutex_lock(&k->lock);
	}
	pthread_mutex_unlock(&k->lock);
	return NULL;
}

/* https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, as client-go builds it */
static char *in_cluster_url(void)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	char *url;

	if (!host || !*host) {
		errno = EINVAL;
		return NULL;
	}
	if (!port || !*port)
		port = "443";
	/* an IPv6 address needs brackets in a URL */
	if (asprintf(&url, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	return url;
}

/*
 * resourceVersion=0 lets the API server answer from its cache instead of
 * etcd: one list per node every refresh_s seconds must stay cheap.
 */
static char *list_url(const char *api_url, const char *node)
{
	size_t n = strlen(api_url);
	char *url, *esc = NULL;
	int r;

	while (n && api_url[n - 1] == '/')
		n--;
	if (node && *node) {
		esc = curl_easy_escape(NULL, node, 0);
		if (!esc) {
			errno = ENOMEM;
			return NULL;
		}
		r = asprintf(&url, "%.*s/api/v1/pods?resourceVersion=0&fieldSelector=spec.nodeName%%3D%s",
			     (int)n, api_url, esc);
	} else {
		r = asprintf(&url, "%.*s/api/v1/pods?resourceVersion=0", (int)n, api_url);
	}
	curl_free(esc);
	if (r < 0) {
		errno = ENOMEM;
		return NULL;
	}
	return url;
}

static int init_sync(struct k8s *k)
{
	int err = mono_cond__init(&k->wake);

	if (err)
		return err;
	pthread_mutex_init(&k->lock, NULL);
	pthread_mutex_init(&k->refresh_lock, NULL);
	pthread_rwlock_init(&k->table_lock, NULL);
	k->sync_ready = true;
	return 0;
}

struct k8s *k8s__new(const struct k8s_opts *opts)
{
	const char *node = opts->node_name ?: getenv("NODE_NAME"), *ca;
	char *api = NULL;
	struct k8s *k;
	int err;

	k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->refresh_s = opts->refresh_s > 0 ? opts->refresh_s : DEFAULT_REFRESH_S;
	k->timeout_ms = opts->timeout_ms > 0 ? opts->timeout_ms : DEFAULT_TIMEOUT_MS;
	api = opts->api_url ? strdup(opts->api_url) : in_cluster_url();
	if (!api) {
		err = -errno;
		if (err == -EINVAL)
			p_warn("kubernetes: no API server: KUBERNETES_SERVICE_HOST is not set");
		goto out_free;
	}
	/* reference-counted by libcurl, which the pusher may hold too; before list_url() escapes */
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		err = curl_dl__ready() ? -ENOMEM : -ELIBACC;
		goto out_free;
	}
	k->curl_ready = true;
	/* the system's CAs when the service account's is absent (e.g. a proxy with a public cert) */
	ca = opts->ca_file ?: access(DEFAULT_CA_FILE, R_OK) ? NULL : DEFAULT_CA_FILE;
	k->list_url = list_url(api, node);
	k->token_file = strdup(opts->token_file ?: DEFAULT_TOKEN_FILE);
	k->ca_file = ca ? strdup(ca) : NULL;
	if (!k->list_url || !k->token_file || (ca && !k->ca_file)) {
		err = -ENOMEM;
		goto out_free;
	}
	k->curl = curl_easy_init();
	if (!k->curl) {
		err = -ENOMEM;
		goto out_free;
	}
	err = init_sync(k);
	if (err)
		goto out_free;

	/* a failed first list is logged and counted: names come when the API answers */
	k8s__refresh(k);
	err = -pthread_create(&k->thread, NULL, refresher, k);
	if (err)
		goto out_free;
	k->thread_started = true;
	free(api);
	return k;

out_free:
	free(api);
	k8s__free(k);
	errno = -err;
	return NULL;
}

void k8s__free(struct k8s *k)
{
	if (!k)
		return;
	if (k->thread_started) {
		pthread_mutex_lock(&k->lock);
		atomic_store(&k->stop, true);
		pthread_cond_signal(&k->wake);
		pthread_mutex_unlock(&k->lock);
		pthread_join(k->thread, NULL);
	}
	if (k->sync_ready) {
		pthread_cond_destroy(&k->wake);
		pthread_mutex_destroy(&k->lock);
		pthread_mutex_destroy(&k->refresh_lock);
		pthread_rwlock_destroy(&k->table_lock);
	}
	if (k->curl)
		curl_easy_cleanup(k->curl);
	if (k->curl_ready)
		curl_global_cleanup();
	table_free(k->table);
	free(k->list_url);
	free(k->token_file);
	free(k->ca_file);
	free(k);
}

static const struct pod_key *find_key(const struct table *t, const char *uid)
{
	struct pod_key key;

	if (!t->n_keys)
		return NULL;
	if (snprintf(key.uid, sizeof(key.uid), "%s", uid) >= (int)sizeof(key.uid))
		return NULL;
	lower_str(key.uid);
	return bsearch(&key, t->keys, t->n_keys, sizeof(*t->keys), cmp_key);
}

static const struct ctr *find_ctr(const struct table *t, const char *id)
{
	struct ctr key;

	if (!t->n_ctrs)
		return NULL;
	if (snprintf(key.id, sizeof(key.id), "%s", id) >= (int)sizeof(key.id))
		return NULL;
	lower_str(key.id);
	return bsearch(&key, t->ctrs, t->n_ctrs, sizeof(*t->ctrs), cmp_ctr);
}

int k8s__lookup(struct k8s *k, const char *pod_uid, const char *container_id,
		struct k8s_meta *out)
{
	const struct pod_key *key = NULL;
	const struct ctr *c = NULL;
	const struct table *t;
	int err = -ENOENT;
	long pod = -1;

	memset(out, 0, sizeof(*out));
	if (!k)
		return -ENOENT;
	pthread_rwlock_rdlock(&k->table_lock);
	t = k->table;
	if (!t)
		goto out;
	if (pod_uid && *pod_uid && (key = find_key(t, pod_uid)))
		pod = key->pod;
	if (container_id && *container_id)
		c = find_ctr(t, container_id);
	/* no pod UID (a cgroup namespace hid it): the container tells */
	if (pod < 0 && c && !(pod_uid && *pod_uid))
		pod = c->pod;
	if (pod < 0)
		goto out;
	snprintf(out->namespace, sizeof(out->namespace), "%s", t->pods[pod].namespace);
	snprintf(out->pod, sizeof(out->pod), "%s", t->pods[pod].name);
	/* an id listed under another pod is not this one's */
	if (c && c->pod == pod)
		snprintf(out->container, sizeof(out->container), "%s", c->name);
	err = 0;
out:
	pthread_rwlock_unlock(&k->table_lock);
	return err;
}

void k8s__stats(struct k8s *k, struct k8s_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!k)
		return;
	pthread_rwlock_rdlock(&k->table_lock);
	*out = k->stats;
	pthread_rwlock_unlock(&k->table_lock);
}
