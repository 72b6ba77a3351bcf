#!/usr/bin/env bash
# image.sh -- builds the agent image ebpfprof:latest offline: Debian 12 bases made with debootstrap (cached), imported, then deploy/Dockerfile
# usage: image.sh [TAG (ebpfprof:latest)]; as root. CACHE (/var/cache/ebpfprof/images) keeps the root filesystems.
set -eu
cd "$(dirname "$0")/.."
tag=${1:-ebpfprof:latest}
cache=${CACHE:-/var/cache/ebpfprof/images}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# the Dockerfile's package lists, so the bases hold exactly what its stages would install
pkgs() { sed -n "/^ARG $1=\"/,/\"$/p" deploy/Dockerfile | sed "s/^ARG $1=\"//; s/[\"\\\\]//g" | xargs | tr ' ' ,; }

docker_up() {
	command -v dockerd >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
	docker info >/dev/null 2>&1 && return 0
	(dockerd >/var/log/ebpfprof-dockerd.log 2>&1 &)
	for _ in $(seq 60); do docker info >/dev/null 2>&1 && return 0; sleep 0.5; done
	echo "image.sh: dockerd did not start (see /var/log/ebpfprof-dockerd.log)" >&2
	return 1
}

# base NAME PACKAGES: a debootstrap minbase with PACKAGES, imported as ebpfprof-base-NAME:12
base() {
	local name=$1 include=$2 dir="$cache/$1" stamp
	stamp=$(echo "$include" | md5sum | cut -c1-12)
	if ! docker image inspect "ebpfprof-base-$name:$stamp" >/dev/null 2>&1; then
		if [ ! -e "$dir/.done-$stamp" ]; then
			rm -rf "$dir" && mkdir -p "$dir"
			command -v debootstrap >/dev/null ||
				DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
			echo "  DEBOOTSTRAP $name ($dir)" >&2
			debootstrap --variant=minbase --include="$include" bookworm "$dir/root" "$mirror" \
				>"$dir/debootstrap.log" 2>&1 || { tail -5 "$dir/debootstrap.log" >&2; return 1; }
			rm -rf "$dir"/root/var/cache/apt/archives/*.deb "$dir"/root/var/lib/apt/lists/*
			touch "$dir/.done-$stamp"
		fi
		echo "  IMPORT ebpfprof-base-$name:$stamp" >&2
		tar -C "$dir/root" -c . | docker import - "ebpfprof-base-$name:$stamp" >/dev/null
	fi
	echo "ebpfprof-base-$name:$stamp"
}

docker_up
build_base=$(base build "$(pkgs BUILD_PKGS)" | tail -1)
runtime_base=$(base runtime "$(pkgs RUNTIME_PKGS)" | tail -1)
echo "  DOCKER BUILD $tag" >&2
# the context: the work tree's files git knows or would add, not build/ or other ignored output
git ls-files -z --cached --others --exclude-standard | tar --null -T - -c |
	docker build -q -f deploy/Dockerfile --build-arg BUILD_BASE="$build_base" \
		--build-arg RUNTIME_BASE="$runtime_base" -t "$tag" - >/dev/null
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' "$tag"
