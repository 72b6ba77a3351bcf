#!/usr/bin/env bash
# vmtest.sh -- boots Debian's kernels under qemu (software emulation) and runs tests/vm/suite.sh in each
#
# KERNELS="5.10 6.1 6.12 host" picks the kernels (default: all four). Kernel packages come from
# Debian's archive once and stay in $VMTEST_CACHE (default /var/cache/ebpfprof/vm), outside the
# tree; the initramfs (busybox-static, ebpfprof with its libraries, fixtures) is built for each
# run in a directory of its own there, removed at the end (VMTEST_KEEP=1 keeps it with the consoles). The guest prints its results and its output files (base64) on the serial console;
# profiles are read here with go tool pprof (tests/vm/check.sh). One line per kernel, then the
# summary line; exit 1 on any failure. A kernel that does not boot fails with its console tail.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
CACHE=${VMTEST_CACHE:-/var/cache/ebpfprof/vm}
KERNELS=${KERNELS:-5.10 6.1 6.12 host}
VM_TIMEOUT=${VM_TIMEOUT:-900}	# seconds per kernel, boot to power-off
MIRROR=${VMTEST_MIRROR:-http://deb.debian.org/debian}
APT_DIR=$CACHE/apt
. "$ROOT/tests/lib/debian_apt.sh"

say() { echo "vmtest: $*" >&2; }

# the Debian release whose linux-image-amd64 is that kernel series
suite_of() {
	case $1 in
	5.10) echo bullseye ;;
	6.1) echo bookworm ;;
	6.12) echo trixie ;;
	*) return 1 ;;
	esac
}

