#!/usr/bin/env bash
# completeness.sh -- whole-system CPU and wall profiles of a language mix: per process, the share of samples whose user stack reaches a thread entry point
# usage: completeness.sh [SECONDS (10)]; every stack that does not is marked [truncated user stack] by ebpfprof
set -u
cd "$(dirname "$0")/../.."
EBPFPROF=${EBPFPROF:-build/ebpfprof}
F=build/fixtures
secs=${1:-10}
out=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$out"' EXIT

run=$((2 * secs + 10))
"$F/cpu_split" "$run" >/dev/null &				# C, frame pointers
"$F/unwind/unwind_deep" "$run" >/dev/null &			# C, -fomit-frame-pointer
"$F/unwind/unwind_cxx" "$run" >/dev/null &			# C++ with exceptions
[ -x "$F/unwind/unwind_gosha" ] && "$F/unwind/unwind_gosha" "$run" >/dev/null &	# stripped Go
python3 -c "
import time
def py_spin(n):
    s = 0
    for i in range(n): s += i * i
    return s
end = time.time() + $run
while time.time() < end:
    py_spin(200000); time.sleep(0.01)" &
command -v node >/dev/null && node -e "
function jsSpin(n) { let s = 0; for (let i = 0; i < n; i++) s += i % 7; return s; }
const end = Date.now() + $run * 1000;
(function loop() { if (Date.now() < end) { jsSpin(2e6); setTimeout(loop, 5); } })();" &
sleep 1

echo "language mix, $secs s per mode, $(nproc) CPUs; share of samples with a user stack that reach a thread entry point"
for mode in cpu wall; do
	"$EBPFPROF" --mode "$mode" --duration "$secs" --format folded -o "$out/$mode.folded" 2>/dev/null
	echo "mode $mode:"
	awk '{
		n = $NF; comm = $0; sub(/;.*/, "", comm)
		user = 0; k = split(substr($0, 1, length($0) - length($NF) - 1), f, ";")
		for (i = 2; i <= k; i++) if (f[i] !~ /_\[k\]$/ && f[i] !~ /^\[lost /) user = 1
		if (!user) next
		all[comm] += n; total += n
		if (index($0, "[truncated user stack]")) cut[comm] += n; else { whole[comm] += n; wt += n }
	} END {
		for (c in all) if (all[c] >= 20) printf "  %-16s %12.0f  %6.2f %% whole\n", c, all[c], 100 * whole[c] / all[c]
		printf "  %-16s %12.0f  %6.2f %% whole\n", "(all processes)", total, total ? 100 * wt / total : 0
	}' "$out/$mode.folded" | sort
done
