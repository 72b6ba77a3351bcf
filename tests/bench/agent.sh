#!/usr/bin/env bash
# agent.sh -- the agent's own CPU, peak and steady RSS and BPF cost per sample on a busy machine with process churn
set -u
cd "$(dirname "$0")/../.."
EBPFPROF=${EBPFPROF:-build/ebpfprof}
SECONDS_RUN=${BENCH_AGENT_SECONDS:-60}
FREQS=${BENCH_AGENT_FREQUENCIES:-19 99}
INTERVAL=${BENCH_AGENT_INTERVAL:-15}
BT_SECONDS=${BENCH_BPFTRACE_SECONDS:-30}	# bpftrace's run: at 19 Hz, 8 s held too few samples to compare
LOAD_SECONDS=$((SECONDS_RUN + 2 * BT_SECONDS + 50))
out=$(mktemp -d)
. tests/bench/lib.sh
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
mounted_tracefs=""
cleanup() {
	kill $(jobs -p) 2>/dev/null; wait 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled="$old_stats"
	[ -z "$mounted_tracefs" ] || umount /sys/kernel/tracing
	rm -rf "$out"
}
trap cleanup EXIT

# a busy machine for one run: CPU-bound and syscall-bound processes, 100 idle ones, and churn of
# short-lived ones (started again for every frequency, so each is measured under the same load)
busy() {
	for _ in $(seq "$(nproc)"); do
		build/fixtures/cpu_split $LOAD_SECONDS &
		build/fixtures/syscall_heavy $LOAD_SECONDS &
	done
	for _ in $(seq 100); do sleep $LOAD_SECONDS & done
	( end=$((SECONDS + LOAD_SECONDS - 5)); while [ $SECONDS -lt $end ]; do
		for _ in $(seq 10); do /bin/true; done; sleep 0.1; done ) &
}

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

sysctl -qw kernel.bpf_stats_enabled=1	# BPF ns per sample; costs the programs a few ns a run
echo "ebpfprof agent bench: ${SECONDS_RUN} s per run, ${INTERVAL} s windows, $(nproc) CPUs, ~100 new processes/s"
# bpftrace after the agent, at the same rate under the same load of the same run: the BPF cost of
# its sampling alone (kernel and user stacks per sample) and of the agent's whole job. Not at
# the same time: the agent would profile bpftrace too (libLLVM's tables and symbols in its memory)
bt=$(command -v bpftrace || true)
echo "bpftrace beside it: ${bt:-not installed, no comparison}"
# bpftrace's tracepoint probes attach through tracefs, which a fresh machine may not have mounted
if [ -n "$bt" ] && [ ! -e /sys/kernel/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing && mounted_tracefs=1
fi

# per T C: T / C as a whole number, "-" when C is 0
per() { awk -v t="$1" -v c="$2" 'BEGIN { if (c) printf "%d", t / c; else print "-" }'; }

# bt_cost PROG HZ: bpftrace's BPF ns per sample running PROG for BT_SECONDS: all of its programs over
# its profile probe's runs ("-" without bpftrace). HZ names that probe's program; "-" too where an
# interval probe of PROG has the same name (BT_JOB's at 25 Hz), whose runs are not samples
bt_cost() {
	local p cnt0 all0 cnt1 all1
	[ -n "$bt" ] || { echo "-"; return; }
	case $1 in *"interval:ms:$2 "*) echo "-"; return ;; esac
	bpftrace -e "$(printf "$1" "$2")" >"$out/bt.out" 2>&1 &
	p=$!
	wait_line "$out/bt.out" '^Attaching' 15
	read -r _ cnt0 all0 <<<"$(bpf_prog_stats_named $p "$2")"
	sleep "$BT_SECONDS"
	read -r _ cnt1 all1 <<<"$(bpf_prog_stats_named $p "$2")"
	kill -INT $p; wait $p 2>/dev/null
	per $((all1 - all0)) $((cnt1 - cnt0))
}

# BPF ns/sample: the sampler's runs alone, then all of the agent's programs (its exec tracepoint runs
# at every exec) over the same samples: the whole cost to the machine. bpftrace's beside them: its
# sampling alone (BT_PROG), then the agent's whole job (BT_JOB: each new process told to userspace too)
printf '%-6s %-14s %-12s %-14s %-14s %-14s %-10s %-14s %-6s %-14s %s\n' "Hz" "CPU % of core" "peak RSS MB" "steady RSS MB" "BPF ns/sample" "all BPF ns/s." "windows" "bytes/window" "lost" "bpftrace ns/s." "bpftrace, whole job"
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
	wait_line "$out/agent-$f.err" '^ebpfprof: agent: ' 60	# BPF verification takes seconds
	port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$out/agent-$f.err")
	t0=$(ticks $apid)
	read -r bns0 bcnt0 ball0 <<<"$(bpf_prog_stats $apid)"
	: >"$out/rss-$f"
	for _ in $(seq "$SECONDS_RUN"); do	# steady: the largest RSS after the first window
		sleep 1
		awk '/^VmRSS/ { print $2 }' "/proc/$apid/status" >>"$out/rss-$f"
	done
	t1=$(ticks $apid)
	read -r bns1 bcnt1 ball1 <<<"$(bpf_prog_stats $apid)"
	steady=$(tail -n +$((INTERVAL + 2)) "$out/rss-$f" | sort -n | tail -1)
	curl -sf "http://127.0.0.1:$port/metrics" >"$out/metrics-$f.txt"
	hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$apid/status")
	kill -TERM $apid; wait $apid
	kill -TERM $cpid; wait $cpid
	# bpftrace after the agent, under the same load, which outlives the agent's run by both of its runs
	btns=$(bt_cost "$BT_PROG" "$f")
	btjob=$(bt_cost "$BT_JOB" "$f")
	kill $(jobs -p) 2>/dev/null; wait 2>/dev/null	# this run's load
	windows=$(awk '/^ebpfprof_windows_total/ { print $2 }' "$out/metrics-$f.txt")
	bytes=$(awk '/^ebpfprof_push_bytes_total/ { print $2 }' "$out/metrics-$f.txt")
	lost=$(awk '/^ebpfprof_samples_lost_total/ { s += $2 } END { print s + 0 }' "$out/metrics-$f.txt")
	printf '%-6s %-14s %-12s %-14s %-14s %-14s %-10s %-14s %-6s %-14s %s\n' "$f" \
		"$(awk -v t="$((t1 - t0))" -v s="$SECONDS_RUN" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", t / hz / s * 100 }')" \
		"$(awk -v k="$hwm" 'BEGIN { printf "%.1f", k / 1024 }')" \
		"$(awk -v k="${steady:-0}" 'BEGIN { printf "%.1f", k / 1024 }')" \
		"$(per $((bns1 - bns0)) $((bcnt1 - bcnt0)))" "$(per $((ball1 - ball0)) $((bcnt1 - bcnt0)))" "$windows" \
		"$(awk -v b="$bytes" -v w="$windows" 'BEGIN { if (w) printf "%d", b / w; else print "-" }')" "$lost" "$btns" "$btjob"
	# what the losses were, by the agent's own reasons
	[ "$lost" = 0 ] || echo "  lost at $f Hz: $(awk '/^ebpfprof_samples_lost_total/ && $2 > 0 { sub(/.*reason="/, "", $1); sub(/".*/, "", $1); printf "%s %s, ", $1, $2 }' "$out/metrics-$f.txt")"
done
