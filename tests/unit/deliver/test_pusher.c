/* test_pusher.c -- the pusher against the real test collector: params, auth, retries, order, bounds, spool */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "profile/pprof.h"
#include "deliver/push_url.h"
#include "deliver/pusher.h"
#include "deliver/spool.h"
#include "test.h"

/*
 * Windows start a quarter second past a whole second, ten minutes ago: a
 * backend refuses windows over an hour old, and so does the collector.
 */
#define T0_S t0_s()
#define T0_NS (T0_S * 1000000000LL + 250000000LL)

static long long t0_s(void)
{
	static long long t0;

	if (!t0)
		t0 = (long long)time(NULL) / 10 * 10 - 600;
	return t0;
}
#define WINDOW_NS (10LL * 1000000000LL)
#define MAX_ENTRIES 64

static char tmp_root[64];
static pid_t running[8];	/* collectors started and not yet stopped */

struct collector {
	pid_t pid;
	char url[300];
	char log[256];
};

/* one JSON line of the collector's log */
struct entry {
	int status;
	char name[64];
	char labels[256];	/* "k=v;k=v" in key order */
	long long from, until, time, time_nanos, duration_nanos, total;
	int sample_rate, samples;
	char spy[32], auth[64], tenant[64], error[256], api[16], profile_type[32];
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static const char *collector_path(void)
{
	static char path[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n;

	if (path[0])
		return path;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return "build/fixtures/collector";
	exe[n] = '\0';
	/* build/tests/unit/deliver/test_pusher -> build/fixtures/collector */
	snprintf(path, sizeof(path), "%s/../../../fixtures/collector", dirname(exe));
	return path;
}

static void tmp_path(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", tmp_root, name);
}

/* starts the collector on listen (NULL: any port), logging to log_name, with extra flags */
static int collector_start(struct collector *c, const char *listen, const char *log_name,
			   const char *const *extra)
{
	const char *argv[24] = { collector_path(), "-listen", listen ? listen : "127.0.0.1:0",
				 "-log", c->log };
	char line[256] = "";
	struct pollfd pfd;
	size_t len = 0;
	int fds[2], n = 5;

	tmp_path(c->log, sizeof(c->log), log_name);
	unlink(c->log);
	while (extra && *extra && n < 22)
		argv[n++] = *extra++;
	argv[n] = NULL;
	if (pipe(fds))
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	pfd = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	while (len < sizeof(line) - 1 && !strchr(line, '\n') && poll(&pfd, 1, 5000) == 1) {
		ssize_t r = read(fds[0], line + len, sizeof(line) - 1 - len);

		if (r <= 0)
			break;
		len += r;
		line[len] = '\0';
	}
	close(fds[0]);
	if (strncmp(line, "listening ", 10)) {
		fprintf(stderr, "  collector did not start: '%s'\n", line);
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
		c->pid = 0;
		return -EIO;
	}
	line[strcspn(line, "\n")] = '\0';
	snprintf(c->url, sizeof(c->url), "http://%s", line + 10);
	for (size_t i = 0; i < sizeof(running) / sizeof(running[0]); i++) {
		if (!running[i]) {
			running[i] = c->pid;
			break;
		}
	}
	return 0;
}

static void stop_pid(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	for (size_t i = 0; i < sizeof(running) / sizeof(running[0]); i++)
		if (running[i] == pid)
			running[i] = 0;
}

static void collector_stop(struct collector *c)
{
	if (c->pid > 0)
		stop_pid(c->pid);
	c->pid = 0;
}

static void stop_leftovers(void)
{
	for (size_t i = 0; i < sizeof(running) / sizeof(running[0]); i++)
		if (running[i])
			stop_pid(running[i]);
}

/* a port nothing listens on (for now) */
static int free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd < 0)
		return -1;
	if (!bind(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	    !getsockname(fd, (struct sockaddr *)&sa, &len))
		port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

static void copy_str(char *dst, size_t size, json_object *o, const char *key)
{
	json_object *v;

	snprintf(dst, size, "%s", json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "");
}

static long long get_num(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : -1;
}

static void parse_entry(json_object *o, struct entry *e)
{
	json_object *labels;
	size_t off = 0;

	memset(e, 0, sizeof(*e));
	e->status = get_num(o, "status");
	copy_str(e->name, sizeof(e->name), o, "name");
	copy_str(e->spy, sizeof(e->spy), o, "spyName");
	copy_str(e->auth, sizeof(e->auth), o, "auth");
	copy_str(e->tenant, sizeof(e->tenant), o, "tenant");
	copy_str(e->error, sizeof(e->error), o, "error");
	copy_str(e->api, sizeof(e->api), o, "api");
	copy_str(e->profile_type, sizeof(e->profile_type), o, "profile_type");
	e->from = get_num(o, "from");
	e->until = get_num(o, "until");
	e->time = get_num(o, "time");
	e->time_nanos = get_num(o, "time_nanos");
	e->duration_nanos = get_num(o, "duration_nanos");
	e->total = get_num(o, "total");
	e->sample_rate = get_num(o, "sampleRate");
	e->samples = get_num(o, "samples");
	if (json_object_object_get_ex(o, "labels", &labels) &&
	    json_object_is_type(labels, json_type_object)) {
		json_object_object_foreach(labels, k, v) {
			off += snprintf(e->labels + off, sizeof(e->labels) - off, "%s%s=%s",
					off ? ";" : "", k, json_object_get_string(v));
			if (off >= sizeof(e->labels))
				break;
		}
	}
}

/* reads the collector's log; returns the number of entries */
static int read_log(const char *path, struct entry *out, int max)
{
	char line[8192];
	int n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		json_object *o = json_tokener_parse(line);

		if (!o)
			continue;
		parse_entry(o, &out[n++]);
		json_object_put(o);
	}
	fclose(f);
	return n;
}

/* a tiny valid gzip pprof whose first sample value is value */
static int make_profile(__s64 time_ns, __s64 value, char **buf, size_t *len)
{
	struct pprof_opts opts = {
		.sample_types = { { "samples", "count" }, { "cpu", "nanoseconds" } },
		.n_sample_types = 2,
		.period_type = { "cpu", "nanoseconds" },
		.period = 10101010,
		.time_nanos = time_ns,
		.duration_nanos = WINDOW_NS,
	};
	struct pprof_mapping_desc m = {
		.start = 0x400000, .limit = 0x500000, .filename = "/usr/bin/app",
		.has_functions = true,
	};
	struct pprof_line line = { "main", "/src/app.c", 10 };
	__s64 values[2] = { value, value * 10101010 };
	struct pprof *p = pprof__new(&opts);
	__u32 loc;
	FILE *f;
	int err;

	if (!p)
		return -errno;
	loc = pprof__add_location(p, pprof__add_mapping(p, &m), 0x401000, &line, 1);
	err = pprof__add_sample(p, &loc, 1, values, NULL, 0);
	f = open_memstream(buf, len);
	if (!f) {
		pprof__free(p);
		return -errno;
	}
	if (!err)
		err = pprof__write(p, f);
	fclose(f);
	pprof__free(p);
	return err;
}

/* item i (0-based): window i of service "svc", first sample value i + 1 */
struct test_item {
	struct push_item item;
	char *buf;
	size_t len;
};

static int make_item(struct test_item *t, int i, const struct push_label *labels, int n_labels)
{
	__s64 from = T0_NS + i * WINDOW_NS;
	int err = make_profile(from, i + 1, &t->buf, &t->len);

	t->item = (struct push_item){
		.name = "svc", .labels = labels, .n_labels = n_labels,
		.from_ns = from, .until_ns = from + WINDOW_NS, .sample_rate = 99,
		.data = t->buf, .len = t->len,
	};
	return err;
}

/* enqueues items first..last-1 */
static int push_range(struct pusher *p, int first, int last)
{
	for (int i = first; i < last; i++) {
		struct test_item t;
		int err = make_item(&t, i, NULL, 0);

		if (!err)
			err = pusher__enqueue(p, &t.item);
		free(t.buf);
		if (err)
			return err;
	}
	return 0;
}

/* the accepted entries' totals are exactly first+1..last, in order */
static bool delivered_in_order(const struct entry *e, int n, int first, int last)
{
	int want = first + 1;

	for (int i = 0; i < n; i++) {
		if (e[i].status != 200)
			continue;
		if (e[i].total != want) {
			fprintf(stderr, "  entry %d: total %lld, want %d\n", i, e[i].total, want);
			return false;
		}
		want++;
	}
	if (want != last + 1)
		fprintf(stderr, "  delivered up to %d, want %d\n", want - 1, last);
	return want == last + 1;
}

/* polls the stats until n attempts failed: slow machines (valgrind) need more than a fixed sleep */
static bool wait_failures(struct pusher *p, __u64 n, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	struct pusher_stats st;

	do {
		pusher__stats(p, &st);
		if (st.failures >= n)
			return true;
		sleep_ms(20);
	} while (now_ms() < end);
	return false;
}

static struct pusher_opts base_opts(const char *url)
{
	return (struct pusher_opts){ .url = url, .timeout_ms = 2000, .max_backoff_ms = 200 };
}

static int count_files(const char *dir, const char *suffix)
{
	char cmd[400];
	int n = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ls -1 '%s' | grep -c -- '%s$'", dir, suffix);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &n) != 1)
		n = -1;
	pclose(f);
	return n;
}

static int stderr_to(const char *path)
{
	int saved, fd;

	fflush(stderr);
	saved = dup(2);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) {
		dup2(fd, 2);
		close(fd);
	}
	return saved;
}

