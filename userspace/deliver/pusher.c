/* pusher.c -- delivers profile windows to Pyroscope (/ingest or the push API): ordered per series, retry budgets, a disk spool */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <curl/curl.h>
#include "lib/curl_dl.h"
#include "http_post.h"
#include "lib/array.h"
#include "lib/log.h"
#include "profile/profile.h"
#include "push_url.h"
#include "pusher.h"
#include "lib/mono_cond.h"
#include "spool.h"

#define DEFAULT_TIMEOUT_MS 10000
#define DEFAULT_MAX_BACKOFF_MS 30000
#define DEFAULT_QUEUE_MAX (16UL << 20)
#define DEFAULT_SPOOL_MAX (256UL << 20)
#define BACKOFF_BASE_MS 100
#define CONNECT_TIMEOUT_MAX_MS 5000
#define NOMEM_RETRY_MS 1000
#define RESP_KEEP 200		/* bytes of an error answer kept for the log line */
#define DEFAULT_MAX_ATTEMPTS 10
/* Pyroscope refuses windows older than an hour (reject_older_than); keep a margin for clock skew */
#define DEFAULT_MAX_AGE_MS (55 * 60 * 1000L)

struct qitem {
	struct qitem *next;
	struct spool_record rec;	/* seq, key, window, rate, body_len; file_size on disk */
	void *body;		/* NULL: only on disk */
	size_t cost;		/* body + key: what the bounds count */
	bool on_disk;
	bool busy;		/* the worker is reading or sending it without the lock */
	bool orphan;		/* dropped while busy: the worker frees it */
	int attempts;		/* answered attempts: what the attempt budget counts */
	int tries;		/* every attempt, for the backoff */
	__u64 retry_at;		/* CLOCK_MONOTONIC ms before which its series waits */
};

/* RETRY_SILENT: nothing answered (connection refused, DNS): says nothing of the window */
enum send_result { SEND_OK, SEND_RETRY, SEND_RETRY_SILENT, SEND_REJECT };

struct pusher {
	/* set by pusher__new, then read-only */
	char *base_url;
	char *push_url;		/* BASE/push.v1.PusherService/Push with push_api, else NULL */
	char *otlp_url;		/* BASE/v1development/profiles with otlp, else NULL */
	const char *profile_type;	/* the push API's __name__ (a static string); NULL: default */
	char *log_url;		/* base_url without user:password, for log lines */
	char *userpwd;
	long timeout_ms;
	long max_backoff_ms;
	int max_attempts;
	long max_age_ms;
	size_t queue_max;
	size_t spool_max;
	char *spool_dir;
	struct spool *spool;
	bool plain;		/* http:// without a proxy: http_post.c, libcurl never loaded */
	char **hdrs;		/* "Name: value" lines every request carries */
	size_t n_hdrs;
	CURL *curl;		/* https, or a proxy: libcurl */
	struct curl_slist *headers;
	bool curl_ready;
	bool sync_ready;
	bool started;
	pthread_t worker;

	/* under lock */
	pthread_mutex_t lock;
	pthread_cond_t wake;	/* worker: an item came, or stop */
	pthread_cond_t idle;	/* drain: the queue emptied */
	struct qitem *head;
	struct qitem *tail;
	__u64 next_seq;
	size_t mem_bytes;
	size_t spool_bytes;
	struct pusher_stats stats;
	bool spool_failing;
	int stop;		/* also read by curl's progress callback, atomically */

	/* the worker's own */
	__u64 rng;
	bool quiet;		/* the item in flight failed before: its next failure is a debug line */
	bool unreachable;	/* the last request got no answer: said once, not per window */
	const char **waiting;	/* series keys whose oldest item waits, in this scan */
	size_t n_waiting, waiting_cap;
	long retry_after_ms;	/* from the last answer, -1: none */
	bool timed_out;		/* the last attempt hit timeout_ms */
	char resp[RESP_KEEP + 1];
	size_t resp_len;
	char errbuf[CURL_ERROR_SIZE];
};

static __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* cond must use CLOCK_MONOTONIC (pusher__new sets that) */
static void wait_until(pthread_cond_t *cond, pthread_mutex_t *lock, __u64 deadline_ms)
{
	struct timespec ts = {
		.tv_sec = deadline_ms / 1000,
		.tv_nsec = (deadline_ms % 1000) * 1000000,
	};

	pthread_cond_timedwait(cond, lock, &ts);
}

