#!/usr/bin/env bash
# test_labels.sh -- Go pprof labels read in BPF at each sample: the split a program measured, per label, on Go 1.19 and 1.24, stripped
set -u
SUITE=labels
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../lib/labels_check.sh"	# tag_pct, check_tctx
TOP=$(cd "$(dirname "$0")/../.." && pwd)
FIX=$BUILD/fixtures/labels
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT

within() { awk -v v="$1" -v want="$2" -v tol="$3" 'BEGIN { d = v - want; if (d < 0) d = -d; exit !(v >= 0 && d <= tol) }'; }

# the program's own split: checkout's share of the CPU both handlers used, in percent
own_pct() { awk -F'[= ]' '/checkout/ { c = $4 } /browse/ { b = $4 } END { printf "%.2f\n", 100 * c / (c + b) }' "$1"; }

# A counter of ebpfprof -v's sampler: or go: line.
counter() { grep -o "$2=[0-9]*" "$1" | head -1 | cut -d= -f2; }

# two handlers under pprof.Do labels split CPU 70/30 by the program's own measure (CLOCK_THREAD_CPUTIME_ID
# around each); each endpoint's share of the labelled samples, read back by go tool pprof, is within
# 5 points of it. That needs 750 labelled samples (3 standard errors of a 70% share are then 5
# points): 499 Hz for 8 s gives 4,000 on an idle CPU, 1,100 where the program gets a quarter of one.
split_case() {	# case binary
	local c=$1 bin=$2 pid want got
	[ -x "$bin" ] || { skip "$c" "no $bin (Go not installed, or Debian 13's root could not be built)"; return; }
	"$bin" 10 >"$tmp/$c.out" & pid=$!
	sleep 0.5
	"$BUILD/ebpfprof" -v --pid $pid --duration 8 --frequency 499 --output "$tmp/$c.pb.gz" 2>"$tmp/$c.err" ||
		{ fail "$c" "ebpfprof failed: $(tail -1 "$tmp/$c.err")"; return; }
	wait $pid
	want=$(own_pct "$tmp/$c.out")
	got=$(tag_pct "$tmp/$c.pb.gz" endpoint /checkout)
	local kinds read
	kinds=$(tag_pct "$tmp/$c.pb.gz" request_kind synthetic)
	read=$(counter "$tmp/$c.err" labels_read_total)
	echo "  $c: endpoint=/checkout $got% of the labelled samples (the program measured $want%), $read samples labelled"
	if ! within "$got" "$want" 5; then
		fail "$c" "endpoint=/checkout has $got% of the labelled samples, the program measured $want%"
	elif [ "${kinds%.*}" != 100 ]; then
		fail "$c" "request_kind=synthetic on $kinds% of the labelled samples, not all"
	elif [ "${read:-0}" -lt 750 ]; then
		fail "$c" "only ${read:-0} samples labelled: too few to judge a 5-point bound"
	else
		pass "$c: /checkout $got% against $want% measured"
	fi
	[ "$c" = go1.19-split ] && label_filter "$tmp/$c.pb.gz"
}

# --label KEY:VALUE keeps that label's samples in --format top (and html): /checkout's requests
# all run main.checkout and none main.browse, and the other way round
label_filter() {	# pprof of the split
	local ok=1 e want other
	for e in checkout browse; do
		want=main.$e other=main.checkout
		[ $e = checkout ] && other=main.browse
		COLUMNS=200 "$BUILD/ebpfprof" convert "$1" --format top --top 50 --label "endpoint:/$e" \
			>"$tmp/top-$e" 2>/dev/null || ok=0
		awk -v f="$want" '$NF == f { found = 1; exit !($4 == "100.0%") } END { exit !found }' "$tmp/top-$e" || ok=0
		! grep -q " $other\$" "$tmp/top-$e" || ok=0
	done
	COLUMNS=200 "$BUILD/ebpfprof" convert "$1" --format html --label endpoint:/checkout -o "$tmp/checkout.html" \
		2>/dev/null && grep -q 'main.checkout' "$tmp/checkout.html" && ! grep -q 'main.browse' "$tmp/checkout.html" || ok=0
	[ $ok = 1 ] && pass "label_filter: --label endpoint:/checkout and /browse keep their handler's samples only" ||
		fail label_filter "top or html with --label kept another handler's samples: $(head -5 "$tmp/top-checkout")"
}

