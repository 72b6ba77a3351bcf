/* test_docker_meta.c -- unit tests for Docker container names from config.v2.json: the name, ids that could leave the directory, bad files */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "agent/docker_meta.h"
#include "test.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static char dir[] = "/tmp/ebpfprof-docker-XXXXXX";

static int put(const char *id, const char *body)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, id);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/config.v2.json", dir, id);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(body, f);
	return fclose(f);
}

static int test_name(void)
{
	char out[64];

	CHECK(mkdtemp(dir));
	/* the shape dockerd writes: Name among many other keys, nested ones holding "Name" too */
	CHECK(!put(ID, "{\"StreamConfig\":{},\"State\":{\"Running\":true},\"ID\":\"" ID "\","
		       "\"Config\":{\"Labels\":{\"Name\":\"not this\"}},\"Name\":\"/web-1\","
		       "\"Driver\":\"overlay2\"}"));
	CHECK(!docker_meta__name(dir, ID, out, sizeof(out)) && !strcmp(out, "web-1"));
	CHECK(docker_meta__name(dir, ID, out, 5) == -EINVAL);	/* does not fit */
	CHECK(docker_meta__name("/nonexistent", ID, out, sizeof(out)) == -ENOENT);
	return TEST_OK;
}

static int test_bad_ids(void)
{
	char out[64];

	CHECK(docker_meta__name(dir, "../../etc", out, sizeof(out)) == -EINVAL);
	CHECK(docker_meta__name(dir, ID "0", out, sizeof(out)) == -EINVAL);
	CHECK(docker_meta__name(dir, "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
				out, sizeof(out)) == -EINVAL);
	return TEST_OK;
}

static int test_bad_files(void)
{
	static const char *const bodies[] = {
		"", "{", "[]", "{\"Name\":7}", "{\"Name\":\"\"}", "{\"Name\":\"/\"}",
		"{\"Name\":\"/a\xff\"}", "null",	/* raw bytes that are not UTF-8 */
	};
	const char *id2 = "1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	char out[64], path[256], target[256];

	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		CHECK(!put(id2, bodies[i]));
		CHECK(docker_meta__name(dir, id2, out, sizeof(out)) < 0);
	}
	/* a symlinked config is not followed */
	snprintf(path, sizeof(path), "%s/%s/config.v2.json", dir, id2);
	snprintf(target, sizeof(target), "%s/%s/config.v2.json", dir, ID);
	unlink(path);
	CHECK(!symlink(target, path));
	CHECK(docker_meta__name(dir, id2, out, sizeof(out)) == -ELOOP);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK(!system(path));
	return TEST_OK;
}

TEST_MAIN("docker_meta", { "name", test_name }, { "bad_ids", test_bad_ids },
	  { "bad_files", test_bad_files })
