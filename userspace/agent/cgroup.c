/* cgroup.c -- container id, pod UID and runtime of a process from its /proc/PID/cgroup text */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cgroup.h"
#include "symbolize/symbolize.h"

/*
 * A cgroup path is at most PATH_MAX, plus "ID:controllers:"; a longer line is
 * not something the kernel wrote, so it is skipped. A v1 host has about a
 * dozen hierarchies: 64 KiB holds more than that of maximal lines.
 */
#define CGROUP_LINE_MAX 8192
#define CGROUP_FILE_MAX (64 * 1024)
#define HIER_ID_DIGITS 10

/* kubelet's static pods are named by a config hash (32 hex) instead of a UUID */
#define POD_HASH_LEN 32

struct span {
	const char *p;
	size_t n;
};

struct identity {
	char container_id[CONTAINER_ID_LEN + 1];
	char pod_uid[POD_UID_LEN + 1];
	const char *runtime;
};

/* runtimes named by the prefix of a systemd scope or cgroupfs directory */
static const struct {
	const char *prefix;
	const char *runtime;
} id_prefixes[] = {
	{ "docker-", "docker" },
	{ "cri-containerd-", "containerd" },
	{ "crio-", "cri-o" },
	{ "libpod-", "podman" },
	{ "nerdctl-", "containerd" },
};

/* directories (or ':'-separated parts) that tell whose bare ids sit below them */
static const struct {
	const char *name;
	const char *runtime;
} id_parents[] = {
	{ "docker", "docker" },
	{ "docker.service", "docker" },
	{ "cri-containerd", "containerd" },
	{ "containerd.service", "containerd" },
	{ "crio", "cri-o" },
	{ "libpod_parent", "podman" },
};

static bool span_eq(struct span s, const char *str)
{
	size_t n = strlen(str);

	return s.n == n && !memcmp(s.p, str, n);
}

static bool span_has_prefix(struct span s, const char *pfx)
{
	size_t n = strlen(pfx);

	return s.n >= n && !memcmp(s.p, pfx, n);
}

/* drops pfx from the front of *s if it is there */
static bool span_strip_prefix(struct span *s, const char *pfx)
{
	size_t n = strlen(pfx);

	if (!span_has_prefix(*s, pfx))
		return false;
	s->p += n;
	s->n -= n;
	return true;
}

static bool span_strip_suffix(struct span *s, const char *sfx)
{
	size_t n = strlen(sfx);

	if (s->n < n || memcmp(s->p + s->n - n, sfx, n))
		return false;
	s->n -= n;
	return true;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* exactly 64 hex digits, copied in lower case */
static bool take_container_id(struct span s, char id[CONTAINER_ID_LEN + 1])
{
	size_t i;

	if (s.n != CONTAINER_ID_LEN)
		return false;
	for (i = 0; i < s.n; i++)
		if (!is_hex(s.p[i]))
			return false;
	for (i = 0; i < s.n; i++)
		id[i] = lower(s.p[i]);
	id[s.n] = '\0';
	return true;
}

/*
 * A UUID whose separators are '-' (cgroupfs) or '_' (systemd, where '-' means
 * nesting), or a static pod's 32-hex config hash; copied with dashes, lower case.
 */
static bool take_pod_uid(struct span s, char uid[POD_UID_LEN + 1])
{
	size_t i;

	if (s.n != POD_UID_LEN && s.n != POD_HASH_LEN)
		return false;
	for (i = 0; i < s.n; i++) {
		bool sep = s.n == POD_UID_LEN && (i == 8 || i == 13 || i == 18 || i == 23);

		if (sep ? s.p[i] != '-' && s.p[i] != '_' : !is_hex(s.p[i]))
			return false;
	}
	for (i = 0; i < s.n; i++)
		uid[i] = s.p[i] == '_' ? '-' : lower(s.p[i]);
	uid[s.n] = '\0';
	return true;
}

/* "pod<uid>" (cgroupfs) or "kubepods[-<qos>]-pod<uid_with_underscores>.slice" (systemd) */
static bool parse_pod(struct span s, char uid[POD_UID_LEN + 1])
{
	if (span_strip_suffix(&s, ".slice")) {
		const char *dash;

		if (!span_has_prefix(s, "kubepods-"))
			return false;
		/* the UUID's own dashes became underscores, so the last '-' starts "pod" */
		dash = memrchr(s.p, '-', s.n);
		s.n -= dash + 1 - s.p;
		s.p = dash + 1;
	}
	return span_strip_prefix(&s, "pod") && take_pod_uid(s, uid);
}

/* "<prefix><id>[.scope]" with a known prefix; *runtime stays NULL for a bare id */
static bool parse_container(struct span s, char id[CONTAINER_ID_LEN + 1], const char **runtime)
{
	size_t i;

	*runtime = NULL;
	span_strip_suffix(&s, ".scope");
	for (i = 0; i < sizeof(id_prefixes) / sizeof(id_prefixes[0]); i++) {
		/* "crio-conmon-<id>" and "libpod-conmon-<id>" are the monitors: not 64 hex */
		if (span_strip_prefix(&s, id_prefixes[i].prefix)) {
			*runtime = id_prefixes[i].runtime;
			break;
		}
	}
	return take_container_id(s, id);
}

static const char *parent_runtime(struct span s)
{
	size_t i;

	for (i = 0; i < sizeof(id_parents) / sizeof(id_parents[0]); i++)
		if (span_eq(s, id_parents[i].name))
			return id_parents[i].runtime;
	return NULL;
}

/*
 * Walks the components of one cgroup path; the deepest container wins (a
 * container nested in another is where the process runs). ':' separates
 * components too: containerd's systemd-style names used as plain directories
 * look like "kubepods-…-pod<uid>.slice:cri-containerd:<id>". ".." components
 * (paths outside our cgroup namespace) carry no identity and are passed over.
 */
static void parse_path(struct span path, struct identity *out)
{
	const char *end = path.p + path.n, *p = path.p, *ctx_runtime = NULL;
	char id[CONTAINER_ID_LEN + 1];
	const char *runtime;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		struct span c = { p, 0 };

		while (p < end && *p != '/' && *p != ':')
			p++;
		c.n = p - c.p;
		if (p < end)
			p++;
		if (!c.n)
			continue;
		if (parse_pod(c, out->pod_uid))
			continue;
		if (parse_container(c, id, &runtime)) {
			memcpy(out->container_id, id, sizeof(id));
			/*
			 * A bare id under kubepods: dockershim left Kubernetes in
			 * 1.24 and CRI-O names its directories "crio-<id>", so
			 * it is containerd's; the API's containerID is exact.
			 */
			if (!runtime)
				runtime = ctx_runtime ?: out->pod_uid[0] ? "containerd" : "";
			out->runtime = runtime;
			continue;
		}
		ctx_runtime = parent_runtime(c) ?: ctx_runtime;
	}
}

