# docker.sh -- Docker for the runtime suites' container cases: the daemon started once, images made offline from a root
# Sourced. No registry here: an image is a tar of files taken from a root filesystem (the host's or a debootstrap).

DOCKER_STARTED=0

# docker_up: true when a daemon answers, starting dockerd if none runs (docker_down stops only one we started);
# on failure DOCKER_WHY says why, for a skip line (not run in a subshell: DOCKER_STARTED must stay set)
docker_up() {
	DOCKER_WHY="no dockerd (make deps-test installs docker.io)"
	command -v dockerd >/dev/null || return 1
	if ! docker info >/dev/null 2>&1; then
		(dockerd >/var/log/ebpfprof-dockerd.log 2>&1 &)
		DOCKER_STARTED=1
		for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
	fi
	docker info >/dev/null 2>&1 && return 0
	DOCKER_WHY="dockerd does not start here: $(tail -1 /var/log/ebpfprof-dockerd.log 2>/dev/null)"
	return 1
}

# docker_down: stops the daemon if docker_up started it
docker_down() {
	[ "$DOCKER_STARTED" = 1 ] && [ -s /var/run/docker.pid ] || return 0
	kill "$(cat /var/run/docker.pid)" 2>/dev/null
	for _ in $(seq 40); do [ -e /var/run/docker.pid ] || break; sleep 0.25; done
	DOCKER_STARTED=0
}

# docker_image_from IMAGE ROOT BINARY [PATH...]: imports an image holding ROOT's BINARY, every library it loads
# (ldd run inside ROOT) and the other PATHs (relative to ROOT, directories whole); nothing else
docker_image_from() {
	local img=$1 root=$2 bin=$3 libs
	shift 3
	libs=$(chroot "$root" ldd "$bin" | awk '$3 ~ /^\// { print substr($3, 2) } $1 ~ /^\// { print substr($1, 2) }')
	[ -n "$libs" ] || return 1
	tar -C "$root" -ch "${bin#/}" $libs "$@" | docker import - "$img" >/dev/null
}
