#!/usr/bin/env bash
# compare.sh -- ebpfprof beside perf and bpftrace: slowdown, own CPU and RSS, BPF cost per sample, stop -> file, size
#
# Public tools only: perf (linux-perf), bpftrace, perl, python3. Runs whole.sh (one whole-system run
# per profiler on a busy machine) and slowdown.sh (a CPU-bound and a context-switch-heavy workload
# under each profiler, alternating rounds). About 10 minutes; QUICK=1 about 2. Knobs:
#   BENCH_WHOLE_SECONDS (60; QUICK 10)   length of each whole-system run
#   BENCH_WHOLE_FREQUENCY (99)           its sampling rate, the same for all three profilers
#   BENCH_ROUNDS (5; QUICK 2)            alternating rounds of the slowdown matrix
#   BENCH_FREQUENCIES ("19 99 999")      ebpfprof's rates in the matrix
#   BENCH_WORK_UNITS (6000; QUICK 1500)  fixed_work units per thread (about 3 s on an idle 2-CPU VM)
#   BENCH_MSG_LOOPS (500; QUICK 150)     perf bench sched messaging -l (with -g BENCH_MSG_GROUPS, 10)
#   BENCH_PARTS ("whole slowdown")       which parts to run
set -u
cd "$(dirname "$0")/../.."
. tests/bench/lib.sh
[ -x "$EBPFPROF" ] || { echo "compare bench: $EBPFPROF missing (make)"; exit 1; }
echo "== ebpfprof $("$EBPFPROF" --version 2>&1 | head -1) vs $(perf --version 2>/dev/null) vs $(bpftrace --version 2>/dev/null)"
echo "== $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), kernel $(uname -r)," \
	"$(date -u +%FT%TZ), load $(loadavg)${QUICK:+, QUICK=$QUICK}"
rc=0
for part in ${BENCH_PARTS:-whole slowdown}; do
	echo
	bash "tests/bench/$part.sh" || rc=1
done
exit $rc
