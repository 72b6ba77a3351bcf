/* test_cgroup.c -- /proc/PID/cgroup parser: every runtime layout, garbage, truncation, our own file */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "agent/cgroup.h"
#include "test.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID2 "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define UID "4b3c1a2d-9e8f-4a7b-8c6d-5e4f3a2b1c0d"
#define UID_ "4b3c1a2d_9e8f_4a7b_8c6d_5e4f3a2b1c0d"

static int parse(const char *text, struct cgroup_info *ci)
{
	return cgroup__parse(text, strlen(text), ci);
}

/* parses text and compares the identity; path NULL: not checked */
static bool expect(const char *text, const char *id, const char *uid, const char *runtime,
		   const char *path)
{
	struct cgroup_info ci;

	if (parse(text, &ci)) {
		fprintf(stderr, "  parse failed: %s\n", text);
		return false;
	}
	if (strcmp(ci.container_id, id) || strcmp(ci.pod_uid, uid) || strcmp(ci.runtime, runtime) ||
	    (path && strcmp(ci.path, path))) {
		fprintf(stderr, "  %s\n  -> id '%s' pod '%s' runtime '%s' path '%s'\n", text,
			ci.container_id, ci.pod_uid, ci.runtime, ci.path);
		return false;
	}
	return true;
}

static int test_docker(void)
{
	CHECK(expect("0::/docker/" ID "\n", ID, "", "docker", "/docker/" ID));
	CHECK(expect("0::/system.slice/docker-" ID ".scope\n", ID, "", "docker", NULL));
	/* v1: every hierarchy says the same; the path is the first line's */
	CHECK(expect("12:pids:/docker/" ID "\n11:cpu,cpuacct:/docker/" ID "\n"
		     "1:name=systemd:/docker/" ID "\n",
		     ID, "", "docker", "/docker/" ID));
	/* docker in docker: the inner container is where the process runs */
	CHECK(expect("0::/docker/" ID2 "/docker/" ID "\n", ID, "", "docker", NULL));
	/* systemd running inside the container moves processes below the scope */
	CHECK(expect("0::/system.slice/docker-" ID ".scope/system.slice/nginx.service\n", ID, "",
		     "docker", NULL));
	return TEST_OK;
}

static int test_kubepods_cgroupfs(void)
{
	CHECK(expect("0::/kubepods/burstable/pod" UID "/" ID "\n", ID, UID, "containerd",
		     "/kubepods/burstable/pod" UID "/" ID));
	CHECK(expect("0::/kubepods/besteffort/pod" UID "/" ID "\n", ID, UID, "containerd", NULL));
	/* guaranteed QoS pods sit directly below kubepods */
	CHECK(expect("0::/kubepods/pod" UID "/" ID "\n", ID, UID, "containerd", NULL));
	/* the pause container's cgroup: the pod, no container */
	CHECK(expect("0::/kubepods/burstable/pod" UID "\n", "", UID, "", NULL));
	/* upper case from a hand-made path is normalized */
	CHECK(expect("0::/kubepods/burstable/pod4B3C1A2D-9E8F-4A7B-8C6D-5E4F3A2B1C0D/"
		     "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF\n",
		     ID, UID, "containerd", NULL));
	/* CRI-O with the cgroupfs driver */
	CHECK(expect("0::/kubepods/burstable/pod" UID "/crio-" ID "\n", ID, UID, "cri-o", NULL));
	/* a static pod: the config hash, 32 hex */
	CHECK(expect("0::/kubepods/burstable/pod5f5a5b6e1b0ebbdde4bbcb6f9c8da6a0/" ID "\n", ID,
		     "5f5a5b6e1b0ebbdde4bbcb6f9c8da6a0", "containerd", NULL));
	return TEST_OK;
}

static int test_kubepods_systemd(void)
{
	CHECK(expect("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
		     ".slice/cri-containerd-" ID ".scope\n",
		     ID, UID, "containerd", NULL));
	CHECK(expect("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
		     ".slice/cri-containerd-" ID ".scope\n",
		     ID, UID, "containerd", NULL));
	CHECK(expect("0::/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID ".scope\n",
		     ID, UID, "containerd", NULL));
	/* docker as the runtime behind an old kubelet */
	CHECK(expect("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
		     ".slice/docker-" ID ".scope\n",
		     ID, UID, "docker", NULL));
	/* seen from inside another cgroup namespace: ".." components */
	CHECK(expect("0::/../../kubepods-besteffort-pod" UID_ ".slice/cri-containerd-" ID
		     ".scope\n",
		     ID, UID, "containerd", NULL));
	return TEST_OK;
}

