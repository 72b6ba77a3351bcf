# debian_kernel.sh -- a Debian release's kernel image (linux-image-<arch>), fetched once into a cache
# Sourced after debian_apt.sh; APT_DIR must be that architecture's own (its lists are per architecture).
# KERNEL_ARCH: Debian's name of the architecture (amd64, arm64); default amd64.

# the Debian release whose linux-image-<arch> is that kernel series
debian_kernel_suite() {	# series
	case $1 in
	5.10) echo bullseye ;;
	6.1) echo bookworm ;;
	6.12) echo trixie ;;
	6.12-bpo) echo bookworm-backports ;;	# Debian 12's backported 6.12: another build of the series
	*) return 1 ;;
	esac
}

# Prints the path of the series' vmlinuz under DIR, fetching and unpacking its package once.
debian_kernel_image() {	# series dir debs-dir
	local series=$1 dir=$2 debs=$3 arch=${KERNEL_ARCH:-amd64} suite pkg deb
	ls "$dir"/boot/vmlinuz-* 2>/dev/null | head -1 | grep . && return 0
	suite=$(debian_kernel_suite "$series") ||
		{ echo "unknown kernel series $series (5.10, 6.1, 6.12, 6.12-bpo)" >&2; return 1; }
	apt_update || { echo "apt update of $MIRROR failed" >&2; return 1; }
	# the metapackage of that release names the current image package
	pkg=$(/usr/lib/apt/apt-helper cat-file "$APT_DIR"/lists/*_dists_"${suite}"_main_binary-"${arch}"_Packages* |
		awk -v RS= -v p="linux-image-$arch" '$0 ~ "(^|\n)Package: " p "\n"' |
		sed -n 's/^Depends: \(linux-image-[^ ,]*\).*/\1/p' | head -1)
	[ -n "$pkg" ] || { echo "no linux-image-$arch in $suite" >&2; return 1; }
	mkdir -p "$dir"
	apt_download "$debs" "$pkg"
	deb=$(ls "$debs"/"${pkg}"_*.deb 2>/dev/null | head -1)
	[ -n "$deb" ] || { echo "download of $pkg failed" >&2; return 1; }
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir" --wildcards './boot/vmlinuz-*' './boot/config-*' &&
		rm -f "$deb"	# 60-110 MB each; the image is all we keep
	ls "$dir"/boot/vmlinuz-* | head -1
}
