/* scope.c -- the cgroup (v2, else v1) the agent restricts sampling to (--cgroup, --scope pod) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "cgroup.h"
#include "collect/pidns.h"
#include "lib/log.h"
#include "symbolize/symbolize.h"
#include "scope.h"

#define MOUNTINFO_MAX (4 << 20)

/* The mount point (field 5) of a mountinfo line, or -EINVAL. */
static int mount_point(const char *line, char *buf, size_t len)
{
	char mnt[512];

	if (sscanf(line, "%*s %*s %*s %*s %511s", mnt) != 1 || strlen(mnt) >= len)
		return -EINVAL;
	strcpy(buf, mnt);
	return 0;
}

/*
 * Calls fn for each cgroup mount of the given type ("cgroup2", "cgroup"),
 * with its mount point and super options ("rw,cpu,cpuacct"), until fn
 * returns 0.
 */
static int each_cgroup_mount(const char *type, int (*fn)(const char *mnt, const char *opts, void *arg),
			     void *arg)
{
	char *text, *line, *save = NULL;
	size_t n, tlen = strlen(type);
	int err;

	err = procfs__read_file(AT_FDCWD, "/proc/self/mountinfo", MOUNTINFO_MAX, &text, &n, NULL);
	if (err)
		return err;
	err = -ENOENT;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		/* "36 25 0:30 / /sys/fs/cgroup/unified rw,... shared:10 - cgroup2 cgroup2 rw" */
		char *sep = strstr(line, " - "), mnt[512], *opts;

		if (!sep || strncmp(sep + 3, type, tlen) || sep[3 + tlen] != ' ')
			continue;
		opts = strrchr(sep, ' ');
		*sep = '\0';
		if (!mount_point(line, mnt, sizeof(mnt)) && !fn(mnt, opts + 1, arg)) {
			err = 0;
			break;
		}
	}
	free(text);
	return err;
}

struct mount_buf {
	char *buf;
	size_t len;
};

static int copy_mount(const char *mnt, const char *opts, void *arg)
{
	struct mount_buf *mb = arg;

	(void)opts;
	if (strlen(mnt) >= mb->len)
		return -ENAMETOOLONG;
	strcpy(mb->buf, mnt);
	return 0;
}

int scope__cgroup2_mount(char *buf, size_t len)
{
	struct mount_buf mb = { buf, len };

	return each_cgroup_mount("cgroup2", copy_mount, &mb);
}

/* A controller's subsystem index: its line among /proc/cgroups' (the kernel prints them by id). */
static int subsys_index(const char *name, size_t len)
{
	char *text, *line, *save = NULL;
	size_t n;
	int idx = -ENOENT, i = 0;

	if (procfs__read_file(AT_FDCWD, "/proc/cgroups", 64 << 10, &text, &n, NULL))
		return -ENOENT;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#')
			continue;
		if (!strncmp(line, name, len) && (line[len] == '\t' || line[len] == ' ')) {
			idx = i;
			break;
		}
		i++;
	}
	free(text);
	return idx;
}

struct v1_lookup {
	const char *rel;		/* the cgroup path, as /proc/PID/cgroup shows it */
	struct cgroup_scope *sc;
	char path[800];
};

/* The first controller of a v1 mount whose hierarchy holds the directory. */
static int find_v1(const char *mnt, const char *opts, void *arg)
{
	struct v1_lookup *l = arg;
	const char *o = opts;
	struct stat st;

	snprintf(l->path, sizeof(l->path), "%s/%s", mnt, l->rel[0] == '/' ? l->rel + 1 : l->rel);
	if (stat(l->path, &st) || !S_ISDIR(st.st_mode))
		return -ENOENT;
	while (o && *o) {	/* "rw,cpu,cpuacct": a named hierarchy (name=systemd) has no subsystem */
		size_t len = strcspn(o, ",");
		int idx = subsys_index(o, len);

		if (idx >= 0) {
			l->sc->v1_ssid = idx;
			l->sc->v1_id = st.st_ino;
			return 0;
		}
		o = o[len] ? o + len + 1 : NULL;
	}
	return -ENOENT;
}

struct memory_mount {
	char *buf;
	size_t len;
};

