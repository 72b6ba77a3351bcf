#!/usr/bin/env bash
# unwind.sh -- frame pointers against CFI: BPF ns per sample, complete stacks machine-wide, table build cost
set -u
cd "$(dirname "$0")/../.."
EBPFPROF=${EBPFPROF:-build/ebpfprof}
F=build/fixtures
SECONDS_RUN=${SECONDS_RUN:-10}
ROUNDS=${ROUNDS:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"; kill $(jobs -p) 2>/dev/null' EXIT

# A user stack is complete when its outermost frame is where a thread begins.
complete_share() {	# folded file -> "percent samples"
	awk '{
		n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";")
		root = ""
		for (i = 2; i <= k; i++) if (f[i] !~ /_\[k\]$/) { root = f[i]; break }
		if (root == "") next	# kernel-only: no user stack to judge
		all += n
		if (root ~ /^(_start|clone3?|__clone3?|start_thread|runtime\.(goexit|rt0_go|mstart)(\.abi0)?)$/) hit += n
	} END { printf "%.1f %d\n", all ? 100 * hit / all : 0, all }' "$1"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "== unwinding: frame pointers vs CFI ($ROUNDS alternating rounds of ${SECONDS_RUN} s, whole machine at 99 Hz)"
echo "   load: $(cut -d' ' -f1-3 /proc/loadavg)"
sysctl -qw kernel.bpf_stats_enabled=1
for r in $(seq "$ROUNDS"); do
	for mode in fp cfi; do
		# the same mix each time: C without frame pointers, libc callbacks, C++, and the usual load
		for w in unwind/unwind_deep unwind/unwind_qsort unwind/unwind_cxx cpu_split; do
			"$F/$w" $((SECONDS_RUN + 2)) >/dev/null 2>&1 &
		done
		sleep 0.5
		"$EBPFPROF" --unwind $mode --duration "$SECONDS_RUN" --format folded -v \
			-o "$out/$mode.$r.folded" 2>"$out/$mode.$r.err"
		wait
		sed -n 's/.* \([0-9]*\) ns per sample.*/\1/p' "$out/$mode.$r.err" >>"$out/$mode.ns"
		complete_share "$out/$mode.$r.folded" | cut -d' ' -f1 >>"$out/$mode.complete"
	done
done
sysctl -qw kernel.bpf_stats_enabled=0

printf '   %-6s %14s %22s\n' method "BPF ns/sample" "complete user stacks"
for mode in fp cfi; do
	printf '   %-6s %14s %21s%%\n' $mode "$(median <"$out/$mode.ns")" "$(median <"$out/$mode.complete")"
done
echo "   CFI tables for this run: $(grep -h 'unwind tables' "$out/cfi.1.err" | sed 's/.*unwind tables: //')"
echo "   CFI walks: $(grep -h 'user stacks:' "$out/cfi.1.err" | sed 's/.*user stacks: //')"

if [ -x "$F/unwind_table_bench" ] && [ -f tests/bench/unwind_table.sh ]; then
	echo
	bash tests/bench/unwind_table.sh
fi
