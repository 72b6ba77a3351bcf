#!/usr/bin/env bash
# agent.sh -- the agent's CPU, RSS, BPF cost per sample and cost per new process on two busy loads, each a median of runs with its spread
set -u
cd "$(dirname "$0")/../.."
EBPFPROF=${EBPFPROF:-build/ebpfprof}
SECONDS_RUN=${BENCH_AGENT_SECONDS:-46}	# three 15 s windows: reads are counted over the last two
RUNS=${BENCH_AGENT_RUNS:-3}
FREQS=${BENCH_AGENT_FREQUENCIES:-19 99}
LOADS=${BENCH_AGENT_LOADS:-many_idle sampled_churn}
INTERVAL=${BENCH_AGENT_INTERVAL:-15}
BT_SECONDS=${BENCH_BPFTRACE_SECONDS:-30}	# bpftrace's run: at 19 Hz, 8 s held too few samples to compare
FP_COMPARE=${BENCH_AGENT_FP_COMPARE:-1}	# 0: no --unwind fp run and no bpftrace beside it
out=$(mktemp -d)
. tests/bench/lib.sh
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
mounted_tracefs=""
LOAD_PIDS=()
cleanup() {
	load_stop
	kill $(jobs -p) 2>/dev/null; wait 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled="$old_stats"
	[ -z "$mounted_tracefs" ] || umount /sys/kernel/tracing
	rm -rf "$out"
}
trap cleanup EXIT

# ten /bin/true every 0.1 s: about 100 new processes a second on both loads
churn() {
	( end=$((SECONDS + $1)); while [ $SECONDS -lt $end ]; do
		for _ in $(seq 10); do /bin/true; done; sleep 0.1; done ) &
	LOAD_PIDS+=($!)
}

