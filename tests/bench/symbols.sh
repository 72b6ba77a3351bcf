#!/usr/bin/env bash
# symbols.sh -- symbolization throughput of ebpfprof (cold and warm) against addr2line and eu-addr2line
set -u
cd "$(dirname "$0")/../.."
N=${BENCH_SYM_ADDRS:-20000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# N addresses inside functions of FILE: virtual addresses for addr2line, file offsets for us
make_addrs() {
	nm --defined-only -D "$1" 2>/dev/null | awk '$2 ~ /[Tt]/ { print $1 }' >"$out/syms"
	readelf -lW "$1" | awk '$1 == "LOAD" { print $2, $3 }' >"$out/loads"
	python3 - "$out" "$N" <<'PY'
import random, sys
out, n = sys.argv[1], int(sys.argv[2])
syms = [int(l, 16) + 1 for l in open(out + "/syms") if l.strip()]
random.seed(1)
addrs = random.sample(syms, min(n, len(syms)))
loads = [tuple(int(x, 16) for x in l.split()) for l in open(out + "/loads")]
with open(out + "/vaddrs", "w") as v, open(out + "/offsets", "w") as o:
    for a in addrs:
        seg = [(off, va) for off, va in loads if va <= a]
        if not seg:
            continue
        off, va = max(seg, key=lambda s: s[1])
        v.write("0x%x\n" % a)
        o.write("%x\n" % (a - va + off))
PY
}

bench() {	# file, label
	[ -f "$1" ] || return
	make_addrs "$1"
	[ -s "$out/vaddrs" ] || return
	echo "$2: $(basename "$1") ($(($(stat -c %s "$1") / 1048576)) MB), $(wc -l <"$out/vaddrs") addresses"
	printf '  %-14s ' ebpfprof; build/fixtures/symbench "$1" "$out/offsets"
	for tool in addr2line eu-addr2line; do
		command -v $tool >/dev/null || continue
		local t0 t1
		t0=$(date +%s.%N)
		$tool -f -e "$1" <"$out/vaddrs" >/dev/null 2>&1
		t1=$(date +%s.%N)
		printf '  %-14s %.0f/s (%.3f s, one process, cold)\n' $tool \
			"$(awk -v n="$(wc -l <"$out/vaddrs")" -v a="$t0" -v b="$t1" 'BEGIN { print n / (b - a) }')" \
			"$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
	done
}

echo "symbolization throughput (random function addresses)"
bench "$(ls -S /usr/lib/x86_64-linux-gnu/libLLVM*.so* 2>/dev/null | head -1)" "large library, symbols only"
bench /usr/lib/x86_64-linux-gnu/libc.so.6 "libc (DWARF when libc6-dbg is installed)"