/* xorshift64*: jitter needs spread, not secrecy */
static __u64 next_rand(__u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static void item_free(struct qitem *it)
{
	if (!it)
		return;
	spool_record__clear(&it->rec);
	free(it->body);
	free(it);
}

static struct qitem *item_new(const struct push_item *item)
{
	struct qitem *it = calloc(1, sizeof(*it));
	int err;

	if (!it)
		return NULL;
	it->rec.key = push_url__series_key(item->name, item->labels, item->n_labels);
	if (!it->rec.key) {
		err = errno;
		goto err_free;
	}
	it->body = malloc(item->len);
	if (!it->body) {
		err = ENOMEM;
		goto err_free;
	}
	memcpy(it->body, item->data, item->len);
	it->rec.from_ns = item->from_ns;
	it->rec.until_ns = item->until_ns;
	it->rec.sample_rate = item->sample_rate;
	it->rec.body_len = item->len;
	it->cost = item->len + strlen(it->rec.key);
	return it;

err_free:
	item_free(it);
	errno = err;
	return NULL;
}

/* under lock */
static void append(struct pusher *p, struct qitem *it)
{
	if (p->tail)
		p->tail->next = it;
	else
		p->head = it;
	p->tail = it;
	p->stats.queue_items++;
	p->stats.queue_bytes += it->cost;
	if (it->on_disk)
		p->spool_bytes += it->rec.file_size;
	if (it->body)
		p->mem_bytes += it->cost;
}

/* under lock: unlinks it and undoes its accounting; a busy item is left for the worker to free */
static void remove_item(struct pusher *p, struct qitem *it)
{
	struct qitem **pp = &p->head, *prev = NULL;
	int err;

	while (*pp && *pp != it) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (!*pp)
		return;
	*pp = it->next;
	if (p->tail == it)
		p->tail = prev;
	it->next = NULL;
	p->stats.queue_items--;
	p->stats.queue_bytes -= it->cost;
	if (it->body)
		p->mem_bytes -= it->cost;
	if (it->on_disk) {
		p->spool_bytes -= it->rec.file_size;
		err = spool__remove(p->spool, it->rec.seq);
		if (err)
			p_debug("failed to remove spool file %llu: %s", (unsigned long long)it->rec.seq,
				strerror(-err));
	}
	if (!p->head)
		pthread_cond_broadcast(&p->idle);
	if (it->busy)
		it->orphan = true;
	else
		item_free(it);
}

static void drop(struct pusher *p, struct qitem *it)
{
	p->stats.dropped++;
	remove_item(p, it);
}

/* under lock: the spool bound drops the oldest items on disk */
static void trim_spool(struct pusher *p)
{
	while (p->spool_bytes > p->spool_max) {
		struct qitem *it = p->head;

		while (it && !it->on_disk)
			it = it->next;
		if (!it)
			break;
		drop(p, it);
	}
}

/*
 * Under lock: makes room in memory for cost bytes, first by forgetting
 * bodies that are safe on disk, then by dropping the oldest items that live
 * only in memory. False when the item can not fit at all.
 */
static bool make_room(struct pusher *p, size_t cost)
{
	if (cost > p->queue_max)
		return false;
	while (p->mem_bytes + cost > p->queue_max) {
		struct qitem *it, *victim = NULL;

		for (it = p->head; it; it = it->next) {
			if (it->body && it->on_disk && !it->busy) {
				free(it->body);
				it->body = NULL;
				p->mem_bytes -= it->cost;
				break;
			}
			if (!victim && !it->on_disk)
				victim = it;
		}
		if (it)
			continue;
		if (!victim)
			return false;
		drop(p, victim);
	}
	return true;
}

/* under lock: write-through to the spool; on failure the item stays in memory */
static int spool_put(struct pusher *p, struct qitem *it)
{
	int err = spool__write(p->spool, &it->rec, it->body, it->rec.body_len);

	if (err) {
		p->stats.spool_errors++;
		if (!p->spool_failing)
			p_warn("failed to write to spool %s: %s; keeping items in memory",
			       p->spool_dir, strerror(-err));
		p->spool_failing = true;
		return err;
	}
	if (p->spool_failing)
		p_info("spool %s is writable again", p->spool_dir);
	p->spool_failing = false;
	p->stats.spooled++;
	it->on_disk = true;
	return 0;
}

int pusher__enqueue(struct pusher *p, const struct push_item *item)
{
	struct qitem *it;

	if (!item->data || !item->len || item->sample_rate <= 0 || item->until_ns < item->from_ns)
		return -EINVAL;
	it = item_new(item);
	if (!it)
		return -errno;

	pthread_mutex_lock(&p->lock);
	it->rec.seq = p->next_seq++;
	if (p->spool && !spool_put(p, it)) {
		/* safe on disk; keep the body in memory too only while there is room */
		if (p->mem_bytes + it->cost > p->queue_max) {
			free(it->body);
			it->body = NULL;
		}
		append(p, it);
		trim_spool(p);
	} else if (make_room(p, it->cost)) {
		append(p, it);
	} else {
		p_warn("dropping a %s window of %zu bytes: larger than the queue", it->rec.key,
		       it->cost);
		p->stats.dropped++;
		item_free(it);
	}
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

static size_t on_write(char *data, size_t size, size_t nmemb, void *arg)
{
	struct pusher *p = arg;
	size_t len = size * nmemb, room = RESP_KEEP - p->resp_len;

	if (room) {
		if (room > len)
			room = len;
		memcpy(p->resp + p->resp_len, data, room);
		p->resp_len += room;
	}
	return len;
}

/* Retry-After: delay-seconds or an HTTP-date (RFC 9110 10.2.3); -1 when unusable */
static long parse_retry_after(const char *v)
{
	time_t t, now;
	long secs = 0;
	const char *s;
	char *end;
	struct tm tm;

	for (s = v; *s >= '0' && *s <= '9'; s++) {
		if (secs > 86400)
			return 86400 * 1000L;
		secs = secs * 10 + (*s - '0');
	}
	if (s != v && !*s)
		return secs * 1000;
	/* the IMF-fixdate form RFC 9110 says senders use; the obsolete forms count as absent */
	memset(&tm, 0, sizeof(tm));
	end = strptime(v, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	if (!end || *end)
		return -1;
	t = timegm(&tm);
	if (t == -1)
		return -1;
	now = time(NULL);
	return t > now ? (long)(t - now) * 1000 : 0;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *arg)
{
	static const char name[] = "retry-after:";
	struct pusher *p = arg;
	size_t total = size * nmemb, len = total, n = sizeof(name) - 1;
	char val[64];

	if (len <= n || strncasecmp(data, name, n))
		return total;
	data += n;
	len -= n;
	while (len && (*data == ' ' || *data == '\t')) {
		data++;
		len--;
	}
	while (len && (data[len - 1] == '\r' || data[len - 1] == '\n' || data[len - 1] == ' '))
		len--;
	if (len && len < sizeof(val)) {
		memcpy(val, data, len);
		val[len] = '\0';
		p->retry_after_ms = parse_retry_after(val);
	}
	return total;
}

/* aborts a request in flight when pusher__free wants the worker back */
static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct pusher *p = arg;

	return __atomic_load_n(&p->stop, __ATOMIC_RELAXED);
}

/* the answer's first bytes on one printable line */
static const char *resp_text(struct pusher *p)
{
	size_t n = p->resp_len;

	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p->resp[i] < 0x20 || (unsigned char)p->resp[i] >= 0x7f)
			p->resp[i] = ' ';
	while (n && p->resp[n - 1] == ' ')
		n--;
	p->resp[n] = '\0';
	return p->resp;
}

/* a window's first failure is a warning, its retries' are debug lines */
#define log_failure(quiet, fmt, ...)                   \
	do {                                           \
		if (quiet)                             \
			p_debug(fmt, ##__VA_ARGS__);   \
		else                                   \
			p_warn(fmt, ##__VA_ARGS__);    \
	} while (0)

/* libcurl's POST: 0 and *code once answered, else -ETIMEDOUT or -EIO with errbuf set */
static int perform_curl(struct pusher *p, const char *url, const void *data, size_t len,
			long *code)
{
	CURLcode rc;

	curl_easy_setopt(p->curl, CURLOPT_URL, url);
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDS, data);
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	rc = curl_easy_perform(p->curl);
	if (rc != CURLE_OK) {
		if (!p->errbuf[0])
			snprintf(p->errbuf, sizeof(p->errbuf), "%s", curl_easy_strerror(rc));
		return rc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -EIO;
	}
	curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, code);
	return 0;
}

/* http_post.c's POST, the same contract as perform_curl */
static int perform_plain(struct pusher *p, const char *url, const void *data, size_t len,
			 long *code)
{
	struct http_post_req rq = {
		.url = url, .headers = (const char *const *)p->hdrs, .n_headers = p->n_hdrs,
		.user_agent = "ebpfprof", .userpwd = p->userpwd,
		.body = data, .len = len, .timeout_ms = p->timeout_ms,
		.connect_timeout_ms = p->timeout_ms < CONNECT_TIMEOUT_MAX_MS ?
				      p->timeout_ms : CONNECT_TIMEOUT_MAX_MS,
		.stop = &p->stop,
	};
	struct http_resp answer;
	int err;

	http_resp__init(&answer, p->resp, RESP_KEEP);
	err = http_post(&rq, &answer, p->errbuf, sizeof(p->errbuf));
	p->resp_len = answer.body_len;
	if (err)
		return err == -ETIMEDOUT ? err : -EIO;
	*code = answer.status;
	if (answer.retry_after[0])
		p->retry_after_ms = parse_retry_after(answer.retry_after);
	return 0;
}

/* without the lock: one POST; logs rejections, and a window's first failure */
static enum send_result post(struct pusher *p, const char *url, const void *data, size_t len,
			     const char *key)
{
	bool quiet = p->quiet;
	long code = 0;
	int err;

	p->resp_len = 0;
	p->retry_after_ms = -1;
	p->timed_out = false;
	p->errbuf[0] = '\0';
	err = p->plain ? perform_plain(p, url, data, len, &code) :
			 perform_curl(p, url, data, len, &code);
	if (err) {
		if (__atomic_load_n(&p->stop, __ATOMIC_RELAXED))
			return SEND_RETRY_SILENT;
		/* a slow backend is told apart from a dead one: operators tune timeout_ms on it */
		p->timed_out = err == -ETIMEDOUT;
		log_failure(quiet || p->unreachable, "push to %s failed: %s; retrying", p->log_url,
			    p->errbuf);
		p->unreachable = true;
		/* a request that got nowhere says nothing of the window: only its age budget runs */
		return p->timed_out ? SEND_RETRY : SEND_RETRY_SILENT;
	}
	if (p->unreachable)
		p_info("push to %s answers again", p->log_url);
	p->unreachable = false;
	if (code >= 200 && code < 300)
		return SEND_OK;
	/* /ingest answers 422 for the backend's transient errors too (the push API keeps 5xx) */
	if (code == 408 || code == 429 || code >= 500 || (code == 422 && !p->push_url)) {
		log_failure(quiet, "push to %s: HTTP %ld %s; retrying", p->log_url, code,
			    resp_text(p));
		return SEND_RETRY;
	}
	p_warn("push to %s rejected a %s window: HTTP %ld %s; dropped it", p->log_url, key, code,
	       resp_text(p));
	return SEND_REJECT;
}

/* without the lock: the item's window as an /ingest request or a push API one */
static enum send_result send_item(struct pusher *p, const struct qitem *it, const void *body)
{
	enum send_result res = SEND_RETRY;
	struct pbuf req;
	char *url = NULL;
	int err;

	pbuf__init(&req);
	if (p->otlp_url) {
		/* the body is the whole ExportProfilesServiceRequest already */
		res = post(p, p->otlp_url, body, it->rec.body_len, it->rec.key);
	} else if (p->push_url) {
		err = push_url__push_request(it->rec.key, p->profile_type, body, it->rec.body_len,
					     &req);
		if (err == -EINVAL) {
			p_warn("dropping a window with the malformed series key %s", it->rec.key);
			res = SEND_REJECT;
		} else if (!err) {
			res = post(p, p->push_url, req.data, req.len, it->rec.key);
		}
	} else {
		url = push_url__ingest(p->base_url, it->rec.key, it->rec.from_ns, it->rec.until_ns,
				       it->rec.sample_rate);
		if (url)
			res = post(p, url, body, it->rec.body_len, it->rec.key);
	}
	pbuf__release(&req);
	free(url);
	return res;
}

/* full jitter: uniform in [0, min(cap, base * 2^(tries - 1))]; a Retry-After wins */
static long backoff_ms(struct pusher *p, int tries)
{
	long ceil = BACKOFF_BASE_MS;

	for (int i = 1; i < tries && ceil < p->max_backoff_ms; i++)
		ceil *= 2;
	if (ceil > p->max_backoff_ms)
		ceil = p->max_backoff_ms;
	if (p->retry_after_ms >= 0)
		return p->retry_after_ms < p->max_backoff_ms ? p->retry_after_ms : p->max_backoff_ms;
	return next_rand(&p->rng) % (ceil + 1);
}

static __s64 now_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__s64)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* how long ago the window ended, by the wall clock: the backend judges it so */
static long age_ms(const struct qitem *it)
{
	__s64 age = now_real_ns() - it->rec.until_ns;

	return age > 0 ? (long)(age / 1000000) : 0;
}

