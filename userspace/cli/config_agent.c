/* config_agent.c -- command line and EBPFPROF_* environment of `ebpfprof agent` */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include "config_int.h"
#include "agent/docker_meta.h"
#include "symbolize/symbolize.h"
#include "lib/log.h"

#define SECRET_MAX 4096
#define PUSH_TIMEOUT_MAX_S 3600	/* an hour; in ms it must fit an int */
#define LABEL_VALUE_MAX 2048
#define LABELS_MAX 20		/* leaves room for the window's own series labels */

static const char usage[] =
	"usage: ebpfprof agent [OPTIONS]\n"
	"\n"
	"Profiles the machine continuously and delivers one pprof per series every interval.\n"
	"Every option can also be set as EBPFPROF_<OPTION> (e.g. EBPFPROF_PUSH, EBPFPROF_GROUP_BY);\n"
	"options on the command line win. Secrets never go on the command line: use the *-file\n"
	"options or EBPFPROF_BASIC_AUTH (user:password), EBPFPROF_BEARER_TOKEN, EBPFPROF_HTTP_TOKEN.\n"
	"\n"
	"  -i, --interval SEC         window length (default 15)\n"
	"  -F, --frequency HZ         samples per second per CPU (default 19)\n"
	"      --push URL             push each window to a Pyroscope-compatible URL/ingest\n"
	"      --push-api             use Pyroscope's /push.v1.PusherService/Push instead of /ingest\n"
	"      --push-otlp URL        also export each window as OpenTelemetry profiles to\n"
	"                             URL/v1development/profiles (OTLP/HTTP protobuf)\n"
	"      --basic-auth-file F    file holding user:password for the push backend\n"
	"      --bearer-token-file F  file holding a bearer token for the push backend\n"
	"      --tenant-id ID         X-Scope-OrgID header\n"
	"      --ca-file F            CA bundle for https\n"
	"      --push-timeout SEC     per request (default 10, at most 3600)\n"
	"      --push-max-attempts N  failed answers before a window is dropped (default 10, 0: no limit)\n"
	"      --push-max-age SEC     drop windows that ended longer ago (default 3300; Pyroscope\n"
	"                             refuses windows over an hour old; 0: no limit)\n"
	"      --push-max-samples N   fold the coldest stacks of a window into [other] past N\n"
	"                             (default 16000, Pyroscope's limit)\n"
	"      --push-sample-labels   keep pid and tid as sample labels when pushing (the backend\n"
	"                             makes a series of each value)\n"
	"      --label-keys K1,K2     the processes' own labels (Go pprof labels) pushed as sample\n"
	"                             labels; the backend makes series of all but span_id (default\n"
	"                             span_id,span_name; '' none; written windows follow it too)\n"
	"      --queue-max-mb N       windows kept in memory while the backend is down (default 16)\n"
	"      --spool-dir DIR        also keep undelivered windows on disk\n"
	"      --spool-max-mb N       bound of the spool (default 256)\n"
	"      --listen ADDR          serve /debug/pprof/profile, /metrics, /healthz (e.g. 127.0.0.1:7070)\n"
	"      --http-token-file F    require this bearer token for /debug/pprof/*\n"
	"      --output-dir DIR       write windows as SERVICE-START.pb.gz (default ./profiles when\n"
	"                             neither --push nor --listen is given)\n"
	"      --retention N          files kept in --output-dir (default 1000)\n"
	"      --label KEY=VALUE      static label on every series (repeatable)\n"
	"      --group-by MODE        process (default), container or none: one series per group\n"
	"      --kubernetes           name pods and containers through the API server\n"
	"      --node-name NAME       this node (default $NODE_NAME, else the hostname)\n"
	"      --docker-dir DIR       name Docker containers from DIR/ID/config.v2.json\n"
	"                             (default /var/lib/docker/containers; \"\" for none)\n"
	"      --scope node|pod       pod: only the processes of the agent's own pod (sidecar)\n"
	"      --cgroup PATH          only processes in this cgroup subtree (v2, else v1)\n"
	"      --go-heap              also every Go process's heap profile each window, read from\n"
	"                             its memory (alloc_* as deltas, Pyroscope's memory types)\n"
	"  -p, --pid LIST             only these processes\n"
	"      --include-idle, --no-kernel, --no-user, --per-thread, --stack-storage-size N,\n"
	"      --count-storage-size N, --demangle MODE, --debuginfod, --dwarf-mb N,\n"
	"      --unwind auto|fp|cfi, --unwind-table-mb N,\n"
	"      -m/--mode cpu|off-cpu|wall, --off-cpu-min-us N,\n"
	"      -v/--verbose: as for the one-shot profiler\n"
	"  -h, --help                 this text\n";

