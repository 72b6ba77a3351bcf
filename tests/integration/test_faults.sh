#!/usr/bin/env bash
# test_faults.sh -- the agent under faults: tiny BPF maps, a slow backend, garbage answers, a full spool disk, SIGTERM mid-push
set -u
SUITE=faults
. "$(dirname "$0")/lib.sh"
FIX=$BUILD/fixtures
tmp=$(mktemp -d)
mnt=
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; [ -n "$mnt" ] && umount "$mnt" 2>/dev/null; rm -rf "$tmp"' EXIT

metric() {	# metrics file, name (with labels): its value, 0 when absent
	awk -v n="$2" '$1 == n { v = $2 } END { print (v == "" ? 0 : v) + 0 }' "$1"
}

taken_of() { sed -n 's/.*agent stopped: \([0-9]*\) samples taken.*/\1/p' "$1"; }

# Every window of SERVICE accepted once, contiguous and in order, summing to TOTAL samples.
# Contiguous to the nanosecond, by the profiles' own time_nanos and duration_nanos: the
# query's whole seconds may overlap by one after a window shorter than a second.
check_delivered() {	# log, service, min_windows, total
	python3 - "$@" <<'EOF2'
import json, sys
log, service, min_windows, total = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
reqs = [json.loads(l) for l in open(log) if l.strip()]
ok = [r for r in reqs if r.get("status") == 200 and r.get("name") == service and r.get("error") == ""]
errs = []
if len(ok) < min_windows:
    errs.append("%d windows, want >= %d" % (len(ok), min_windows))
for a, b in zip(ok, ok[1:]):
    if b["time_nanos"] != a["time_nanos"] + a["duration_nanos"]:
        errs.append("windows not contiguous, duplicated or out of order: %d+%d then %d" %
                    (a["time_nanos"], a["duration_nanos"], b["time_nanos"]))
        break
got = sum(r["total"] for r in ok)
if got != total:
    errs.append("windows sum to %d samples, BPF took %d" % (got, total))
print("  %d windows delivered, %d samples, %d requests in all" % (len(ok), got, len(reqs)))
for e in errs:
    print("  " + e)
sys.exit(1 if errs else 0)
EOF2
}

test_tiny_maps() {	# one-entry BPF maps: losses counted in /metrics and in the windows, no crash
	"$FIX/cpu_split" 30 & local w1=$!
	"$FIX/syscall_heavy" 30 & local w2=$!
	"$EBPFPROF" agent --interval 1 --frequency 499 --stack-storage-size 1 --count-storage-size 1 \
		--listen 127.0.0.1:0 --output-dir "$tmp/tiny" 2>"$tmp/tiny.err" & local agent=$!
	local port
	port=$(wait_port "$tmp/tiny.err") || { fail tiny_maps "agent did not listen"; stop $agent; kill $w1 $w2; return; }
	sleep 3.5
	curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/tiny.metrics"
	stop $agent; local rc=$?
	kill $w1 $w2
	local full stacks files
	full=$(metric "$tmp/tiny.metrics" 'ebpfprof_samples_lost_total{reason="counts_map_full"}')
	stacks=$(($(metric "$tmp/tiny.metrics" 'ebpfprof_samples_lost_total{reason="user_stack_map_full"}') +
		$(metric "$tmp/tiny.metrics" 'ebpfprof_samples_lost_total{reason="kernel_stack_map_full"}')))
	files=$(ls "$tmp/tiny" 2>/dev/null | wc -l)
	echo "  counts_map_full=$full stack_map_full=$stacks, $files window files, exit $rc"
	if [ $rc = 0 ] && [ "$full" -gt 0 ] && [ "$stacks" -gt 0 ] && [ "$files" -gt 0 ] &&
		grep -q 'lost or partial' "$tmp/tiny.err"; then
		pass tiny_maps
	else
		tail -3 "$tmp/tiny.err"; fail tiny_maps "losses not counted, or the agent failed"
	fi
}

test_slow_backend() {	# answers only after the push timeout for 3 requests: timeouts counted, all delivered after
	start_collector "$tmp/slow.log" -fault slow -fault-delay-ms 4000 -fail-count 3 ||
		{ fail slow_backend "collector did not start"; return; }
	"$FIX/cpu_split" 30 & local work=$!
	"$EBPFPROF" agent --interval 1 --pid $work --push "http://$COLLECTOR_ADDR" --push-timeout 1 \
		--listen 127.0.0.1:0 2>"$tmp/slow.err" & local agent=$!
	local port
	port=$(wait_port "$tmp/slow.err") || { fail slow_backend "agent did not listen"; stop $agent; kill $work; return; }
	sleep 9	# three timeouts with backoff, then the queue catches up
	curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/slow.metrics"
	stop $agent; local rc=$?
	stop $COLLECTOR_PID
	kill $work
	local timeouts
	timeouts=$(metric "$tmp/slow.metrics" ebpfprof_push_timeouts_total)
	echo "  $timeouts timeouts"
	if [ $rc = 0 ] && [ "$timeouts" -ge 3 ] &&
		check_delivered "$tmp/slow.log" cpu_split 6 "$(taken_of "$tmp/slow.err")"; then
		pass slow_backend
	else
		tail -3 "$tmp/slow.err"; fail slow_backend "exit $rc, $timeouts timeouts (want >= 3)"
	fi
}