/* the v1 mount whose options ("rw,memory") name the memory controller */
static int find_memory(const char *mnt, const char *opts, void *arg)
{
	struct memory_mount *mm = arg;

	for (const char *o = opts; o && *o;) {
		size_t len = strcspn(o, ",");

		if (len == 6 && !strncmp(o, "memory", 6)) {
			snprintf(mm->buf, mm->len, "%s", mnt);
			return 0;
		}
		o = o[len] ? o + len + 1 : NULL;
	}
	return -ENOENT;
}

int scope__cgroup1_memory(char *buf, size_t len, __u32 *ssid)
{
	struct memory_mount mm = { buf, len };
	int idx, err = each_cgroup_mount("cgroup", find_memory, &mm);

	if (err)
		return err;
	idx = subsys_index("memory", 6);
	if (idx < 0)
		return idx;
	*ssid = (__u32)idx + 1;
	return 0;
}

/* The v2 directory: an absolute path already under the mount is taken as it is. */
static int open_v2(const char *rel, struct cgroup_scope *sc, char *path, size_t len)
{
	char mnt[256];
	int err = scope__cgroup2_mount(mnt, sizeof(mnt));

	if (err)
		return err;
	if (!strncmp(rel, mnt, strlen(mnt)) && rel[strlen(mnt)] == '/')
		snprintf(path, len, "%s", rel);
	else
		snprintf(path, len, "%s/%s", mnt, rel[0] == '/' ? rel + 1 : rel);
	sc->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return sc->fd < 0 ? -errno : 0;
}

/*
 * --scope pod without a pod cgroup (cgroup v1 or hybrid hosts, plain
 * Docker): a sidecar sharing its workload's PID namespace is scoped by that
 * namespace, which the BPF programs keep to by themselves (collect/pidns.h).
 */
static bool pidns_scope(const char *why)
{
	__u64 dev, ino;

	if (pidns__child(&dev, &ino) != 1)
		return false;
	p_info("--scope pod: %s; sampling only the agent's PID namespace (%llu), which it shares with its workload",
	       why, (unsigned long long)ino);
	return true;
}

/* The pod's cgroup: the parent of the agent's own container cgroup. */
static int own_pod_path(char *buf, size_t len)
{
	struct cgroup_info self;
	char *slash;

	if (cgroup__read("/proc", getpid(), &self) || !self.pod_uid[0]) {
		if (pidns__child(&(__u64){ 0 }, &(__u64){ 0 }) == 1)
			return -ENOENT;	/* the caller scopes by PID namespace */
		p_err("--scope pod: the agent does not run in a Kubernetes pod (no pod UID in /proc/self/cgroup) nor in a PID namespace of its own");
		return -ENOENT;
	}
	snprintf(buf, len, "%s", self.path);
	slash = strrchr(buf, '/');
	if (!slash || slash == buf) {
		p_err("--scope pod: unexpected cgroup path '%s'", self.path);
		return -EINVAL;
	}
	*slash = '\0';
	return 0;
}

int scope__open(const struct config *cfg, struct cgroup_scope *sc)
{
	struct v1_lookup l = { .sc = sc };
	char rel[512], path[800] = "";
	int err;

	*sc = (struct cgroup_scope){ .fd = -1 };
	if (!cfg->ag.cgroup && cfg->ag.scope != SCOPE_POD)
		return 0;
	if (cfg->ag.scope == SCOPE_POD) {
		err = own_pod_path(rel, sizeof(rel));
		if (err && pidns_scope("no Kubernetes pod cgroup"))
			return 0;
		if (err)
			return err;
	} else {
		snprintf(rel, sizeof(rel), "%s", cfg->ag.cgroup);
	}
	err = open_v2(rel, sc, path, sizeof(path));
	if (!err) {
		p_info("sampling only cgroup %s", path);
		return 0;
	}
	/* v1 and hybrid hosts: Docker with cgroupfs, kubelet on v1 put containers in v1 hierarchies */
	l.rel = rel;
	if (!each_cgroup_mount("cgroup", find_v1, &l)) {
		p_info("sampling only cgroup %s (cgroup v1: matched in BPF by the task's cgroup and its ancestors there)",
		       l.path);
		return 0;
	}
	if (cfg->ag.scope == SCOPE_POD && pidns_scope("no pod cgroup in cgroup v2 or v1"))
		return 0;
	p_err("cannot open cgroup %s: %s, and no cgroup v1 hierarchy holds it", path[0] ? path : rel,
	      err == -ENOENT && !path[0] ? "cgroup v2 is not mounted" : strerror(-err));
	return err;
}
