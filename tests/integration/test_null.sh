#!/usr/bin/env bash
# test_null.sh -- the test-only null runtime, added by the runtimes/README.md checklist alone: named, split, counted
set -u
SUITE=null
. "$(dirname "$0")/lib.sh"
FIX=$BUILD/fixtures
RT=$BUILD/test-rt/ebpfprof	# make test-runtimes: ebpfprof with runtimes/null built in
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT

# cum% of one function in `go tool pprof -top -cum` output
cum_pct() { awk -v f="$2" '$6 == f { sub("%", "", $5); print $5; found=1 } END { if (!found) print -1 }' "$1"; }
within() { awk -v v="$1" -v want="$2" -v tol="$3" 'BEGIN { d = v - want; if (d < 0) d = -d; exit !(v >= 0 && d <= tol) }'; }

# alpha (which calls beta) and gamma under main: each function's own share against the split the
# interpreter measured of its own CPU, within 5 points, read back by go tool pprof
test_split() {
	[ -x "$RT" ] || { fail split "no $RT (make test-runtimes)"; return; }
	"$FIX/null_interp" 6 >"$tmp/split.out" & local pid=$!
	sleep 0.3
	"$RT" -v --pid $pid --duration 4 --frequency 299 --output "$tmp/split.pb.gz" 2>"$tmp/split.err" ||
		{ fail split "ebpfprof failed: $(tail -1 "$tmp/split.err")"; return; }
	wait $pid
	go tool pprof -top -cum -nodecount=100 -symbolize=none "$tmp/split.pb.gz" >"$tmp/split.top" 2>/dev/null
	local a b g main want ok=1
	main=$(cum_pct "$tmp/split.top" null:main)
	a=$(cum_pct "$tmp/split.top" null:alpha) b=$(cum_pct "$tmp/split.top" null:beta)
	g=$(cum_pct "$tmp/split.top" null:gamma)
	read -r _ wa _ wb _ wg <"$tmp/split.out"
	a=$(awk -v a="$a" -v b="$b" 'BEGIN { print a - b }')	# alpha's own: beta runs under it
	for pair in "alpha $a $wa" "beta $b $wb" "gamma $g $wg"; do
		set -- $pair
		echo "  null:$1 $2% (the interpreter measured $3%)"
		within "$2" "$3" 5 || ok=0
	done
	# every sample of the process is under null:main: no frame skipped, none invented
	[ "${main%.*}" -ge 99 ] || { ok=0; echo "  null:main holds $main% of the samples"; }
	grep -q '^ebpfprof: null: processes_total=1 .*frames_unnamed_total=0 frames_lost_total=0' "$tmp/split.err" ||
		{ ok=0; grep '^ebpfprof: null:' "$tmp/split.err"; }
	[ $ok = 1 ] && pass split || fail split "shares off by more than 5 points, or frames unnamed"
}

# the agent's /metrics has the runtime's families, written from its declared statistics
test_metrics() {
	"$FIX/null_interp" 8 >/dev/null & local pid=$!
	"$RT" agent --frequency 99 --interval 2 --listen 127.0.0.1:0 2>"$tmp/agent.err" & local agent=$!
	local port named=""
	port=$(wait_port "$tmp/agent.err") || { fail metrics "the agent did not start"; return; }
	for _ in $(seq 60); do
		named=$(curl -sf "http://127.0.0.1:$port/metrics" | sed -n 's/^ebpfprof_null_frames_named_total \([0-9]*\)$/\1/p')
		[ "${named:-0}" -gt 0 ] && break
		sleep 0.2
	done
	curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/metrics"
	stop $agent
	kill $pid 2>/dev/null
	if [ "${named:-0}" -gt 0 ] && grep -q '^# HELP ebpfprof_null_frames_named_total Null frames named$' "$tmp/metrics" &&
		grep -q '^# TYPE ebpfprof_null_processes_total counter$' "$tmp/metrics"; then
		pass metrics
	else
		fail metrics "no ebpfprof_null_* families with named frames: $(grep -c ebpfprof_null_ "$tmp/metrics") lines"
	fi
}

# built only for tests: the shipped binary has neither its userspace part nor its BPF map
test_not_shipped() {
	if ! grep -q null_procs "$EBPFPROF" && grep -q null_procs "$RT" &&
		! "$EBPFPROF" -v --duration 0.3 --output "$tmp/none.pb.gz" 2>&1 | grep -q '^ebpfprof: null:'; then
		pass not_shipped
	else
		fail not_shipped "the null runtime is in $EBPFPROF"
	fi
}

run_test test_split
run_test test_metrics
run_test test_not_shipped