static void stderr_restore(int saved)
{
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
}

static bool file_contains(const char *path, const char *needle)
{
	char buf[65536];
	size_t n;
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

static int setup(void)
{
	snprintf(tmp_root, sizeof(tmp_root), "/tmp/test_pusher.XXXXXX");
	if (!mkdtemp(tmp_root))
		return -errno;
	return 0;
}

/* ---- pure parts ---- */

static int test_series_key(void)
{
	struct push_label labels[] = {
		{ "env", "prod" }, { "bad key!", "a,b}" }, { "9x", "  v w " },
		{ "__name__", "x" }, { "empty", "" }, { "", "v" }, { "k.dot", "{x=y}" },
	};
	char val[1300], want[200], *key, *url;
	__s64 f, u;

	key = push_url__series_key("my app/ä", labels, 7);
	CHECK(key);
	CHECK(!strcmp(key, "my_app/__{env=prod,bad_key_=a_b_,_9x=v w,k_dot=_x=y_}"));
	free(key);
	/* a name cut inside a character, and a stray continuation byte: U+FFFD each, never dropped */
	labels[0].value = "caf\xc3 \x80x";
	key = push_url__series_key("s", labels, 1);
	CHECK(key && !strcmp(key, "s{env=caf\xef\xbf\xbd \xef\xbf\xbdx}"));
	free(key);
	labels[0].value = "prod";
	key = push_url__series_key("svc", NULL, 0);
	CHECK(key && !strcmp(key, "svc{}"));
	url = push_url__ingest("http://h:1/base//", key, T0_NS, T0_NS + WINDOW_NS, 99);
	CHECK(url);
	snprintf(want, sizeof(want), "http://h:1/base/ingest?name=svc%%7B%%7D&from=%lld&until=%lld"
		 "&format=pprof&sampleRate=99&spyName=ebpfprof", T0_S, T0_S + 10);
	CHECK(!strcmp(url, want));
	free(url);
	free(key);
	errno = 0;
	CHECK(!push_url__series_key("", NULL, 0) && errno == EINVAL);

	/* 'a' then 2-byte characters: byte 1024 is a continuation byte, so the cut is at 1023 */
	val[0] = 'a';
	for (int i = 1; i + 2 < (int)sizeof(val); i += 2)
		memcpy(val + i, "\xc3\xa9", 2);
	val[sizeof(val) - 1] = '\0';
	labels[0].value = val;
	key = push_url__series_key("s", labels, 1);
	CHECK(key && strlen(key) == strlen("s{env=}") + 1023);
	free(key);

	push_url__window(5000000000LL, 5000000000LL, &f, &u);
	CHECK(f == 5 && u == 6);
	push_url__window(5100000000LL, 5900000000LL, &f, &u);
	CHECK(f == 5 && u == 6);
	/* consecutive windows stay contiguous in whole seconds */
	push_url__window(5000000000LL, 7000000001LL, &f, &u);
	CHECK(f == 5 && u == 7);
	push_url__window(7000000001LL, 9000000001LL, &f, &u);
	CHECK(f == 7 && u == 9);
	return TEST_OK;
}

static int test_spool_format(void)
{
	struct spool_record rec = { .seq = 7, .key = "svc{a=b}", .from_ns = 1, .until_ns = 2,
				    .sample_rate = 99 }, back;
	char dir[256], path[320], body[] = "not really a profile";
	__u64 *seqs = NULL;
	struct spool *s;
	void *got = NULL;
	size_t n = 0;
	FILE *f;

	tmp_path(dir, sizeof(dir), "spool-format/nested");
	s = spool__open(dir);
	CHECK(s);
	errno = 0;
	CHECK(!spool__open(dir) && errno == EBUSY);
	CHECK(spool__write(s, &rec, body, sizeof(body)) == 0);
	CHECK(rec.file_size == SPOOL_HEADER_SIZE + 8 + sizeof(body));
	rec.seq = 3;
	CHECK(spool__write(s, &rec, body, sizeof(body)) == 0);
	snprintf(path, sizeof(path), "%s/00000000000000000009.push.tmp", dir);
	f = fopen(path, "w");
	CHECK(f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/not-ours.push", dir);
	f = fopen(path, "w");
	CHECK(f);
	fclose(f);

	CHECK(spool__scan(s, &seqs, &n) == 0);
	CHECK(n == 2 && seqs[0] == 3 && seqs[1] == 7);
	free(seqs);
	CHECK(count_files(dir, ".tmp") == 0);

	CHECK(spool__read_meta(s, 7, &back) == 0);
	CHECK(!strcmp(back.key, "svc{a=b}") && back.from_ns == 1 && back.until_ns == 2 &&
	      back.sample_rate == 99 && back.body_len == sizeof(body));
	CHECK(spool__read_body(s, &back, &got) == 0 && !memcmp(got, body, sizeof(body)));
	free(got);
	got = NULL;

	/* a flipped body byte: the header still reads, the body fails its crc */
	snprintf(path, sizeof(path), "%s/00000000000000000007.push", dir);
	f = fopen(path, "r+");
	CHECK(f);
	fseek(f, -2, SEEK_END);
	fputc('X', f);
	fclose(f);
	CHECK(spool__read_body(s, &back, &got) == -EBADMSG && !got);
	spool_record__clear(&back);

	/* truncated */
	CHECK(truncate(path, rec.file_size - 1) == 0);
	CHECK(spool__read_meta(s, 7, &back) == -EBADMSG);
	CHECK(truncate(path, 10) == 0);
	CHECK(spool__read_meta(s, 7, &back) == -EBADMSG);
	/* a header claiming a huge key */
	snprintf(path, sizeof(path), "%s/00000000000000000003.push", dir);
	f = fopen(path, "r+");
	CHECK(f);
	fseek(f, 8, SEEK_SET);
	fputc(0xff, f);
	fputc(0xff, f);
	fputc(0xff, f);
	fclose(f);
	CHECK(spool__read_meta(s, 3, &back) == -EBADMSG);
	CHECK(spool__remove(s, 3) == 0 && spool__remove(s, 3) == 0);
	CHECK(spool__read_meta(s, 3, &back) == -ENOENT);
	spool__free(s);
	return TEST_OK;
}

/* ---- against the collector ---- */

static int test_params(void)
{
	struct push_label labels[] = { { "env", "prod" }, { "bad key!", "a,b}" } };
	struct collector c = { 0 };
	struct entry e[MAX_ENTRIES];
	struct pusher_opts o;
	struct pusher_stats st;
	struct test_item t;
	struct pusher *p;

	CHECK(collector_start(&c, NULL, "params.log", NULL) == 0);
	o = base_opts(c.url);
	p = pusher__new(&o);
	CHECK(p);
	CHECK(make_item(&t, 0, labels, 2) == 0);
	t.item.name = "my service";
	CHECK(pusher__enqueue(p, &t.item) == 0);
	free(t.buf);
	CHECK(pusher__drain(p, 5000) == 0);
	pusher__stats(p, &st);
	pusher__free(p);
	collector_stop(&c);

	CHECK(read_log(c.log, e, MAX_ENTRIES) == 1);
	if (e[0].status != 200)
		fprintf(stderr, "  collector: %s\n", e[0].error);
	CHECK(e[0].status == 200 && !strcmp(e[0].api, "ingest"));
	CHECK(!strcmp(e[0].name, "my_service"));
	CHECK(!strcmp(e[0].labels, "bad_key_=a_b_;env=prod"));
	CHECK(e[0].from == T0_S && e[0].until == T0_S + 10);
	CHECK(e[0].sample_rate == 99 && !strcmp(e[0].spy, "ebpfprof"));
	CHECK(e[0].samples == 1 && e[0].total == 1);
	CHECK(e[0].time_nanos == T0_NS && e[0].duration_nanos == WINDOW_NS);
	CHECK(!strcmp(e[0].auth, "") && !strcmp(e[0].tenant, ""));
	CHECK(st.sent == 1 && st.bytes_sent == t.len && st.failures == 0 && st.retries == 0);
	CHECK(st.queue_items == 0 && st.queue_bytes == 0);
	return TEST_OK;
}

static int test_bad_opts(void)
{
	struct pusher_opts o = base_opts("ftp://127.0.0.1:1");

	CHECK(!pusher__new(&o) && errno == EINVAL);
	o.url = "http://127.0.0.1:1/?x=y";
	CHECK(!pusher__new(&o) && errno == EINVAL);
	o.url = "http://127.0.0.1:1";
	o.tenant_id = "a\r\nX-Evil: 1";
	CHECK(!pusher__new(&o) && errno == EINVAL);
	o.tenant_id = NULL;
	o.basic_auth = "u:p";
	o.bearer_token = "t";
	CHECK(!pusher__new(&o) && errno == EINVAL);
	return TEST_OK;
}

static int test_auth(void)
{
	const char *basic_flags[] = { "-basic-auth", "user:s3cret", "-tenant", "team-a", NULL };
	const char *bearer_flags[] = { "-bearer", "tok3n", NULL };
	struct collector c = { 0 }, cb = { 0 };
	struct entry e[MAX_ENTRIES];
	struct pusher_stats st;
	struct pusher_opts o;
	char errlog[256];
	struct pusher *p;
	int saved;

	CHECK(collector_start(&c, NULL, "auth.log", basic_flags) == 0);
	CHECK(collector_start(&cb, NULL, "bearer.log", bearer_flags) == 0);
	tmp_path(errlog, sizeof(errlog), "auth.stderr");
	saved = stderr_to(errlog);

	o = base_opts(c.url);
	o.basic_auth = "user:s3cret";
	o.tenant_id = "team-a";
	p = pusher__new(&o);
	if (p) {
		push_range(p, 0, 1);
		pusher__drain(p, 5000);
		pusher__free(p);
	}
	/* a wrong password is a 401: rejected, logged, never echoed */
	o.basic_auth = "user:wr0ngpw";
	p = pusher__new(&o);
	if (p) {
		push_range(p, 1, 2);
		pusher__drain(p, 5000);
		pusher__stats(p, &st);
		pusher__free(p);
	}
	o = base_opts(cb.url);
	o.bearer_token = "tok3n";
	p = pusher__new(&o);
	if (p) {
		push_range(p, 2, 3);
		pusher__drain(p, 5000);
		pusher__free(p);
	}
	stderr_restore(saved);
	collector_stop(&c);
	collector_stop(&cb);

	CHECK(read_log(c.log, e, MAX_ENTRIES) == 2);
	CHECK(e[0].status == 200 && !strcmp(e[0].auth, "basic user") &&
	      !strcmp(e[0].tenant, "team-a"));
	CHECK(e[1].status == 401 && !strcmp(e[1].auth, "basic user"));
	CHECK(st.rejected == 1 && st.sent == 0);
	CHECK(read_log(cb.log, e, MAX_ENTRIES) == 1);
	CHECK(e[0].status == 200 && !strcmp(e[0].auth, "bearer") && !strcmp(e[0].tenant, ""));
	CHECK(file_contains(errlog, "401"));
	CHECK(!file_contains(errlog, "s3cret") && !file_contains(errlog, "wr0ngpw") &&
	      !file_contains(errlog, "tok3n"));
	return TEST_OK;
}

static int test_outage_503(void)
{
	const char *flags[] = { "-fail-status", "503", "-fail-count", "3", NULL };
	struct collector c = { 0 };
	struct entry e[MAX_ENTRIES];
	struct pusher_stats st;
	struct pusher_opts o;
	struct pusher *p;
	int n;

	CHECK(collector_start(&c, NULL, "503.log", flags) == 0);
	o = base_opts(c.url);
	p = pusher__new(&o);
	CHECK(p);
	CHECK(push_range(p, 0, 5) == 0);
	CHECK(pusher__drain(p, 10000) == 0);
	pusher__stats(p, &st);
	pusher__free(p);
	collector_stop(&c);

	n = read_log(c.log, e, MAX_ENTRIES);
	CHECK(n == 8);
	for (int i = 0; i < 3; i++)
		CHECK(e[i].status == 503 && e[i].total == 1);
	CHECK(delivered_in_order(e, n, 0, 5));
	CHECK(st.sent == 5 && st.failures == 3 && st.retries == 3 && st.rejected == 0);
	return TEST_OK;
}

static int test_retry_after(void)
{
	const char *honour[] = { "-fail-status", "429", "-fail-count", "1", "-retry-after", "1", NULL };
	const char *capped[] = { "-fail-status", "503", "-fail-count", "1", "-retry-after", "30",
				 NULL };
	struct collector c = { 0 }, c2 = { 0 };
	struct entry e[MAX_ENTRIES];
	struct pusher_opts o;
	struct pusher *p;

	/* the jitter alone would wait at most 100 ms before the first retry */
	CHECK(collector_start(&c, NULL, "429.log", honour) == 0);
	o = base_opts(c.url);
	o.max_backoff_ms = 5000;
	p = pusher__new(&o);
	CHECK(p);
	CHECK(push_range(p, 0, 1) == 0);
	CHECK(pusher__drain(p, 10000) == 0);
	pusher__free(p);
	collector_stop(&c);
	CHECK(read_log(c.log, e, MAX_ENTRIES) == 2);
	CHECK(e[0].status == 429 && e[1].status == 200);
	CHECK(e[1].time - e[0].time >= 950000000LL);

	/* Retry-After: 30 is capped by max_backoff_ms */
	CHECK(collector_start(&c2, NULL, "retry-cap.log", capped) == 0);
	o = base_opts(c2.url);
	o.max_backoff_ms = 300;
	p = pusher__new(&o);
	CHECK(p);
	CHECK(push_range(p, 0, 1) == 0);
	CHECK(pusher__drain(p, 5000) == 0);
	pusher__free(p);
	collector_stop(&c2);
	CHECK(read_log(c2.log, e, MAX_ENTRIES) == 2);
	CHECK(e[1].status == 200 && e[1].time - e[0].time >= 250000000LL &&
	      e[1].time - e[0].time < 2000000000LL);
	return TEST_OK;
}

static int test_reject_400(void)
{
	const char *flags[] = { "-fail-status", "400", "-fail-count", "1", NULL };
	struct collector c = { 0 };
	struct entry e[MAX_ENTRIES];
	struct pusher_stats st;
	struct pusher_opts o;
	struct test_item t;
	struct pusher *p;

	CHECK(collector_start(&c, NULL, "400.log", flags) == 0);
	o = base_opts(c.url);
	p = pusher__new(&o);
	CHECK(p);
	CHECK(push_range(p, 0, 2) == 0);
	/* a body that is not gzip: the collector's own validation answers 400 */
	CHECK(make_item(&t, 2, NULL, 0) == 0);
	t.item.data = "garbage";
	t.item.len = 7;
	CHECK(pusher__enqueue(p, &t.item) == 0);
	free(t.buf);
	CHECK(push_range(p, 3, 4) == 0);
	CHECK(pusher__drain(p, 10000) == 0);
	pusher__stats(p, &st);
	pusher__free(p);
	collector_stop(&c);

	CHECK(read_log(c.log, e, MAX_ENTRIES) == 4);
	CHECK(e[0].status == 400 && e[0].total == 1 && !strcmp(e[0].error, "injected"));
	CHECK(e[1].status == 200 && e[1].total == 2);
	CHECK(e[2].status == 400 && strstr(e[2].error, "gzip"));
	CHECK(e[3].status == 200 && e[3].total == 4);
	CHECK(st.rejected == 2 && st.sent == 2 && st.failures == 0 && st.retries == 0);
	return TEST_OK;
}

/* One service answered 503 forever: its windows are dropped after their
 * attempts while the other service's go out on time and in order. */
static int test_no_head_of_line(void)
{
	const char *flags[] = { "-fail-service", "bad", "-fail-count", "-1", "-retry-after", "1",
				NULL };
	struct collector c = { 0 };
	struct entry e[MAX_ENTRIES];
	struct pusher_stats st;
	struct pusher_opts o;
	struct pusher *p;
	int n, good = 0, bad_tries[3] = { 0 }, last_bad = -1;
	long long t_last_good = 0, t_last_bad = 0;

	CHECK(collector_start(&c, NULL, "hol.log", flags) == 0);
	o = base_opts(c.url);
	o.max_attempts = 3;
	o.max_backoff_ms = 2000;	/* Retry-After: 1 s between a bad window's tries */
	p = pusher__new(&o);
	CHECK(p);
	for (int i = 0; i < 3; i++) {
		struct test_item b, g;

		CHECK(make_item(&b, i, NULL, 0) == 0 && make_item(&g, i, NULL, 0) == 0);
		b.item.name = "bad";
		CHECK(pusher__enqueue(p, &b.item) == 0 && pusher__enqueue(p, &g.item) == 0);
		free(b.buf);
		free(g.buf);
	}
	CHECK(pusher__drain(p, 20000) == 0);
	pusher__stats(p, &st);
	pusher__free(p);
	collector_stop(&c);

	n = read_log(c.log, e, MAX_ENTRIES);
	for (int i = 0; i < n; i++) {
		if (!strcmp(e[i].name, "svc")) {
			CHECK(e[i].status == 200 && e[i].total == ++good);
			t_last_good = e[i].time;
			continue;
		}
		/* the bad series keeps its order: window k's tries all come before k+1's */
		CHECK(e[i].status == 503 && e[i].total >= 1 && e[i].total <= 3);
		CHECK(e[i].total - 1 >= last_bad);
		last_bad = e[i].total - 1;
		bad_tries[last_bad]++;
		t_last_bad = e[i].time;
	}
	CHECK(good == 3 && bad_tries[0] == 3 && bad_tries[1] == 3 && bad_tries[2] == 3);
	CHECK(st.sent == 3 && st.expired_attempts == 3 && st.queue_items == 0);
	/* the bad series spends 6 s in retries; the good one is not held behind them */
	CHECK(n > 0 && t_last_good - e[0].time < 3000000000LL);
	CHECK(t_last_bad - e[0].time >= 5000000000LL);
	return TEST_OK;
}

/* A window that ended longer ago than max_age is dropped by rule, unsent. */
static int test_max_age(void)
{
	struct collector c = { 0 };
	struct entry e[MAX_ENTRIES];
	struct pusher_stats st;
	struct pusher_opts o;
	struct test_item old, fresh;
	struct pusher *p;

	CHECK(collector_start(&c, NULL, "age.log", NULL) == 0);
	o = base_opts(c.url);
	o.max_age_ms = 30 * 60 * 1000L;
	p = pusher__new(&o);
	CHECK(p);
	CHECK(make_item(&old, 0, NULL, 0) == 0 && make_item(&fresh, 1, NULL, 0) == 0);
	old.item.from_ns -= 3600LL * 1000000000LL;	/* ended 70 minutes ago */
	old.item.until_ns -= 3600LL * 1000000000LL;
	CHECK(pusher__enqueue(p, &old.item) == 0 && pusher__enqueue(p, &fresh.item) == 0);
	free(old.buf);
	free(fresh.buf);
	CHECK(pusher__drain(p, 10000) == 0);
	pusher__stats(p, &st);
	pusher__free(p);
	collector_stop(&c);
	CHECK(read_log(c.log, e, MAX_ENTRIES) == 1);
	CHECK(e[0].status == 200 && e[0].total == 2);
	CHECK(st.expired_age == 1 && st.sent == 1);
	return TEST_OK;
}

/* /ingest answers 422 for transient backend errors: retried, not dropped */
static int test_ingest_422(void)
{
	const char *flags[] = { "-fail-status", "422", "-fail-count", "2", NULL };
	struct collector c = { 0 };
	struct entry e[MAX_ENTRIES];
	struct pusher_stats st;
	struct pusher_opts o;
	struct pusher *p;

	CHECK(collector_start(&c, NULL, "422.log", flags) == 0);
	o = base_opts(c.url);
	p = pusher__new(&o);
	CHECK(p);
	CHECK(push_range(p, 0, 1) == 0);
	CHECK(pusher__drain(p, 10000) == 0);
	pusher__stats(p, &st);
	pusher__free(p);
	collector_stop(&c);
	CHECK(read_log(c.log, e, MAX_ENTRIES) == 3);
	CHECK(e[0].status == 422 && e[1].status == 422 && e[2].status == 200);
	CHECK(st.sent == 1 && st.rejected == 0 && st.retries == 2);
	return TEST_OK;
}

static int test_backend_down(void)
{
	struct collector c = { 0 };
	struct entry e[MAX_ENTRIES];
	struct pusher_stats st;
	struct pusher_opts o;
	char url[64], listen[64];
	struct pusher *p;
	int port = free_port(), n;

	CHECK(port > 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	o = base_opts(url);
	p = pusher__new(&o);
	CHECK(p);
	CHECK(push_range(p, 0, 3) == 0);
	CHECK(wait_failures(p, 2, 10000));
	CHECK(pusher__drain(p, 100) == -ETIMEDOUT);
	pusher__stats(p, &st);
	CHECK(st.failures >= 1 && st.sent == 0 && st.queue_items == 3 && st.queue_bytes > 0);

	CHECK(collector_start(&c, listen, "down.log", NULL) == 0);
	CHECK(pusher__drain(p, 10000) == 0);
	pusher__stats(p, &st);
	pusher__free(p);
	collector_stop(&c);
	n = read_log(c.log, e, MAX_ENTRIES);
	CHECK(n == 3);
	CHECK(delivered_in_order(e, n, 0, 3));
	CHECK(st.sent == 3 && st.retries >= 1 && st.queue_items == 0);
	return TEST_OK;
}

static int test_queue_bound(void)
{
	struct collector c = { 0 };
	struct entry e[MAX_ENTRIES];
	struct test_item t[6];
	struct pusher_stats st;
	struct pusher_opts o;
	char url[64], listen[64];
	struct pusher *p;
	int port = free_port(), n;
	size_t bound = 0;

	CHECK(port > 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	for (int i = 0; i < 6; i++) {
		CHECK(make_item(&t[i], i, NULL, 0) == 0);
		if (i >= 3)	/* an item counts its body and its series key, "svc{}" */
			bound += t[i].len + strlen("svc{}");
	}
	o = base_opts(url);
	o.queue_max_bytes = bound;
	p = pusher__new(&o);
	CHECK(p);
	for (int i = 0; i < 6; i++) {
		CHECK(pusher__enqueue(p, &t[i].item) == 0);
		free(t[i].buf);
	}
	pusher__stats(p, &st);
	CHECK(st.dropped == 3 && st.queue_items == 3 && st.queue_bytes == bound);

	CHECK(collector_start(&c, listen, "bound.log", NULL) == 0);
	CHECK(pusher__drain(p, 10000) == 0);
	pusher__free(p);
	collector_stop(&c);
	n = read_log(c.log, e, MAX_ENTRIES);
	CHECK(n == 3);
	CHECK(delivered_in_order(e, n, 3, 6));
	return TEST_OK;
}

static int test_spool_restart(void)
{
	struct collector c = { 0 };
	struct entry e[MAX_ENTRIES];
	struct pusher_stats st;
	struct pusher_opts o;
	char url[64], listen[64], dir[256];
	struct pusher *p;
	int port = free_port(), n;

	CHECK(port > 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	tmp_path(dir, sizeof(dir), "spool-restart");
	o = base_opts(url);
	o.spool_dir = dir;
	/* memory holds about one body: the rest is read back from disk when its turn comes */
	o.queue_max_bytes = 600;
	p = pusher__new(&o);
	CHECK(p);
	CHECK(push_range(p, 0, 4) == 0);
	sleep_ms(100);
	pusher__stats(p, &st);
	pusher__free(p);
	CHECK(st.spooled == 4 && st.sent == 0 && st.queue_items == 4);
	CHECK(count_files(dir, ".push") == 4);

	CHECK(collector_start(&c, listen, "restart.log", NULL) == 0);
	p = pusher__new(&o);
	CHECK(p);
	pusher__stats(p, &st);
	CHECK(st.queue_items == 4);
	CHECK(push_range(p, 4, 5) == 0);
	CHECK(pusher__drain(p, 10000) == 0);
	pusher__stats(p, &st);
	pusher__free(p);
	collector_stop(&c);
	n = read_log(c.log, e, MAX_ENTRIES);
	CHECK(n == 5);
	CHECK(delivered_in_order(e, n, 0, 5));
	CHECK(st.sent == 5 && st.spooled == 1 && st.dropped == 0);
	CHECK(count_files(dir, ".push") == 0);
	return TEST_OK;
}

static int test_spool_corrupt(void)
{
	struct collector c = { 0 };
	struct entry e[MAX_ENTRIES];
	struct pusher_stats st;
	struct pusher_opts o;
	char url[64], listen[64], dir[256], path[320], errlog[256];
	struct pusher *p;
	int port = free_port(), n, saved;
	FILE *f;

	CHECK(port > 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	tmp_path(dir, sizeof(dir), "spool-corrupt");
	tmp_path(errlog, sizeof(errlog), "corrupt.stderr");
	o = base_opts(url);
	o.spool_dir = dir;
	p = pusher__new(&o);
	CHECK(p);
	CHECK(push_range(p, 0, 4) == 0);
	pusher__free(p);
	CHECK(count_files(dir, ".push") == 4);

	/* item 2 truncated, item 3's body flipped, garbage and a torn temp file after them */
	snprintf(path, sizeof(path), "%s/00000000000000000001.push", dir);
	CHECK(truncate(path, 60) == 0);
	snprintf(path, sizeof(path), "%s/00000000000000000002.push", dir);
	f = fopen(path, "r+");
	CHECK(f);
	fseek(f, -1, SEEK_END);
	fputc(0x55, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/00000000000000000099.push", dir);
	f = fopen(path, "w");
	CHECK(f);
	fputs("EBPFSPL1 but nothing after it that makes sense", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/00000000000000000100.push.tmp", dir);
	f = fopen(path, "w");
	CHECK(f);
	fclose(f);

	CHECK(collector_start(&c, listen, "corrupt.log", NULL) == 0);
	saved = stderr_to(errlog);
	p = pusher__new(&o);
	if (p) {
		push_range(p, 4, 5);
		pusher__drain(p, 10000);
		pusher__stats(p, &st);
		pusher__free(p);
	}
	stderr_restore(saved);
	collector_stop(&c);
	CHECK(p);
	n = read_log(c.log, e, MAX_ENTRIES);
	CHECK(n == 3);
	CHECK(e[0].total == 1 && e[1].total == 4 && e[2].total == 5);
	CHECK(st.sent == 3 && st.dropped == 1);
	CHECK(file_contains(errlog, "00000000000000000001.push: corrupt or truncated"));
	CHECK(file_contains(errlog, "00000000000000000099.push: corrupt or truncated"));
	CHECK(file_contains(errlog, "dropping spooled item 2"));
	CHECK(count_files(dir, "push") == 0 && count_files(dir, "tmp") == 0);
	return TEST_OK;
}

static int test_spool_bound(void)
{
	struct collector c = { 0 };
	struct entry e[MAX_ENTRIES];
	struct test_item t[4];
	struct pusher_stats st;
	struct pusher_opts o;
	char url[64], listen[64], dir[256];
	struct pusher *p;
	int port = free_port(), n;

	CHECK(port > 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	tmp_path(dir, sizeof(dir), "spool-bound");
	o = base_opts(url);
	o.spool_dir = dir;
	o.spool_max_bytes = 0;
	for (int i = 0; i < 4; i++) {
		CHECK(make_item(&t[i], i, NULL, 0) == 0);
		if (i >= 2)
			o.spool_max_bytes += SPOOL_HEADER_SIZE + strlen("svc{}") + t[i].len;
	}
	p = pusher__new(&o);
	CHECK(p);
	for (int i = 0; i < 4; i++) {
		CHECK(pusher__enqueue(p, &t[i].item) == 0);
		free(t[i].buf);
	}
	pusher__stats(p, &st);
	pusher__free(p);
	CHECK(st.spooled == 4 && st.dropped == 2 && st.queue_items == 2);
	CHECK(count_files(dir, ".push") == 2);

	CHECK(collector_start(&c, listen, "spool-bound.log", NULL) == 0);
	p = pusher__new(&o);
	CHECK(p);
	CHECK(pusher__drain(p, 10000) == 0);
	pusher__free(p);
	collector_stop(&c);
	n = read_log(c.log, e, MAX_ENTRIES);
	CHECK(n == 2 && delivered_in_order(e, n, 2, 4));
	return TEST_OK;
}

/* a full disk (a tiny tmpfs) keeps items in memory; they are delivered all the same */
static int test_spool_enospc(void)
{
	struct collector c = { 0 };
	struct entry e[MAX_ENTRIES];
	struct pusher_stats st;
	struct pusher_opts o;
	char url[64], listen[64], dir[256], filler[320], block[4096] = { 0 };
	struct pusher *p = NULL;
	int port = free_port(), n = 0, fd;

	CHECK(port > 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	tmp_path(dir, sizeof(dir), "spool-full");
	CHECK(mkdir(dir, 0700) == 0);
	if (mount("tmpfs", dir, "tmpfs", 0, "size=64k"))
		SKIP("cannot mount a tmpfs here (needs CAP_SYS_ADMIN)");
	snprintf(filler, sizeof(filler), "%s/filler", dir);
	fd = open(filler, O_WRONLY | O_CREAT, 0600);
	while (fd >= 0 && write(fd, block, sizeof(block)) > 0)
		;
	if (fd >= 0)
		close(fd);

	o = base_opts(url);
	o.spool_dir = dir;
	p = pusher__new(&o);
	if (p) {
		push_range(p, 0, 2);
		pusher__stats(p, &st);
		if (!collector_start(&c, listen, "enospc.log", NULL)) {
			pusher__drain(p, 10000);
			collector_stop(&c);
			n = read_log(c.log, e, MAX_ENTRIES);
		}
		pusher__free(p);
	}
	umount(dir);
	CHECK(p);
	CHECK(st.spool_errors == 2 && st.spooled == 0 && st.queue_items == 2);
	CHECK(n == 2 && delivered_in_order(e, n, 0, 2));
	return TEST_OK;
}

/* the connect push API: PushRequest with sorted labels, retried like /ingest */
static int test_push_api(void)
{
	const char *flags[] = { "-fail-status", "503", "-fail-count", "1", "-tenant", "t1", NULL };
	struct push_label labels[] = { { "zone", "a" }, { "service_name", "x" }, { "env", "prod" } };
	struct collector c = { 0 };
	struct entry e[MAX_ENTRIES];
	struct pusher_stats st;
	struct pusher_opts o;
	struct test_item t;
	struct pusher *p;
	int n;

	CHECK(collector_start(&c, NULL, "push.log", flags) == 0);
	o = base_opts(c.url);
	o.push_api = true;
	o.tenant_id = "t1";
	p = pusher__new(&o);
	CHECK(p);
	for (int i = 0; i < 2; i++) {
		CHECK(make_item(&t, i, labels, 3) == 0);
		CHECK(pusher__enqueue(p, &t.item) == 0);
		free(t.buf);
	}
	CHECK(pusher__drain(p, 10000) == 0);
	pusher__stats(p, &st);
	pusher__free(p);
	collector_stop(&c);

	n = read_log(c.log, e, MAX_ENTRIES);
	CHECK(n == 3);
	if (e[1].status != 200)
		fprintf(stderr, "  collector: %s\n", e[1].error);
	CHECK(e[0].status == 503 && delivered_in_order(e, n, 0, 2));
	CHECK(!strcmp(e[1].api, "push") && !strcmp(e[1].name, "svc"));
	CHECK(!strcmp(e[1].profile_type, "process_cpu") && !strcmp(e[1].labels, "env=prod;zone=a"));
	CHECK(!strcmp(e[1].tenant, "t1") && e[1].time_nanos == T0_NS && e[1].samples == 1);
	CHECK(st.sent == 2 && st.failures == 1 && st.retries == 1);

	/* a wall-clock agent names its series "wall", as Pyroscope does */
	CHECK(collector_start(&c, NULL, "push_wall.log", NULL) == 0);
	o = base_opts(c.url);
	o.push_api = true;
	o.profile_type = "wall";
	p = pusher__new(&o);
	CHECK(p);
	CHECK(make_item(&t, 0, labels, 3) == 0);
	CHECK(pusher__enqueue(p, &t.item) == 0);
	free(t.buf);
	CHECK(pusher__drain(p, 10000) == 0);
	pusher__free(p);
	collector_stop(&c);
	n = read_log(c.log, e, MAX_ENTRIES);
	CHECK(n == 1 && e[0].status == 200 && !strcmp(e[0].profile_type, "wall"));
	return TEST_OK;
}

/* https: the collector's self-signed certificate is trusted only through ca_file */
static int test_https(void)
{
	char ca[256], url[320];
	const char *flags[] = { "-tls-ca-out", ca, NULL };
	struct collector c = { 0 };
	struct entry e[MAX_ENTRIES];
	struct pusher_stats st;
	struct pusher_opts o;
	struct pusher *p;
	int err;

	tmp_path(ca, sizeof(ca), "ca.pem");
	CHECK(collector_start(&c, NULL, "https.log", flags) == 0);
	snprintf(url, sizeof(url), "https://%.290s", c.url + strlen("http://"));
	o = base_opts(url);
	p = pusher__new(&o);
	CHECK(p);
	CHECK(push_range(p, 0, 1) == 0);
	CHECK(wait_failures(p, 1, 10000));
	err = pusher__drain(p, 100);
	pusher__stats(p, &st);
	pusher__free(p);
	CHECK(err == -ETIMEDOUT && st.sent == 0);

	o.ca_file = ca;
	p = pusher__new(&o);
	CHECK(p);
	CHECK(push_range(p, 0, 1) == 0);
	err = pusher__drain(p, 5000);
	pusher__stats(p, &st);
	pusher__free(p);
	collector_stop(&c);
	CHECK(err == 0 && st.sent == 1 && st.failures == 0);
	CHECK(read_log(c.log, e, MAX_ENTRIES) == 1 && e[0].status == 200);
	return TEST_OK;
}

/* pusher__free does not wait out a slow request or a long backoff */
static int test_prompt_stop(void)
{
	const char *slow[] = { "-delay-ms", "5000", NULL };
	struct collector c = { 0 };
	struct pusher_opts o;
	char url[64], dir[256];
	struct pusher *p;
	long long t0, stop_slow, stop_backoff;
	int port = free_port();

	CHECK(collector_start(&c, NULL, "slow.log", slow) == 0);
	tmp_path(dir, sizeof(dir), "spool-stop");
	o = base_opts(c.url);
	o.timeout_ms = 20000;
	o.spool_dir = dir;
	p = pusher__new(&o);
	CHECK(p);
	CHECK(push_range(p, 0, 1) == 0);
	sleep_ms(300);
	t0 = now_ms();
	pusher__free(p);
	stop_slow = now_ms() - t0;
	collector_stop(&c);
	/* the interrupted item stays spooled for the next run */
	CHECK(count_files(dir, ".push") == 1);

	CHECK(port > 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	o = base_opts(url);
	o.max_backoff_ms = 60000;
	p = pusher__new(&o);
	CHECK(p);
	CHECK(push_range(p, 0, 1) == 0);
	sleep_ms(1500);	/* several failures: the backoff ceiling is past a second now */
	t0 = now_ms();
	pusher__free(p);
	stop_backoff = now_ms() - t0;
	CHECK(stop_slow < 1000 && stop_backoff < 500);
	return TEST_OK;
}

static int run_all(void);

int main(void)
{
	char cmd[128];
	int r;

	if (setup()) {
		printf("FAIL: pusher/setup\n");
		return 1;
	}
	r = run_all();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_root);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", tmp_root);
	return r;
}

#define CASES(X) \
	X(test_series_key) \
	X(test_spool_format) \
	X(test_bad_opts) \
	X(test_params) \
	X(test_auth) \
	X(test_outage_503) \
	X(test_retry_after) \
	X(test_reject_400) \
	X(test_no_head_of_line) \
	X(test_max_age) \
	X(test_ingest_422) \
	X(test_backend_down) \
	X(test_queue_bound) \
	X(test_spool_restart) \
	X(test_spool_corrupt) \
	X(test_spool_bound) \
	X(test_spool_enospc) \
	X(test_push_api) \
	X(test_https) \
	X(test_prompt_stop)

/* each case, then whatever collectors it left running: a failed CHECK returns early */
#define WRAP(fn)                           \
	static int fn##_case(void)         \
	{                                  \
		int r = fn();              \
                                           \
		stop_leftovers();          \
		return r;                  \
	}
#define ENTRY(fn) { #fn, fn##_case },

CASES(WRAP)

static int run_all(void)
{
	static const struct test_case cases[] = { CASES(ENTRY) };

	if (access(collector_path(), X_OK)) {
		printf("SKIP: pusher/all: %s missing (make build/fixtures/collector)\n",
		       collector_path());
		return 0;
	}
	return test__run_all("pusher", cases, sizeof(cases) / sizeof(cases[0]));
}
