# debian_apt.sh -- apt of our own (bullseye, bookworm and its backports, trixie) under a cache directory, for packages of other Debian releases; the host's sources and lists stay untouched
# Sourced. Set APT_DIR (the state's directory) first; MIRROR defaults to Debian's.
MIRROR=${MIRROR:-http://deb.debian.org/debian}
APT=(-o "Dir::Etc::sourcelist=$APT_DIR/sources.list" -o Dir::Etc::sourceparts=/nonexistent
	-o "Dir::State::Lists=$APT_DIR/lists" -o "Dir::Cache=$APT_DIR/cache" -o "APT::Architecture=${APT_ARCH:-amd64}"
	-o Debug::NoLocking=1)

# bookworm-backports: a newer kernel built for Debian 12 (bullseye-backports has left the archive)
APT_SUITES="bullseye bookworm bookworm-backports trixie"

apt_update() {	# lists younger than 12 hours are kept: the archive replaces packages, old lists name gone files
	local want s
	want=$(for s in $APT_SUITES; do echo "deb $MIRROR $s main"; done)
	[ "$(cat "$APT_DIR/sources.list" 2>/dev/null)" = "$want" ] &&
		[ -n "$(find "$APT_DIR/lists" -maxdepth 1 -name '*_Packages*' -mmin -720 2>/dev/null | head -1)" ] &&
		return 0
	mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial"
	echo "$want" >"$APT_DIR/sources.list"
	apt-get "${APT[@]}" update -qq
}

apt_download() {	# dir package[/suite]...: the .deb files into dir
	mkdir -p "$1"
	(cd "$1" && shift && apt-get "${APT[@]}" download "$@" 2>&1 | grep -v '^W: Download is performed unsandboxed') >&2
}
