#!/usr/bin/env bash
# test_delivery.sh -- the agent against a collector that holds Pyroscope's server rules: no head-of-line blocking, bounded series, UTF-8, limits, old windows
set -u
SUITE=delivery
. "$(dirname "$0")/lib.sh"
FIX=$BUILD/fixtures
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT

# summary of a collector log for one service: "ok bad series_union first_ok_ns last_ok_ns"
log_summary() {	# log service
	python3 - "$1" "$2" <<'EOF'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
mine = [r for r in reqs if r.get("name") == sys.argv[2]]
ok = [r for r in mine if r["status"] == 200]
series = set()
for r in ok:
    series.update(r.get("series") or [])
contiguous = all(b["time_nanos"] == a["time_nanos"] + a["duration_nanos"] for a, b in zip(ok, ok[1:]))
print(len(ok), len(mine) - len(ok), len(series), int(contiguous))
EOF
}

wait_windows() {	# log service n: until the collector accepted n windows of service (60 s at most)
	for _ in $(seq 240); do
		[ -s "$1" ] && [ "$(log_summary "$1" "$2" | cut -d' ' -f1)" -ge "$3" ] && return 0
		sleep 0.25
	done
	return 1
}

test_no_head_of_line() {	# one service refused forever (429): the other delivers every window, on time
	cp "$FIX/cpu_split" "$tmp/svc_good"; cp "$FIX/cpu_split" "$tmp/svc_bad"
	start_collector "$tmp/hol.log" -fail-service svc_bad -fail-count -1 -fail-status 429 ||
		{ fail no_head_of_line "collector did not start"; return; }
	"$tmp/svc_good" 30 & local g=$!
	"$tmp/svc_bad" 30 & local b=$!
	"$EBPFPROF" agent --interval 1 --pid $g,$b --push "http://$COLLECTOR_ADDR" \
		--push-max-attempts 3 2>"$tmp/hol.err" & local agent=$!
	wait_started "$tmp/hol.err"
	sleep 8.5
	stop $agent; local rc=$?
	stop $COLLECTOR_PID
	kill $g $b 2>/dev/null
	local good bad
	read -r good _ _ contiguous < <(log_summary "$tmp/hol.log" svc_good)
	read -r _ bad _ _ < <(log_summary "$tmp/hol.log" svc_bad)
	# 8 windows in 8.5 s: a held queue would deliver none of svc_good's
	if [ "$rc" = 0 ] && [ "$good" -ge 7 ] && [ "$contiguous" = 1 ] && [ "$bad" -ge 3 ] &&
		grep -q 'dropping a svc_bad.* window after 3 failed attempts' "$tmp/hol.err"; then
		pass no_head_of_line
	else
		tail -3 "$tmp/hol.err"
		fail no_head_of_line "rc=$rc, svc_good delivered $good windows (contiguous $contiguous), svc_bad tried $bad times"
	fi
}

test_bounded_series() {	# 20 processes of one program: at most 3 series on the server; pid labels on request
	local pids=() i
	cp "$FIX/cpu_split" "$tmp/worker"
	for i in $(seq 20); do "$tmp/worker" 120 & pids+=($!); done	# outlive both agents on a loaded machine
	local list
	list=$(IFS=,; echo "${pids[*]}")
	start_collector "$tmp/series.log" || { fail bounded_series "collector did not start"; return; }
	"$EBPFPROF" agent --interval 2 --frequency 99 --pid "$list" --push "http://$COLLECTOR_ADDR" \
		2>"$tmp/series.err" & local agent=$!
	wait_started "$tmp/series.err"
	wait_windows "$tmp/series.log" worker 2
	stop $agent
	stop $COLLECTOR_PID
	start_collector "$tmp/series_pid.log" || { fail bounded_series "collector did not start"; return; }
	"$EBPFPROF" agent --interval 2 --frequency 99 --pid "$list" --push "http://$COLLECTOR_ADDR" \
		--push-sample-labels 2>"$tmp/series_pid.err" & agent=$!
	wait_started "$tmp/series_pid.err"
	wait_windows "$tmp/series_pid.log" worker 2
	stop $agent
	stop $COLLECTOR_PID
	kill "${pids[@]}" 2>/dev/null
	local ok bad n ok2 n2
	read -r ok bad n _ < <(log_summary "$tmp/series.log" worker)
	read -r ok2 _ n2 _ < <(log_summary "$tmp/series_pid.log" worker)
	# the control run shows the test can tell: one series per process with pid labels
	if [ "$ok" -ge 2 ] && [ "$bad" = 0 ] && [ "$n" -ge 1 ] && [ "$n" -le 3 ] && [ "$n2" -ge 15 ]; then
		pass bounded_series
		echo "  20 processes: $n series by default, $n2 with --push-sample-labels"
	else
		fail bounded_series "$ok windows, $bad refused, $n series (with pid labels: $n2 in $ok2 windows)"
	fi
}

