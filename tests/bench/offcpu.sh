#!/usr/bin/env bash
# offcpu.sh -- slowdown of a context-switch-heavy load (perf bench sched messaging) under off-CPU tracing, and BPF ns per switch, fp against cfi
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
		"$@" >/dev/null 2>>"$out/$name.err" & local pid=$!
		sleep 2	# loaded and attached
	fi
	load >>"$out/$name"
	[ $# -gt 0 ] && { kill -INT $pid 2>/dev/null; wait $pid 2>/dev/null; }
}

BT='tracepoint:sched:sched_switch { @s[args->prev_pid] = nsecs; @k[kstack, ustack, comm] = count(); $t = @s[args->next_pid]; if ($t) { @off[args->next_comm] = sum(nsecs - $t); delete(@s[args->next_pid]); } }'
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)
echo 1 >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null	# run_time_ns for the ns-per-switch figures
for _ in $(seq "$ROUNDS"); do
	with none
	with ebpfprof_cpu "$EBPFPROF" --duration 600 --output /dev/null
	with ebpfprof_wall "$EBPFPROF" --mode wall --duration 600 --output /dev/null -v
	with ebpfprof_wall_fp "$EBPFPROF" --mode wall --unwind fp --duration 600 --output /dev/null -v
	command -v bpftrace >/dev/null && with bpftrace bpftrace -e "$BT"
done

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
base=$(median "$out/none")
echo "perf bench sched messaging -l $LOOPS, median of $ROUNDS alternating runs"
printf '%-16s %-10s %s\n' "tracer" "seconds" "slowdown"
echo "$stats_was" >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null
for n in none ebpfprof_cpu ebpfprof_wall ebpfprof_wall_fp bpftrace; do
	[ -f "$out/$n" ] || continue
	m=$(median "$out/$n")
	printf '%-16s %-10s %s\n' "$n" "$m" "$(awk -v m="$m" -v b="$base" 'BEGIN { printf "%+.1f%%", (m / b - 1) * 100 }')"
done
# the sched_switch program's own cost, from -v (kernel.bpf_stats_enabled): the user stack walked
# with CFI at every switch-out, against frame pointers (bpf_get_stackid)
for n in ebpfprof_wall ebpfprof_wall_fp; do
	[ -f "$out/$n.err" ] || continue
	ns=$(sed -n 's/.*off-cpu:.* \([0-9]*\) ns per switch.*/\1/p' "$out/$n.err" | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }')
	echo "$n: ${ns:-?} ns of BPF per context switch (median of the runs)"
done
