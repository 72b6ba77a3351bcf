#!/usr/bin/env bash
# goheap.sh -- the cost of Go heap profiles read from outside: ms per 1,000 buckets, and the agent's added CPU with N Go processes
# usage: goheap.sh [PROCS (20)] [SECONDS (30)] [ROUNDS (5)]
# Needs build/fixtures/goheap-buckets (make fixtures). Read time: --mode heap on one process with
# 8,000 buckets (2^12 stacks, every allocation recorded), ROUNDS times. Agent CPU: the agent with and
# without --go-heap over PROCS processes of 256 stacks each that allocate every second, SECONDS each,
# 5 s windows written to a directory; CPU from /proc/PID/stat.
set -u
cd "$(dirname "$0")/../.."
procs=${1:-20} secs=${2:-30} rounds=${3:-5}
FIX=${BUILD:-$PWD/build}/fixtures
EBPFPROF=${EBPFPROF:-$PWD/build/ebpfprof}
out=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$out"' EXIT

"$FIX/goheap-buckets" 12 600 >"$out/big" &
big=$!
until grep -q ready "$out/big"; do sleep 0.1; done
for _ in $(seq "$rounds"); do
	"$EBPFPROF" --mode heap --pid $big --duration 0.01 -o /dev/null 2>&1 |
		sed -n 's/.* \([0-9]*\) buckets in \([0-9.]*\) ms (\([0-9.]*\) ms per 1000 buckets).*/\1 \2 \3/p'
done | sort -k3 -n | awk '{ r[NR] = $0 } END { split(r[int((NR + 1) / 2)], m, " ");
	printf "read: %d buckets in %.1f ms, %.2f ms per 1000 buckets (median of %d)\n", m[1], m[2], m[3], NR }'
kill $big

for _ in $(seq "$procs"); do "$FIX/goheap-buckets" 8 $((3 * secs + 60)) >/dev/null & done
sleep 2
cpu() { awk '{ printf "%.2f\n", ($14 + $15) / '"$(getconf CLK_TCK)"' }' "/proc/$1/stat"; }
run() {	# extra flags: prints CPU seconds of the agent over SECONDS
	rm -rf "$out/prof"
	"$EBPFPROF" agent --interval 5 --output-dir "$out/prof" "$@" 2>"$out/agent.err" &
	local a=$! c0 c1
	until grep -qs '^ebpfprof: agent: ' "$out/agent.err"; do sleep 0.1; done
	c0=$(cpu $a)
	sleep "$secs"
	c1=$(cpu $a)
	kill -INT $a; wait $a
	echo "$c0 $c1" | awk '{ print $2 - $1 }'
}
base=$(run)
heap=$(run --go-heap)
files=$(ls "$out"/prof/*.memory-* 2>/dev/null | wc -l)
echo "agent: $base s CPU in $secs s without --go-heap, $heap s with it ($files heap series windows written, $procs Go processes)" |
	awk -v b="$base" -v h="$heap" -v s="$secs" '{ print; printf "agent: --go-heap adds %.2f%% of one CPU\n", 100 * (h - b) / s }'