test_invalid_utf8() {	# a program whose name is not UTF-8 is delivered, not refused
	local name=$'bad\xff\xe2\x82name'
	cp "$FIX/cpu_split" "$tmp/$name"
	start_collector "$tmp/utf8.log" || { fail invalid_utf8 "collector did not start"; return; }
	"$tmp/$name" 30 & local w=$!
	"$EBPFPROF" agent --interval 1 --pid $w --push "http://$COLLECTOR_ADDR" --push-api \
		2>"$tmp/utf8.err" & local agent=$!
	wait_started "$tmp/utf8.err"
	sleep 3.5
	stop $agent
	stop $COLLECTOR_PID
	kill $w 2>/dev/null
	local ok bad
	# the push API's service_name keeps [A-Za-z0-9_]; the comm label keeps U+FFFD
	read -r ok bad _ _ < <(log_summary "$tmp/utf8.log" bad___name)
	if [ "$ok" -ge 2 ] && [ "$bad" = 0 ] &&
		grep -qF $'comm=\\"bad\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdname' "$tmp/utf8.log"; then
		pass invalid_utf8
	else
		head -c 600 "$tmp/utf8.log"; fail invalid_utf8 "$ok windows delivered, $bad refused"
	fi
}

test_oversized_window() {	# a window over the server's sample limit goes folded into [other], counted
	local pids=() i list
	cp "$FIX/cpu_split" "$tmp/many"
	for i in $(seq 20); do "$tmp/many" 30 & pids+=($!); done
	list=$(IFS=,; echo "${pids[*]}")
	start_collector "$tmp/big.log" -max-samples 25 || { fail oversized_window "collector did not start"; return; }
	# pid labels kept: 20 processes x 3 functions make about 60 distinct samples a window
	"$EBPFPROF" agent --interval 2 --frequency 99 --pid "$list" --push-sample-labels \
		--push "http://$COLLECTOR_ADDR" --push-max-samples 25 --listen 127.0.0.1:0 \
		2>"$tmp/big.err" & local agent=$!
	local port
	port=$(wait_port "$tmp/big.err") || { fail oversized_window "agent did not listen"; stop $agent; return; }
	sleep 4.5
	curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/big.metrics"
	stop $agent
	stop $COLLECTOR_PID
	kill "${pids[@]}" 2>/dev/null
	local ok bad folded
	read -r ok bad _ _ < <(log_summary "$tmp/big.log" many)
	folded=$(awk '/^ebpfprof_push_folded_samples_total/ { print $2 }' "$tmp/big.metrics")
	if [ "$ok" -ge 2 ] && [ "$bad" = 0 ] && [ "${folded:-0}" -gt 0 ] &&
		python3 -c 'import json,sys; sys.exit(any(json.loads(l)["samples"] > 25 for l in open(sys.argv[1])))' "$tmp/big.log"; then
		pass oversized_window
		echo "  $folded samples folded into [other] over $ok windows"
	else
		fail oversized_window "$ok delivered, $bad refused, folded ${folded:-none}"
	fi
}

