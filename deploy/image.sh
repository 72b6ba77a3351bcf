#!/usr/bin/env bash
# image.sh -- builds the agent image ebpfprof:latest offline: Debian 12 bases made with debootstrap (cached), imported, then deploy/Dockerfile
# usage: image.sh [TAG (ebpfprof:latest, ebpfprof:arm64)]; as root. CACHE (/var/cache/ebpfprof/images) keeps the root filesystems.
# ARCH=arm64 on an x86-64 host: the runtime stage's files and settings on an arm64 base (its packages set up
# under qemu-user), holding the cross-built binary (make ARCH=arm64), then run there under qemu-user.
set -eu
cd "$(dirname "$0")/.."
host_arch=$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
arch=${ARCH:-$host_arch}
tag=${1:-ebpfprof:$([ "$arch" = "$host_arch" ] && echo latest || echo "$arch")}
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

# qemu-user runs arm64 programs here: debootstrap's second stage, the Dockerfile's RUN, the check.
# Its binfmt_misc entry (fixed: it works in a chroot and a container too) is what systemd-binfmt
# would register at boot, which this machine's init does not run.
qemu_user() {	# debian arch
	local conf=/usr/lib/binfmt.d/qemu-$1.conf
	local misc=/proc/sys/fs/binfmt_misc
	[ -e "$conf" ] ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user-static >/dev/null
	[ -e "$misc/register" ] || mount -t binfmt_misc binfmt_misc "$misc"
	[ -e "$misc/qemu-$1" ] || cat "$conf" >"$misc/register"
}

# base_root NAME PACKAGES [DEBIAN-ARCH]: a debootstrap minbase with PACKAGES in $cache/NAME/root,
# made once per package list; prints its stamp
base_root() {
	local name=$1 include=$2 darch=${3:-} dir="$cache/$1" stamp
	stamp=$(echo "$include $darch" | md5sum | cut -c1-12)
	if [ ! -e "$dir/.done-$stamp" ]; then
		rm -rf "$dir" && mkdir -p "$dir"
		command -v debootstrap >/dev/null ||
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
		echo "  DEBOOTSTRAP $name ($dir)" >&2
		debootstrap ${darch:+--arch="$darch"} --variant=minbase --include="$include" bookworm \
			"$dir/root" "$mirror" \
			>"$dir/debootstrap.log" 2>&1 || { tail -5 "$dir/debootstrap.log" >&2; return 1; }
		rm -rf "$dir"/root/var/cache/apt/archives/*.deb "$dir"/root/var/lib/apt/lists/*
		touch "$dir/.done-$stamp"
	fi
	echo "$stamp"
}

# base NAME PACKAGES: base_root's, imported as ebpfprof-base-NAME:<stamp>
base() {
	local stamp
	stamp=$(base_root "$1" "$2") || return 1
	if ! docker image inspect "ebpfprof-base-$1:$stamp" >/dev/null 2>&1; then
		echo "  IMPORT ebpfprof-base-$1:$stamp" >&2
		tar -C "$cache/$1/root" -c . | docker import - "ebpfprof-base-$1:$stamp" >/dev/null
	fi
	echo "ebpfprof-base-$1:$stamp"
}

# The Dockerfile's runtime stage for another architecture: its base (the same package list, set up
# under qemu-user), the cross build's binary at the stage's path, the stage's EXPOSE, ENTRYPOINT and
# CMD. Imported, not built: Docker 20.10's builder gives every step's layer the host's platform,
# and the build stage under qemu-user would take most of an hour.
cross_image() {
	local darch=$1 root stage line changes=()
	qemu_user aarch64
	make -s ARCH="$arch" >&2
	base_root "runtime-$darch" "$(pkgs RUNTIME_PKGS)" "$darch" >/dev/null
	root=$cache/runtime-$darch/root
	stage=$(mktemp -d)
	install -D -m 0755 "build/$arch/ebpfprof" "$stage/usr/local/bin/ebpfprof"
	while IFS= read -r line; do
		changes+=(--change "$line")
	done < <(sed -n '/^FROM ${RUNTIME_BASE} AS runtime/,$p' deploy/Dockerfile | grep -E '^(EXPOSE|ENTRYPOINT|CMD) ')
	[ ${#changes[@]} = 6 ] ||
		{ echo "image.sh: no EXPOSE, ENTRYPOINT and CMD in deploy/Dockerfile's runtime stage" >&2; return 1; }
	echo "  DOCKER LOAD $tag ($darch)" >&2
	tar -c -C "$root" . -C "$stage" ./usr/local/bin/ebpfprof >"$stage/layer.tar"
	# docker import would call it amd64 (its --platform needs an experimental daemon): the image
	# as docker save writes one, its config saying arm64, is loaded instead
	python3 - "$stage" "$tag" "$darch" "${changes[@]}" <<'EOF'
import hashlib, json, os, sys, tarfile
stage, tag, arch, changes = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[5::2]  # --change X ...
cfg = {}
for c in changes:
    word, rest = c.split(" ", 1)
    if word == "EXPOSE":
        cfg["ExposedPorts"] = {p if "/" in p else p + "/tcp": {} for p in rest.split()}
    else:
        cfg[word.capitalize()] = json.loads(rest)	# Entrypoint, Cmd
layer = os.path.join(stage, "layer.tar")
h = hashlib.sha256()
with open(layer, "rb") as f:
    for b in iter(lambda: f.read(1 << 20), b""):
        h.update(b)
config = {"architecture": arch, "os": "linux", "config": cfg,
          "rootfs": {"type": "layers", "diff_ids": ["sha256:" + h.hexdigest()]}}
blob = json.dumps(config).encode()
name = hashlib.sha256(blob).hexdigest() + ".json"
with tarfile.open(os.path.join(stage, "image.tar"), "w") as t:
    for path, data in ((name, blob), ("manifest.json", json.dumps(
            [{"Config": name, "RepoTags": [tag], "Layers": ["layer.tar"]}]).encode())):
        with open(os.path.join(stage, path), "wb") as f:
            f.write(data)
        t.add(os.path.join(stage, path), arcname=path)
    t.add(layer, arcname="layer.tar")
EOF
	docker load -q -i "$stage/image.tar" >/dev/null
	rm -rf "$stage"
	# the binary starts in its image, every library found (qemu-user runs it; BPF needs an arm64 CPU)
	docker run --rm --platform "linux/$darch" "$tag" --version >&2
}

docker_up
case $arch in
"$host_arch")
	build_base=$(base build "$(pkgs BUILD_PKGS)" | tail -1)
	runtime_base=$(base runtime "$(pkgs RUNTIME_PKGS)" | tail -1)
	echo "  DOCKER BUILD $tag" >&2
	# the context: the work tree's files git knows or would add, not build/ or other ignored output
	git ls-files -z --cached --others --exclude-standard | tar --null -T - -c |
		docker build -q -f deploy/Dockerfile --build-arg BUILD_BASE="$build_base" \
			--build-arg RUNTIME_BASE="$runtime_base" -t "$tag" - >/dev/null
	;;
arm64) cross_image arm64 ;;
*) echo "image.sh: no image for ARCH=$arch on $host_arch (arm64 is built from x86)" >&2; exit 1 ;;
esac
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' "$tag"