# Prints the path of the series' vmlinuz, fetching and unpacking its package once.
kernel_image() {	# series
	local series=$1 dir=$CACHE/kernels/$1 suite pkg deb
	ls "$dir"/boot/vmlinuz-* 2>/dev/null | head -1 | grep . && return 0
	suite=$(suite_of "$series") || { say "unknown kernel series $series (5.10, 6.1, 6.12, host)"; return 1; }
	apt_update || { say "apt update of $MIRROR failed"; return 1; }
	# the metapackage of that release names the current image package
	pkg=$(/usr/lib/apt/apt-helper cat-file "$APT_DIR"/lists/*_dists_"${suite}"_main_binary-amd64_Packages* |
		awk -v RS= '/(^|\n)Package: linux-image-amd64\n/' |
		sed -n 's/^Depends: \(linux-image-[^ ,]*\).*/\1/p' | head -1)
	[ -n "$pkg" ] || { say "no linux-image-amd64 in $suite"; return 1; }
	mkdir -p "$dir"
	apt_download "$CACHE/debs" "$pkg"
	deb=$(ls "$CACHE"/debs/"${pkg}"_*.deb 2>/dev/null | head -1)
	[ -n "$deb" ] || { say "download of $pkg failed"; return 1; }
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir" --wildcards './boot/vmlinuz-*' './boot/config-*' &&
		rm -f "$deb"	# 60-110 MB each; the image is all we keep
	ls "$dir"/boot/vmlinuz-* | head -1
}

copy_with_libs() {	# file dest-dir-in-root root: the file and every library ldd lists, at their paths
	local f=$1 dest=$2 root=$3 lib
	mkdir -p "$root/$dest"
	cp -L "$f" "$root/$dest/"
	for lib in $(ldd "$f" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/[^ ]+ \(/ { print $1 }'); do
		[ -e "$root$lib" ] || { mkdir -p "$root$(dirname "$lib")" && cp -L "$lib" "$root$lib"; }
	done
}

# CPython 3.11 (its shared libpython) at its own path, with the one package its start needs
# (encodings; the rest of its start is frozen in), and the Python fixture: ~6 MB compressed
copy_python() {	# root
	local r=$1 py lib
	py=$(ls -d /root/.pyenv/versions/3.11*/bin/python3.11 2>/dev/null | tail -1)
	[ -x "$py" ] || { say "no CPython 3.11 in /root/.pyenv: the guest's Python check skips"; return 0; }
	lib=$(dirname "$(dirname "$py")")/lib/python3.11
	copy_with_libs "$py" "$(dirname "${py#/}")" "$r"
	mkdir -p "$r$lib"
	cp -r "$lib/encodings" "$r$lib/" && rm -rf "$r$lib/encodings/__pycache__"
	cp "$ROOT/tests/fixtures/python/chain.py" "$r/opt/ebpfprof/fix/"
}

# libc's symbols (libc6-dbg) at their build-id path: the thread entries a stack starts in (start_thread,
# clone3) named, so a thread's stack reads whole rather than marked as cut short
copy_libc_symbols() {	# root
	local r=$1 id dbg
	id=$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null | awk '/Build ID/ { print $3; exit }')
	dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	[ -n "$id" ] && [ -e "$dbg" ] || { say "no libc6-dbg: libc's frames stay unnamed in the guests"; return 0; }
	mkdir -p "$r$(dirname "$dbg")" && cp "$dbg" "$r$dbg"
}

# A JRE of the two modules the Java fixture needs, made by OpenJDK 17's jlink once per JDK build
# (~19 MB compressed: an installed JDK does not fit the initramfs), its libraries, and the fixture's
# classes compiled by the same JDK
copy_java() {	# root
	local r=$1 jdk jre f lib
	jdk=$(ls -d /usr/lib/jvm/java-17-openjdk-* 2>/dev/null | head -1)
	[ -x "$jdk/bin/jlink" ] && [ -x "$jdk/bin/javac" ] || { say "no OpenJDK 17: the guest's Java check skips"; return 0; }
	jre=$CACHE/jre17-$(stat -c %Y "$jdk/lib/server/libjvm.so")
	if [ ! -x "$jre/bin/java" ]; then
		rm -rf "$jre.tmp"
		"$jdk/bin/jlink" --add-modules java.base,java.management --strip-debug --no-man-pages \
			--no-header-files --compress=2 --output "$jre.tmp" && mv "$jre.tmp" "$jre" ||
			{ say "jlink failed: the guest's Java check skips"; return 0; }
	fi
	mkdir -p "$r/opt"
	cp -a "$jre" "$r/opt/jre"
	for f in "$jre/bin/java" $(find "$jre/lib" -name '*.so'); do
		for lib in $(ldd "$f" 2>/dev/null | awk '/=> \/(usr\/)?lib/ { print $3 }'); do
			[ -e "$r$lib" ] || { mkdir -p "$r$(dirname "$lib")" && cp -L "$lib" "$r$lib"; }
		done
	done
	"$jdk/bin/javac" -d "$r/opt/ebpfprof/fix/java" "$ROOT/tests/fixtures/java/Split.java"
}

build_initramfs() {	# out
	local out=$1 r=$WORK/initramfs.d f bin
	rm -rf "$r"
	mkdir -p "$r"/{bin,sbin,etc,proc,sys,dev,tmp,run,opt/ebpfprof/fix,usr/bin,usr/sbin}
	cp /bin/busybox "$r/bin/busybox"
	cp "$ROOT/tests/vm/init" "$r/init"
	cp "${VMTEST_SUITE:-$ROOT/tests/vm/suite.sh}" "$r/suite.sh"	# another script: to look around in a kernel
	chmod 0755 "$r/init"
	printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$r/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
	copy_with_libs "$BUILD/ebpfprof" opt/ebpfprof "$r"
	for so in libcurl.so.4 libdebuginfod.so.1; do	# opened on first use, so ldd does not list them
		f=$(ldconfig -p | awk -v s="$so" '$1 == s && /x86-64/ { print $NF; exit }')
		[ -n "$f" ] && copy_with_libs "$f" "$(dirname "${f#/}")" "$r"
	done
	for f in cpu_split syscall_heavy fgprof collector short_lived unwind/unwind_deep unwind/unwind_cxx \
		unwind/unwind_gosha labels/golabels-1.19 labels/tctx; do
		copy_with_libs "$BUILD/fixtures/$f" opt/ebpfprof/fix "$r"
	done
	# unit tests that load BPF: user registers from the kernel stack (bpf/regs.bpf.h), off-CPU windows
	for f in unwind/test_user_regs collect/test_offcpu; do
		copy_with_libs "$BUILD/tests/unit/$f" opt/ebpfprof/fix "$r"
	done
	copy_python "$r"
	copy_java "$r"
	copy_libc_symbols "$r"
	for bin in setpriv capsh; do
		f=$(command -v "$bin") && copy_with_libs "$f" usr/bin "$r"
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
	# -accel tcg: /dev/kvm may exist without VMX and hang a guest; one VM at a time, niced.
	# thread=single: two vCPUs on one host thread. With a thread each, a guest
	# kernel patching its own code on one vCPU (a tracepoint's static key
	# turned on in __schedule when off-CPU tracing attaches) while the other
	# runs it panicked 6.12 at an int3 in __schedule (CI, once in three runs).
	timeout "$VM_TIMEOUT" nice -n 10 qemu-system-x86_64 -accel tcg,thread=single -cpu max -smp 2 -m 1536 \
		-nographic -no-reboot -kernel "$image" -initrd "$INITRAMFS" \
		-append "console=ttyS0 quiet loglevel=3 panic=-1 mitigations=off rdinit=/init" </dev/null >"$con" 2>&1
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
	for t in qemu-system-x86_64 cpio gzip base64 bc; do
		command -v "$t" >/dev/null || { say "$t is missing (make deps-vmtest)"; echo "0 passed, 1 failed, 0 skipped"; return 1; }
	done
	[ -x /bin/busybox ] || { say "/bin/busybox is missing (busybox-static; make deps-vmtest)"; echo "0 passed, 1 failed, 0 skipped"; return 1; }
	mkdir -p "$CACHE"
	WORK=$(mktemp -d "$CACHE/run.XXXXXX")
	[ -n "${VMTEST_KEEP:-}" ] && say "consoles and files kept in $WORK" || trap 'rm -rf "$WORK"' EXIT
	INITRAMFS=$WORK/initramfs.cpio.gz	# per run: two runs at once do not share one
	build_initramfs "$INITRAMFS" || { say "initramfs build failed"; echo "0 passed, 1 failed, 0 skipped"; return 1; }
	for k in "${list[@]}"; do
		run_kernel "$k"
		p=$((p + P)) f=$((f + F)) s=$((s + S))
	done
	echo "$p passed, $f failed, $s skipped"
	[ "$f" = 0 ]
}

main "$@"
