#!/usr/bin/env bash
# exec_idle.sh -- the agent's CPU while idle processes start, cheaply and at a cost: the exec waits at work
# Each second RATE processes start that idle 300 ms and exit (short_lived 300 0 START): with
# START 0 their start costs what this host's fork, exec and loader cost; with START 12 it costs
# 12 ms more, as on hosts where those are slow. An idle process that exits unsampled is never
# read, at either cost: the agent's CPU should not grow with the start's cost.
# usage: exec_idle.sh [SECONDS (30)] [RATE (20)]
set -u
cd "$(dirname "$0")/../.."
EBPFPROF=${EBPFPROF:-$PWD/build/ebpfprof}
FIX=${BUILD:-$PWD/build}/fixtures
secs=${1:-30} rate=${2:-20}
out=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$out"' EXIT
. tests/bench/lib.sh

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
metric() { awk -v m="$1" '$1 == m { print $2 }' "$out/metrics.txt"; }

echo "exec waits bench: agent at 19 Hz, $rate idle processes a second for $secs s, $(nproc) CPUs"
printf '%-10s %10s %12s %12s %10s %10s\n' "start" "agent CPU" "unsampled" "idle waits" "rechecks" "started"
for start in 0 12; do
	"$EBPFPROF" agent --frequency 19 --interval 10 --listen 127.0.0.1:0 2>"$out/agent.err" &
	apid=$!
	wait_line "$out/agent.err" '^ebpfprof: agent: ' 60
	port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$out/agent.err")
	t0=$(ticks $apid) n=0
	end=$((SECONDS + secs))
	while [ $SECONDS -lt $end ]; do
		for ((i = 0; i < rate / 10; i++)); do "$FIX/short_lived" 300 0 $start & n=$((n + 1)); done
		sleep 0.1
	done
	wait $(jobs -p | grep -vx "$apid") 2>/dev/null
	t1=$(ticks $apid)
	curl -sf "http://127.0.0.1:$port/metrics" >"$out/metrics.txt"
	kill -TERM $apid; wait $apid
	printf '%-10s %9.2f%% %12s %12s %10s %10s\n' "+${start} ms" \
		"$(awk -v t=$((t1 - t0)) -v s="$secs" -v hz="$(getconf CLK_TCK)" 'BEGIN { print 100 * t / hz / s }')" \
		"$(metric ebpfprof_process_execs_unsampled_total)" "$(metric ebpfprof_process_exec_idle_waits_total)" \
		"$(metric ebpfprof_process_exec_rechecks_total)" "$n"
done
