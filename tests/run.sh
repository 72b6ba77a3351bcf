#!/usr/bin/env bash
# run.sh -- runs the unit test binaries and integration scripts TESTS picks (all by default), counts PASS/FAIL/SKIP lines, prints the summary
#
# TESTS is a list of words separated by spaces. A test is named by its path: unit/<stage>/test_x
# (build/tests/unit/...), integration/test_x and containers/test_x (tests/..., without .sh).
#   WORD        every test whose name contains WORD, with all its cases:
#               unit, unit/profile, oneshot, test_oneshot
#   SUITE/CASE  (a word no name contains) the tests whose name contains SUITE, running only
#               the cases whose name contains CASE: oneshot/idle_execs, pprof/id_reuse,
#               python/reuse (python3.11-reuse, python3.12-reuse-same-line, ...)
# A case's name is what its result line prints between "SUITE/" and the first colon:
# "PASS: python/python3.11-reuse: ..." is the case python3.11-reuse. Matching is by substring;
# * ? [...] are the shell's wildcards. The case part reaches the tests as TEST_CASES (read by
# tests/integration/lib.sh and tests/unit/test.h). A word that picks no case fails the run.
set -u
cd "$(dirname "$0")/.."
export EBPFPROF=${EBPFPROF:-$PWD/build/ebpfprof}
export BUILD=${BUILD:-$PWD/build}
export PATH=$PATH:/usr/lib/go/bin
log=$(mktemp)
times=$(mktemp)
trap 'rm -f "$log" "$times"' EXIT
read -ra words <<<"${TESTS:-}"
declare -A matched=()

# picks WORD NAME: true when WORD picks test NAME; sets CASE to its case part ("" for every case)
picks() {
	local w=$1 name=$2
	CASE=
	[[ "$name" == *$w* ]] && return 0
	[[ "$w" == */* ]] || return 1
	CASE=${w##*/}
	[[ "$name" == *${w%/*}* ]]
}

# marks the words whose cases appear among the result lines of one test (OUT)
mark_matched() {	# out, words...
	local out=$1 line name w
	shift
	while IFS= read -r line; do
		name=${line#*: }
		name=${name#*/}
		name=${name%%:*}
		for w in "$@"; do
			# a suite skipped as a whole (no runtime, no Docker) answers every word that picked it
			[[ "$name" == *${w##*/}* || "$name" == all ]] && matched[$w]=1
		done
	done < <(printf '%s\n' "$out" | grep -E '^(PASS|FAIL|SKIP): ')
}

run_one() {	# name, command...: a binary that crashes or exits non-zero without a FAIL line still fails
	local name=$1 w all=0 cases="" by_case=() out rc started
	shift
	[ ${#words[@]} -eq 0 ] && all=1
	for w in "${words[@]}"; do
		picks "$w" "$name" || continue
		if [ -z "$CASE" ]; then
			all=1
			matched[$w]=1
		else
			cases="$cases $CASE"
			by_case+=("$w")
		fi
	done
	[ $all = 1 ] && cases=""
	[ $all = 1 ] || [ -n "$cases" ] || return 0
	echo "== $name${cases:+ (cases:$cases)}"
	started=$SECONDS
	out=$(TEST_CASES="${cases# }" timeout "${TEST_TIMEOUT:-600}" "$@" 2>&1); rc=$?
	[ -z "$out" ] || printf '%s\n' "$out"
	# what each test costs, for keeping CI within its hour: the slowest are listed at the end
	echo "$((SECONDS - started)) $name" >>"$times"
	printf '%s\n' "$out" | grep -E '^(PASS|FAIL|SKIP): ' >>"$log"
	# killed at its time limit: the cases it never reached are lost, whatever it said before
	if [ $rc -eq 124 ]; then
		echo "FAIL: $name: stopped after ${TEST_TIMEOUT:-600} s, its later cases not run" | tee -a "$log"
	elif [ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^FAIL: '; then
		echo "FAIL: $name: exited with status $rc" | tee -a "$log"
	fi
	[ ${#by_case[@]} -eq 0 ] || mark_matched "$out" "${by_case[@]}"
}

# unit tests by folder, as make builds them: build/tests/unit/<stage>/test_x
for t in $(find "$BUILD/tests/unit" -type f -name 'test_*' -perm -u+x 2>/dev/null | sort); do
	run_one "${t#"$BUILD"/tests/}" "$t"
done
for t in tests/integration/test_*.sh; do
	[ -f "$t" ] && run_one "integration/$(basename "$t" .sh)" bash "$t"
done
# real containers: the first run builds the images' Debian bases with debootstrap (minutes)
for t in tests/containers/test_*.sh; do
	[ -f "$t" ] && TEST_TIMEOUT=${CONTAINERS_TIMEOUT:-1500} run_one "containers/$(basename "$t" .sh)" bash "$t"
done

pass=$(grep -c '^PASS: ' "$log")
fail=$(grep -c '^FAIL: ' "$log")
skip=$(grep -c '^SKIP: ' "$log")
unmatched=""
for w in "${words[@]}"; do
	[ -n "${matched[$w]:-}" ] || unmatched="$unmatched $w"
done
echo
sort -rn "$times" | head -8 | awk '{ printf "slowest: %s %d s\n", $2, $1 }'
# every test's cost, for the next budget: the build folder's, beside what it tested
sort -rn "$times" >"$BUILD/test-times.txt" 2>/dev/null || true
grep '^SKIP: ' "$log" | sed 's/^/skipped: /'
grep '^FAIL: ' "$log" | sed 's/^/failed: /'
[ -z "$unmatched" ] || echo "nothing matched TESTS word(s):$unmatched (how tests and cases are named: tests/run.sh)"
echo "$pass passed, $fail failed, $skip skipped"
[ -z "$unmatched" ] && [ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