test_go119() { split_case go1.19-split "$FIX/golabels-1.19"; }
test_go124() { split_case go1.24-split "$FIX/golabels-1.24"; }

# past the bounds (8 labels, 63-byte values): the set is cut, counted, and what is kept is exact
test_truncated() {
	local bin=$FIX/golabels-1.19 pid n long
	"$bin" 5 wide >/dev/null & pid=$!
	sleep 0.5
	"$BUILD/ebpfprof" -v --pid $pid --duration 3 --output "$tmp/wide.pb.gz" 2>"$tmp/wide.err" ||
		{ fail truncated "ebpfprof failed: $(tail -1 "$tmp/wide.err")"; return; }
	wait $pid
	n=$(counter "$tmp/wide.err" labels_truncated_total)
	# the most labels any sample carries, ours (pid, comm) aside
	local most
	most=$(go tool pprof -raw "$tmp/wide.pb.gz" 2>/dev/null | grep -o '^ *[a-z_0-9]*:\[' | sort | uniq -c | wc -l)
	long=$(go tool pprof -tags "$tmp/wide.pb.gz" 2>/dev/null | awk '/^ long:/ { on = 1; next } on && /x+$/ { print length($NF); exit }')
	if [ "${n:-0}" -gt 0 ] && [ "${long:-0}" -eq 63 ] || { [ "${n:-0}" -gt 0 ] && [ -z "$long" ]; }; then
		pass "truncated: $n sets cut, long value kept to ${long:-(not among the 8)} bytes"
	else
		fail truncated "labels_truncated_total=${n:-0}, long value ${long:-absent} bytes"
	fi
}

# a Go version without a checked layout is never guessed: counted, and its samples carry no labels
test_unknown_version() {
	local pid
	# go1.19 -> go1.09 in .go.buildinfo's version string: the same length, a version we do not know
	python3 - "$FIX/golabels-1.19" "$tmp/golabels-unknown" <<'PY'
import sys
b = open(sys.argv[1], 'rb').read()
i = b.index(b'\xff Go buildinf:')
j = b.index(b'go1.19', i)
open(sys.argv[2], 'wb').write(b[:j] + b'go1.09' + b[j + 6:])
PY
	chmod +x "$tmp/golabels-unknown"
	"$tmp/golabels-unknown" 4 >/dev/null & pid=$!
	sleep 0.5
	"$BUILD/ebpfprof" -v --pid $pid --duration 2 --output "$tmp/unknown.pb.gz" 2>"$tmp/unknown.err" ||
		{ fail unknown_version "ebpfprof failed: $(tail -1 "$tmp/unknown.err")"; return; }
	wait $pid
	local unknown read tags
	unknown=$(counter "$tmp/unknown.err" unknown_version_total)
	read=$(counter "$tmp/unknown.err" labels_read_total)
	tags=$(go tool pprof -tags "$tmp/unknown.pb.gz" 2>/dev/null | grep -c 'endpoint:')
	if [ "$unknown" = 1 ] && [ "$read" = 0 ] && [ "$tags" = 0 ]; then
		pass "unknown_version: go1.09 counted once, no labels read"
	else
		fail unknown_version "unknown_version_total=$unknown labels_read_total=$read endpoint tags=$tags"
	fi
}