/* under lock: the item spent its budget; the rest of its series goes on */
static void expire(struct pusher *p, struct qitem *it, bool by_age)
{
	if (by_age) {
		p_warn("dropping a %s window that ended %ld s ago: older than --push-max-age %ld s",
		       it->rec.key, age_ms(it) / 1000, p->max_age_ms / 1000);
		p->stats.expired_age++;
	} else {
		p_warn("dropping a %s window after %d failed attempts (--push-max-attempts)",
		       it->rec.key, it->attempts);
		p->stats.expired_attempts++;
	}
	remove_item(p, it);
}

/* under lock */
static void finish(struct pusher *p, struct qitem *it, enum send_result res)
{
	switch (res) {
	case SEND_OK:
		if (it->tries > 1)
			p_info("push of a %s window to %s worked after %d failed attempts",
			       it->rec.key, p->log_url, it->tries - 1);
		p->stats.sent++;
		p->stats.bytes_sent += it->rec.body_len;
		remove_item(p, it);
		break;
	case SEND_REJECT:
		p->stats.rejected++;
		remove_item(p, it);
		break;
	case SEND_RETRY:
	case SEND_RETRY_SILENT:
		p->stats.failures++;
		p->stats.timeouts += p->timed_out;
		it->attempts += res == SEND_RETRY;
		if (p->max_attempts && it->attempts >= p->max_attempts)
			expire(p, it, false);
		else
			it->retry_at = now_ms() + backoff_ms(p, it->tries);
		break;
	}
}

