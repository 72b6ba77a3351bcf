/* test_k8s.c -- Kubernetes names against a fake API server (libmicrohttpd on 127.0.0.1:0) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include "agent/k8s.h"
#include "symbolize/procfs.h"
#include "test.h"

#define FIXTURE "tests/fixtures/k8s/pods.json"
#define TOKEN "test-token"

#define NGINX "5be1ecc7935f1dd85635d4feedaf660594030253cc97c9e9ca3819ffeac36b65"
#define SHIPPER "e7562220aee1d6e38c5633d241fdb4c1716fb104b37b1ab2abd0b7a2254ac0b2"
#define INIT "b95a4163351e37eea9f4ebf79808f5ce9819d7a26b3e989373b83bcc1bde0ec6"
#define COREDNS "8a32e516d7415be524a7fcec482ad2918f2b6ef2a7f4cb8e2e232b361436b20b"
#define APISERVER "3ddd18007da0e2a1e7da24b251a2d691f53a918f9e2dedf116c0bd39de1149fe"
#define WEB_UID "8f14e45f-ceea-467f-a8f5-3f4c5b9d7e21"
#define DNS_UID "c9f0f895-fb98-4b91-9c7b-2a1e4f8d6b33"
#define MIRROR_HASH "5f5a5b6e1b0ebbdde4bbcb6f9c8da6a0"

enum mode {
	MODE_OK, MODE_500, MODE_GARBAGE, MODE_TRUNCATED, MODE_NOT_LIST, MODE_EMPTY, MODE_HANG, MODE_HUGE
};

/* past the client's 64 MiB bound */
#define HUGE_LEN (65ULL << 20)

/* the fake API server; handlers run in libmicrohttpd's threads */
static struct {
	struct MHD_Daemon *daemon;
	int port;
	char *fixture;
	size_t fixture_len;
	pthread_mutex_t lock;	/* guards the fields below */
	enum mode mode;
	int requests;
	char auth[256], selector[256], url[256];
	atomic_bool release;	/* ends MODE_HANG */
} srv = { .lock = PTHREAD_MUTEX_INITIALIZER };

static char tmpdir[] = "/tmp/test_k8s.XXXXXX";
static char token_file[PATH_MAX];

static void set_mode(enum mode m)
{
	pthread_mutex_lock(&srv.lock);
	srv.mode = m;
	pthread_mutex_unlock(&srv.lock);
}

static int requests(void)
{
	int n;

	pthread_mutex_lock(&srv.lock);
	n = srv.requests;
	pthread_mutex_unlock(&srv.lock);
	return n;
}

/* HUGE_LEN bytes of JSON whitespace, generated as the client reads */
static ssize_t huge_body(void *cls, uint64_t pos, char *buf, size_t max)
{
	size_t n = max;

	if (pos >= HUGE_LEN)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (n > HUGE_LEN - pos)
		n = HUGE_LEN - pos;
	memset(buf, ' ', n);
	return n;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_len, void **con_cls)
{
	const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						       MHD_HTTP_HEADER_AUTHORIZATION);
	const char *sel = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "fieldSelector");
	static const char not_list[] = "{\"kind\":\"Status\",\"status\":\"Failure\"}";
	static const char empty[] = "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"items\":[]}";
	static const char garbage[] = "<html><body>502 Bad Gateway</body></html>";
	const char *body = srv.fixture;
	size_t len = srv.fixture_len;
	unsigned status = MHD_HTTP_OK;
	struct MHD_Response *resp;
	enum MHD_Result ret;
	enum mode mode;

	pthread_mutex_lock(&srv.lock);
	snprintf(srv.auth, sizeof(srv.auth), "%s", auth ?: "");
	snprintf(srv.selector, sizeof(srv.selector), "%s", sel ?: "");
	snprintf(srv.url, sizeof(srv.url), "%s", url);
	srv.requests++;
	mode = srv.mode;
	pthread_mutex_unlock(&srv.lock);

	switch (mode) {
	case MODE_OK:
		if (!auth || strcmp(auth, "Bearer " TOKEN)) {
			status = MHD_HTTP_UNAUTHORIZED;
			body = "{\"kind\":\"Status\",\"code\":401}";
			len = strlen(body);
		}
		break;
	case MODE_500:
		status = MHD_HTTP_INTERNAL_SERVER_ERROR;
		body = "etcdserver: request timed out";
		len = strlen(body);
		break;
	case MODE_GARBAGE:
		body = garbage;
		len = sizeof(garbage) - 1;
		break;
	case MODE_TRUNCATED:
		len = srv.fixture_len / 2;
		break;
	case MODE_NOT_LIST:
		body = not_list;
		len = sizeof(not_list) - 1;
		break;
	case MODE_EMPTY:
		body = empty;
		len = sizeof(empty) - 1;
		break;
	case MODE_HANG:
		while (!atomic_load(&srv.release))
			usleep(10 * 1000);
		break;
	case MODE_HUGE:
		break;
	}
	if (mode == MODE_HUGE)
		resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, huge_body, NULL,
							 NULL);
	else
		resp = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* the fixture from the work tree, whether we run from its root or from build/tests/unit/agent */