test_garbage() {	# non-HTTP bytes, a dropped connection, 500s: retried, then all delivered in order
	local mode
	for mode in garbage close 500; do
		local flags=(-fault "$mode" -fail-count 2)
		[ $mode = 500 ] && flags=(-fail-status 500 -fail-count 3)
		start_collector "$tmp/$mode.log" "${flags[@]}" || { fail "garbage_$mode" "collector did not start"; continue; }
		"$FIX/cpu_split" 30 & local work=$!
		"$EBPFPROF" agent --interval 1 --pid $work --push "http://$COLLECTOR_ADDR" \
			--listen 127.0.0.1:0 2>"$tmp/$mode.err" & local agent=$!
		local port
		port=$(wait_port "$tmp/$mode.err") || { fail "garbage_$mode" "agent did not listen"; stop $agent; kill $work; continue; }
		sleep 6
		curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/$mode.metrics"
		stop $agent; local rc=$?
		stop $COLLECTOR_PID
		kill $work
		local failures
		failures=$(metric "$tmp/$mode.metrics" ebpfprof_push_failures_total)
		if [ $rc = 0 ] && [ "$failures" -ge 2 ] &&
			check_delivered "$tmp/$mode.log" cpu_split 4 "$(taken_of "$tmp/$mode.err")"; then
			pass "garbage_$mode"
		else
			tail -3 "$tmp/$mode.err"; fail "garbage_$mode" "exit $rc, $failures failures counted"
		fi
	done
	# 200 with a junk body: delivered as far as HTTP goes, counted as sent, nothing breaks
	start_collector "$tmp/junk.log" -fault junk -fail-count 2 || { fail garbage_junk "collector did not start"; return; }
	"$FIX/cpu_split" 30 & local work=$!
	"$EBPFPROF" agent --interval 1 --pid $work --push "http://$COLLECTOR_ADDR" 2>"$tmp/junk.err" &
	local agent=$!
	wait_started "$tmp/junk.err"
	sleep 4.5
	stop $agent; local rc=$?
	stop $COLLECTOR_PID
	kill $work
	if [ $rc = 0 ] && python3 - "$tmp/junk.log" "$(taken_of "$tmp/junk.err")" <<'EOF2'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
got = sum(r["total"] for r in reqs if r.get("status") == 200)
print("  junk: %d requests answered 200, %d samples of %s" % (len(reqs), got, sys.argv[2]))
sys.exit(0 if got == int(sys.argv[2]) and len(reqs) >= 3 else 1)
EOF2
	then
		pass garbage_junk
	else
		tail -3 "$tmp/junk.err"; fail garbage_junk "exit $rc"
	fi
}

test_spool_disk_full() {	# a 64 KiB spool with the backend down: ENOSPC counted, windows kept, all delivered later
	mnt=$tmp/spool
	mkdir -p "$mnt"
	if ! mount -t tmpfs -o size=64k ebpfprof-spool "$mnt" 2>"$tmp/mount.err"; then
		skip spool_disk_full "cannot mount a tmpfs: $(cat "$tmp/mount.err")"; mnt=; return
	fi
	local port
	port=$(free_port)
	"$FIX/cpu_split" 60 & local work=$!
	"$EBPFPROF" agent --interval 1 --frequency 499 --pid $work --push "http://127.0.0.1:$port" \
		--spool-dir "$mnt" --spool-max-mb 1 --queue-max-mb 4 --listen 127.0.0.1:0 \
		2>"$tmp/full.err" & local agent=$!
	local aport
	aport=$(wait_port "$tmp/full.err") || { fail spool_disk_full "agent did not listen"; stop $agent; kill $work; return; }
	# fill it: each window of cpu_split at 499 Hz is a few KiB
	local errs=0
	for _ in $(seq 30); do
		sleep 1
		curl -sf "http://127.0.0.1:$aport/metrics" >"$tmp/full.metrics"
		errs=$(metric "$tmp/full.metrics" ebpfprof_push_spool_errors_total)
		[ "$errs" -gt 1 ] && break
	done
	local used
	used=$(du -sk "$mnt" | cut -f1)
	# space returns, then the backend
	mount -o remount,size=8m "$mnt"
	sleep 2
	start_collector "$tmp/full.log" -listen "127.0.0.1:$port" || { fail spool_disk_full "collector did not start"; stop $agent; return; }
	# the backoff grew while the backend was down (up to 30 s): wait for the queue to empty
	for _ in $(seq 60); do
		sleep 1
		curl -sf "http://127.0.0.1:$aport/metrics" >"$tmp/full2.metrics"
		[ "$(metric "$tmp/full2.metrics" ebpfprof_push_sent_total)" -gt 0 ] &&
			[ "$(metric "$tmp/full2.metrics" ebpfprof_push_queue_items)" -le 1 ] && break
	done
	stop $agent; local rc=$?
	stop $COLLECTOR_PID
	kill $work
	local dropped left
	dropped=$(metric "$tmp/full2.metrics" ebpfprof_push_dropped_total)
	left=$(ls "$mnt" | grep -c . )
	echo "  $errs spool write errors at ${used} KiB used; then $dropped dropped, $left files left in the spool"
	if [ $rc = 0 ] && [ "$errs" -gt 1 ] && [ "$dropped" = 0 ] && grep -q 'keeping items in memory' "$tmp/full.err" &&
		check_delivered "$tmp/full.log" cpu_split 10 "$(taken_of "$tmp/full.err")"; then
		pass spool_disk_full
	else
		grep -E 'spool|push' "$tmp/full.err" | tail -4; fail spool_disk_full "exit $rc, $errs spool errors, $dropped dropped"
	fi
	umount "$mnt"
	mnt=
}

