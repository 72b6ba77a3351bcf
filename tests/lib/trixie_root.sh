#!/bin/bash
# trixie_root.sh -- a Debian 13 root with newer runtimes (Ruby 3.3, PHP 8.4, Perl 5.40, Go 1.24) for tests that run them chrooted or as an image
# Usage: trixie_root.sh [--print]: builds (once) and prints the root's path.
# The root is cached under /var/cache/ebpfprof/trixie; a change to PACKAGES installs what is missing.
# Runs under flock, so suites and sessions that ask at once build it once.
set -euo pipefail
ROOT=${TRIXIE_ROOT:-/var/cache/ebpfprof/trixie}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
# what the suites profile; each is Debian 13's own build
PACKAGES="ruby3.3 php8.4-cli php8.4-fpm perl golang-1.24-go ca-certificates"

build() {
	local stamp="$ROOT/.ebpfprof-packages"
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$PACKAGES" ]; then
		return 0
	fi
	if [ ! -x "$ROOT/usr/bin/apt-get" ]; then
		rm -rf "$ROOT.part"
		debootstrap --variant=minbase --include="${PACKAGES// /,}" trixie "$ROOT.part" "$MIRROR" >/dev/null
		rm -rf "$ROOT"
		mv "$ROOT.part" "$ROOT"
	else
		# shellcheck disable=SC2086
		chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			$PACKAGES >/dev/null || {
			chroot "$ROOT" apt-get update -qq >/dev/null
			# shellcheck disable=SC2086
			chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
				--no-install-recommends $PACKAGES >/dev/null
		}
	fi
	chroot "$ROOT" apt-get clean
	echo "$PACKAGES" >"$stamp"
}

mkdir -p "$(dirname "$ROOT")"
exec 9>"$ROOT.lock"
flock 9
build
echo "$ROOT"