static int load_fixture(void)
{
	char exe[PATH_MAX], path[PATH_MAX + 64], *slash;
	ssize_t n;
	int err;

	err = procfs__read_file(AT_FDCWD, FIXTURE, 1 << 20, &srv.fixture, &srv.fixture_len, NULL);
	if (!err)
		return 0;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return -errno;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(path, sizeof(path), "%s/../../../../" FIXTURE, exe);
	return procfs__read_file(AT_FDCWD, path, 1 << 20, &srv.fixture, &srv.fixture_len, NULL);
}

static int server_start(void)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	const union MHD_DaemonInfo *info;

	/* a thread per connection, so MODE_HANG holds only its own request */
	srv.daemon = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD,
				      0, NULL, NULL, handle, NULL, MHD_OPTION_SOCK_ADDR, &sa,
				      MHD_OPTION_END);
	if (!srv.daemon)
		return -EADDRNOTAVAIL;
	info = MHD_get_daemon_info(srv.daemon, MHD_DAEMON_INFO_BIND_PORT);
	srv.port = info ? info->port : 0;
	return srv.port ? 0 : -EADDRNOTAVAIL;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) ? -errno : 0;
}

static struct k8s *open_k8s(int port, const char *token, const char *node, int refresh_s,
			    int timeout_ms)
{
	char url[64];
	struct k8s_opts o = {
		.api_url = url,
		.token_file = token,
		.ca_file = NULL,
		.node_name = node,
		.refresh_s = refresh_s,
		.timeout_ms = timeout_ms,
	};

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", port);
	return k8s__new(&o);
}

static bool has(struct k8s *k, const char *uid, const char *id, const char *ns, const char *pod,
		const char *ctr)
{
	struct k8s_meta m;
	int err = k8s__lookup(k, uid, id, &m);

	if (err || strcmp(m.namespace, ns) || strcmp(m.pod, pod) || strcmp(m.container, ctr)) {
		fprintf(stderr, "  lookup(%s, %.12s) = %d: '%s' '%s' '%s'\n", uid, id ?: "", err,
			m.namespace, m.pod, m.container);
		return false;
	}
	return true;
}