enum {
	OPT_PUSH = OPT_COMMON_END, OPT_PUSH_API, OPT_BASIC_AUTH_FILE, OPT_BEARER_FILE, OPT_TENANT,
	OPT_CA_FILE, OPT_PUSH_TIMEOUT, OPT_QUEUE_MAX, OPT_SPOOL_DIR, OPT_SPOOL_MAX, OPT_LISTEN,
	OPT_HTTP_TOKEN_FILE, OPT_OUTPUT_DIR, OPT_RETENTION, OPT_LABEL, OPT_GROUP_BY,
	OPT_KUBERNETES, OPT_NODE_NAME, OPT_DOCKER_DIR, OPT_SCOPE, OPT_CGROUP, OPT_PUSH_MAX_ATTEMPTS,
	OPT_PUSH_MAX_AGE, OPT_PUSH_SAMPLE_LABELS, OPT_PUSH_MAX_SAMPLES, OPT_PUSH_OTLP, OPT_GO_HEAP,
	OPT_LABEL_KEYS,
};

static const struct option agent_opts[] = {
	{ "interval", required_argument, NULL, 'i' },
	{ "push", required_argument, NULL, OPT_PUSH },
	{ "push-api", no_argument, NULL, OPT_PUSH_API },
	{ "push-otlp", required_argument, NULL, OPT_PUSH_OTLP },
	{ "basic-auth-file", required_argument, NULL, OPT_BASIC_AUTH_FILE },
	{ "bearer-token-file", required_argument, NULL, OPT_BEARER_FILE },
	{ "tenant-id", required_argument, NULL, OPT_TENANT },
	{ "ca-file", required_argument, NULL, OPT_CA_FILE },
	{ "push-timeout", required_argument, NULL, OPT_PUSH_TIMEOUT },
	{ "push-max-attempts", required_argument, NULL, OPT_PUSH_MAX_ATTEMPTS },
	{ "push-max-age", required_argument, NULL, OPT_PUSH_MAX_AGE },
	{ "push-sample-labels", no_argument, NULL, OPT_PUSH_SAMPLE_LABELS },
	{ "label-keys", required_argument, NULL, OPT_LABEL_KEYS },
	{ "push-max-samples", required_argument, NULL, OPT_PUSH_MAX_SAMPLES },
	{ "queue-max-mb", required_argument, NULL, OPT_QUEUE_MAX },
	{ "spool-dir", required_argument, NULL, OPT_SPOOL_DIR },
	{ "spool-max-mb", required_argument, NULL, OPT_SPOOL_MAX },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "http-token-file", required_argument, NULL, OPT_HTTP_TOKEN_FILE },
	{ "output-dir", required_argument, NULL, OPT_OUTPUT_DIR },
	{ "retention", required_argument, NULL, OPT_RETENTION },
	{ "label", required_argument, NULL, OPT_LABEL },
	{ "group-by", required_argument, NULL, OPT_GROUP_BY },
	{ "kubernetes", no_argument, NULL, OPT_KUBERNETES },
	{ "node-name", required_argument, NULL, OPT_NODE_NAME },
	{ "docker-dir", required_argument, NULL, OPT_DOCKER_DIR },
	{ "scope", required_argument, NULL, OPT_SCOPE },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "go-heap", no_argument, NULL, OPT_GO_HEAP },
	CONFIG_COMMON_OPTIONS,
	{},
};