/* under lock, which it drops while it reads the spool and sends */
static void attempt(struct pusher *p, struct qitem *it)
{
	enum send_result res = SEND_RETRY;
	void *loaded = NULL;
	const void *body = it->body;
	int err = 0;

	it->busy = true;
	p->quiet = it->tries > 0;
	if (it->tries++)
		p->stats.retries++;
	pthread_mutex_unlock(&p->lock);
	if (!body) {
		err = spool__read_body(p->spool, &it->rec, &loaded);
		body = loaded;
	}
	if (!err)
		res = send_item(p, it, body);
	free(loaded);
	pthread_mutex_lock(&p->lock);
	it->busy = false;
	if (it->orphan) {
		item_free(it);
	} else if (err == -ENOMEM) {
		it->tries--;
		it->retry_at = now_ms() + NOMEM_RETRY_MS;
	} else if (err) {
		p_warn("dropping spooled item %llu of %s: %s", (unsigned long long)it->rec.seq,
		       p->spool_dir, strerror(-err));
		drop(p, it);
	} else if (!p->stop || (res != SEND_RETRY && res != SEND_RETRY_SILENT)) {
		finish(p, it, res);
	}
}

static bool is_waiting(const struct pusher *p, const char *key)
{
	for (size_t i = 0; i < p->n_waiting; i++)
		if (!strcmp(p->waiting[i], key))
			return true;
	return false;
}