# load_start NAME SECONDS. many_idle: per CPU a cpu_split and a syscall_heavy, 100 idle processes
# and the churn; the samples land on long-lived processes. sampled_churn: one CPU-bound process, one
# dd copying 64-byte blocks (a system call each) and the churn, with a CPU to spare: the new
# processes are sampled in their first millisecond, so each is read
load_start() {
	local i
	case $1 in
	many_idle)
		for i in $(seq "$(nproc)"); do
			build/fixtures/cpu_split "$2" >/dev/null & LOAD_PIDS+=($!)
			build/fixtures/syscall_heavy "$2" >/dev/null & LOAD_PIDS+=($!)
		done
		for i in $(seq 100); do sleep "$2" & LOAD_PIDS+=($!); done ;;
	sampled_churn)
		build/fixtures/cpu_split "$2" >/dev/null & LOAD_PIDS+=($!)
		timeout "$2" dd if=/dev/zero of=/dev/null bs=64 2>/dev/null & LOAD_PIDS+=($!) ;;
	*) echo "agent.sh: unknown load $1" >&2; exit 2 ;;
	esac
	churn "$2"
}
load_stop() {
	[ ${#LOAD_PIDS[@]} = 0 ] && return 0
	kill "${LOAD_PIDS[@]}" 2>/dev/null
	wait "${LOAD_PIDS[@]}" 2>/dev/null
	LOAD_PIDS=()
}

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
cpu_ns() { awk '{ print $1 }' "/proc/$1/schedstat"; }	# every thread's, exact
# metric FILE NAME: a /metrics value summed over its labels (0 when absent)
metric() { awk -v n="$2" '$1 == n || index($1, n "{") == 1 { s += $2 } END { print s + 0 }' "$1"; }
# per T C: T / C as a whole number, "-" when C is 0
per() { awk -v t="$1" -v c="$2" 'BEGIN { if (c) printf "%d", t / c; else print "-" }'; }

sysctl -qw kernel.bpf_stats_enabled=1	# BPF ns per sample; costs the programs a few ns a run
bt=$(command -v bpftrace || true)
# bpftrace's tracepoint probes attach through tracefs, which a fresh machine may not have mounted
if [ -n "$bt" ] && [ ! -e /sys/kernel/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing && mounted_tracefs=1
fi

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

# agent_run LOAD HZ UNWIND RUN: one agent run under LOAD (started for it, so every run has the same);
# appends "cpu% peak_mb steady_mb bpf_ns all_bpf_ns reads_per_s ms_per_read builds resets lost
# ms_per_read_without_table_builds steady_cpu% copied_per_s" to
# $out/LOAD-HZ-UNWIND, and leaves the load running for bpftrace when KEEP_LOAD is set
agent_run() {
	local load=$1 f=$2 unwind=$3 log=$out/collector.log apid cpid addr port t0 t1 bns0 bcnt0 ball0
	local bns1 bcnt1 ball1 steady hwm m reads read_s build_s ns_mid ns_end s_mid copies
	load_start "$load" $((SECONDS_RUN + 2 * BT_SECONDS + 40))
	build/fixtures/collector -log "$log" >"$out/c.out" 2>&1 &
	cpid=$!
	wait_line "$out/c.out" '^listening' 60	# a loaded host starts it in seconds
	addr=$(awk '/^listening/ { print $2; exit }' "$out/c.out")
	"$EBPFPROF" agent --frequency "$f" --interval "$INTERVAL" --unwind "$unwind" --push "http://$addr" \
		--listen 127.0.0.1:0 2>"$out/agent.err" &
	apid=$!
	wait_line "$out/agent.err" '^ebpfprof: agent: ' 60	# BPF verification takes seconds
	port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$out/agent.err")
	t0=$(ticks $apid)
	read -r bns0 bcnt0 ball0 <<<"$(bpf_prog_stats $apid)"
	: >"$out/rss"
	for i in $(seq "$SECONDS_RUN"); do	# steady: the largest RSS after the first window
		sleep 1
		awk '/^VmRSS/ { print $2 }' "/proc/$apid/status" >>"$out/rss"
		# /metrics is the last window's: reads are counted from the first window's end, past the
		# tables of running processes loaded at start
		# steady CPU: from there too, past the start and the first window's symbol tables
		[ "$i" != $((INTERVAL + 2)) ] || {
			curl -sf "http://127.0.0.1:$port/metrics" >"$out/m0.txt"
			ns_mid=$(cpu_ns $apid) s_mid=$SECONDS
		}
	done
	t1=$(ticks $apid)
	ns_end=$(cpu_ns $apid)
	read -r bns1 bcnt1 ball1 <<<"$(bpf_prog_stats $apid)"
	steady=$(tail -n +$((INTERVAL + 2)) "$out/rss" | sort -n | tail -1)
	m=$out/m1.txt
	curl -sf "http://127.0.0.1:$port/metrics" >"$m"
	hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$apid/status")
	kill -TERM $apid; wait $apid
	kill -TERM $cpid; wait $cpid
	[ -n "${KEEP_LOAD:-}" ] || load_stop
	[ -s "$out/m0.txt" ] || cp "$m" "$out/m0.txt"	# a run shorter than a window: no reads counted
	reads=$(awk -v a="$(metric "$out/m0.txt" ebpfprof_processes_read_total)" -v b="$(metric "$m" ebpfprof_processes_read_total)" 'BEGIN { print b - a }')
	read_s=$(awk -v a="$(metric "$out/m0.txt" ebpfprof_process_read_seconds_total)" -v b="$(metric "$m" ebpfprof_process_read_seconds_total)" 'BEGIN { print b - a }')
	copies=$(awk -v a="$(metric "$out/m0.txt" ebpfprof_processes_copied_total)" -v b="$(metric "$m" ebpfprof_processes_copied_total)" 'BEGIN { print b - a }')
	build_s=$(awk -v a="$(metric "$out/m0.txt" ebpfprof_unwind_table_build_seconds_total)" -v b="$(metric "$m" ebpfprof_unwind_table_build_seconds_total)" 'BEGIN { print b - a }')
	printf '%s %s %s %s %s %s %s %s %s %s %s %s %s\n' \
		"$(awk -v t="$((t1 - t0))" -v s="$SECONDS_RUN" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", t / hz / s * 100 }')" \
		"$(awk -v k="$hwm" 'BEGIN { printf "%.1f", k / 1024 }')" \
		"$(awk -v k="${steady:-0}" 'BEGIN { printf "%.1f", k / 1024 }')" \
		"$(per $((bns1 - bns0)) $((bcnt1 - bcnt0)))" "$(per $((ball1 - ball0)) $((bcnt1 - bcnt0)))" \
		"$(awk -v n="$reads" -v w="$(($(metric "$m" ebpfprof_windows_total) - $(metric "$out/m0.txt" ebpfprof_windows_total)))" \
			-v i="$INTERVAL" 'BEGIN { if (w > 0) printf "%.1f", n / w / i; else print "-" }')" \
		"$(awk -v n="$reads" -v t="$read_s" 'BEGIN { if (n) printf "%.3f", t * 1000 / n; else print "-" }')" \
		"$(metric "$m" ebpfprof_unwind_table_files_total)" "$(metric "$m" ebpfprof_unwind_table_resets_total)" \
		"$(metric "$m" ebpfprof_samples_lost_total)" \
		"$(awk -v n="$reads" -v t="$read_s" -v b="$build_s" 'BEGIN { if (n) printf "%.3f", (t - b) * 1000 / n; else print "-" }')" \
		"$(awk -v a="${ns_mid:-}" -v b="$ns_end" -v s="$((SECONDS - ${s_mid:-$SECONDS}))" \
			'BEGIN { if (a != "" && s > 0) printf "%.3f", (b - a) / s / 1e7; else print "-" }')" \
		"$(awk -v n="$copies" -v w="$(($(metric "$m" ebpfprof_windows_total) - $(metric "$out/m0.txt" ebpfprof_windows_total)))" \
			-v i="$INTERVAL" 'BEGIN { if (w > 0) printf "%.1f", n / w / i; else print "-" }')" \
		>>"$out/$load-$f-$unwind"
}

# column FILE N: "median (min-max)" of column N of FILE
column() {
	local med lo hi
	med=$(awk -v c="$2" '{ print $c }' "$1" | grep -v '^-$' | median)
	lo=$(awk -v c="$2" '{ print $c }' "$1" | grep -v '^-$' | sort -g | head -1)
	hi=$(awk -v c="$2" '{ print $c }' "$1" | grep -v '^-$' | sort -g | tail -1)
	if [ "$lo" = "$hi" ]; then echo "$med"; else echo "$med ($lo-$hi)"; fi
}

echo "ebpfprof agent bench: $RUNS runs of ${SECONDS_RUN} s per load and rate, ${INTERVAL} s windows, $(nproc) CPUs, ~100 new processes/s"
echo "bpftrace beside it: ${bt:-not installed, no comparison}"
for load in $LOADS; do
	echo
	echo "load $load: median (min-max) of $RUNS runs; BPF ns/sample the sampler's, all BPF every program's over the same samples"
	echo "ms per read: the CPU time reading a new process (maps, executable, cgroup, runtimes, CFI tables); its"
	echo "part outside table builds beside it; builds: files whose CFI tables were parsed"
	echo "CPU % of core: over the whole run; steady: from the end of the first window on"
	printf '%-4s %-20s %-20s %-18s %-18s %-20s %-20s %-18s %-18s %-20s %-20s %-9s %-7s %s\n' "Hz" \
		"CPU % of core" "steady CPU %" "peak RSS MB" "steady RSS MB" "BPF ns/sample" "all BPF ns/s." "processes read/s" \
		"forks copied/s" "ms per read" "ms, without builds" "builds" "resets" "lost"
	for f in $FREQS; do
		for r in $(seq "$RUNS"); do agent_run "$load" "$f" auto "$r"; done
		rf=$out/$load-$f-auto
		printf '%-4s %-20s %-20s %-18s %-18s %-20s %-20s %-18s %-18s %-20s %-20s %-9s %-7s %s\n' "$f" \
			"$(column "$rf" 1)" "$(column "$rf" 12)" \
			"$(column "$rf" 2)" "$(column "$rf" 3)" "$(column "$rf" 4)" "$(column "$rf" 5)" \
			"$(column "$rf" 6)" "$(column "$rf" 13)" "$(column "$rf" 7)" "$(column "$rf" 11)" "$(column "$rf" 8)" \
			"$(column "$rf" 9)" "$(column "$rf" 10)"
	done
	# the sampler alone with frame pointers, beside bpftrace's (which walks user stacks by frame
	# pointers too), under one run's load: bpftrace after the agent, never at the same time (the agent
	# would profile bpftrace, libLLVM's tables and symbols in its memory)
	[ "$FP_COMPARE" = 1 ] || continue
	echo "load $load, frame pointers (--unwind fp) against bpftrace, one run each:"
	printf '%-4s %-16s %-16s %-20s %s\n' "Hz" "ours ns/sample" "ours all ns/s." "bpftrace ns/sample" "bpftrace, whole job"
	for f in $FREQS; do
		KEEP_LOAD=1 agent_run "$load" "$f" fp 1
		btns=$(bt_cost "$BT_PROG" "$f")
		btjob=$(bt_cost "$BT_JOB" "$f")
		load_stop
		printf '%-4s %-16s %-16s %-20s %s\n' "$f" "$(awk '{ print $4 }' "$out/$load-$f-fp")" \
			"$(awk '{ print $5 }' "$out/$load-$f-fp")" "$btns" "$btjob"
	done
done
