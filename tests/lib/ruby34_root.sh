#!/bin/bash
# ruby34_root.sh -- a Debian 13 root with Ruby 3.4 from Debian's experimental (its own build, not in trixie or sid), for tests that run it chrooted
# Usage: ruby34_root.sh: builds (once) and prints the root's path.
# The root is cached under /var/cache/ebpfprof/ruby34, apart from the trixie root (which others share);
# a change to PACKAGES installs what is missing. Runs under flock, so suites that ask at once build it once.
set -euo pipefail
ROOT=${RUBY34_ROOT:-/var/cache/ebpfprof/ruby34}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
PACKAGES="ruby3.4"

build() {
	local stamp="$ROOT/.ebpfprof-packages"
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$PACKAGES" ]; then
		return 0
	fi
	if [ ! -x "$ROOT/usr/bin/apt-get" ]; then
		rm -rf "$ROOT.part"
		debootstrap --variant=minbase trixie "$ROOT.part" "$MIRROR" >/dev/null
		rm -rf "$ROOT"
		mv "$ROOT.part" "$ROOT"
	fi
	# experimental's packages are never picked on their own (priority 1): -t takes them for PACKAGES only;
	# its Release file is valid for a few days only, and a mirror's copy may be older
	printf 'deb %s trixie main\ndeb [check-valid-until=no] %s experimental main\n' "$MIRROR" "$MIRROR" \
		>"$ROOT/etc/apt/sources.list"
	chroot "$ROOT" apt-get update -qq >/dev/null
	# shellcheck disable=SC2086
	chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		-t experimental $PACKAGES >/dev/null
	chroot "$ROOT" apt-get clean
	echo "$PACKAGES" >"$stamp"
}

mkdir -p "$(dirname "$ROOT")"
exec 9>"$ROOT.lock"
flock 9
build
echo "$ROOT"
