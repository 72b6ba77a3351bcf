#!/usr/bin/env bash
# whole.sh -- one whole-system run per profiler on a busy machine: BPF cost per sample, own CPU and peak RSS, stop -> symbolized file, size
set -u
cd "$(dirname "$0")/../.."
. tests/bench/lib.sh
if [ "${QUICK:-0}" = 1 ]; then SECS=${BENCH_WHOLE_SECONDS:-10}; else SECS=${BENCH_WHOLE_SECONDS:-60}; fi
HZ=${BENCH_WHOLE_FREQUENCY:-99}
out=$(mktemp -d)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() { profiler_stop; busy_stop; sysctl -qw kernel.bpf_stats_enabled="$old_stats"; rm -rf "$out"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# BENCH_WHOLE_PROFILERS="ebpfprof" runs only those (e.g. ebpfprof's stack losses at 999 Hz)
if [ -n "${BENCH_WHOLE_PROFILERS:-}" ]; then
	PROFS=$BENCH_WHOLE_PROFILERS
else
	PROFS="ebpfprof perf"
	command -v bpftrace >/dev/null && PROFS="$PROFS bpftrace"
fi
[[ " $PROFS " != *" perf "* ]] || command -v perf >/dev/null ||
	{ echo "whole-system bench: perf is not installed (apt-get install linux-perf)"; exit 1; }
# run_time_ns / run_cnt of BPF programs are only counted while this is on
sysctl -qw kernel.bpf_stats_enabled=1

# field N of a "user system maxrss code" rusage file
ru() { awk -v f="$2" '{ print $f }' "$out/$1.rusage"; }
cpu_of() { awk '{ printf "%.2f", $1 + $2 }' "$out/$1.rusage"; }

echo "whole system, $SECS s at $HZ Hz per profiler, one after another, on a busy machine:" \
	"$(nproc) x (cpu_split + syscall_heavy), 100 idle processes, ~100 exec/s; load before: $(loadavg)"
for p in $PROFS; do
	busy_start $((SECS + 5))
	sleep 0.5
	profiler_start "$p" "$HZ" "$out" || { echo "  $p did not start: $(tail -1 "$out/$p.err")"; busy_stop; continue; }
	sleep "$SECS"
	bpf_prog_stats "$PROF_PID" >"$out/$p.bpf"
	t0=$(now)
	profiler_stop
	t1=$(now)
	busy_stop
	calc "$t1 - $t0" >"$out/$p.stop"
	echo "  $p done (load $(loadavg))"
done

# perf's post-processing: perf script, then folding (a symbolized file like the others' outputs)
if [ -f "$out/perf.data" ]; then
	t0=$(now)
	rusage_run "$out/perf_script.rusage" perf script -i "$out/perf.data" >"$out/perf.script" 2>/dev/null
	t1=$(now)
	rusage_run "$out/perf_fold.rusage" bash -c ". tests/bench/lib.sh; fold_perf_script" \
		<"$out/perf.script" >"$out/perf.folded"
	t2=$(now)
	calc "$t1 - $t0" >"$out/perf_script.stop"
	calc "$t2 - $t1" >"$out/perf_fold.stop"
fi
echo "load after: $(loadavg)"

samples_of() {
	case $1 in
	ebpfprof) sed -n 's/.*: \([0-9]*\) samples on.*/\1/p' "$out/ebpfprof.err" ;;
	perf) awk '{ s += $NF } END { print s + 0 }' "$out/perf.folded" ;;
	bpftrace) awk '/\]: [0-9]+$/ { s += $NF } END { print s + 0 }' "$out/bpftrace.out" ;;
	esac
}
ns_of() { awk '{ if ($2) printf "%d", $1 / $2; else print "-" }' "$out/$1.bpf"; }
size_of() { [ -f "$1" ] && stat -c %s "$1" || echo 0; }
kb() { awk -v b="$1" 'BEGIN { printf "%.1f KB", b / 1000 }'; }
pct() { awk -v c="$1" -v s="$SECS" 'BEGIN { printf "%.2f s (%.2f%% of one CPU)", c, c * 100 / s }'; }

