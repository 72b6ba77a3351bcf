#!/bin/bash
# ruby_static.sh -- CRuby 3.3 built from Debian's source, linked static (no libruby.so) and with YJIT, for tests: no Debian package is either
# Usage: ruby_static.sh: builds (once, about 5 min on 2 cores) and prints the directory holding `ruby`
# (its symbols kept, as `make install` keeps them) and `ruby-stripped` (as `make install-strip` leaves it).
# Cached under /var/cache/ebpfprof/ruby33-static; runs under flock, so callers that ask at once build it once.
# The source is trixie's ruby3.3 tarball, checked against the checksum its Sources index gives.
set -euo pipefail
DIR=${RUBY_STATIC_DIR:-/var/cache/ebpfprof/ruby33-static}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
TARBALL=ruby3.3_3.3.8.orig.tar.xz
SHA256=e2e1233ad275b7623a05edf23a01192626d1da454bdfe353a28a87acd8ef015c
# core only: the tests' scripts load no extension, and without them the build takes half as long
CONFIGURE="--disable-shared --enable-yjit --disable-install-doc --disable-rubygems --with-ext=etc"
STAMP="$TARBALL $CONFIGURE"

# a rustc for YJIT (1.58 or newer): rustup's, or Debian's
rustc_path() {
	PATH=$PATH:/root/.cargo/bin command -v rustc && return 0
	# CI installs the guests' packages meanwhile: the dpkg lock is waited for
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
		--no-install-recommends rustc >/dev/null
	command -v rustc
}

build() {
	local src=$DIR/src rustc
	[ -f "$DIR/.stamp" ] && [ "$(cat "$DIR/.stamp")" = "$STAMP" ] && [ -x "$DIR/ruby" ] && return 0
	rustc=$(rustc_path) || { echo "ruby_static: no rustc for YJIT" >&2; return 1; }
	rm -rf "$DIR.part" && mkdir -p "$DIR.part/src"
	curl -sSf -o "$DIR.part/$TARBALL" "$MIRROR/pool/main/r/ruby3.3/$TARBALL"
	echo "$SHA256  $DIR.part/$TARBALL" | sha256sum -c --quiet -
	tar -xJf "$DIR.part/$TARBALL" -C "$DIR.part/src" --strip-components=1
	src=$DIR.part/src
	# shellcheck disable=SC2086
	(cd "$src" && PATH=$(dirname "$rustc"):$PATH ./configure --prefix="$DIR" $CONFIGURE >configure.log 2>&1 &&
		PATH=$(dirname "$rustc"):$PATH make -j"$(nproc)" ruby >make.log 2>&1) ||
		{ tail -20 "$src/configure.log" "$src/make.log" >&2 2>/dev/null; return 1; }
	"$src/ruby" --disable-gems --yjit -e 'exit(RubyVM::YJIT.enabled? ? 0 : 1)' ||
		{ echo "ruby_static: the build has no YJIT" >&2; return 1; }
	# debug information dropped (the symbol table kept), and a copy without local symbols
	strip -g -o "$DIR.part/ruby" "$src/ruby"
	strip -S -x -o "$DIR.part/ruby-stripped" "$src/ruby"
	rm -rf "$src" "$DIR.part/$TARBALL" "$DIR"
	echo "$STAMP" >"$DIR.part/.stamp"
	mv "$DIR.part" "$DIR"
}

mkdir -p "$(dirname "$DIR")"
exec 9>"$DIR.lock"
flock 9
build
echo "$DIR"
