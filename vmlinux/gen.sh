#!/usr/bin/env bash
# gen.sh -- vmlinux/<arch>/vmlinux.h from a kernel's BTF: the running one's on a host of that
# architecture, else Debian 12's kernel of it (linux-image-<arch>, fetched once into the vmtest cache)
# Usage: gen.sh ARCH OUT (ARCH as the Makefile names it: x86, arm64). BPFTOOL: bpftool to use.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
arch=$1 out=$2
host=$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
bpftool=${BPFTOOL:-bpftool}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$arch" = "$host" ] && [ -r /sys/kernel/btf/vmlinux ]; then
	btf=/sys/kernel/btf/vmlinux
else
	case $arch in
	x86) KERNEL_ARCH=amd64 ;;
	arm64) KERNEL_ARCH=arm64 ;;
	*) echo "gen.sh: no Debian kernel for architecture $arch" >&2; exit 1 ;;
	esac
	CACHE=${VMTEST_CACHE:-/var/cache/ebpfprof/vm}
	APT_DIR=$CACHE/apt-$KERNEL_ARCH APT_ARCH=$KERNEL_ARCH
	[ "$KERNEL_ARCH" = amd64 ] && APT_DIR=$CACHE/apt	# vmtest.sh's own
	. "$ROOT/tests/lib/debian_apt.sh"
	. "$ROOT/tests/lib/debian_kernel.sh"
	kdir=$CACHE/kernels-$KERNEL_ARCH/6.1
	[ "$KERNEL_ARCH" = amd64 ] && kdir=$CACHE/kernels/6.1
	image=$(debian_kernel_image 6.1 "$kdir" "$CACHE/debs")
	btf=$tmp/vmlinux.btf
	python3 "$ROOT/vmlinux/btf_of_image.py" "$image" "$btf"
fi
mkdir -p "$(dirname "$out")"
"$bpftool" btf dump file "$btf" format c >"$tmp/vmlinux.h"
mv "$tmp/vmlinux.h" "$out"
