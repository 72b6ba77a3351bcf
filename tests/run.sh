#!/usr/bin/env bash
# run.sh -- runs every unit test binary and integration script, counts PASS/FAIL/SKIP lines, prints the summary
set -u
cd "$(dirname "$0")/.."
export EBPFPROF=${EBPFPROF:-$PWD/build/ebpfprof}
export BUILD=${BUILD:-$PWD/build}
export PATH=$PATH:/usr/lib/go/bin
log=$(mktemp)
trap 'rm -f "$log"' EXIT
only=${TESTS:-}

run_one() {	# name, command...: a binary that crashes or exits non-zero without a FAIL line still fails
	local name=$1; shift
	[ -n "$only" ] && [[ "$name" != *$only* ]] && return
	echo "== $name"
	local out rc
	out=$(timeout "${TEST_TIMEOUT:-300}" "$@" 2>&1); rc=$?
	printf '%s\n' "$out"
	printf '%s\n' "$out" | grep -E '^(PASS|FAIL|SKIP): ' >>"$log"
	if [ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^FAIL: '; then
		echo "FAIL: $name: exited with status $rc" | tee -a "$log"
	fi
}

# unit tests by folder, as make builds them: build/tests/unit/<stage>/test_x
for t in $(find "$BUILD/tests/unit" -type f -name 'test_*' -perm -u+x 2>/dev/null | sort); do
	run_one "$(basename "$t")" "$t"
done
for t in tests/integration/test_*.sh; do
	[ -f "$t" ] && run_one "$(basename "$t" .sh)" bash "$t"
done
# real containers: the first run builds the images' Debian bases with debootstrap (minutes)
for t in tests/containers/test_*.sh; do
	[ -f "$t" ] && TEST_TIMEOUT=${CONTAINERS_TIMEOUT:-1500} run_one "$(basename "$t" .sh)" bash "$t"
done

pass=$(grep -c '^PASS: ' "$log")
fail=$(grep -c '^FAIL: ' "$log")
skip=$(grep -c '^SKIP: ' "$log")
echo
grep '^SKIP: ' "$log" | sed 's/^/skipped: /'
grep '^FAIL: ' "$log" | sed 's/^/failed: /'
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