/* Replaces *dst with a copy of src. */
static int set_str(char **dst, const char *src)
{
	char *copy = strdup(src);

	if (!copy)
		return -ENOMEM;
	free(*dst);
	*dst = copy;
	return 0;
}

/* --label-keys: label names ([A-Za-z0-9_], as Prometheus and Pyroscope take them), comma-separated. */
static int parse_label_keys(const char *arg, char **dst)
{
	for (const char *p = arg; *p; p++) {
		if (*p == ',' || *p == '_' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= 'A' && *p <= 'Z'))
			continue;
		p_err("invalid label keys '%s' (names of letters, digits and _, separated by commas)", arg);
		return -EINVAL;
	}
	return set_str(dst, arg);
}

/* A secret from a file: bounded, trailing white space (the usual newline) dropped. */
static int read_secret(const char *what, const char *path, char **dst)
{
	size_t len;
	char *buf;
	bool truncated;
	int err;

	err = procfs__read_file(AT_FDCWD, path, SECRET_MAX, &buf, &len, &truncated);
	if (!err && truncated) {
		free(buf);
		err = -EFBIG;
	}
	if (err) {
		p_err("cannot read %s from %s: %s", what, path, strerror(-err));
		return err;
	}
	while (len && isspace((unsigned char)buf[len - 1]))
		buf[--len] = '\0';
	free(*dst);
	*dst = buf;
	return 0;
}

static int add_label(struct agent_config *ag, const char *arg)
{
	const char *eq = strchr(arg, '=');
	struct label *l;

	if (!eq || eq == arg || strchr(eq + 1, '=')) {
		p_err("invalid label '%s' (expected KEY=VALUE)", arg);
		return -EINVAL;
	}
	for (const char *c = arg; c < eq; c++) {
		if (!isalnum((unsigned char)*c) && *c != '_') {
			p_err("invalid label key in '%s' (letters, digits and _ only)", arg);
			return -EINVAL;
		}
	}
	/* Pyroscope refuses a series with a longer value, or more than 30 names in all */
	if (strlen(eq + 1) > LABEL_VALUE_MAX || ag->n_labels >= LABELS_MAX) {
		p_err("invalid label '%.40s...': at most %d labels of %d bytes", arg, LABELS_MAX,
		      LABEL_VALUE_MAX);
		return -EINVAL;
	}
	l = realloc(ag->labels, (ag->n_labels + 1) * sizeof(*l));
	if (!l)
		return -ENOMEM;
	ag->labels = l;
	l = &ag->labels[ag->n_labels];
	l->key = strndup(arg, eq - arg);
	l->value = strdup(eq + 1);
	if (!l->key || !l->value) {
		free(l->key);
		free(l->value);
		return -ENOMEM;
	}
	ag->n_labels++;
	return 0;
}

/* Looks arg up in names[n]; prints what was expected on a miss. */
static int parse_enum(const char *what, const char *arg, const char *const *names, int n, int *out)
{
	for (int i = 0; i < n; i++) {
		if (!strcmp(arg, names[i])) {
			*out = i;
			return 0;
		}
	}
	p_err("invalid %s '%s'", what, arg);
	return -EINVAL;
}

static int parse_mb(const char *what, const char *arg, size_t *out)
{
	long v;
	int err = config__long(what, arg, 1, 1 << 20, &v);

	*out = (size_t)v << 20;
	return err;
}