# the table of offsets (runtimes/labels/go_layout.c) against the DWARF of the same program built unstripped
test_layout() {
	local ok=1 v row off
	"${GO:-go}" version >/dev/null 2>&1 || { skip layout "no go"; return; }
	GOCACHE=$BUILD/go-cache GO111MODULE=off GOTOOLCHAIN=local CGO_ENABLED=0 \
		go build -o "$tmp/dwarf-1.19" "$TOP/tests/fixtures/labels/golabels.go" ||
		{ fail layout "go build failed"; return; }
	local root
	if root=$(bash "$TOP/tests/lib/trixie_root.sh" 2>/dev/null); then
		local d
		d=$(mktemp -d "$root/tmp/golabels.XXXXXX")
		cp "$TOP/tests/fixtures/labels/golabels.go" "$d/"
		chroot "$root" env HOME=/tmp GOROOT=/usr/lib/go-1.24 GOTELEMETRY=off GOCACHE=/tmp/ebpfprof-go-cache \
			GO111MODULE=off GOTOOLCHAIN=local CGO_ENABLED=0 /usr/lib/go-1.24/bin/go build \
			-o "${d#"$root"}/out" "${d#"$root"}/golabels.go" && cp "$d/out" "$tmp/dwarf-1.24"
		rm -rf "$d"
	fi
	for v in 1.19 1.24; do
		[ -f "$tmp/dwarf-$v" ] || { ok=0; echo "  no Go $v build"; continue; }
		off=$(readelf -wi "$tmp/dwarf-$v" 2>/dev/null | awk '/DW_TAG_structure_type/ { s = "" }
			/DW_AT_name *: runtime\.(g|m)$/ { s = $NF } s && /DW_AT_name/ { n = $NF }
			s && /data_member_location/ { f[s "." n] = $NF }
			END { print f["runtime.g.m"] ", " f["runtime.m.curg"] ", " f["runtime.g.labels"] }')
		row=$(grep -o "{ \"go$v\", [0-9]*, [0-9]*, [0-9]*" "$TOP/userspace/runtimes/labels/go_layout.c" | cut -d, -f2-)
		echo "  go$v: DWARF g.m, m.curg, g.labels = $off; the table has$row"
		[ "$off" = "${row# }" ] || ok=0
	done
	[ $ok = 1 ] && pass "layout: the table is the DWARF of Go 1.19 and 1.24" ||
		fail layout "the table and the DWARF differ"
}

# the push summary of a collector log: "windows refused series_with_span_id series_with_request_kind
# series_with_endpoint span_ids sample_keys" (the strict collector: tests/fixtures/collector)
push_summary() {	# log
	python3 - "$1" <<'PY'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.strip() and json.loads(l).get("name") == "golabels-1.19"]
ok = [r for r in reqs if r["status"] == 200]
series = set(s for r in ok for s in (r.get("series") or []))
keys = sorted(set(k for r in ok for k in (r.get("sample_label_keys") or [])))
print(len(ok), len(reqs) - len(ok), sum("span_id" in s for s in series),
      sum("request_kind" in s for s in series), sum("endpoint" in s for s in series),
      sum(r.get("span_ids", 0) for r in ok), ",".join(keys) or "-")
PY
}

# Pyroscope's span profiles: span_id reaches the strict collector as a pprof sample label, never as a
# series; a key not on --label-keys (request_kind) reaches it not at all; one on it (endpoint) is a series
test_span_push() {
	local bin=$FIX/golabels-1.19 pid agent
	FIX=$BUILD/fixtures start_collector "$tmp/span.log" || { fail span_push "collector did not start"; return; }
	"$bin" 20 span >/dev/null & pid=$!
	"$BUILD/ebpfprof" agent --interval 1 --frequency 199 --pid $pid --push "http://$COLLECTOR_ADDR" \
		--label-keys span_id,span_name,endpoint 2>"$tmp/span.err" & agent=$!
	FIX=$BUILD/fixtures wait_started "$tmp/span.err"
	sleep 4.5
	stop $agent
	stop $COLLECTOR_PID
	kill $pid 2>/dev/null
	local ok bad s_span s_kind s_endpoint spans keys
	read -r ok bad s_span s_kind s_endpoint spans keys < <(push_summary "$tmp/span.log")
	echo "  $ok windows, $spans span ids, sample label keys $keys; series with endpoint: $s_endpoint"
	if [ "$ok" -ge 3 ] && [ "$bad" = 0 ] && [ "$s_span" = 0 ] && [ "$s_kind" = 0 ] &&
		[ "$s_endpoint" = 2 ] && [ "$spans" -ge 50 ] && [[ ",$keys," == *,span_id,* ]] &&
		[[ ",$keys," != *,request_kind,* ]]; then
		pass "span_push: $spans span ids as sample labels in $ok windows, none a series"
	else
		fail span_push "$ok windows ($bad refused), series: $s_span with span_id, $s_kind with request_kind, $s_endpoint with endpoint; $spans span ids; keys $keys"
	fi
}

