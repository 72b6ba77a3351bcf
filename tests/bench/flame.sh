#!/usr/bin/env bash
# flame.sh -- the HTML flame graph: size, write time and render time in headless Chromium, by profile size
set -u
cd "$(dirname "$0")/../.."
EBPFPROF=${EBPFPROF:-build/ebpfprof}
RUNS=${BENCH_FLAME_RUNS:-5}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
. tests/bench/lib.sh
command -v chromium >/dev/null || { echo "flame bench: chromium not installed (make deps-bench)"; exit 0; }

echo "flame graph bench: $RUNS renders each, Chromium $(chromium --version 2>/dev/null | awk '{ print $2 }'), $(nproc) CPUs, load $(loadavg)"
printf '%-26s %9s %8s %8s %11s %14s %14s\n' profile pprof_KB html_KB nodes convert_ms page_ms_med script_ms_med
for shape in "10000 2000" "100000 20000" "300000 60000"; do
	set -- $shape
	python3 tests/integration/flame_check.py synth "$out/p.pb.gz" "$1" "$2"
	t0=$(now)
	"$EBPFPROF" convert "$out/p.pb.gz" --output "$out/p.html" || exit 1
	conv=$(calc "($(now) - $t0) * 1000")
	for _ in $(seq "$RUNS"); do
		dir=$(mktemp -d "$out/chrome.XXXXXX")
		timeout 60 chromium --headless --no-sandbox --disable-gpu --window-size=1200,800 \
			--user-data-dir="$dir" --dump-dom "file://$out/p.html" 2>/dev/null >"$out/p.dom"
		sed -n 's/.*data-render-ms="\([0-9]*\)".*/\1/p' "$out/p.dom" >>"$out/ms"
		sed -n 's/.*data-script-ms="\([0-9]*\)".*/\1/p' "$out/p.dom" >>"$out/script"
	done
	nodes=$(grep -o '[0-9]* nodes' "$out/p.dom" | head -1 | cut -d' ' -f1)
	printf '%-26s %9d %8d %8s %11.0f %14s %14s\n' "$1 samples/$2 stacks" $(($(stat -c %s "$out/p.pb.gz") / 1024)) \
		$(($(stat -c %s "$out/p.html") / 1024)) "$nodes" "$conv" "$(median <"$out/ms")" "$(median <"$out/script")"
	rm -f "$out/ms" "$out/script"
done
