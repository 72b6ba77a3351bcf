/* docker_meta.c -- a Docker container's name from DIR/ID/config.v2.json, read with json-c and bounded */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include "lib/fdio.h"
#include "docker_meta.h"

#define NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"
#define CONFIG_MAX (4u << 20)	/* a config.v2.json holds the environment and mounts: tens of KiB */

int docker_meta__parse_name(const char *buf, size_t len, char *out, size_t size)
{
	struct json_tokener *tok;
	json_object *root, *name;
	const char *s;
	int err = -EINVAL;

	if (!size || len > CONFIG_MAX)
		return -EINVAL;
	tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	root = json_tokener_parse_ex(tok, buf, (int)len);
	if (root && json_object_object_get_ex(root, "Name", &name) &&
	    json_object_is_type(name, json_type_string)) {
		s = json_object_get_string(name);
		s += *s == '/';
		/* only what Docker allows in a name: [a-zA-Z0-9][a-zA-Z0-9_.-]* */
		if (isalnum((unsigned char)*s) && !s[strspn(s, NAME_CHARS)] && strlen(s) < size) {
			strcpy(out, s);
			err = 0;
		}
	}
	json_object_put(root);
	json_tokener_free(tok);
	return err;
}

/* a container id: exactly 64 lower-case hex digits, so it cannot leave DIR */
static bool valid_id(const char *id)
{
	size_t n = strspn(id, "0123456789abcdef");

	return n == 64 && !id[n];
}

int docker_meta__name(const char *dir, const char *id, char *out, size_t size)
{
	char path[4096], *buf = NULL;
	ssize_t n;
	int fd, err;

	if (!valid_id(id))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%s/config.v2.json", dir, id);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	buf = malloc(CONFIG_MAX + 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	n = fdio__read_full(fd, buf, CONFIG_MAX + 1);
	if (n < 0)
		err = (int)n;
	else if ((size_t)n > CONFIG_MAX)
		err = -EFBIG;
	else
		err = docker_meta__parse_name(buf, (size_t)n, out, size);
out:
	free(buf);
	close(fd);
	return err;
}