/*
 * Under lock: the oldest item whose series is not waiting out a backoff, so
 * one failing series never holds up the others while each series keeps its
 * order. Items past their age budget go on the way. NULL: nothing is due;
 * *wake_at says when something will be (0: never, until an item comes).
 */
static struct qitem *next_due(struct pusher *p, __u64 *wake_at)
{
	__u64 now = now_ms();
	struct qitem *it, *next;

	*wake_at = 0;
	p->n_waiting = 0;
	for (it = p->head; it; it = next) {
		next = it->next;
		if (p->n_waiting && is_waiting(p, it->rec.key))
			continue;
		if (p->max_age_ms && age_ms(it) > p->max_age_ms) {
			expire(p, it, true);
			continue;
		}
		if (it->retry_at <= now)
			return it;
		if (!*wake_at || it->retry_at < *wake_at)
			*wake_at = it->retry_at;
		/* no room to remember it: wait for the earliest item instead of skipping past it */
		if (ARRAY_RESERVE(p->waiting, p->waiting_cap, p->n_waiting + 1))
			return NULL;
		p->waiting[p->n_waiting++] = it->rec.key;
	}
	return NULL;
}

static void *worker_main(void *arg)
{
	struct pusher *p = arg;
	struct qitem *it;
	__u64 wake_at;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		it = next_due(p, &wake_at);
		if (it)
			attempt(p, it);
		else if (wake_at)
			wait_until(&p->wake, &p->lock, wake_at);
		else
			pthread_cond_wait(&p->wake, &p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int pusher__drain(struct pusher *p, int timeout_ms)
{
	__u64 deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	int err = 0;

	pthread_mutex_lock(&p->lock);
	while (p->head) {
		if (now_ms() >= deadline) {
			err = -ETIMEDOUT;
			break;
		}
		wait_until(&p->idle, &p->lock, deadline);
	}
	pthread_mutex_unlock(&p->lock);
	return err;
}

void pusher__stats(struct pusher *p, struct pusher_stats *out)
{
	pthread_mutex_lock(&p->lock);
	*out = p->stats;
	pthread_mutex_unlock(&p->lock);
}

/* items a previous run left, oldest first; files that fail the checks are removed */
static int load_spool(struct pusher *p)
{
	size_t n = 0, loaded = 0;
	__u64 *seqs = NULL;
	int err;

	err = spool__scan(p->spool, &seqs, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		struct qitem *it = calloc(1, sizeof(*it));

		if (!it) {
			err = -ENOMEM;
			break;
		}
		p->next_seq = seqs[i] + 1;
		err = spool__read_meta(p->spool, seqs[i], &it->rec);
		if (err) {
			p_warn("skipping spool file %s/%020llu.push: %s", p->spool_dir,
			       (unsigned long long)seqs[i],
			       err == -EBADMSG ? "corrupt or truncated" : strerror(-err));
			if (err == -EBADMSG)
				spool__remove(p->spool, seqs[i]);
			item_free(it);
			err = 0;
			continue;
		}
		it->on_disk = true;
		it->cost = it->rec.body_len + strlen(it->rec.key);
		append(p, it);
		loaded++;
	}
	free(seqs);
	trim_spool(p);
	if (loaded)
		p_info("loaded %zu queued items (%zu bytes) from spool %s", loaded,
		       p->spool_bytes, p->spool_dir);
	return err;
}

/* the plain path's check_url: the same rules, by http-parser */
static int check_plain_url(struct pusher *p, const char *url)
{
	const char *at = strchr(url, '@'), *slash = strstr(url, "://");
	struct http_url u;
	int err = http_url__parse(url, &u);

	explicit_bzero(u.userinfo, sizeof(u.userinfo));
	if (err || u.has_query || u.has_fragment)
		return -EINVAL;
	/* the log line leaves out "user:password@" */
	if (at && slash && at > slash && at < slash + 3 + strcspn(slash + 3, "/"))
		err = asprintf(&p->log_url, "%.*s%s", (int)(slash + 3 - url), url, at + 1) < 0;
	else
		err = !(p->log_url = strdup(url));
	return err ? -ENOMEM : 0;
}

/* http(s) only, no query or fragment (the pusher appends its own); fills log_url */
static int check_url(struct pusher *p, const char *url)
{
	char *scheme = NULL, *part = NULL, *clean = NULL;
	CURLU *u = curl_url();
	int err = -EINVAL;

	if (!u)
		return -ENOMEM;
	if (curl_url_set(u, CURLUPART_URL, url, 0) ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0))
		goto out;
	if (strcasecmp(scheme, "http") && strcasecmp(scheme, "https"))
		goto out;
	if (curl_url_get(u, CURLUPART_QUERY, &part, 0) != CURLUE_NO_QUERY ||
	    curl_url_get(u, CURLUPART_FRAGMENT, &part, 0) != CURLUE_NO_FRAGMENT)
		goto out;
	curl_url_set(u, CURLUPART_USER, NULL, 0);
	curl_url_set(u, CURLUPART_PASSWORD, NULL, 0);
	if (curl_url_get(u, CURLUPART_URL, &clean, 0)) {
		err = -ENOMEM;
		goto out;
	}
	p->log_url = strdup(clean);
	err = p->log_url ? 0 : -ENOMEM;
out:
	curl_free(scheme);
	curl_free(part);
	curl_free(clean);
	curl_url_cleanup(u);
	return err;
}

/* a CR or LF in a header value would smuggle in headers of its own */
static bool header_safe(const char *v)
{
	return !v || !strpbrk(v, "\r\n");
}

static int add_header(struct pusher *p, const char *fmt, const char *value)
{
	char *h, **more;

	if (asprintf(&h, fmt, value) < 0)
		return -ENOMEM;
	more = realloc(p->hdrs, (p->n_hdrs + 1) * sizeof(*more));
	if (!more) {
		explicit_bzero(h, strlen(h));
		free(h);
		return -ENOMEM;
	}
	p->hdrs = more;
	p->hdrs[p->n_hdrs++] = h;
	return 0;
}

static int setup_headers(struct pusher *p, const struct pusher_opts *o)
{
	int err;

	/* the connect protocol's unary call: a binary protobuf body, version header 1 */
	if (o->otlp) {
		err = add_header(p, "Content-Type: %s", "application/x-protobuf");
	} else if (o->push_api) {
		err = add_header(p, "Content-Type: %s", "application/proto");
		if (!err)
			err = add_header(p, "Connect-Protocol-Version: %s", "1");
	} else {
		err = add_header(p, "Content-Type: %s", "application/octet-stream");
	}
	if (!err && o->bearer_token)
		err = add_header(p, "Authorization: Bearer %s", o->bearer_token);
	if (!err && o->tenant_id)
		err = add_header(p, "X-Scope-OrgID: %s", o->tenant_id);
	return err;
}

static int setup_curl(struct pusher *p, const struct pusher_opts *o)
{
	struct curl_slist *l;
	CURL *c;

	c = p->curl = curl_easy_init();
	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i <= p->n_hdrs; i++) {
		/* "Expect:" drops libcurl's 100-continue round trip before each body */
		l = curl_slist_append(p->headers, i < p->n_hdrs ? p->hdrs[i] : "Expect:");
		if (!l)
			return -ENOMEM;
		p->headers = l;
	}
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);	/* no SIGALRM in a threaded process */
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, p->headers);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "ebpfprof");
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, p->timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, p->timeout_ms < CONNECT_TIMEOUT_MAX_MS ?
			 p->timeout_ms : CONNECT_TIMEOUT_MAX_MS);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, p->errbuf);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, p);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, p);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, p);
	if (o->ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, o->ca_file);
	if (p->userpwd) {
		curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(c, CURLOPT_USERPWD, p->userpwd);
	}
	return 0;
}

