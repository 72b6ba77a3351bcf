#!/usr/bin/env bash
# run.sh -- `make bench`: BPF cost per sample, the profiler's own CPU and peak RSS, profile size, on a busy machine
set -u
cd "$(dirname "$0")/../.."
EBPFPROF=${EBPFPROF:-build/ebpfprof}
DURATION=${BENCH_DURATION:-30}
FREQ=${BENCH_FREQUENCY:-99}
out=$(mktemp -d)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() { kill $(jobs -p) 2>/dev/null; sysctl -qw kernel.bpf_stats_enabled="$old_stats"; rm -rf "$out"; }
trap cleanup EXIT

# run_time_ns / run_cnt of BPF programs are only counted while this is on
sysctl -qw kernel.bpf_stats_enabled=1

# a busy machine: one CPU-bound and one syscall-bound process per CPU, for the whole run
for _ in $(seq "$(nproc)"); do
	build/fixtures/cpu_split $((DURATION + 5)) &
	build/fixtures/syscall_heavy $((DURATION + 5)) &
done

echo "ebpfprof bench: whole system, $DURATION s at $FREQ Hz, $(nproc) CPUs, $(($(nproc) * 2)) busy processes"
start=$(date +%s.%N)
"$EBPFPROF" --duration "$DURATION" --frequency "$FREQ" --verbose --output "$out/bench.pb.gz" 2>"$out/log"
rc=$?
end=$(date +%s.%N)
if [ $rc != 0 ]; then
	echo "ebpfprof failed (exit $rc):"; grep -v '^libbpf' "$out/log" | tail -5; exit 1
fi
samples=$(sed -n 's/.*: \([0-9]*\) samples on.*/\1/p' "$out/log")
ns=$(sed -n 's/.*, \([0-9]*\) ns per sample.*/\1/p' "$out/log")
cpu=$(sed -n 's/.*self: user \([0-9.]*\) s, system \([0-9.]*\) s.*/\1 \2/p' "$out/log")
rss=$(sed -n 's/.*max rss \([0-9]*\) KiB.*/\1/p' "$out/log")
size=$(stat -c %s "$out/bench.pb.gz")
read -r ucpu scpu <<<"$cpu"
printf '%-38s %s\n' "samples" "$samples"
printf '%-38s %s ns (target < 2000)\n' "BPF cost per sample" "$ns"
calc() { awk "BEGIN { print $1 }"; }
printf '%-38s %.3f s user + %.3f s system = %.3f%% of one CPU\n' "profiler CPU" "$ucpu" "$scpu" \
	"$(calc "($ucpu + $scpu) * 100 / $DURATION")"
printf '%-38s %.1f MB (target < 20)\n' "profiler peak RSS" "$(calc "$rss / 1024")"
printf '%-38s %s bytes (%.1f bytes per sample)\n' "profile size (pprof, gzip)" "$size" \
	"$(calc "$size / ($samples + 0.0001)")"
printf '%-38s %.2f s\n' "wall time incl. symbolization" "$(calc "$end - $start")"
grep -E 'lost|symbols:' "$out/log" | sed 's/^ebpfprof: /  /'

# the same job done by bpftrace, for scale: its cost per sample under the same load
if command -v bpftrace >/dev/null && command -v bpftool >/dev/null; then
	timeout -s INT "$DURATION" bpftrace -e "profile:hz:$FREQ { @[kstack, ustack, comm] = count(); }" \
		>/dev/null 2>&1 &
	bt=$!
	sleep $((DURATION - 2))
	bt_ns=$(bpftool prog show 2>/dev/null | awk '/perf_event/ && /name '"$FREQ"'/ {
		for (i = 1; i <= NF; i++) { if ($i == "run_time_ns") t = $(i + 1); if ($i == "run_cnt") c = $(i + 1) }
	} END { if (c) printf "%d", t / c }')
	wait $bt 2>/dev/null
	printf '%-38s %s ns\n' "bpftrace, same job, cost per sample" "${bt_ns:-?}"
else
	echo "bpftrace: not installed, no comparison (apt-get install bpftrace)"
fi