static bool missing(struct k8s *k, const char *uid, const char *id)
{
	struct k8s_meta m;

	memset(&m, 0x55, sizeof(m));
	return k8s__lookup(k, uid, id, &m) == -ENOENT && !m.namespace[0] && !m.pod[0] &&
	       !m.container[0];
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int test_list(void)
{
	struct k8s_stats st;
	struct k8s *k;
	bool ok;

	set_mode(MODE_OK);
	k = open_k8s(srv.port, token_file, "node-a", 3600, 3000);
	CHECK(k);
	k8s__stats(k, &st);
	ok = st.refreshes == 1 && st.failures == 0 && st.pods == 3;
	pthread_mutex_lock(&srv.lock);
	ok = ok && !strcmp(srv.auth, "Bearer " TOKEN) && !strcmp(srv.url, "/api/v1/pods") &&
	     !strcmp(srv.selector, "spec.nodeName=node-a");
	pthread_mutex_unlock(&srv.lock);
	ok = ok && has(k, WEB_UID, NGINX, "shop", "web-7c5ddbdf54-x8k2p", "nginx") &&
	     has(k, WEB_UID, SHIPPER, "shop", "web-7c5ddbdf54-x8k2p", "log-shipper") &&
	     has(k, WEB_UID, INIT, "shop", "web-7c5ddbdf54-x8k2p", "init-config") &&
	     /* docker:// ids; the API's upper-case uid was normalized */
	     has(k, DNS_UID, COREDNS, "kube-system", "coredns-5d78c9869d-4xq7b", "coredns") &&
	     /* the pod's sandbox (pause) or an id not listed yet: the pod, no container */
	     has(k, WEB_UID, "", "shop", "web-7c5ddbdf54-x8k2p", "") &&
	     has(k, WEB_UID, APISERVER, "shop", "web-7c5ddbdf54-x8k2p", "") &&
	     /* a static pod's cgroup names its config hash */
	     has(k, MIRROR_HASH, APISERVER, "kube-system", "kube-apiserver-node-a",
		 "kube-apiserver") &&
	     /* no pod UID (another cgroup namespace): found by the container */
	     has(k, "", COREDNS, "kube-system", "coredns-5d78c9869d-4xq7b", "coredns") &&
	     has(k, NULL, NGINX, "shop", "web-7c5ddbdf54-x8k2p", "nginx") &&
	     missing(k, "00000000-0000-0000-0000-000000000000", NGINX) &&
	     missing(k, "", "") && missing(k, NULL, NULL) && missing(NULL, WEB_UID, NGINX);
	k8s__free(k);
	CHECK(ok);
	return TEST_OK;
}

static int test_node_escaped(void)
{
	struct k8s *k;
	bool ok;

	k = open_k8s(srv.port, token_file, "node a&b=c", 3600, 3000);
	CHECK(k);
	pthread_mutex_lock(&srv.lock);
	ok = !strcmp(srv.selector, "spec.nodeName=node a&b=c");
	pthread_mutex_unlock(&srv.lock);
	k8s__free(k);
	CHECK(ok);
	return TEST_OK;
}

/* refreshes times against a server in mode; counts stderr lines containing what (-100: a wrong return) */
static int count_logged(struct k8s *k, enum mode mode, int times, int want_err, const char *what)
{
	char line[1024];
	int saved, n = 0, i;
	FILE *f = tmpfile();

	if (!f)
		return -1;
	set_mode(mode);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(fileno(f), STDERR_FILENO);
	for (i = 0; i < times; i++)
		if (k8s__refresh(k) != want_err)
			n = -100;
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, what))
			n++;
	fclose(f);
	return n;
}

static int test_failures_keep_table(void)
{
	struct k8s_stats st;
	struct k8s *k;
	bool ok;

	set_mode(MODE_OK);
	k = open_k8s(srv.port, token_file, "node-a", 3600, 3000);
	CHECK(k);
	/* the same failure three times is logged once; another failure is logged again */
	ok = count_logged(k, MODE_500, 3, -EIO, "cannot list pods") == 1 &&
	     count_logged(k, MODE_GARBAGE, 2, -EBADMSG, "malformed JSON") == 1 &&
	     count_logged(k, MODE_TRUNCATED, 1, -EBADMSG, "malformed JSON") == 0 &&
	     count_logged(k, MODE_NOT_LIST, 1, -EBADMSG, "no items") == 1;
	k8s__stats(k, &st);
	ok = ok && st.refreshes == 1 && st.failures == 7 && st.pods == 3 &&
	     has(k, WEB_UID, NGINX, "shop", "web-7c5ddbdf54-x8k2p", "nginx");
	/* recovery, then a valid empty list does replace the table */
	set_mode(MODE_OK);
	ok = ok && k8s__refresh(k) == 0;
	set_mode(MODE_EMPTY);
	ok = ok && k8s__refresh(k) == 0 && missing(k, WEB_UID, NGINX);
	k8s__stats(k, &st);
	ok = ok && st.refreshes == 3 && st.failures == 7 && st.pods == 0;
	/* a response past the size bound is cut off, not buffered */
	set_mode(MODE_OK);
	ok = ok && k8s__refresh(k) == 0;
	ok = ok && count_logged(k, MODE_HUGE, 1, -EFBIG, "larger than 64 MiB") == 1 &&
	     has(k, WEB_UID, NGINX, "shop", "web-7c5ddbdf54-x8k2p", "nginx");
	k8s__free(k);
	CHECK(ok);
	return TEST_OK;
}

