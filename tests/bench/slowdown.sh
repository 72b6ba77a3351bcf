#!/usr/bin/env bash
# slowdown.sh -- how much a CPU-bound and a context-switch-heavy workload slow down under each profiler, alternating runs
set -u
cd "$(dirname "$0")/../.."
. tests/bench/lib.sh
if [ "${QUICK:-0}" = 1 ]; then
	ROUNDS=${BENCH_ROUNDS:-2} UNITS=${BENCH_WORK_UNITS:-1500} LOOPS=${BENCH_MSG_LOOPS:-150}
else
	ROUNDS=${BENCH_ROUNDS:-5} UNITS=${BENCH_WORK_UNITS:-6000} LOOPS=${BENCH_MSG_LOOPS:-500}
fi
GROUPS_N=${BENCH_MSG_GROUPS:-10}
FREQS=${BENCH_FREQUENCIES:-19 99 999}
out=$(mktemp -d)
cleanup() { profiler_stop; rm -rf "$out"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v perf >/dev/null || { echo "slowdown bench: perf is not installed (apt-get install linux-perf)"; exit 1; }
[ -x "$FIX/fixed_work" ] || { echo "slowdown bench: $FIX/fixed_work missing (make fixtures)"; exit 1; }

# configurations: label, profiler, frequency
CONFIGS=("none none 0")
for f in $FREQS; do CONFIGS+=("ebpfprof-${f}Hz ebpfprof $f"); done
CONFIGS+=("perf-record-99Hz perf 99")
command -v bpftrace >/dev/null && CONFIGS+=("bpftrace-99Hz bpftrace 99")

cpu_load() { "$FIX/fixed_work" "$UNITS" | awk '{ print $2 }'; }
msg_load() { perf bench sched messaging -g "$GROUPS_N" -l "$LOOPS" 2>/dev/null | awk '/Total time/ { print $3 }'; }

n=${#CONFIGS[@]}
echo "slowdown: fixed_work $UNITS units x $(nproc) threads; perf bench sched messaging -g $GROUPS_N -l $LOOPS;" \
	"$ROUNDS rounds, configurations rotated each round; load before: $(loadavg)"
for r in $(seq 0 $((ROUNDS - 1))); do
	for k in $(seq 0 $((n - 1))); do
		read -r label prof hz <<<"${CONFIGS[$(((r + k) % n))]}"
		profiler_start "$prof" "$hz" "$out" ||
			{ echo "  $label did not start: $(tail -1 "$out/$prof.err" 2>/dev/null)"; profiler_stop; continue; }
		c=$(cpu_load)
		m=$(msg_load)
		profiler_stop
		echo "$c" >>"$out/cpu.$label"
		echo "$m" >>"$out/msg.$label"
		printf '  round %d %-18s cpu %6s s  messaging %6s s\n' $((r + 1)) "$label" "$c" "$m"
	done
done
echo "load after: $(loadavg)"

base_c=$(median <"$out/cpu.none") base_m=$(median <"$out/msg.none")
echo
echo "Slowdown, median of $ROUNDS alternating runs (ratio to none)"
printf '| %-18s | %-22s | %-24s |\n' "profiler" "CPU-bound (fixed_work)" "sched messaging"
printf '| %-18s | %-22s | %-24s |\n' "---" "---" "---"
for cfg in "${CONFIGS[@]}"; do
	read -r label _ _ <<<"$cfg"
	[ -f "$out/cpu.$label" ] || continue
	c=$(median <"$out/cpu.$label") m=$(median <"$out/msg.$label")
	printf '| %-18s | %-22s | %-24s |\n' "$label" \
		"$(awk -v v="$c" -v b="$base_c" 'BEGIN { printf "%.3f s (%.3f)", v, v / b }')" \
		"$(awk -v v="$m" -v b="$base_m" 'BEGIN { printf "%.3f s (%.3f)", v, v / b }')"
done
printf 'spread of "none" over the rounds: cpu %s s, messaging %s s (min-max)\n' \
	"$(sort -g "$out/cpu.none" | sed -n '1p;$p' | paste -sd-)" "$(sort -g "$out/msg.none" | sed -n '1p;$p' | paste -sd-)"
