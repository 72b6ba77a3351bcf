#!/usr/bin/env bash
# run.sh -- runs libFuzzer targets for a while each; prints executions, exec/s and crashes per target
# usage: run.sh [-s SECONDS] [-r] [-c] [-t SUITE] [-j JOBS] TARGET...
#   -s N      fuzz each target for N seconds (0: none)
#   -r        first run every input under tests/fuzz/regressions/TARGET/ once
#   -c        keep what the fuzzer finds in FUZZ_DIR/corpus/TARGET for the next run
#   -t SUITE  also print PASS:/FAIL: SUITE/TARGET lines, as tests/run.sh counts them
#   -j N      targets at once (default: the number of CPUs)
# Exit status 0 when no target crashed and every regression input passed.
set -u
cd "$(dirname "$0")/../.."
FUZZ_DIR=${FUZZ_DIR:-build/fuzz}
secs=5 regress=0 keep=0 suite= jobs=$(nproc 2>/dev/null || echo 1)
while getopts s:rct:j: o; do
	case $o in
	s) secs=$OPTARG ;;
	r) regress=1 ;;
	c) keep=1 ;;
	t) suite=$OPTARG ;;
	j) jobs=$OPTARG ;;
	*) sed -n '2,9s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "run.sh: no targets" >&2; exit 2; }

abs=$(realpath -m "$FUZZ_DIR")
# results and logs of this run stay private (make test and make fuzz may run at once);
# the logs are copied to FUZZ_DIR/logs at the end
work=$(mktemp -d "${TMPDIR:-/tmp}/ebpfprof-fuzz-run-XXXXXX")
trap 'rm -rf "$work"' EXIT
src=$PWD/tests/fuzz	# absolute: a target may chdir (fuzz_config does) before libFuzzer reads its paths
mkdir -p "$abs/logs" "$abs/artifacts"
# LeakSanitizer: libFuzzer reports a leak as a crash; known leaks of libraries go here
[ -f tests/fuzz/lsan.supp ] && export LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}abort_on_error=0:detect_leaks=1"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1"

# one target: writes "execs exec/s crashes status note" to $work/TARGET.result
fuzz_one() {
	local t=$1 bin=$abs/fuzz_$t log=$work/$t.log rlog=$work/$t.regressions.log
	local art=$abs/artifacts/$t/ status=ok note="" execs=0 eps=0 crashes=0 rc
	local dirs=() regs=()

	: >"$log"
	: >"$rlog"
	if [ ! -x "$bin" ]; then
		echo "- - - missing $bin not built (make fuzz-build)" >"$work/$t.result"
		return
	fi
	mkdir -p "$art"
	if [ "$regress" = 1 ] && [ -d "$src/regressions/$t" ]; then
		regs=("$src"/regressions/"$t"/*)
		[ -e "${regs[0]}" ] || regs=()
	fi
	if [ ${#regs[@]} -gt 0 ]; then
		# files, not directories: libFuzzer runs each once and stops at the first crash
		timeout 300 "$bin" -close_fd_mask=3 -timeout=10 "${regs[@]}" >"$rlog" 2>&1
		rc=$?
		if [ $rc -ne 0 ]; then
			status=regression
			note="a regression input fails (exit $rc, $(grep -m1 -o 'Running: .*' "$rlog" | tail -1))"
		fi
	fi
	if [ "$secs" -gt 0 ]; then
		if [ "$keep" = 1 ]; then
			dirs=("$abs/corpus/$t")
		else
			dirs=("$work/corpus-$t")
		fi
		mkdir -p "${dirs[0]}"
		[ -d "$abs/seeds/$t" ] && dirs+=("$abs/seeds/$t")
		[ -d "$src/seeds/$t" ] && dirs+=("$src/seeds/$t")
		local dict=()
		[ -f "$src/$t.dict" ] && dict=(-dict="$src/$t.dict")
		timeout $((secs + 120)) "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
			-close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$art" "${dict[@]}" \
			"${dirs[@]}" >"$log" 2>&1
		rc=$?
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
		eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
		crashes=$(grep -c 'Test unit written to' "$log")
		if [ $rc -ne 0 ] || [ "$crashes" -gt 0 ]; then
			status=crash
			note="exit $rc; $(grep -m1 -o 'Test unit written to .*' "$log" || echo "see $abs/logs/$t.log")"
			[ "$crashes" -gt 0 ] || crashes=1
		fi
	fi
	echo "${execs:-0} ${eps:-0} $crashes $status $note" >"$work/$t.result"
}

running=0
for t in "$@"; do
	fuzz_one "$t" &
	running=$((running + 1))
	if [ $running -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait
cp "$work"/*.log "$abs/logs/" 2>/dev/null

failed=0
printf '%-10s %12s %8s %7s  %s\n' target executions exec/s crashes status
for t in "$@"; do
	read -r execs eps crashes status note <"$work/$t.result"
	printf '%-10s %12s %8s %7s  %s\n' "$t" "$execs" "$eps" "$crashes" "$status${note:+: $note}"
	[ "$status" = ok ] || failed=1
done
for t in "$@"; do
	read -r execs eps crashes status note <"$work/$t.result"
	if [ "$status" != ok ] && [ "$status" != missing ]; then
		echo
		echo "== $t: $status (logs in $abs/logs/$t*.log)"
		cat "$work/$t.regressions.log" "$work/$t.log" |
			grep -E -A 25 -m 3 '^==[0-9]+==ERROR|runtime error|fuzz check failed|deadly signal|ERROR: libFuzzer' |
			head -40
	fi
	if [ -n "$suite" ]; then
		case $status in
		ok) echo "PASS: $suite/$t ($execs runs, $eps/s)" ;;
		*) echo "FAIL: $suite/$t: $status${note:+: $note}" ;;
		esac
	fi
done
exit $failed