# BINARY's 1,000 requests on two threads profiled to their end (-v, --per-thread, 499 Hz) into
# $tmp/CASE.out (the program's), .err (ebpfprof's) and .pb.gz; a failure is the case's
profile_requests() {	# case binary
	local c=$1 bin=$2 pid prof
	[ -x "$bin" ] || { fail "$c" "no $bin"; return 1; }
	"$bin" 1000 2 >"$tmp/$c.out" & pid=$!
	"$BUILD/ebpfprof" -v --pid $pid --per-thread --frequency 499 --duration 10 \
		--output "$tmp/$c.pb.gz" 2>"$tmp/$c.err" & prof=$!
	wait $pid
	kill -INT $prof 2>/dev/null
	wait $prof || { fail "$c" "ebpfprof failed: $(tail -1 "$tmp/$c.err")"; return 1; }
}

# 1,000 requests on two threads of the C program publishing custom labels per request: every
# sample carries the ids of the request its own thread ran then, none another thread's; ABI v0
# from the executable (thread_context), from libcustomlabels.so through TLSDESC
# (thread_context_lib); ABI v1 likewise (custom_v1, custom_v1_lib), whose tables also hold a
# label without a key and span_id twice: the first is the label, the second (not-this-one) none
tctx_case() {	# case binary [source]
	local c=$1 source=${3:-custom_labels}
	profile_requests "$c" "$2" || return
	local labelled thread trace func unlabelled src second
	read -r labelled thread trace func unlabelled _ _ _ < <(check_tctx "$tmp/$c.pb.gz" "$tmp/$c.out")
	src=$(grep -o "processes_total{source=\"$source\"}=[0-9]*" "$tmp/$c.err")
	second=$(go tool pprof -raw "$tmp/$c.pb.gz" 2>/dev/null | grep -c 'not-this-one')
	echo "  $labelled samples with ids: $thread of another thread, $trace a wrong trace id, $func in the other request's function; $unlabelled in a request without ids; $second with a second span_id; $src"
	if [ "$(grep -c '^requests 1000$' "$tmp/$c.out")" = 1 ] && [ "${labelled:-0}" -ge 200 ] &&
		[ "$thread" = 0 ] && [ "$trace" = 0 ] && [ "$func" = 0 ] && [ "$second" = 0 ] &&
		[ "${src##*=}" = 1 ]; then
		pass "$c: $labelled samples, each with its own thread's current ids"
	else
		fail "$c" "$labelled labelled, $thread wrong thread, $trace wrong trace, $func wrong function, $second second span_id, $src"
	fi
}
test_thread_context() { tctx_case thread_context "$FIX/tctx"; }
test_thread_context_lib() { tctx_case thread_context_lib "$FIX/tctx-lib"; }
test_custom_v1() { tctx_case custom_v1 "$FIX/tctx-v1" custom_labels_v1; }
test_custom_v1_lib() { tctx_case custom_v1_lib "$FIX/tctx-lib-v1" custom_labels_v1; }

