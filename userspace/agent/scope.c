/* scope.c -- the cgroup v2 directory the agent restricts sampling to (--cgroup, --scope pod) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cgroup.h"
#include "collect/pidns.h"
#include "lib/log.h"
#include "symbolize/symbolize.h"
#include "scope.h"

#define MOUNTINFO_MAX (4 << 20)

int scope__cgroup2_mount(char *buf, size_t len)
{
	char *text, *line, *save = NULL;
	size_t n;
	int err;

	err = procfs__read_file(AT_FDCWD, "/proc/self/mountinfo", MOUNTINFO_MAX, &text, &n, NULL);
	if (err)
		return err;
	err = -ENOENT;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		/* "36 25 0:30 / /sys/fs/cgroup/unified rw,... shared:10 - cgroup2 cgroup2 rw" */
		char *sep = strstr(line, " - "), mnt[512];

		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %511s", mnt) == 1 && strlen(mnt) < len) {
			strcpy(buf, mnt);
			err = 0;
			break;
		}
	}
	free(text);
	return err;
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

int scope__open(const struct config *cfg, int *fd)
{
	char mnt[256], rel[512], path[800];
	int err;

	*fd = -1;
	if (!cfg->ag.cgroup && cfg->ag.scope != SCOPE_POD)
		return 0;
	err = scope__cgroup2_mount(mnt, sizeof(mnt));
	if (err && cfg->ag.scope == SCOPE_POD && pidns_scope("cgroup v2 is not mounted"))
		return 0;
	if (err) {
		p_err("cgroup v2 is not mounted: --cgroup and --scope pod need it");
		return err;
	}
	if (cfg->ag.scope == SCOPE_POD) {
		err = own_pod_path(rel, sizeof(rel));
		if (err && pidns_scope("no Kubernetes pod cgroup"))
			return 0;
		if (err)
			return err;
	} else {
		snprintf(rel, sizeof(rel), "%s", cfg->ag.cgroup);
	}
	/* an absolute path already under the mount is taken as it is */
	if (!strncmp(rel, mnt, strlen(mnt)) && rel[strlen(mnt)] == '/')
		snprintf(path, sizeof(path), "%s", rel);
	else
		snprintf(path, sizeof(path), "%s/%s", mnt, rel[0] == '/' ? rel + 1 : rel);
	*fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*fd < 0) {
		err = -errno;
		p_err("cannot open cgroup %s: %s", path, strerror(-err));
		return err;
	}
	p_info("sampling only cgroup %s", path);
	return 0;
}