static int test_crio(void)
{
	CHECK(expect("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
		     ".slice/crio-" ID ".scope\n",
		     ID, UID, "cri-o", NULL));
	/* conmon monitors the container from outside it */
	CHECK(expect("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
		     ".slice/crio-conmon-" ID ".scope\n",
		     "", UID, "", NULL));
	/* CRI-O nests the workload in a "container" sub-cgroup on some versions */
	CHECK(expect("0::/kubepods.slice/kubepods-pod" UID_ ".slice/crio-" ID ".scope/container\n",
		     ID, UID, "cri-o", NULL));
	return TEST_OK;
}

static int test_containerd(void)
{
	/* containerd's systemd-style name used as a plain directory */
	CHECK(expect("0::/system.slice/containerd.service/kubepods-burstable-pod" UID_
		     ".slice:cri-containerd:" ID "\n",
		     ID, UID, "containerd", NULL));
	CHECK(expect("0::/system.slice/cri-containerd-" ID ".scope\n", ID, "", "containerd", NULL));
	CHECK(expect("0::/system.slice/containerd.service/default/" ID "\n", ID, "", "containerd",
		     NULL));
	CHECK(expect("0::/system.slice/nerdctl-" ID ".scope\n", ID, "", "containerd", NULL));
	/* the daemon itself is no container */
	CHECK(expect("0::/system.slice/containerd.service\n", "", "", "", NULL));
	return TEST_OK;
}

static int test_podman(void)
{
	CHECK(expect("0::/machine.slice/libpod-" ID ".scope\n", ID, "", "podman", NULL));
	CHECK(expect("0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID
		     ".scope/container\n",
		     ID, "", "podman", NULL));
	CHECK(expect("0::/machine.slice/libpod-conmon-" ID ".scope\n", "", "", "", NULL));
	CHECK(expect("0::/libpod_parent/libpod-" ID "\n", ID, "", "podman", NULL));
	return TEST_OK;
}

static int test_hybrid(void)
{
	struct cgroup_info ci;

	/* v1 hierarchies name the container while the v2 one is the root */
	CHECK(expect("12:memory:/docker/" ID "\n1:name=systemd:/docker/" ID "\n0::/\n", ID, "",
		     "docker", "/"));
	/* nothing anywhere: the v2 path is reported */
	CHECK(expect("4:memory:/user.slice\n0::/user.slice/user-0.slice/session-1.scope\n", "", "",
		     "", "/user.slice/user-0.slice/session-1.scope"));
	/* no trailing newline on the last line */
	CHECK(expect("0::/docker/" ID, ID, "", "docker", NULL));
	/* only a v2-only file is one the cgroup v2 id of a process stands for */
	CHECK(!parse("12:memory:/docker/" ID "\n0::/\n", &ci) && !ci.v2_only);
	CHECK(!parse("0::/docker/" ID, &ci) && ci.v2_only);
	CHECK(!parse("0::/a\n0::/b\n", &ci) && ci.v2_only);
	/* the memory hierarchy's path, the cache key on v1 hosts: by controller, co-mounted too */
	CHECK(!parse("5:cpu,cpuacct:/x\n4:memory:/docker/" ID "\n0::/\n", &ci) &&
	      !strcmp(ci.memory_path, "/docker/" ID) && !strcmp(ci.path, "/"));
	CHECK(!parse("4:memory,pids:/m\n", &ci) && !strcmp(ci.memory_path, "/m"));
	CHECK(!parse("4:memoryx:/m\n1:name=memory:/n\n", &ci) && !ci.memory_path[0]);
	CHECK(!parse("0::/docker/" ID, &ci) && !ci.memory_path[0]);
	return TEST_OK;
}

static int test_not_ids(void)
{
	/* 63 and 65 hex digits, non-hex, a short UUID, a UUID with a bad separator */
	CHECK(expect("0::/docker/" "123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
		     "", "", "", NULL));
	CHECK(expect("0::/docker/" ID "0\n", "", "", "", NULL));
	CHECK(expect("0::/docker/" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdeg\n",
		     "", "", "", NULL));
	CHECK(expect("0::/kubepods/burstable/pod4b3c1a2d-9e8f-4a7b-8c6d-5e4f3a2b1c0\n", "", "", "",
		     NULL));
	CHECK(expect("0::/kubepods/burstable/pod4b3c1a2d-9e8f-4a7b-8c6d+5e4f3a2b1c0d\n", "", "", "",
		     NULL));
	/* a pod slice needs its kubepods prefix */
	CHECK(expect("0::/other-pod" UID_ ".slice\n", "", "", "", NULL));
	/* a 32-hex id outside kubepods (a session or job id) is nothing */
	CHECK(expect("4:memory:/process_api/1a97b9b8a3bc40813b99fe916e23917a\n0::/\n", "", "", "",
		     "/"));
	return TEST_OK;
}