# a custom-labels ABI version we do not know (the v1 program's word made 2 in a copy) is never
# guessed from the symbols: counted once, in -v and /metrics, and no sample carries a label
test_custom_unknown() {
	local pid prof port
	python3 - "$FIX/tctx-v1" "$tmp/tctx-v2" <<'PY' || { fail custom_unknown "could not patch the version"; return; }
import subprocess, sys
sym = [l.split() for l in subprocess.run(["readelf", "-W", "--dyn-syms", sys.argv[1]], capture_output=True,
       text=True).stdout.splitlines() if l.endswith(" custom_labels_abi_version")][0]
vaddr = int(sym[1], 16)
for l in subprocess.run(["readelf", "-W", "-l", sys.argv[1]], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if f and f[0] == "LOAD" and int(f[2], 16) <= vaddr < int(f[2], 16) + int(f[4], 16):
        off = vaddr - int(f[2], 16) + int(f[1], 16)
b = bytearray(open(sys.argv[1], "rb").read())
assert b[off:off + 4] == b"\x01\0\0\0"
b[off] = 2
open(sys.argv[2], "wb").write(b)
PY
	chmod +x "$tmp/tctx-v2"
	"$tmp/tctx-v2" 1000000 2 >/dev/null & pid=$!
	"$BUILD/ebpfprof" -v --pid $pid --duration 2 --output "$tmp/custom-unknown.pb.gz" \
		2>"$tmp/custom-unknown.err" || { fail custom_unknown "ebpfprof failed: $(tail -1 "$tmp/custom-unknown.err")"; return; }
	"$BUILD/ebpfprof" agent --interval 1 --pid $pid --listen 127.0.0.1:0 2>"$tmp/custom-unknown-agent.err" & prof=$!
	port=$(wait_port "$tmp/custom-unknown-agent.err") || { fail custom_unknown "the agent did not start"; kill $pid; return; }
	sleep 1.5
	curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/custom-unknown.metrics"
	stop $prof
	kill $pid 2>/dev/null; wait $pid 2>/dev/null
	local unknown metric read tags
	unknown=$(counter "$tmp/custom-unknown.err" unknown_version_total)
	metric=$(awk '/^ebpfprof_labels_unknown_version_total / { print $2 }' "$tmp/custom-unknown.metrics")
	read=$(counter "$tmp/custom-unknown.err" labels_read_total)
	tags=$(go tool pprof -raw "$tmp/custom-unknown.pb.gz" 2>/dev/null | grep -c 'span_id:')
	echo "  ABI 2: unknown_version_total ${unknown:-?} in -v, ${metric:-?} in /metrics; ${read:-?} samples labelled, $tags with span_id"
	if [ "$unknown" = 1 ] && [ "$metric" = 1 ] && [ "${read:-1}" = 0 ] && [ "$tags" = 0 ]; then
		pass "custom_unknown: ABI version 2 counted once, no labels read"
	else
		fail custom_unknown "unknown_version_total ${unknown:-?} (-v) ${metric:-?} (/metrics), labels_read_total ${read:-?}, $tags samples with span_id"
	fi
}

# 1,000 requests on two threads of the C program publishing an OpenTelemetry thread context, from
# a library through TLSDESC (otel_context) or from the executable (otel_context_exe): every sample
# carries its own thread's current ids and route, the method, named by the process context's key
# map; a record marked invalid names no sample, an attribute of an unnamed key index is counted
otel_case() {	# case binary
	local c=$1
	profile_requests "$c" "$2" || return
	local labelled thread trace func unlabelled route invalid src read unknown get unnamed in_invalid
	read -r labelled thread trace func unlabelled route invalid in_invalid \
		< <(check_tctx "$tmp/$c.pb.gz" "$tmp/$c.out")
	src=$(grep -o 'processes_total{source="otel"}=[0-9]*' "$tmp/$c.err" | cut -d= -f3)
	read=$(counter "$tmp/$c.err" labels_read_total)
	unknown=$(counter "$tmp/$c.err" labels_unknown_key_total)
	get=$(tag_pct "$tmp/$c.pb.gz" http_method GET)
	unnamed=$(go tool pprof -tags "$tmp/$c.pb.gz" 2>/dev/null | grep -c unnamed)
	echo "  $labelled samples with ids: $thread of another thread, $trace a wrong trace id, $func in the other request's function, $route a wrong route, $invalid of $in_invalid samples under an invalid record; $unlabelled in a request without ids; http_method=GET on $get%; $unknown of $read with an unnamed key, $unnamed labels of it; otel processes $src"
	# every valid record has an attribute of an unnamed key: each sample read counts one
	if [ "$(grep -c '^requests 1000$' "$tmp/$c.out")" = 1 ] && [ "${labelled:-0}" -ge 200 ] &&
		[ "$thread" = 0 ] && [ "$trace" = 0 ] && [ "$func" = 0 ] && [ "$route" = 0 ] &&
		[ "$invalid" = 0 ] && [ "${in_invalid:-0}" -ge 1 ] && [ "${get%.*}" = 100 ] &&
		[ "${unknown:-0}" = "${read:--1}" ] && [ "$unnamed" = 0 ] && [ "$src" = 1 ]; then
		pass "$c: $labelled samples, each with its own thread's current ids and route"
	else
		fail "$c" "$labelled labelled, $thread wrong thread, $trace wrong trace, $func wrong function, $route wrong route, $invalid invalid, GET $get%, unknown keys $unknown of $read, $unnamed unnamed labels, otel processes $src"
	fi
}
test_otel_context() { otel_case otel_context "$FIX/otelctx"; }
test_otel_context_exe() { otel_case otel_context_exe "$FIX/otelctx-exe"; }

# a process context published after ebpfprof first read the process (OTEP 4719, an SDK set up
# late): the program's threads start without one, ebpfprof reads it (--pid: before its first
# sample), then SIGUSR1 has it publish the context and run 1,000 requests. The context is found
# by a look again (at most a second apart), counted once; every labelled sample is its own
# thread's, and at least half the requests' samples carry their ids (found a second late in
# about 3 s of requests); without the look none would
test_otel_late() {
	local c=otel_late pid prof
	"$FIX/otelctx" 1000 2 late >"$tmp/$c.out" & pid=$!
	"$BUILD/ebpfprof" -v --pid $pid --per-thread --frequency 499 --duration 60 \
		--output "$tmp/$c.pb.gz" 2>"$tmp/$c.err" & prof=$!
	for _ in $(seq 600); do
		grep -qs '^ebpfprof: profiling ' "$tmp/$c.err" && break
		sleep 0.1
	done
	kill -USR1 $pid
	wait $pid
	kill -INT $prof 2>/dev/null
	wait $prof || { fail $c "ebpfprof failed: $(tail -1 "$tmp/$c.err")"; return; }
	local labelled thread trace func unlabelled late looks
	read -r labelled thread trace func unlabelled _ _ _ < <(check_tctx "$tmp/$c.pb.gz" "$tmp/$c.out")
	late=$(counter "$tmp/$c.err" context_late_total)
	looks=$(counter "$tmp/$c.err" context_looks_total)
	echo "  published after the first read: found after $looks looks (late: $late); $labelled request samples with ids, $unlabelled without; $thread of another thread, $trace a wrong trace id, $func in the other request's function"
	if [ "$(grep -c '^published$' "$tmp/$c.out")" = 1 ] && [ "$(grep -c '^requests 1000$' "$tmp/$c.out")" = 1 ] &&
		[ "$late" = 1 ] && [ "${labelled:-0}" -ge 200 ] && [ $((labelled * 2)) -ge $((labelled + unlabelled)) ] &&
		[ "$thread" = 0 ] && [ "$trace" = 0 ] && [ "$func" = 0 ]; then
		pass "$c: the late context found after $looks looks; $labelled of $((labelled + unlabelled)) request samples with their ids"
	else
		fail $c "context_late_total=${late:-?} after ${looks:-?} looks; $labelled labelled, $unlabelled not, $thread wrong thread, $trace wrong trace, $func wrong function"
	fi
}

# a busy process with no label source, 8 s: looked at again for a late context 1 s after its
# read, then 2 s and 4 s after that (3 looks), not every second it runs (7)
test_context_backoff() {
	local c=context_backoff pid looks
	"$BUILD/fixtures/cpu_split" 10 >/dev/null & pid=$!
	"$BUILD/ebpfprof" -v --pid $pid --frequency 99 --duration 8 --output "$tmp/$c.pb.gz" \
		2>"$tmp/$c.err" || { fail $c "ebpfprof failed: $(tail -1 "$tmp/$c.err")"; kill $pid; return; }
	kill $pid; wait $pid 2>/dev/null
	looks=$(counter "$tmp/$c.err" context_looks_total)
	if [ "${looks:-0}" -ge 2 ] && [ "$looks" -le 4 ]; then
		pass "$c: $looks looks in 8 s of a process without labels"
	else
		fail $c "context_looks_total=${looks:-?} in 8 s: expected 2 to 4 (1 s, then twice as long)"
	fi
}

# trace_id and span_id of the C program's requests as OTLP profile links: each link decoded by
# Python classes protoc made from the published proto is one request's (trace, span) pair, and
# the sample carrying it has that span_id as its attribute
test_otlp_links() {
	local inc bin=$BUILD/fixtures/labels/tctx pid agent
	inc=$(otlp_proto)
	[ -n "$inc" ] || { skip otlp_links "Debian's opentelemetry-proto $OTLP_PROTO_VERSION could not be fetched"; return; }
	command -v protoc >/dev/null && /usr/bin/python3 -c 'import google.protobuf' 2>/dev/null ||
		{ skip otlp_links "protoc or python3-protobuf missing (make deps-test)"; return; }
	mkdir -p "$tmp/otlp_py" "$tmp/otlp_bodies"
	otlp_python "$inc" "$tmp/otlp_py" || { fail otlp_links "protoc could not compile the published proto"; return; }
	FIX=$BUILD/fixtures start_collector "$tmp/otlp.log" -otlp-dir "$tmp/otlp_bodies" ||
		{ fail otlp_links "collector did not start"; return; }
	"$bin" 100000 2 >/dev/null & pid=$!
	"$BUILD/ebpfprof" agent --interval 1 --frequency 199 --pid $pid --push-otlp "http://$COLLECTOR_ADDR" \
		--label-keys trace_id,span_id 2>"$tmp/otlp.err" & agent=$!
	wait_started "$tmp/otlp.err"
	sleep 4.5
	stop $agent
	stop $COLLECTOR_PID
	kill $pid 2>/dev/null
	local verdict
	verdict=$(/usr/bin/python3 "$(dirname "$0")/otlp_decode.py" "$tmp/otlp_py" "$tmp"/otlp_bodies/*.bin 2>&1 |
		python3 -c '
import json, sys
links, wrong, errs = 0, 0, []
for line in sys.stdin:
    o = json.loads(line)
    errs += o["errors"]
    for span, trace in o["links"].items():
        links += 1
        t, r = int(span[:8], 16), int(span[8:], 16)
        wrong += trace != "%016x%016x" % (t, r) or o["link_attrs"][span] != span
print(links, wrong, len(errs), (errs or ["-"])[0])
' 2>&1)
	local links wrong nerr first
	read -r links wrong nerr first <<<"$verdict"
	echo "  $links links decoded, $wrong not their request's pair, $nerr dictionary errors"
	if [ "${links:-0}" -ge 20 ] && [ "$wrong" = 0 ] && [ "$nerr" = 0 ]; then
		pass "otlp_links: $links span links, each its request's trace and span id"
	else
		fail otlp_links "$verdict"
	fi
}

# off CPU: the C program's requests also sleep 3 ms each under their ids; every block carries
# the ids its own thread published, found in the wait function of that request
test_offcpu() {
	local bin=$BUILD/fixtures/labels/tctx pid
	# requests until killed, 4 s of them profiled from the profile's start: a loaded machine's
	# slow BPF load cannot leave the profile only the program's last requests
	"$bin" 1000000 2 3000 >"$tmp/offcpu.out" & pid=$!
	"$BUILD/ebpfprof" -v --mode off-cpu --pid $pid --per-thread --duration 4 \
		--output "$tmp/offcpu.pb.gz" 2>"$tmp/offcpu.err" || { fail offcpu "ebpfprof failed: $(tail -1 "$tmp/offcpu.err")"; kill $pid; return; }
	kill $pid; wait $pid 2>/dev/null
	local labelled thread trace func unlabelled
	read -r labelled thread trace func unlabelled _ _ _ < <(check_tctx "$tmp/offcpu.pb.gz" "$tmp/offcpu.out")
	echo "  off CPU: $labelled blocks with ids: $thread of another thread, $trace a wrong trace id, $func in another request's function"
	if [ "${labelled:-0}" -ge 100 ] && [ "$thread" = 0 ] && [ "$trace" = 0 ] && [ "$func" = 0 ]; then
		pass "offcpu: $labelled blocks, each with its own thread's current ids"
	else
		fail offcpu "$labelled labelled, $thread wrong thread, $trace wrong trace, $func wrong function"
	fi
}

# the agent's page, ?label=endpoint:/checkout: the flame graph of that endpoint's samples only
test_page_label() {
	local bin=$FIX/golabels-1.19 pid agent port
	"$bin" 20 >/dev/null & pid=$!
	"$BUILD/ebpfprof" agent --interval 1 --frequency 199 --pid $pid --listen 127.0.0.1:0 \
		--output-dir "$tmp/windows" --label-keys endpoint 2>"$tmp/page.err" & agent=$!
	port=$(wait_port "$tmp/page.err") || { fail page_label "the agent did not start"; kill $pid; return; }
	sleep 3.5
	curl -sf "http://127.0.0.1:$port/?windows=3&label=endpoint:/checkout" >"$tmp/checkout.page"
	curl -sf "http://127.0.0.1:$port/?windows=3" >"$tmp/all.page"
	curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/?label=endpoint" >"$tmp/bad.code"
	stop $agent
	kill $pid 2>/dev/null
	# the unfiltered page is the control: it has both handlers
	if grep -q main.checkout "$tmp/checkout.page" && ! grep -q main.browse "$tmp/checkout.page" &&
		grep -q main.browse "$tmp/all.page" && [ "$(cat "$tmp/bad.code")" = 400 ]; then
		pass "page_label: /?label=endpoint:/checkout draws main.checkout and not main.browse"
	else
		fail page_label "filtered page: checkout $(grep -c main.checkout "$tmp/checkout.page"), browse $(grep -c main.browse "$tmp/checkout.page"); whole page browse $(grep -c main.browse "$tmp/all.page"); bad label answered $(cat "$tmp/bad.code")"
	fi
}

run_test test_go119 go1.19-split label_filter
run_test test_go124 go1.24-split
run_test test_truncated
run_test test_unknown_version unknown_version
run_test test_layout
run_test test_span_push span_push
run_test test_thread_context thread_context
run_test test_thread_context_lib thread_context_lib
run_test test_custom_v1 custom_v1
run_test test_custom_v1_lib custom_v1_lib
run_test test_custom_unknown custom_unknown
run_test test_otel_context otel_context
run_test test_otel_context_exe otel_context_exe
run_test test_otel_late otel_late
run_test test_context_backoff context_backoff
run_test test_otlp_links otlp_links
run_test test_offcpu offcpu
run_test test_page_label page_label