test_sigterm_mid_push() {	# SIGTERM while a push hangs: the windows wait in the spool and arrive after a restart
	start_collector "$tmp/term1.log" -fault slow -fault-delay-ms 60000 -fail-count 1000 ||
		{ fail sigterm_mid_push "collector did not start"; return; }
	"$FIX/cpu_split" 60 & local work=$!
	"$EBPFPROF" agent --interval 1 --pid $work --push "http://$COLLECTOR_ADDR" --push-timeout 30 \
		--spool-dir "$tmp/term-spool" 2>"$tmp/term1.err" & local agent=$!
	wait_started "$tmp/term1.err"
	sleep 3.5
	local start=$SECONDS
	stop $agent; local rc=$?
	local took=$((SECONDS - start))
	local taken spooled
	taken=$(taken_of "$tmp/term1.err")
	spooled=$(ls "$tmp/term-spool" | grep -c .)
	stop $COLLECTOR_PID
	# the same spool, a backend that works: what the first run could not send goes now
	start_collector "$tmp/term2.log" || { fail sigterm_mid_push "collector did not start"; return; }
	"$EBPFPROF" agent --interval 1 --pid $work --push "http://$COLLECTOR_ADDR" \
		--spool-dir "$tmp/term-spool" 2>"$tmp/term2.err" & agent=$!
	wait_started "$tmp/term2.err"
	sleep 2.5
	stop $agent; local rc2=$?
	stop $COLLECTOR_PID
	kill $work
	# the first run's windows are the oldest: they lead, in order, and add up to what it took
	python3 - "$tmp/term2.log" "$taken" <<'EOF2'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ok = [r for r in reqs if r.get("status") == 200 and r.get("name") == "cpu_split"]
taken = int(sys.argv[2])
got, n = 0, 0
for a, b in zip(ok, ok[1:] + [None]):
    got += a["total"]; n += 1
    if got >= taken or b is None or b["time_nanos"] != a["time_nanos"] + a["duration_nanos"]:
        break
print("  first run: %d samples taken; %d of its windows delivered by the second, %d samples" % (taken, n, got))
sys.exit(0 if got == taken else 1)
EOF2
	local ok=$?
	echo "  SIGTERM to exit: ${took} s, $spooled files spooled; exit $rc then $rc2"
	if [ $rc = 0 ] && [ $rc2 = 0 ] && [ $took -le 8 ] && [ "$spooled" -gt 0 ] && [ $ok = 0 ]; then
		pass sigterm_mid_push
	else
		tail -3 "$tmp/term1.err"; fail sigterm_mid_push "exit $rc/$rc2 in ${took} s, $spooled spooled"
	fi
}

test_sigterm_no_spool() {	# without a spool the bound is the 5 s drain: past it the loss is said and counted
	start_collector "$tmp/term3.log" -fault slow -fault-delay-ms 60000 -fail-count 1000 ||
		{ fail sigterm_no_spool "collector did not start"; return; }
	"$FIX/cpu_split" 30 & local work=$!
	"$EBPFPROF" agent --interval 1 --pid $work --push "http://$COLLECTOR_ADDR" --push-timeout 30 \
		2>"$tmp/term3.err" & local agent=$!
	wait_started "$tmp/term3.err"
	sleep 2.5
	local start=$SECONDS
	stop $agent; local rc=$?
	local took=$((SECONDS - start))
	stop $COLLECTOR_PID
	kill $work
	if [ $rc = 0 ] && [ $took -le 8 ] && grep -q 'undelivered windows are lost' "$tmp/term3.err" &&
		grep -Eq 'dropping [1-9][0-9]* unsent items at exit' "$tmp/term3.err"; then
		pass sigterm_no_spool
	else
		tail -3 "$tmp/term3.err"; fail sigterm_no_spool "exit $rc in ${took} s, loss not reported"
	fi
}

run_test test_tiny_maps
run_test test_slow_backend
run_test test_garbage garbage_garbage garbage_close garbage_500 garbage_junk
run_test test_spool_disk_full
run_test test_sigterm_mid_push
run_test test_sigterm_no_spool
