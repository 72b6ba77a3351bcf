#!/usr/bin/env bash
# vmtest.sh -- boots Debian's kernels under qemu (software emulation) and runs tests/vm/suite.sh in each
#
# KERNELS="5.10 6.1 6.12 6.12-bpo host" picks the kernels (default: 5.10 6.1 6.12 host). ARCH=arm64 (make vmtest
# ARCH=arm64) boots Debian's arm64 kernels under qemu-system-aarch64 instead, the cross build's
# binaries and the :arm64 libraries in the initramfs (default: 6.1 6.12; there is no 5.10 arm64 run). Kernel packages come from
# Debian's archive once and stay in $VMTEST_CACHE (default /var/cache/ebpfprof/vm), outside the
# tree; the initramfs (busybox-static, ebpfprof with its libraries, fixtures) is built for each
# run in a directory of its own there, removed at the end (VMTEST_KEEP=1 keeps it with the consoles). The guest prints its results and its output files (base64) on the serial console;
# profiles are read here with go tool pprof (tests/vm/check.sh). One line per kernel, then the
# summary line; exit 1 on any failure. A kernel that does not boot fails with its console tail.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
CACHE=${VMTEST_CACHE:-/var/cache/ebpfprof/vm}
VM_ARCH=${ARCH:-$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')}
VM_TIMEOUT=${VM_TIMEOUT:-900}	# seconds per kernel, boot to power-off
VM_JOBS=${VMTEST_JOBS:-$(nproc)}	# guests at once: a host core each
MIRROR=${VMTEST_MIRROR:-http://deb.debian.org/debian}
case $VM_ARCH in
x86)
	KERNELS=${KERNELS:-5.10 6.1 6.12 host}
	KERNEL_ARCH=amd64 APT_DIR=$CACHE/apt KERNEL_DIR=$CACHE/kernels LIB_DIR=/usr/lib/x86_64-linux-gnu
	QEMU=qemu-system-x86_64 CONSOLE=ttyS0 BUSYBOX=/bin/busybox
	;;
arm64)
	KERNELS=${KERNELS:-6.1 6.12}
	KERNEL_ARCH=arm64 APT_DIR=$CACHE/apt-arm64 KERNEL_DIR=$CACHE/kernels-arm64
	LIB_DIR=/usr/lib/aarch64-linux-gnu
	QEMU=qemu-system-aarch64 CONSOLE=ttyAMA0 BUSYBOX=$CACHE/arm64-root/bin/busybox
	;;
*) echo "vmtest: no VM for architecture $VM_ARCH (x86, arm64)" >&2; exit 1 ;;
esac
APT_ARCH=$KERNEL_ARCH
. "$ROOT/tests/lib/debian_apt.sh"
. "$ROOT/tests/lib/debian_kernel.sh"
# on an x86-64 host the arm64 binaries' libraries are the :arm64 packages' (make deps-arm64), found
# by their ELF dependencies: ldd cannot run them
CROSS=
[ "$VM_ARCH" != "$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')" ] && CROSS=1
[ -z "$CROSS" ] && BUSYBOX=/bin/busybox

say() { echo "vmtest: $*" >&2; }

# Prints the path of the series' vmlinuz, fetching and unpacking its package once.
kernel_image() {	# series
	debian_kernel_image "$1" "$KERNEL_DIR/$1" "$CACHE/debs"
}

