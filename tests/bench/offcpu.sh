#!/usr/bin/env bash
# offcpu.sh -- slowdown of a context-switch-heavy load (perf bench sched messaging) under off-CPU tracing
set -u
cd "$(dirname "$0")/../.."
EBPFPROF=${EBPFPROF:-build/ebpfprof}
ROUNDS=${BENCH_OFFCPU_ROUNDS:-5}
LOOPS=${BENCH_OFFCPU_LOOPS:-300}
out=$(mktemp -d)
cleanup() { kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$out"; }
trap cleanup EXIT

command -v perf >/dev/null || { echo "offcpu bench: perf is not installed (linux-perf)"; exit 0; }
# bpftrace's tracepoint probes need tracefs
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null

load() { perf bench sched messaging -l "$LOOPS" 2>/dev/null | awk '/Total time/ { print $3 }'; }

with() {	# name, command...: runs the load while the command runs
	local name=$1; shift
	if [ $# -gt 0 ]; then
		"$@" >/dev/null 2>&1 & local pid=$!
		sleep 2	# loaded and attached
	fi
	load >>"$out/$name"
	[ $# -gt 0 ] && { kill -INT $pid 2>/dev/null; wait $pid 2>/dev/null; }
}

BT='tracepoint:sched:sched_switch { @s[args->prev_pid] = nsecs; @k[kstack, ustack, comm] = count(); $t = @s[args->next_pid]; if ($t) { @off[args->next_comm] = sum(nsecs - $t); delete(@s[args->next_pid]); } }'
for _ in $(seq "$ROUNDS"); do
	with none
	with ebpfprof_cpu "$EBPFPROF" --duration 600 --output /dev/null
	with ebpfprof_wall "$EBPFPROF" --mode wall --duration 600 --output /dev/null
	command -v bpftrace >/dev/null && with bpftrace bpftrace -e "$BT"
done

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
base=$(median "$out/none")
echo "perf bench sched messaging -l $LOOPS, median of $ROUNDS alternating runs"
printf '%-16s %-10s %s\n' "tracer" "seconds" "slowdown"
for n in none ebpfprof_cpu ebpfprof_wall bpftrace; do
	[ -f "$out/$n" ] || continue
	m=$(median "$out/$n")
	printf '%-16s %-10s %s\n' "$n" "$m" "$(awk -v m="$m" -v b="$base" 'BEGIN { printf "%+.1f%%", (m / b - 1) * 100 }')"
done