static int test_auth(void)
{
	char bad[PATH_MAX + 16];
	struct k8s_stats st;
	struct k8s *k;
	bool ok;

	snprintf(bad, sizeof(bad), "%s/bad-token", tmpdir);
	CHECK(write_file(bad, "wrong\n") == 0);
	set_mode(MODE_OK);
	k = open_k8s(srv.port, bad, "node-a", 3600, 3000);
	CHECK(k);
	k8s__stats(k, &st);
	ok = st.refreshes == 0 && st.failures == 1 && missing(k, WEB_UID, NGINX);
	k8s__free(k);
	unlink(bad);
	CHECK(ok);

	/* no token file: no header at all, and the 401 says why */
	snprintf(bad, sizeof(bad), "%s/absent", tmpdir);
	k = open_k8s(srv.port, bad, "node-a", 3600, 3000);
	CHECK(k);
	pthread_mutex_lock(&srv.lock);
	ok = srv.auth[0] == '\0';
	pthread_mutex_unlock(&srv.lock);
	ok = ok && k8s__refresh(k) == -EIO;
	k8s__free(k);
	CHECK(ok);
	return TEST_OK;
}

static int test_background(void)
{
	struct k8s_stats st = { 0 };
	struct k8s *k;
	double t0;

	set_mode(MODE_OK);
	k = open_k8s(srv.port, token_file, "node-a", 1, 3000);
	CHECK(k);
	for (t0 = now_s(); now_s() - t0 < 5; usleep(50 * 1000)) {
		k8s__stats(k, &st);
		if (st.refreshes >= 3)
			break;
	}
	k8s__free(k);
	CHECK(st.refreshes >= 3 && st.pods == 3);
	return TEST_OK;
}

static int test_free_interrupts(void)
{
	struct k8s *k;
	double t0, took;
	int before;

	set_mode(MODE_OK);
	atomic_store(&srv.release, false);
	k = open_k8s(srv.port, token_file, "node-a", 1, 20000);
	CHECK(k);
	before = requests();
	set_mode(MODE_HANG);
	/* the refresher's next list is now stuck in the server */
	for (t0 = now_s(); requests() == before && now_s() - t0 < 5;)
		usleep(10 * 1000);
	usleep(200 * 1000);
	t0 = now_s();
	k8s__free(k);
	took = now_s() - t0;
	atomic_store(&srv.release, true);
	fprintf(stderr, "  k8s__free took %.2fs with a request in flight\n", took);
	CHECK(requests() > before);
	CHECK(took < 2.5);
	return TEST_OK;
}

static int test_unreachable(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	struct k8s_stats st;
	struct k8s *k;
	int fd, port;
	bool ok;

	/* a port that was free a moment ago: connections are refused */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || getsockname(fd, (struct sockaddr *)&sa, &sl)) {
		close(fd);
		CHECK(!"bind");
	}
	port = ntohs(sa.sin_port);
	close(fd);

	k = open_k8s(port, token_file, "node-a", 3600, 1000);
	CHECK(k);
	k8s__stats(k, &st);
	ok = st.refreshes == 0 && st.failures == 1 && st.pods == 0 && missing(k, WEB_UID, NGINX) &&
	     k8s__refresh(k) == -EIO;
	k8s__free(k);
	CHECK(ok);
	return TEST_OK;
}

static int test_not_in_cluster(void)
{
	struct k8s_opts o = { .token_file = token_file };
	struct k8s *k;

	unsetenv("KUBERNETES_SERVICE_HOST");
	errno = 0;
	k = k8s__new(&o);
	k8s__free(k);
	CHECK(!k && errno == EINVAL);
	return TEST_OK;
}

static int run(void)
{
	static const struct test_case cases[] = {
		TEST(test_list), TEST(test_node_escaped), TEST(test_failures_keep_table),
		TEST(test_auth), TEST(test_background), TEST(test_free_interrupts),
		TEST(test_unreachable), TEST(test_not_in_cluster),
	};

	return test__run_all("k8s", cases, sizeof(cases) / sizeof(cases[0]));
}

int main(void)
{
	int err, rc = 1;

	if (load_fixture()) {
		printf("FAIL: k8s/setup: cannot read %s\n", FIXTURE);
		return 1;
	}
	if (!mkdtemp(tmpdir)) {
		printf("FAIL: k8s/setup: mkdtemp: %s\n", strerror(errno));
		goto out;
	}
	snprintf(token_file, sizeof(token_file), "%s/token", tmpdir);
	/* surrounding whitespace, as editors and `kubectl create secret` leave it */
	err = write_file(token_file, "  " TOKEN "\n");
	if (!err)
		err = server_start();
	if (err) {
		printf("FAIL: k8s/setup: fake API server: %s\n", strerror(-err));
		goto out_rm;
	}
	rc = run();
	MHD_stop_daemon(srv.daemon);
out_rm:
	unlink(token_file);
	rmdir(tmpdir);
out:
	free(srv.fixture);
	return rc;
}
