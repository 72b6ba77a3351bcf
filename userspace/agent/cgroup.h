/* cgroup.h -- which container and Kubernetes pod a process runs in, from /proc/PID/cgroup */
#ifndef EBPFPROF_CGROUP_H
#define EBPFPROF_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define CONTAINER_ID_LEN 64	/* hex digits of a docker/containerd/CRI-O id */
#define POD_UID_LEN 36		/* canonical UUID with dashes */

struct cgroup_info {
	char path[512];				/* cgroup v2 path ("0::" line), or the first v1 path */
	char container_id[CONTAINER_ID_LEN + 1];	/* "" when not in a container */
	char pod_uid[POD_UID_LEN + 1];		/* "" when not in a pod; dashes, lower case */
	char runtime[16];			/* "docker", "containerd", "cri-o", "podman", "" */
	bool v2_only;				/* every line was the v2 hierarchy's ("0::") */
	char memory_path[512];			/* the v1 memory hierarchy's path; "": none, or too long */
};

/*
 * Parses /proc/PID/cgroup text (len bytes, not NUL-terminated) for the
 * cgroupfs and systemd drivers of docker, containerd and CRI-O, including the
 * kubepods layouts (kubepods/burstable/pod<uid>/<id>,
 * kubepods-burstable-pod<uid_with_underscores>.slice/cri-containerd-<id>.scope,
 * crio-<id>.scope, docker-<id>.scope, /docker/<id>), and podman's libpod-<id>.scope.
 * Lines are bounded (8 KiB each, 64 KiB in all); malformed ones are skipped.
 * A static pod's UID is kubelet's 32-hex config hash, kept as is (the API
 * shows it in the mirror pod's kubernetes.io/config.mirror annotation).
 * With several hierarchies, the one naming a container wins, then v2.
 * 0, or -EINVAL when no line is valid.
 */
int cgroup__parse(const char *buf, size_t len, struct cgroup_info *out);

/* Reads PROC_ROOT/PID/cgroup (bounded) and parses it. 0 or a negative errno (-ESRCH). */
int cgroup__read(const char *proc_root, __u32 pid, struct cgroup_info *out);

#endif /* EBPFPROF_CGROUP_H */