/* libcurl's proxy variables for http URLs: with one set, libcurl sends the request as before */
static bool proxy_set(void)
{
	static const char *const vars[] = { "http_proxy", "all_proxy", "ALL_PROXY" };

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);

		if (v && *v)
			return true;
	}
	return false;
}

static int check_opts(const struct pusher_opts *o)
{
	if (!o->url || o->timeout_ms < 0 || o->max_backoff_ms < 0) {
		p_err("pusher: missing url or negative timeout");
		return -EINVAL;
	}
	if (o->basic_auth && o->bearer_token) {
		p_err("pusher: basic auth and a bearer token are exclusive");
		return -EINVAL;
	}
	if (!header_safe(o->bearer_token) || !header_safe(o->tenant_id) ||
	    !header_safe(o->basic_auth)) {
		p_err("pusher: line breaks in a credential or the tenant id");
		return -EINVAL;
	}
	return 0;
}

static int init_sync(struct pusher *p)
{
	int err = -pthread_mutex_init(&p->lock, NULL);

	if (!err && (err = mono_cond__init(&p->wake)))
		pthread_mutex_destroy(&p->lock);
	if (!err && (err = mono_cond__init(&p->idle))) {
		pthread_cond_destroy(&p->wake);
		pthread_mutex_destroy(&p->lock);
	}
	p->sync_ready = !err;
	return err;
}

