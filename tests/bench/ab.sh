#!/usr/bin/env bash
# ab.sh -- two ebpfprof builds side by side under one load: BPF ns per sample and start-up time, alternating
# usage: ab.sh BEFORE AFTER [ROUNDS (4)] [SECONDS (10)] [HZ (99)]
#   BEFORE, AFTER: ebpfprof binaries (e.g. a build of the last release's commit, and build/ebpfprof)
# The load: a CPU split and a syscall-bound process per CPU, and a CPython split (its frames walked).
set -u
cd "$(dirname "$0")/../.."
before=$1 after=$2 rounds=${3:-4} secs=${4:-10} hz=${5:-99}
FIX=${BUILD:-$PWD/build}/fixtures
py=$(ls -d /root/.pyenv/versions/3.12*/bin/python3.12 2>/dev/null | head -1)
out=$(mktemp -d)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; sysctl -qw kernel.bpf_stats_enabled="$old_stats"; rm -rf "$out"' EXIT
sysctl -qw kernel.bpf_stats_enabled=1

load=$((rounds * 2 * (secs + 4) + 30))
for _ in $(seq "$(nproc)"); do
	"$FIX/cpu_split" $load >/dev/null &
	"$FIX/syscall_heavy" $load >/dev/null &
done
[ -n "$py" ] && "$py" tests/fixtures/python/split.py alternate $load "$out/gate" >/dev/null 2>&1 &
touch "$out/gate"
sleep 1

# ns: BPF ns per sample of one run of BIN
ns() { "$1" -v --duration "$secs" --frequency "$hz" --output /dev/null 2>&1 |
	sed -n 's/.* \([0-9]*\) ns per sample.*/\1/p'; }
# start: seconds from exec to a 0.1 s profile written (BPF load and verification, attach, teardown)
start() { local t0=$(date +%s%N); "$1" --duration 0.1 --output /dev/null 2>/dev/null; echo $(( ($(date +%s%N) - t0) / 1000000 )); }

echo "A/B: $hz Hz, $secs s a run, $rounds rounds alternating, $(nproc) CPUs; BPF ns per sample, start-up ms"
printf '%-6s %12s %12s %10s %10s\n' round before after "start b" "start a"
for r in $(seq "$rounds"); do
	b=$(ns "$before") a=$(ns "$after") sb=$(start "$before") sa=$(start "$after")
	printf '%-6s %12s %12s %10s %10s\n' "$r" "$b" "$a" "$sb" "$sa"
	echo "$b $a $sb $sa" >>"$out/rows"
done
awk '{ b += $1; a += $2; sb += $3; sa += $4; n++ } END {
	printf "%-6s %12d %12d %10d %10d\n", "mean", b / n, a / n, sb / n, sa / n }' "$out/rows"