# A foreign binary's libraries, as "source path-in-root" lines: its interpreter at its path, and
# its NEEDED entries, recursively, from the :arm64 packages' directory or the unpacked arm64 debs
# (arm64_root), at that directory's path in the guest.
elf_libs() {	# file
	local todo=("$1") seen=" " f n lib dir
	readelf -lW "$1" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1 \1/p'
	while [ ${#todo[@]} -gt 0 ]; do
		f=${todo[0]} todo=("${todo[@]:1}")
		for n in $(readelf -dW "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			[[ $seen == *" $n "* ]] && continue
			seen+="$n "
			for dir in "$LIB_DIR" "$CACHE/arm64-root$LIB_DIR" "$CACHE/arm64-root/lib/${LIB_DIR##*/}"; do
				lib=$dir/$n
				[ -e "$lib" ] && { echo "$lib $LIB_DIR/$n"; todo+=("$lib"); break; }
			done
		done
	done
}

copy_with_libs() {	# file dest-dir-in-root root: the file and every library it loads, at their paths
	mkdir -p "$3/$2"
	cp -L "$1" "$3/$2/"
	copy_libs "$1" "$3"
}

copy_libs() {	# file root [own-dir]: every library the file loads at its path, but those in own-dir
	local f=$1 root=$2 own=${3:-} src to
	if [ -n "$CROSS" ]; then
		elf_libs "$f"
	else
		ldd "$f" 2>/dev/null | awk '/=> \// { print $3, $3 } /^\t\/[^ ]+ \(/ { print $1, $1 }'
	fi | while read -r src to; do
		[ -n "$own" ] && [[ $src == "$own"/* ]] && continue
		[ -e "$root$to" ] || { mkdir -p "$root$(dirname "$to")" && cp -L "$src" "$root$to"; }
	done
}

# The arm64 guest's own busybox, setpriv, capsh, python3.11, perl, php8.2 and ruby3.1: Debian 12's arm64 packages
# (PHP's with the libraries it loads), unpacked once into the cache (their amd64 builds are what the
# host has installed; they cannot both be)
arm64_root() {
	local r=$CACHE/arm64-root deb
	[ -x "$r/bin/busybox" ] && [ -x "$r/usr/bin/setpriv" ] && [ -x "$r/sbin/capsh" ] &&
		[ -x "$r/usr/bin/python3.11" ] && [ -e "$r/lib/aarch64-linux-gnu/libcap-ng.so.0" ] &&
		[ -x "$r/usr/bin/perl" ] && [ -x "$r/usr/bin/php8.2" ] && [ -x "$r/usr/bin/ruby3.1" ] && return 0
	apt_update || { say "apt update of $MIRROR failed"; return 1; }
	apt_download "$CACHE/debs-arm64" busybox-static/bookworm util-linux/bookworm libcap2-bin/bookworm \
		python3.11-minimal/bookworm libpython3.11-minimal/bookworm libcap-ng0/bookworm libcap2/bookworm \
		libexpat1/bookworm zlib1g/bookworm perl-base/bookworm libcrypt1/bookworm php8.2-cli/bookworm \
		libargon2-1/bookworm libicu72/bookworm libpcre2-8-0/bookworm libsodium23/bookworm \
		libssl3/bookworm libstdc++6/bookworm libgcc-s1/bookworm libxml2/bookworm liblzma5/bookworm \
		ruby3.1/bookworm libruby3.1/bookworm libgmp10/bookworm
	mkdir -p "$r"
	for deb in "$CACHE"/debs-arm64/*.deb; do
		dpkg-deb -x "$deb" "$r" && rm -f "$deb"
	done
	[ -x "$r/bin/busybox" ] || { say "no arm64 busybox in busybox-static"; return 1; }
}

# CPython 3.11 (its shared libpython) at its own path, with the one package its start needs
# (encodings; the rest of its start is frozen in), and the Python fixture: ~6 MB compressed
copy_python() {	# root
	local r=$1 py lib
	if [ "$VM_ARCH" = arm64 ] && [ -n "$CROSS" ]; then
		copy_arm64_python "$r"
		return
	fi
	py=$(ls -d /root/.pyenv/versions/3.11*/bin/python3.11 2>/dev/null | tail -1)
	[ -x "$py" ] || { say "no CPython 3.11 in /root/.pyenv: the guest's Python check skips"; return 0; }
	lib=$(dirname "$(dirname "$py")")/lib/python3.11
	copy_with_libs "$py" "$(dirname "${py#/}")" "$r"
	mkdir -p "$r$lib"
	cp -r "$lib/encodings" "$r$lib/" && rm -rf "$r$lib/encodings/__pycache__"
	cp "$ROOT/tests/fixtures/python/chain.py" "$r/opt/ebpfprof/fix/"
}

# Debian 12's arm64 python3.11 (libpython linked into the executable) at /usr/bin, with encodings
copy_arm64_python() {	# root
	local r=$1 a=$CACHE/arm64-root lib=/usr/lib/python3.11
	[ -x "$a/usr/bin/python3.11" ] || { say "no arm64 python3.11: the guest's Python check skips"; return 0; }
	copy_with_libs "$a/usr/bin/python3.11" usr/bin "$r"
	mkdir -p "$r$lib"
	cp -r "$a$lib/encodings" "$r$lib/" && rm -rf "$r$lib/encodings/__pycache__"
	cp "$ROOT/tests/fixtures/python/chain.py" "$r/opt/ebpfprof/fix/"
}

# Perl and PHP 8.2 (Debian's: the host's, or the arm64 packages'), for the guest's checks that name
# their frames: each with the libraries it loads (PHP's ICU makes it ~12 MB compressed); a CRuby: on
# x86-64, 3.3 built static with YJIT (tests/lib/ruby_static.sh, built once), on arm64 Debian's 3.1
# with libruby and the two encoding tables its start loads
copy_scripting() {	# root
	local r=$1 bin f enc=/usr/lib/aarch64-linux-gnu/ruby/3.1.0/enc
	for bin in perl php8.2; do
		f=/usr/bin/$bin
		[ "$VM_ARCH" = arm64 ] && [ -n "$CROSS" ] && f=$CACHE/arm64-root/usr/bin/$bin
		[ -x "$f" ] || { say "no $bin here: the guest's $bin check skips"; continue; }
		copy_with_libs "$f" usr/bin "$r"
	done
	if [ "$VM_ARCH" = arm64 ] && [ -n "$CROSS" ]; then
		f=$CACHE/arm64-root
		[ -x "$f/usr/bin/ruby3.1" ] || { say "no arm64 ruby3.1: the guest's ruby check skips"; return 0; }
		copy_with_libs "$f/usr/bin/ruby3.1" usr/bin "$r"
		mkdir -p "$r$enc/trans" && cp "$f$enc/encdb.so" "$r$enc/" && cp "$f$enc/trans/transdb.so" "$r$enc/trans/"
		return 0
	fi
	f=$(bash "$ROOT/tests/lib/ruby_static.sh") && copy_with_libs "$f/ruby" usr/bin "$r" ||
		say "the static CRuby did not build: the guest's ruby check skips"
}

# libc's symbols (libc6-dbg) at their build-id path: the thread entries a stack starts in (start_thread,
# clone3) named, so a thread's stack reads whole rather than marked as cut short
copy_libc_symbols() {	# root
	local r=$1 id dbg
	id=$(readelf -n "$LIB_DIR/libc.so.6" 2>/dev/null | awk '/Build ID/ { print $3; exit }')
	dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	[ -n "$id" ] && [ -e "$dbg" ] || { say "no libc6-dbg: libc's frames stay unnamed in the guests"; return 0; }
	mkdir -p "$r$(dirname "$dbg")" && cp "$dbg" "$r$dbg"
}

# Debian 12's arm64 OpenJDK 17 modules (its jmods), unpacked once: the host's jlink links an arm64
# JRE from them (jlink makes an image for the platform of the java.base it is given, of its own
# feature release). Prints the jmods directory.
arm64_jmods() {
	local d=$CACHE/jdk17-arm64 deb
	if [ ! -e "$d/.done" ]; then
		apt_update && apt_download "$CACHE/debs-jdk" openjdk-17-jdk-headless/bookworm || return 1
		rm -rf "$d" && mkdir -p "$d"
		for deb in "$CACHE"/debs-jdk/openjdk-17-jdk-headless_*.deb; do
			dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$d" --wildcards '*/jmods/*' && rm -f "$deb"
		done
		touch "$d/.done"
	fi
	ls -d "$d"/usr/lib/jvm/*/jmods 2>/dev/null | head -1 | grep .
}

# A JRE of the two modules the Java fixture needs, made by the host's OpenJDK 17 jlink once per JDK
# build (~19 MB compressed: an installed JDK does not fit the initramfs), from the host's modules or,
# for an arm64 guest, Debian's arm64 ones; its libraries, and the fixture's classes
copy_java() {	# root
	local r=$1 jdk jre f jmods strip=--strip-debug
	jdk=$(ls -d /usr/lib/jvm/java-17-openjdk-* 2>/dev/null | head -1)
	[ -x "$jdk/bin/jlink" ] && [ -x "$jdk/bin/javac" ] || { say "no OpenJDK 17: the guest's Java check skips"; return 0; }
	jmods=$jdk/jmods
	if [ -n "$CROSS" ]; then
		jmods=$(arm64_jmods) || { say "no arm64 OpenJDK 17 modules: the guest's Java check skips"; return 0; }
		strip=--strip-java-debug-attributes	# the native libraries: the host's objcopy cannot
	fi
	jre=$CACHE/jre17-$VM_ARCH-$(stat -c %Y "$jmods/java.base.jmod")
	if [ ! -x "$jre/bin/java" ]; then
		rm -rf "$jre.tmp"
		"$jdk/bin/jlink" --module-path "$jmods" --add-modules java.base,java.management $strip \
			--no-man-pages --no-header-files --compress=2 --output "$jre.tmp" && mv "$jre.tmp" "$jre" ||
			{ say "jlink failed: the guest's Java check skips"; return 0; }
	fi
	mkdir -p "$r/opt"
	cp -a "$jre" "$r/opt/jre"
	for f in "$jre/bin/java" $(find "$jre/lib" -name '*.so'); do
		copy_libs "$f" "$r" "$jre"
	done
	"$jdk/bin/javac" -d "$r/opt/ebpfprof/fix/java" "$ROOT/tests/fixtures/java/Split.java"
}

build_initramfs() {	# out
	local out=$1 r=$WORK/initramfs.d f bin
	rm -rf "$r"
	mkdir -p "$r"/{bin,sbin,etc,proc,sys,dev,tmp,run,opt/ebpfprof/fix,usr/bin,usr/sbin}
	cp "$BUSYBOX" "$r/bin/busybox"
	cp "$ROOT/tests/vm/init" "$r/init"
	cp "${VMTEST_SUITE:-$ROOT/tests/vm/suite.sh}" "$r/suite.sh"	# another script: to look around in a kernel
	chmod 0755 "$r/init"
	printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$r/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
	copy_with_libs "$BUILD/ebpfprof" opt/ebpfprof "$r"
	for so in libcurl.so.4 libdebuginfod.so.1; do	# opened on first use, so ldd does not list them
		f=$LIB_DIR/$so
		[ -e "$f" ] || f=
		[ -n "$f" ] && copy_with_libs "$f" "$(dirname "${f#/}")" "$r"
	done
	for f in cpu_split syscall_heavy fgprof collector short_lived unwind/unwind_deep unwind/unwind_cxx \
		unwind/unwind_gosha unwind/unwind_signal labels/golabels-1.19 labels/tctx; do
		copy_with_libs "$BUILD/fixtures/$f" opt/ebpfprof/fix "$r"
	done
	# unit tests that load BPF: user registers from the kernel stack (bpf/regs.bpf.h), off-CPU windows
	for f in unwind/test_user_regs collect/test_offcpu; do
		copy_with_libs "$BUILD/tests/unit/$f" opt/ebpfprof/fix "$r"
	done
	copy_python "$r"
	copy_scripting "$r"
	copy_java "$r"
	copy_libc_symbols "$r"
	for bin in setpriv capsh; do
		if [ "$VM_ARCH" = arm64 ] && [ -n "$CROSS" ]; then
			for f in "$CACHE"/arm64-root/{usr/bin,usr/sbin,bin,sbin}/"$bin"; do
				[ -x "$f" ] && { copy_with_libs "$f" usr/bin "$r"; break; }
			done
		else
			f=$(command -v "$bin") && copy_with_libs "$f" usr/bin "$r"
		fi
	done
	(cd "$r" && find . | cpio -o -H newc --quiet | gzip -1) >"$out" && rm -rf "$r"
}

# The console between two markers, by name: the guest's files (base64), the suite's lines.
extract_files() {	# console dir
	local f
	awk -v dir="$2" '
		/^vmtest-file / { name = $2; sub(/\r$/, "", name); f = dir "/" name ".b64"; next }
		/^vmtest-end/ { if (f) close(f); f = ""; next }
		f { sub(/\r$/, ""); print > f }' "$1"
	for f in "$2"/*.b64; do
		[ -e "$f" ] || continue
		base64 -d "$f" >"${f%.b64}" 2>/dev/null || rm -f "${f%.b64}"
		rm -f "$f"
	done
}

run_kernel() {	# series: boots it, prints the results; sets P F S
	local series=$1 image dir con start end rel
	P=0 F=0 S=0
	if [ "$series" = host ]; then
		image=/boot/vmlinuz-$(uname -r)
	else
		image=$(kernel_image "$series") || { echo "FAIL: vm/$series/fetch: no kernel image"; F=1; return; }
	fi
	dir=$WORK/$series
	mkdir -p "$dir"
	con=$dir/console.log
	start=$(date +%s.%N)
	# -accel tcg: /dev/kvm may exist without VMX and hang a guest; niced.
	# thread=single: two vCPUs on one host thread. With a thread each, a guest
	# kernel patching its own code on one vCPU (a tracepoint's static key
	# turned on in __schedule when off-CPU tracing attaches) while the other
	# runs it panicked 6.12 at an int3 in __schedule (CI, once in three runs).
	# arm64: the virt board, -cpu max (pointer authentication, as recent cores have it; its
	# implementation-defined algorithm, the architected one being slow to emulate)
	local machine=()
	[ "$VM_ARCH" = arm64 ] && machine=(-M virt -cpu max,pauth-impdef=on)
	[ "$VM_ARCH" = x86 ] && machine=(-cpu max)
	timeout "$VM_TIMEOUT" nice -n 10 $QEMU -accel tcg,thread=single "${machine[@]}" -smp 2 -m 1536 \
		-nographic -no-reboot -kernel "$image" -initrd "$INITRAMFS" \
		-append "console=$CONSOLE quiet loglevel=3 panic=-1 mitigations=off rdinit=/init" </dev/null >"$con" 2>&1
	end=$(date +%s.%N)
	tr -d '\r' <"$con" >"$con.txt"
	rel=$(sed -n 's/^vmtest-kernel //p' "$con.txt" | head -1)
	extract_files "$con.txt" "$dir"
	if ! grep -q '^vmtest-done' "$con.txt"; then
		echo "FAIL: vm/$series/boot: no result within ${VM_TIMEOUT}s; console tail:"
		tail -25 "$con.txt" | sed 's/^/  | /'
		F=1
		rel=${rel:-$series (did not finish)}
	else
		# the guest's own lines, then the checks of its files here
		grep -E '^(PASS|FAIL|SKIP): |^  ' "$con.txt" | grep -v '^  |' || true
		KREL=$rel bash "$ROOT/tests/vm/check.sh" "$dir"
	fi | tee "$dir/results"
	P=$(grep -c '^PASS: ' "$dir/results") F=$((F + $(grep -c '^FAIL: ' "$dir/results"))) S=$(grep -c '^SKIP: ' "$dir/results")
	grep -q '^FAIL: vm/[^:]*/boot' "$dir/results" && F=$(grep -c '^FAIL: ' "$dir/results")
	printf 'vmtest %s: boot to result %.0f s (qemu tcg)\n' "${rel:-$series}" "$(echo "$end - $start" | bc)"
	echo "vmtest ${rel:-$series}: $P passed, $F failed, $S skipped"
}

main() {
	local k p=0 f=0 s=0 list=()
	for k in $KERNELS; do
		if [ "$k" = host ]; then
			if [ -r "/boot/vmlinuz-$(uname -r)" ]; then
				list+=("host")
			else
				say "no bootable image of the host kernel $(uname -r) in /boot: the newest Debian kernel (6.12) stands in"
				[[ " $KERNELS " == *" 6.12 "* ]] || list+=(6.12)
			fi
		else
			list+=("$k")
		fi
	done
	for t in $QEMU cpio gzip base64 bc readelf; do
		command -v "$t" >/dev/null || { say "$t is missing (make deps-vmtest)"; echo "0 passed, 1 failed, 0 skipped"; return 1; }
	done
	mkdir -p "$CACHE"
	[ "$VM_ARCH" = arm64 ] && [ -n "$CROSS" ] && { arm64_root || { echo "0 passed, 1 failed, 0 skipped"; return 1; }; }
	[ -x "$BUSYBOX" ] || { say "$BUSYBOX is missing (busybox-static; make deps-vmtest)"; echo "0 passed, 1 failed, 0 skipped"; return 1; }
	WORK=$(mktemp -d "$CACHE/run.XXXXXX")
	[ -n "${VMTEST_KEEP:-}" ] && say "consoles and files kept in $WORK" || trap 'rm -rf "$WORK"' EXIT
	INITRAMFS=$WORK/initramfs.cpio.gz	# per run: two runs at once do not share one
	build_initramfs "$INITRAMFS" || { say "initramfs build failed"; echo "0 passed, 1 failed, 0 skipped"; return 1; }
	# each kernel fetched first, one after the other (one apt cache); then a guest per host core at
	# once (thread=single: a guest takes one), each kernel's lines in order after
	for k in "${list[@]}"; do
		[ "$k" = host ] || kernel_image "$k" >/dev/null || true	# a miss is said by run_kernel
	done
	for k in "${list[@]}"; do
		while [ "$(jobs -rp | wc -l)" -ge "$VM_JOBS" ]; do wait -n; done
		run_kernel "$k" >"$WORK/$k.out" 2>&1 &
	done
	wait
	for k in "${list[@]}"; do
		cat "$WORK/$k.out"
		read -r P F S < <(sed -n 's/^vmtest .*: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' \
			"$WORK/$k.out" | tail -1)
		[ -n "${P:-}" ] || { echo "FAIL: vm/$k: no result"; P=0 F=1 S=0; }
		p=$((p + P)) f=$((f + F)) s=$((s + S))
	done
	echo "$p passed, $f failed, $s skipped"
	[ "$f" = 0 ]
}

main "$@"