struct pusher *pusher__new(const struct pusher_opts *opts)
{
	struct timespec ts;
	struct pusher *p;
	int err;

	err = check_opts(opts);
	if (err) {
		errno = -err;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->timeout_ms = opts->timeout_ms ? opts->timeout_ms : DEFAULT_TIMEOUT_MS;
	p->max_backoff_ms = opts->max_backoff_ms ? opts->max_backoff_ms : DEFAULT_MAX_BACKOFF_MS;
	p->max_attempts = opts->max_attempts ? opts->max_attempts : DEFAULT_MAX_ATTEMPTS;
	p->max_age_ms = opts->max_age_ms ? opts->max_age_ms : DEFAULT_MAX_AGE_MS;
	if (p->max_attempts < 0)
		p->max_attempts = 0;
	if (p->max_age_ms < 0)
		p->max_age_ms = 0;
	p->queue_max = opts->queue_max_bytes ? opts->queue_max_bytes : DEFAULT_QUEUE_MAX;
	p->spool_max = opts->spool_max_bytes ? opts->spool_max_bytes : DEFAULT_SPOOL_MAX;
	clock_gettime(CLOCK_REALTIME, &ts);
	p->rng = ((__u64)ts.tv_nsec << 20) ^ (__u64)ts.tv_sec ^ (uintptr_t)p;
	p->rng |= 1;

	err = init_sync(p);
	if (err)
		goto err_free;
	p->plain = !strncasecmp(opts->url, "http://", 7) && !proxy_set();
	/* refcounted by libcurl, and thread-safe in the libcurl Debian ships (>= 7.84) */
	if (!p->plain && curl_global_init(CURL_GLOBAL_DEFAULT)) {
		err = curl_dl__ready() ? -ENOMEM : -ELIBACC;
		goto err_free;
	}
	p->curl_ready = !p->plain;
	err = p->plain ? check_plain_url(p, opts->url) : check_url(p, opts->url);
	if (err) {
		p_err("pusher: url must be http(s)://host[:port][/prefix], without a query");
		goto err_free;
	}
	p->base_url = strdup(opts->url);
	if (opts->push_api && p->base_url) {
		size_t len = strlen(p->base_url);

		while (len && p->base_url[len - 1] == '/')
			len--;
		if (asprintf(&p->push_url, "%.*s/push.v1.PusherService/Push", (int)len,
			     p->base_url) < 0)
			p->push_url = NULL;
	}
	if (opts->otlp && p->base_url) {
		size_t len = strlen(p->base_url);

		while (len && p->base_url[len - 1] == '/')
			len--;
		if (asprintf(&p->otlp_url, "%.*s/v1development/profiles", (int)len, p->base_url) < 0)
			p->otlp_url = NULL;
	}
	p->profile_type = opts->profile_type;
	p->userpwd = opts->basic_auth ? strdup(opts->basic_auth) : NULL;
	p->spool_dir = opts->spool_dir ? strdup(opts->spool_dir) : NULL;
	if (!p->base_url || (opts->push_api && !p->push_url) || (opts->otlp && !p->otlp_url) || (opts->basic_auth && !p->userpwd) ||
	    (opts->spool_dir && !p->spool_dir)) {
		err = -ENOMEM;
		goto err_free;
	}
	err = setup_headers(p, opts);
	if (!err && !p->plain)
		err = setup_curl(p, opts);
	if (err)
		goto err_free;
	if (p->spool_dir) {
		p->spool = spool__open(p->spool_dir);
		if (!p->spool) {
			err = -errno;
			p_err("failed to open spool dir %s: %s", p->spool_dir, strerror(errno));
			goto err_free;
		}
		err = load_spool(p);
		if (err) {
			p_err("failed to load spool dir %s: %s", p->spool_dir, strerror(-err));
			goto err_free;
		}
	}
	err = -pthread_create(&p->worker, NULL, worker_main, p);
	if (err)
		goto err_free;
	p->started = true;
	return p;

err_free:
	pusher__free(p);
	errno = -err;
	return NULL;
}

/* after the worker stopped: what is only in memory goes to the spool, if there is one */
static void save_leftovers(struct pusher *p)
{
	size_t saved = 0, lost = 0;

	for (struct qitem *it = p->head; it; it = it->next) {
		if (it->on_disk)
			continue;
		if (p->spool && it->body && !spool_put(p, it))
			saved++;
		else
			lost++;
	}
	if (saved)
		p_info("spooled %zu unsent items to %s", saved, p->spool_dir);
	if (lost)
		p_warn("dropping %zu unsent items at exit", lost);
	p->stats.dropped += lost;
}

static void free_secret(char *s)
{
	if (!s)
		return;
	explicit_bzero(s, strlen(s));
	free(s);
}

void pusher__free(struct pusher *p)
{
	struct qitem *it, *next;

	if (!p)
		return;
	if (p->started) {
		pthread_mutex_lock(&p->lock);
		__atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
		pthread_cond_broadcast(&p->wake);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->worker, NULL);
		save_leftovers(p);
	}
	for (it = p->head; it; it = next) {
		next = it->next;
		item_free(it);
	}
	if (p->curl)
		curl_easy_cleanup(p->curl);
	for (struct curl_slist *l = p->headers; l; l = l->next)
		explicit_bzero(l->data, strlen(l->data));
	curl_slist_free_all(p->headers);
	if (p->curl_ready)
		curl_global_cleanup();
	for (size_t i = 0; i < p->n_hdrs; i++)
		free_secret(p->hdrs[i]);
	free(p->hdrs);
	spool__free(p->spool);
	free_secret(p->userpwd);
	free(p->base_url);
	free(p->push_url);
	free(p->otlp_url);
	free(p->log_url);
	free(p->spool_dir);
	free(p->waiting);
	if (p->sync_ready) {
		pthread_cond_destroy(&p->idle);
		pthread_cond_destroy(&p->wake);
		pthread_mutex_destroy(&p->lock);
	}
	free(p);
}