static int test_garbage(void)
{
	static const char *bad[] = {
		"",
		"\n\n\n",
		"hello world\n",
		"0::\n",			/* no path */
		"0::relative/path\n",
		":cpu:/docker/x\n",		/* no hierarchy id */
		"12345678901:cpu:/x\n",		/* 11 digits */
		"x1:cpu:/x\n",
		"1cpu/x\n",
	};
	struct cgroup_info ci;
	size_t i;
	char *big;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&ci, 0x55, sizeof(ci));
		CHECK(parse(bad[i], &ci) == -EINVAL);
		CHECK(ci.path[0] == '\0' && ci.container_id[0] == '\0' && ci.pod_uid[0] == '\0');
	}
	/* an embedded NUL invalidates its line only */
	CHECK(cgroup__parse("0::/docker/x\0y\n1:cpu:/ok\n", 25, &ci) == 0);
	CHECK(!strcmp(ci.path, "/ok"));
	/* garbage around one good line */
	CHECK(expect("junk\n\xff\xfe\n0::/docker/" ID "\nmore junk", ID, "", "docker", NULL));

	/* an overlong line is skipped; an overlong path is cut but still identified */
	big = malloc(70 * 1024);
	CHECK(big);
	memset(big, 'a', 70 * 1024);
	memcpy(big, "0::/", 4);
	big[9000] = '\n';
	strcpy(big + 9001, "1:cpu:/x\n");
	if (parse(big, &ci) || strcmp(ci.path, "/x")) {
		free(big);
		CHECK(!"overlong line not skipped");
	}
	memset(big, 'a', 2000);
	memcpy(big, "0::/", 4);
	strcpy(big + 2000, "/docker/" ID "\n");
	if (parse(big, &ci) || strlen(ci.path) != sizeof(ci.path) - 1 || strcmp(ci.container_id, ID)) {
		free(big);
		CHECK(!"long path not cut");
	}
	/* past the total bound: refused, not scanned */
	memset(big, '\n', 70 * 1024);
	memcpy(big, "0::/\n", 5);
	if (cgroup__parse(big, 70 * 1024, &ci) != -EINVAL) {
		free(big);
		CHECK(!"oversized input accepted");
	}
	free(big);
	return TEST_OK;
}

static int test_truncated(void)
{
	static const char full[] = "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
				   UID_ ".slice/cri-containerd-" ID ".scope\n";
	struct cgroup_info ci;
	size_t n;

	/* every prefix of a good file parses to nothing or to a prefix of the truth */
	for (n = 0; n < sizeof(full) - 1; n++) {
		int err = cgroup__parse(full, n, &ci);

		CHECK(err == 0 || err == -EINVAL);
		if (err)
			continue;
		CHECK(!strncmp(ci.path, full + 3, strlen(ci.path)));
		CHECK(ci.pod_uid[0] == '\0' || !strcmp(ci.pod_uid, UID));
		/* the id is only there once all 64 digits (and maybe ".scope") are */
		CHECK(ci.container_id[0] == '\0' || !strcmp(ci.container_id, ID));
	}
	/* a path cut inside the pod UID names no pod */
	CHECK(expect("0::/kubepods/burstable/pod4b3c1a2d-9e8f", "", "", "", NULL));
	return TEST_OK;
}

static int test_self(void)
{
	struct cgroup_info ci;
	int err;

	err = cgroup__read("/proc", getpid(), &ci);
	if (err == -ENOENT || err == -ESRCH)
		SKIP("no /proc/self/cgroup (kernel without cgroups)");
	CHECK(err == 0);
	CHECK(ci.path[0] == '/');
	/* no container is expected here, but a CI box may run us in one */
	CHECK(ci.container_id[0] == '\0' || strlen(ci.container_id) == CONTAINER_ID_LEN);
	CHECK(cgroup__read("/proc", 0, &ci) == -ESRCH);
	CHECK(cgroup__read("/nonexistent", getpid(), &ci) == -ESRCH);
	return TEST_OK;
}

TEST_MAIN("cgroup", TEST(test_docker), TEST(test_kubepods_cgroupfs), TEST(test_kubepods_systemd),
	  TEST(test_crio), TEST(test_containerd), TEST(test_podman), TEST(test_hybrid),
	  TEST(test_not_ids), TEST(test_garbage), TEST(test_truncated), TEST(test_self))