static int agent_opt(struct config *cfg, int opt, const char *arg)
{
	static const char *const group_names[] = { "process", "container", "none" };
	static const char *const scope_names[] = { "node", "pod" };
	struct agent_config *ag = &cfg->ag;
	double secs;
	long v;
	int err, e = 0;

	switch (opt) {
	case 'i': return config__seconds("interval", arg, &ag->interval);
	case OPT_PUSH: return set_str(&ag->push_url, arg);
	case OPT_PUSH_API: ag->push_api = true; return 0;
	case OPT_PUSH_OTLP: return set_str(&ag->otlp_url, arg);
	case OPT_BASIC_AUTH_FILE: return read_secret("basic auth", arg, &ag->basic_auth);
	case OPT_BEARER_FILE: return read_secret("bearer token", arg, &ag->bearer_token);
	case OPT_TENANT: return set_str(&ag->tenant_id, arg);
	case OPT_CA_FILE: return set_str(&ag->ca_file, arg);
	case OPT_PUSH_TIMEOUT:
		err = config__seconds("push timeout", arg, &secs);
		if (!err && secs > PUSH_TIMEOUT_MAX_S) {
			p_err("invalid push timeout '%s' (seconds, at most %d)", arg, PUSH_TIMEOUT_MAX_S);
			err = -EINVAL;
		}
		/* whole milliseconds, at least one: curl reads 0 as no timeout at all */
		if (!err)
			ag->push_timeout_ms = secs * 1000 < 1 ? 1 : (int)(secs * 1000);
		return err;
	case OPT_PUSH_MAX_ATTEMPTS:
		err = config__long("push max attempts", arg, 0, 1000000, &v);
		ag->push_max_attempts = v ? v : -1;
		return err;
	case OPT_PUSH_MAX_AGE:
		err = config__seconds("push max age", arg, &secs);
		if (!err && secs > 30 * 86400.0) {
			p_err("invalid push max age '%s' (seconds, at most 30 days)", arg);
			err = -EINVAL;
		}
		if (!err)
			ag->push_max_age_ms = secs > 0 ? (long)(secs * 1000) : -1;
		return err;
	case OPT_PUSH_SAMPLE_LABELS: ag->push_sample_labels = true; return 0;
	case OPT_LABEL_KEYS: return parse_label_keys(arg, &ag->label_keys);
	case OPT_PUSH_MAX_SAMPLES:
		err = config__long("push max samples", arg, 2, 100000000, &v);
		ag->push_max_samples = v;
		return err;
	case OPT_QUEUE_MAX: return parse_mb("--queue-max-mb", arg, &ag->queue_max_bytes);
	case OPT_SPOOL_DIR: return set_str(&ag->spool_dir, arg);
	case OPT_SPOOL_MAX: return parse_mb("--spool-max-mb", arg, &ag->spool_max_bytes);
	case OPT_LISTEN: return set_str(&ag->listen, arg);
	case OPT_HTTP_TOKEN_FILE: return read_secret("http token", arg, &ag->http_token);
	case OPT_OUTPUT_DIR: return set_str(&ag->output_dir, arg);
	case OPT_RETENTION:
		err = config__long("retention", arg, 1, 10000000, &v);
		ag->retention = v;
		return err;
	case OPT_LABEL: return add_label(ag, arg);
	case OPT_GROUP_BY:
		err = parse_enum("--group-by (process, container, none)", arg, group_names, 3, &e);
		ag->group_by = e;
		return err;
	case OPT_KUBERNETES: ag->kubernetes = true; return 0;
	case OPT_NODE_NAME: return set_str(&ag->node_name, arg);
	case OPT_DOCKER_DIR: return set_str(&ag->docker_dir, arg);
	case OPT_SCOPE:
		err = parse_enum("--scope (node, pod)", arg, scope_names, 2, &e);
		ag->scope = e;
		return err;
	case OPT_CGROUP: return set_str(&ag->cgroup, arg);
	case OPT_GO_HEAP: ag->go_heap = true; return 0;
	case 'm':
		if (!strcmp(arg, "heap") || !strcmp(arg, "alloc")) {	/* one-shot modes */
			p_err("the agent takes --go-heap for heap profiles, beside --mode cpu, off-cpu or wall");
			return -EINVAL;
		}
		return config__common(cfg, opt, arg);
	default: return config__common(cfg, opt, arg);
	}
}

/* EBPFPROF_GROUP_BY for --group-by; buf must hold the longest name. */
static const char *env_name(const char *opt, char *buf, size_t len)
{
	size_t i = snprintf(buf, len, "EBPFPROF_");

	for (; *opt && i + 1 < len; opt++)
		buf[i++] = *opt == '-' ? '_' : toupper((unsigned char)*opt);
	buf[i] = '\0';
	return buf;
}