test_old_spooled_window() {	# windows that waited past --push-max-age are dropped by rule, the rest delivered
	local port
	port=$(free_port)
	"$FIX/cpu_split" 30 & local w=$!
	"$EBPFPROF" agent --interval 1 --pid $w --push "http://127.0.0.1:$port" --spool-dir "$tmp/spool" \
		--push-max-age 3 2>"$tmp/old.err" & local agent=$!
	wait_started "$tmp/old.err"
	sleep 6.5
	local started
	started=$(date +%s%N)
	start_collector "$tmp/old.log" -listen "127.0.0.1:$port" || { fail old_spooled_window "collector did not start"; return; }
	sleep 3
	stop $agent
	stop $COLLECTOR_PID
	kill $w 2>/dev/null
	local oldest
	oldest=$(python3 -c '
import json, sys
ok = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ok = [r for r in ok if r["status"] == 200]
print(min((r["time_nanos"] + r["duration_nanos"] for r in ok), default=0))' "$tmp/old.log")
	# nothing delivered ended more than max-age (+1 s for the retry in flight) before the backend came back
	if [ "$oldest" -gt 0 ] && [ "$oldest" -ge $((started - 4000000000)) ] &&
		grep -q 'older than --push-max-age 3 s' "$tmp/old.err"; then
		pass old_spooled_window
	else
		tail -3 "$tmp/old.err"; fail old_spooled_window "oldest delivered window ended at $oldest, backend back at $started"
	fi
}

test_otlp() {	# OTLP export decoded by Python classes protoc made from the published proto: same numbers as the pprof push
	local inc
	inc=$(otlp_proto)
	[ -n "$inc" ] || { skip otlp "Debian's opentelemetry-proto $OTLP_PROTO_VERSION could not be fetched"; return; }
	command -v protoc >/dev/null && /usr/bin/python3 -c 'import google.protobuf' 2>/dev/null ||
		{ skip otlp "protoc or python3-protobuf missing (make deps-test)"; return; }
	mkdir -p "$tmp/otlp_py" "$tmp/otlp_bodies"
	otlp_python "$inc" "$tmp/otlp_py" ||
		{ fail otlp "protoc could not compile the published proto"; return; }
	start_collector "$tmp/otlp.log" -otlp-dir "$tmp/otlp_bodies" || { fail otlp "collector did not start"; return; }
	"$FIX/cpu_split" 30 & local w=$!
	"$EBPFPROF" agent --interval 1 --frequency 199 --pid $w --push "http://$COLLECTOR_ADDR" \
		--push-otlp "http://$COLLECTOR_ADDR" --label env=test 2>"$tmp/otlp.err" & local agent=$!
	wait_started "$tmp/otlp.err"
	sleep 4.5
	stop $agent
	stop $COLLECTOR_PID
	kill $w 2>/dev/null
	/usr/bin/python3 "$(dirname "$0")/otlp_decode.py" "$tmp/otlp_py" "$tmp"/otlp_bodies/*.bin \
		>"$tmp/otlp.json" 2>"$tmp/otlp_decode.err" ||
		{ head -3 "$tmp/otlp_decode.err"; fail otlp "the published proto does not decode our export"; return; }
	local verdict
	verdict=$(python3 - "$tmp/otlp.json" "$tmp/otlp.log" <<'EOF2'
import json, sys
otlp = [json.loads(l) for l in open(sys.argv[1])]
pprof = {r["time_nanos"]: r for r in map(json.loads, open(sys.argv[2])) if r["api"] == "ingest" and r["status"] == 200}
errs, matched, leaf = [], 0, {}
for o in otlp:
    errs += o["errors"]
    if o.get("service") != "cpu_split" or o["resource"].get("env") != "test" or not o["resource"].get("host.name"):
        errs.append("resource %s" % o.get("resource"))
    if o["types"][:2] != ["samples/count", "cpu/nanoseconds"]:
        errs.append("sample types %s" % o["types"])
    p = pprof.get(o.get("time_nanos"))
    if p:
        matched += 1
        if o["totals"][0] != p["total"]:
            errs.append("window %d: OTLP says %d samples, pprof %d" % (o["time_nanos"], o["totals"][0], p["total"]))
    for k, v in o["leaf"].items():
        leaf[k] = leaf.get(k, 0) + v
total = sum(leaf.values()) or 1
share = {k: 100.0 * v / total for k, v in leaf.items()}
fifty = share.get("cpu_split_fifty", 0)
if matched < 3:
    errs.append("%d OTLP windows matched a pprof window" % matched)
if abs(fifty - 50) > 8:
    errs.append("cpu_split_fifty has %.1f%% of OTLP samples, want 50" % fifty)
print("ok" if not errs else "; ".join(errs[:4]), "| %d windows, fifty %.1f%%" % (matched, fifty))
EOF2
)
	case $verdict in
	ok*) pass otlp; echo "  $verdict" ;;
	*) fail otlp "$verdict" ;;
	esac
}

run_test test_no_head_of_line
run_test test_bounded_series
run_test test_invalid_utf8
run_test test_oversized_window
run_test test_old_spooled_window
run_test test_otlp