echo
echo "Whole system, $SECS s at $HZ Hz"
printf '| %-36s | %-26s | %-26s | %-26s |\n' "figure" "ebpfprof" "perf record -g (+ script)" "bpftrace"
printf '| %-36s | %-26s | %-26s | %-26s |\n' "---" "---" "---" "---"
row() { printf '| %-36s | %-26s | %-26s | %-26s |\n' "$@"; }
have() { [ -f "$out/$1.rusage" ]; }
v() { have "$1" && "${@:2}" || echo "-"; }
row "samples" "$(v ebpfprof samples_of ebpfprof)" "$(v perf samples_of perf)" "$(v bpftrace samples_of bpftrace)"
row "kernel cost per sample (bpf_stats)" "$(v ebpfprof ns_of ebpfprof) ns" "n/a (no BPF program)" "$(v bpftrace ns_of bpftrace) ns"
row "profiler CPU, whole run" "$(v ebpfprof pct "$(cpu_of ebpfprof)")" "$(v perf pct "$(cpu_of perf)")" "$(v bpftrace pct "$(cpu_of bpftrace)")"
if have perf; then
	row "  + perf script" "" "$(pct "$(cpu_of perf_script)")" ""
	row "  + folding (perl)" "" "$(pct "$(cpu_of perf_fold)")" ""
	row "  = total CPU" "" "$(pct "$(calc "$(cpu_of perf) + $(cpu_of perf_script) + $(cpu_of perf_fold)")")" ""
fi
mb() { have "$1" && awk -v k="$(ru "$1" 3)" 'BEGIN { printf "%.1f MB", k / 1024 }' || echo "-"; }
row "peak RSS" "$(mb ebpfprof)" "$(mb perf) (script: $(mb perf_script))" "$(mb bpftrace)"
sec() { [ -f "$out/$1.stop" ] && awk '{ printf "%.2f s", $1 }' "$out/$1.stop" || echo "-"; }
row "stop -> symbolized file" "$(sec ebpfprof)" \
	"$(have perf && awk '{ s += $1 } END { printf "%.2f s", s }' "$out/perf.stop" "$out/perf_script.stop" "$out/perf_fold.stop")" \
	"$(sec bpftrace)"
have perf && row "  (record exit + script + fold)" "" "$(sec perf) + $(sec perf_script) + $(sec perf_fold)" ""
row "output" "pprof, gzip: $(kb "$(size_of "$out/ebpfprof.pb.gz")")" \
	"perf.data: $(kb "$(size_of "$out/perf.data")")" "text: $(kb "$(size_of "$out/bpftrace.out")")"
if have perf; then
	row "" "" "perf.data gzip -6: $(kb "$(gzip -6c "$out/perf.data" | wc -c)")" ""
	row "" "" "perf script text: $(kb "$(size_of "$out/perf.script")")" ""
	row "" "" "folded: $(kb "$(size_of "$out/perf.folded")")" ""
fi
lost_ebpfprof() {
	local l
	l=$(sed -n 's/.*, \([0-9]*\) lost or partial$/\1/p' "$out/ebpfprof.err")
	echo "$l ($(awk -v l="${l:-0}" -v s="$(samples_of ebpfprof)" 'BEGIN { printf "%.0f", s ? l * 1e6 / s : 0 }') per million)"
	sed -n 's/^ebpfprof: warning: lost: \(.*\) (raise.*/(\1)/p' "$out/ebpfprof.err"
	sed -n 's/^ebpfprof: sampler stack maps: \(.*\)/; stack maps at the end: \1/p' "$out/ebpfprof.err"
}
lost_perf() {
	grep -o 'lost [0-9]* chunks' "$out/perf.err" | awk '{ s += $2 } END { printf "%d chunks lost", s }'
	sed -n 's/.*Captured and wrote \([0-9.]* MB\) .*(\([0-9]*\) samples).*/; wrote \1, \2 samples/p' "$out/perf.err"
}
lost_bpftrace() { cat "$out/bpftrace.out" "$out/bpftrace.err" | grep -c 'failed to look up stack id'; echo "map keys without their stack"; }
echo "samples lost or partial:"
echo "  ebpfprof: $(v ebpfprof lost_ebpfprof | paste -sd' ')"
echo "  perf:     $(v perf lost_perf | paste -sd' ')"
echo "  bpftrace: $(v bpftrace lost_bpftrace | paste -sd' ')"
echo "perf.data holds every sample (with -g: its whole callchain); ebpfprof and bpftrace count unique stacks in the kernel."