static bool env_true(const char *v)
{
	return !strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes");
}

/* Applies EBPFPROF_* variables, before argv so the command line wins. */
static int apply_env(struct config *cfg)
{
	char name[64];
	int err = 0;

	for (const struct option *o = agent_opts; o->name && !err; o++) {
		const char *v = getenv(env_name(o->name, name, sizeof(name)));

		if (!v || !*v || o->val == 'h' || o->val == OPT_VERSION)
			continue;
		if (o->has_arg == no_argument) {
			if (env_true(v))
				err = agent_opt(cfg, o->val, v);
			continue;
		}
		if (o->val == OPT_LABEL) {	/* KEY=VALUE,KEY=VALUE */
			char *copy = strdup(v), *tok, *save = NULL;

			if (!copy)
				return -ENOMEM;
			for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save))
				err = add_label(&cfg->ag, tok);
			free(copy);
			continue;
		}
		err = agent_opt(cfg, o->val, v);
	}
	return err;
}

static int apply_env_secrets(struct agent_config *ag)
{
	static const struct { const char *env; size_t off; } secrets[] = {
		{ "EBPFPROF_BASIC_AUTH", offsetof(struct agent_config, basic_auth) },
		{ "EBPFPROF_BEARER_TOKEN", offsetof(struct agent_config, bearer_token) },
		{ "EBPFPROF_HTTP_TOKEN", offsetof(struct agent_config, http_token) },
	};

	for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++) {
		const char *v = getenv(secrets[i].env);
		char **dst = (char **)((char *)ag + secrets[i].off);

		if (v && *v && !*dst && set_str(dst, v))
			return -ENOMEM;
	}
	return 0;
}

static int agent_defaults(struct config *cfg)
{
	struct agent_config *ag = &cfg->ag;
	const char *node = getenv("NODE_NAME");

	if (!ag->push_url && !ag->otlp_url && !ag->listen && !ag->output_dir &&
	    set_str(&ag->output_dir, "profiles"))
		return -ENOMEM;
	if (!ag->node_name && node && *node && set_str(&ag->node_name, node))
		return -ENOMEM;
	if (!ag->docker_dir && set_str(&ag->docker_dir, DOCKER_META_DIR))
		return -ENOMEM;
	if (ag->push_api && !ag->push_url) {
		p_err("--push-api needs --push URL");
		return -EINVAL;
	}
	if (ag->scope == SCOPE_POD && ag->cgroup) {
		p_err("--scope pod and --cgroup exclude each other");
		return -EINVAL;
	}
	return 0;
}

int config__parse_agent(struct config *cfg, int argc, char **argv)
{
	int err;

	cfg->frequency = 19;
	cfg->demangle = DEMANGLE_SHORT;
	cfg->dwarf_mb = 8;
	cfg->unwind_table_mb = 16;
	cfg->off_cpu_min_us = 1;
	cfg->ag.interval = 15;
	cfg->ag.retention = 1000;
	err = apply_env(cfg);
	if (!err)
		err = config__getopt(cfg, argc, argv, "i:F:p:m:vh", agent_opts, usage, agent_opt);
	if (!err)
		err = apply_env_secrets(&cfg->ag);
	if (!err)
		err = agent_defaults(cfg);
	return err ? err : config__validate(cfg);
}

void config__free_agent(struct agent_config *ag)
{
	for (int i = 0; i < ag->n_labels; i++) {
		free(ag->labels[i].key);
		free(ag->labels[i].value);
	}
	free(ag->labels);
	free(ag->push_url);
	free(ag->label_keys);
	free(ag->otlp_url);
	free(ag->basic_auth);
	free(ag->bearer_token);
	free(ag->tenant_id);
	free(ag->ca_file);
	free(ag->spool_dir);
	free(ag->listen);
	free(ag->http_token);
	free(ag->output_dir);
	free(ag->node_name);
	free(ag->docker_dir);
	free(ag->cgroup);
	*ag = (struct agent_config){};
}
