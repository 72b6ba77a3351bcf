/* fuzz_cgroup.c -- libFuzzer target: /proc/PID/cgroup text through cgroup__parse */
#include <errno.h>
#include <string.h>
#include "agent/cgroup.h"
#include "fuzz.h"

static int lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

static int valid_uid(const char *u)
{
	size_t n = strlen(u);

	if (n == 32)
		return lower_hex(u, 32);
	if (n != POD_UID_LEN)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? u[i] != '-' : !lower_hex(u + i, 1))
			return 0;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct cgroup_info zero;
	static const char *const runtimes[] = { "", "docker", "containerd", "cri-o", "podman" };
	struct cgroup_info ci;
	int err, known = 0;

	err = cgroup__parse((const char *)data, size, &ci);
	if (err) {
		FUZZ_CHECK(err == -EINVAL && !memcmp(&ci, &zero, sizeof(ci)));
		return 0;
	}
	FUZZ_CHECK(memchr(ci.path, '\0', sizeof(ci.path)) && ci.path[0] == '/');
	FUZZ_CHECK(!ci.container_id[0] ||
		   (strlen(ci.container_id) == CONTAINER_ID_LEN &&
		    lower_hex(ci.container_id, CONTAINER_ID_LEN)));
	FUZZ_CHECK(!ci.pod_uid[0] || valid_uid(ci.pod_uid));
	for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
		known |= memchr(ci.runtime, '\0', sizeof(ci.runtime)) && !strcmp(ci.runtime, runtimes[i]);
	FUZZ_CHECK(known);
	/* a runtime is only ever named for a container */
	FUZZ_CHECK(!ci.runtime[0] || ci.container_id[0]);
	return 0;
}