/* whether the comma-separated controllers list names NAME */
static bool names_controller(struct span ctrls, const char *name)
{
	const char *p = ctrls.p, *end = ctrls.p + ctrls.n;

	while (p < end) {
		const char *comma = memchr(p, ',', end - p);
		struct span one = { p, (comma ? comma : end) - p };

		if (span_eq(one, name))
			return true;
		p = comma ? comma + 1 : end;
	}
	return false;
}

/* "ID:controllers:/path"; the path may itself contain ':' */
static int parse_line(struct span line, bool *is_v2, struct span *ctrls, struct span *path)
{
	const char *end = line.p + line.n, *p = line.p, *colon;
	size_t digits = 0;

	if (memchr(line.p, '\0', line.n))
		return -EINVAL;
	while (p < end && *p >= '0' && *p <= '9' && digits <= HIER_ID_DIGITS) {
		p++;
		digits++;
	}
	if (!digits || digits > HIER_ID_DIGITS || p == end || *p != ':')
		return -EINVAL;
	colon = memchr(p + 1, ':', end - (p + 1));
	if (!colon || colon + 1 == end || colon[1] != '/')
		return -EINVAL;
	*is_v2 = digits == 1 && line.p[0] == '0' && colon == p + 1;
	ctrls->p = p + 1;
	ctrls->n = colon - ctrls->p;
	path->p = colon + 1;
	path->n = end - path->p;
	return 0;
}

int cgroup__parse(const char *buf, size_t len, struct cgroup_info *out)
{
	bool have_path = false, have_v2 = false, all_v2 = true, is_v2;
	const char *end = buf + len, *p = buf;
	int best = -1, score;
	struct identity id;
	struct span ctrls, path;

	memset(out, 0, sizeof(*out));
	if (!buf || len > CGROUP_FILE_MAX)
		return -EINVAL;
	while (p < end) {
		const char *eol = memchr(p, '\n', end - p);
		struct span line = { p, (eol ? eol : end) - p };

		p = eol ? eol + 1 : end;
		if (line.n > CGROUP_LINE_MAX || parse_line(line, &is_v2, &ctrls, &path))
			continue;
		all_v2 &= is_v2;
		/* the agent's cache key on v1 hosts; a path cut short would name another cgroup */
		if (!is_v2 && names_controller(ctrls, "memory") && path.n < sizeof(out->memory_path)) {
			memcpy(out->memory_path, path.p, path.n);
			out->memory_path[path.n] = '\0';
		}
		if (!have_path || (is_v2 && !have_v2)) {
			/* a longer path is cut; the identity below comes from all of it */
			size_t n = path.n < sizeof(out->path) ? path.n : sizeof(out->path) - 1;

			memcpy(out->path, path.p, n);
			out->path[n] = '\0';
			have_path = true;
			have_v2 |= is_v2;
		}
		/* hybrid hosts: the hierarchy naming a container beats "0::/"; ties go to v2 */
		parse_path(path, &id);
		score = (id.container_id[0] ? 4 : 0) + (id.pod_uid[0] ? 2 : 0) + is_v2;
		if (score > best) {
			best = score;
			memcpy(out->container_id, id.container_id, sizeof(out->container_id));
			memcpy(out->pod_uid, id.pod_uid, sizeof(out->pod_uid));
			snprintf(out->runtime, sizeof(out->runtime), "%s", id.runtime ?: "");
		}
	}
	if (!have_path) {
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	out->v2_only = all_v2;
	return 0;
}

int cgroup__read(const char *proc_root, __u32 pid, struct cgroup_info *out)
{
	char path[64 + 4096], *buf = NULL, *nl;
	bool truncated = false;
	size_t len = 0;
	int n, err;

	memset(out, 0, sizeof(*out));
	n = snprintf(path, sizeof(path), "%s/%u/cgroup", proc_root ?: "/proc", pid);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	err = procfs__read_file(AT_FDCWD, path, CGROUP_FILE_MAX, &buf, &len, &truncated);
	if (err) {
		/* the process is gone (or never was) */
		if (err == -ENOENT)
			err = -ESRCH;
		goto out;
	}
	if (truncated) {
		/* a line cut short could name a shorter, wrong cgroup: drop it */
		nl = memrchr(buf, '\n', len);
		len = nl ? (size_t)(nl - buf) : 0;
	}
	err = cgroup__parse(buf, len, out);
out:
	free(buf);
	return err;
}
