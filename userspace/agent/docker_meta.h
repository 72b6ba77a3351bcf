/* docker_meta.h -- a Docker container's name from its config.v2.json on the host, without the Kubernetes API */
#ifndef EBPFPROF_DOCKER_META_H
#define EBPFPROF_DOCKER_META_H

#include <stddef.h>

/* the directory dockerd keeps one folder per container in */
#define DOCKER_META_DIR "/var/lib/docker/containers"

/*
 * The name ("web", Docker's "/web" without the slash) of the container with
 * the 64-hex-digit id, from DIR/ID/config.v2.json. 0, -ENOENT (no such
 * file: not Docker, or the directory is not mounted), -EINVAL (not a name we
 * could read), -EFBIG (file over 4 MiB).
 */
int docker_meta__name(const char *dir, const char *id, char *out, size_t size);

/* The same from the file's bytes (the fuzzed part): its top-level "Name". */
int docker_meta__parse_name(const char *buf, size_t len, char *out, size_t size);

#endif /* EBPFPROF_DOCKER_META_H */
