#!/usr/bin/env bash
# labels.sh -- what reading a process's own labels costs: BPF ns per sample with labels and without (Go, custom labels v0 and v1, OpenTelemetry thread context), kernel memory per distinct label set
# usage: labels.sh [SECONDS (6)] [ROUNDS (3)]; needs kernel.bpf_stats_enabled (set here, restored after)
set -u
cd "$(dirname "$0")/../.."
EBPFPROF=${EBPFPROF:-build/ebpfprof}
F=build/fixtures/labels
secs=${1:-6}
rounds=${2:-3}
out=$(mktemp -d)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled=$old_stats; kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$out"' EXIT
sysctl -qw kernel.bpf_stats_enabled=1

# The same programs with their labels unreadable to us, so only the reading differs: a Go
# version we have no layout for (go1.19 -> go1.09 in .go.buildinfo), custom-labels
# executables (v0, v1) whose version symbol is misspelt (custom_labels_abi_version -> ..._versioX), the
# OpenTelemetry program with a library whose process context is named and signed OTEL_CTY (not
# found: nothing of it is read).
mkdir -p "$out/otel-unread"
cp "$F/otelctx" "$out/otel-unread/"
python3 - "$F/golabels-1.19" "$out/go-unlabelled" "$F/tctx" "$out/c-unlabelled" \
	"$F/libotelctx.so" "$out/otel-unread/libotelctx.so" "$F/tctx-v1" "$out/v1-unlabelled" <<'PY'
import sys
b = open(sys.argv[1], 'rb').read()
j = b.index(b'go1.19', b.index(b'\xff Go buildinf:'))
open(sys.argv[2], 'wb').write(b[:j] + b'go1.09' + b[j + 6:])
for src, dst in ((3, 4), (7, 8)):
    open(sys.argv[dst], 'wb').write(open(sys.argv[src], 'rb').read().replace(
        b'custom_labels_abi_version\0', b'custom_labels_abi_versioX\0'))
open(sys.argv[6], 'wb').write(open(sys.argv[5], 'rb').read().replace(b'OTEL_CTX', b'OTEL_CTY'))
PY
chmod +x "$out/go-unlabelled" "$out/c-unlabelled" "$out/v1-unlabelled"

ns() {	# name command...: BPF ns per sample of one run against the command, at 999 Hz
	local name=$1
	shift
	"$@" >/dev/null &
	local pid=$!
	sleep 0.3
	"$EBPFPROF" -v --pid "$pid" --frequency 999 --per-thread --duration "$secs" -o "$out/$name.pb.gz" \
		2>"$out/$name.err"
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	sed -n 's/.*bpf: .* \([0-9]*\) ns per sample.*/\1/p' "$out/$name.err"
}

[ "${LABELS_BENCH_MEM_ONLY:-0}" = 1 ] || {
echo "BPF ns per sample at 999 Hz, $secs s a run, $rounds rounds alternating; load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
	a=$(ns go "$F/golabels-1.19" $((secs + 2)))
	b=$(ns go-unlabelled "$out/go-unlabelled" $((secs + 2)))
	c=$(ns c "$F/tctx" 100000 2)
	d=$(ns c-unlabelled "$out/c-unlabelled" 100000 2)
	e=$(ns otel "$F/otelctx" 100000 2)
	f=$(ns otel-unread "$out/otel-unread/otelctx" 100000 2)
	g=$(ns v1 "$F/tctx-v1" 100000 2)
	h=$(ns v1-unlabelled "$out/v1-unlabelled" 100000 2)
	echo "  round $r: Go 1.19 pprof labels $a, unread $b; C custom labels $c, unread $d;" \
		"C OpenTelemetry thread context $e, unread $f; C custom labels v1 $g, unread $h"
done
}

# Kernel memory per distinct label set: the label map's memlock (the kernel's own accounting)
# at two moments of a run in which every request has ids of its own.
memlock() {	# pid of ebpfprof: its labels0 map's memlock (bytes) and entries; other profilers here have theirs
	local f id
	for f in /proc/"$1"/fdinfo/*; do
		id=$(sed -n 's/^map_id:\t*//p' "$f")
		[ -n "$id" ] && bpftool map show id "$id" 2>/dev/null | grep -q ' name labels0 ' || continue
		echo "$(sed -n 's/^memlock:\t*//p' "$f")" \
			"$(bpftool map dump id "$id" -j | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')"
		return
	done
}
"$F/tctx" 100000 2 >/dev/null & pid=$!
"$EBPFPROF" --pid $pid --frequency 999 --duration 8 -o "$out/mem.pb.gz" 2>/dev/null & prof=$!
sleep 3
read -r m1 n1 < <(memlock $prof)
sleep 3
read -r m2 n2 < <(memlock $prof)
wait $prof
kill $pid 2>/dev/null
echo "label sets in the map: $n1 then $n2; memlock $m1 then $m2 bytes:" \
	"$(( (m2 - m1) / (n2 - n1) )) bytes per set (a struct label_set is $(( 8 + 8 * 96 )) bytes)"
echo "pprof of that run: $(stat -c %s "$out/mem.pb.gz") bytes, $(go tool pprof -raw "$out/mem.pb.gz" 2>/dev/null | grep -c 'span_id:') samples with ids"
