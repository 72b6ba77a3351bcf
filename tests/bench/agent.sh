#!/usr/bin/env bash
# agent.sh -- the agent's own CPU and RSS over a long run on a busy machine, and bytes pushed per window
set -u
cd "$(dirname "$0")/../.."
EBPFPROF=${EBPFPROF:-build/ebpfprof}
SECONDS_RUN=${BENCH_AGENT_SECONDS:-300}
FREQS=${BENCH_AGENT_FREQUENCIES:-19 99}
INTERVAL=${BENCH_AGENT_INTERVAL:-15}
out=$(mktemp -d)
cleanup() { kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$out"; }
trap cleanup EXIT

# a busy machine for one run: CPU-bound and syscall-bound processes, 100 idle ones, and churn of
# short-lived ones (started again for every frequency, so each is measured under the same load)
busy() {
	for _ in $(seq "$(nproc)"); do
		build/fixtures/cpu_split $((SECONDS_RUN + 10)) &
		build/fixtures/syscall_heavy $((SECONDS_RUN + 10)) &
	done
	for _ in $(seq 100); do sleep $((SECONDS_RUN + 10)) & done
	( end=$((SECONDS + SECONDS_RUN + 5)); while [ $SECONDS -lt $end ]; do
		for _ in $(seq 10); do /bin/true; done; sleep 0.1; done ) &
}

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

echo "ebpfprof agent bench: ${SECONDS_RUN} s per run, ${INTERVAL} s windows, $(nproc) CPUs"
printf '%-8s %-14s %-12s %-12s %-16s %s\n' "Hz" "CPU % of core" "peak RSS MB" "windows" "bytes/window" "lost"
for f in $FREQS; do
	busy
	log=$out/collector-$f.log
	build/fixtures/collector -log "$log" >"$out/c.out" 2>&1 &
	cpid=$!
	sleep 0.5
	addr=$(awk '/^listening/ { print $2; exit }' "$out/c.out")
	"$EBPFPROF" agent --frequency "$f" --interval "$INTERVAL" --push "http://$addr" \
		--listen 127.0.0.1:0 2>"$out/agent-$f.err" &
	apid=$!
	sleep 1
	port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$out/agent-$f.err")
	t0=$(ticks $apid)
	sleep "$SECONDS_RUN"
	t1=$(ticks $apid)
	curl -sf "http://127.0.0.1:$port/metrics" >"$out/metrics-$f.txt"
	hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$apid/status")
	kill -TERM $apid; wait $apid
	kill -TERM $cpid; wait $cpid
	kill $(jobs -p) 2>/dev/null; wait 2>/dev/null	# this run's load
	windows=$(awk '/^ebpfprof_windows_total/ { print $2 }' "$out/metrics-$f.txt")
	bytes=$(awk '/^ebpfprof_push_bytes_total/ { print $2 }' "$out/metrics-$f.txt")
	lost=$(awk '/^ebpfprof_samples_lost_total/ { s += $2 } END { print s + 0 }' "$out/metrics-$f.txt")
	printf '%-8s %-14s %-12s %-12s %-16s %s\n' "$f" \
		"$(awk -v t="$((t1 - t0))" -v s="$SECONDS_RUN" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", t / hz / s * 100 }')" \
		"$(awk -v k="$hwm" 'BEGIN { printf "%.1f", k / 1024 }')" "$windows" \
		"$(awk -v b="$bytes" -v w="$windows" 'BEGIN { if (w) printf "%d", b / w; else print "-" }')" "$lost"
done
