#!/usr/bin/env bash
# test_heap.sh -- Go heap profiles read from outside (--mode heap), checked against the programs' own runtime/pprof profiles
set -u
SUITE=heap
. "$(dirname "$0")/lib.sh"
FIX=$BUILD/fixtures
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT

# "func value" lines of go tool pprof -top for one sample type, in bytes or counts, flat
flat_values() {	# file sample_index
	pprof_top -sample_index="$2" -unit=B "$1" |
		awk 'f && NF >= 6 { v = $1; sub("B$", "", v); print $6, v } /flat%/ { f = 1 }'
}
value_of() { awk -v f="$2" '$1 == f { print $2; found = 1 } END { if (!found) print 0 }' "$1"; }
share_of() {	# file func: percent of the total
	awk -v f="$2" '{ t += $2; if ($1 == f) v = $2 } END { printf "%.2f\n", t ? 100 * v / t : 0 }' "$1"
}

# The frames of the first alloc_space trace through FUNC (go tool pprof -traces), leaf first, joined
# by ";", an inlined one marked "(inline)"; runtime.goexit left out, as runtime/pprof leaves it out
trace_of() {	# file func
	go tool pprof -sample_index=alloc_space -traces "$1" 2>/dev/null | awk -v fn="$2" '
		/^-+\+/ { if (has) exit; s = ""; next }
		/^ *[a-z_]+: / { next }
		{ sub(/^ *([0-9][0-9.]*[a-zA-Z]* +)?/, "") }
		$0 == "runtime.goexit" { next }
		{ s = s (s == "" ? "" : ";") $0; if ($1 == fn) has = 1 }
		END { if (has) print s }'
}

# Starts fixture BIN writing into DIR; waits for its line "ready N A B"; sets HEAP_PID, BYTES_A, BYTES_B
start_heap() {	# bin dir n
	mkdir -p "$2"
	"$1" "$2" >"$2/out" 2>&1 &
	HEAP_PID=$!
	wait_ready "$2" "$3"
}
wait_ready() {	# dir n
	local i line
	for i in $(seq 1 300); do
		line=$(grep "^ready $2 " "$1/out" 2>/dev/null) && break
		sleep 0.1
	done
	read -r _ _ BYTES_A BYTES_B <<<"$line"
	[ -n "${BYTES_B:-}" ]
}

# One release's fixture: the split, what is retained, and the program's own profile beside ours
check_release() {	# case bin
	local c=$1 bin=$2 d=$tmp/$1 why="" t
	[ -x "$bin" ] || { skip "$c" "no fixture $bin (the Debian 13 root could not be built)"; return; }
	start_heap "$bin" "$d" 1 || { fail "$c" "the fixture never got ready: $(tail -2 "$d/out")"; return; }
	"$EBPFPROF" --mode heap --pid "$HEAP_PID" --duration 0.1 -o "$d/ours.pb.gz" 2>"$d/err" ||
		{ fail "$c" "ebpfprof failed: $(tail -1 "$d/err")"; return; }
	touch "$d/go1"
	go tool pprof -raw "$d/ours.pb.gz" 2>/dev/null | sed -n 1,6p >"$d/raw"
	grep -q 'alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes' "$d/raw" ||
		why="$why sample-types"
	grep -q '^PeriodType: space bytes' "$d/raw" || why="$why period-type"
	grep -q '^Period: 8192$' "$d/raw" || why="$why period(the program's MemProfileRate 8192)"
	for t in alloc_space inuse_space alloc_objects inuse_objects; do
		flat_values "$d/ours.pb.gz" $t >"$d/ours.$t"
		flat_values "$d/own1.pb.gz" $t >"$d/own.$t"
	done
	# the program asked for 3:1 bytes at its two sites; the sampled estimate within 10 %
	local a b
	a=$(value_of "$d/ours.alloc_space" main.allocFreed) b=$(value_of "$d/ours.alloc_space" main.allocRetained)
	echo "  $c: alloc_space allocFreed $a B, allocRetained $b B (asked $BYTES_A, $BYTES_B)"
	awk -v a="$a" -v b="$b" -v ta="$BYTES_A" -v tb="$BYTES_B" \
		'BEGIN { if (!b) exit 1; r = (a / b) / (ta / tb); exit !(r > 0.9 && r < 1.1) }' ||
		why="$why alloc-ratio($a:$b)"
	# only the retained site is live after the GCs
	local live freed
	live=$(share_of "$d/ours.inuse_space" main.allocRetained) freed=$(share_of "$d/ours.inuse_space" main.allocFreed)
	echo "  $c: inuse_space shares: allocRetained $live %, allocFreed $freed %"
	awk -v l="$live" -v f="$freed" 'BEGIN { exit !(l >= 95 && f <= 1) }' || why="$why inuse($live/$freed)"
	# the program's own profile, written at the same moment: same top function, shares within 5 points
	for t in alloc_space inuse_space alloc_objects inuse_objects; do
		local top_o top_p f so sp
		top_o=$(head -1 "$d/ours.$t" | cut -d' ' -f1) top_p=$(head -1 "$d/own.$t" | cut -d' ' -f1)
		[ "$top_o" = "$top_p" ] || why="$why $t-top($top_o/$top_p)"
		for f in $(cut -d' ' -f1 "$d/ours.$t" "$d/own.$t" | sort -u); do
			so=$(share_of "$d/ours.$t" "$f") sp=$(share_of "$d/own.$t" "$f")
			awk -v x="$so" -v y="$sp" 'BEGIN { d = x - y; exit !(d <= 5 && d >= -5) }' ||
				why="$why $t:$f($so/$sp)"
		done
	done
	if [ -z "$why" ]; then
		pass "$c: 3:1 within 10 %, retained site only in use, runtime/pprof's shares within 5 points"
	else
		fail "$c" "off:$why"
		sed -n 1,4p "$d/raw"
		head -5 "$d"/ours.* "$d"/own.*
	fi
	check_inline "$c" "$d"
}

# The site in newBlock, inlined into allocInlined: a frame of its own, marked inline, right under
# its caller, and the caller once, as the program's own profile has it
check_inline() {	# case dir
	local c=${1}_inline want got
	want=$(trace_of "$2/own1.pb.gz" main.newBlock) got=$(trace_of "$2/ours.pb.gz" main.newBlock)
	echo "  $c: ours ${got:-none}; the program's own ${want:-none}"
	if [[ $want != "main.newBlock (inline);main.allocInlined;"* ]]; then
		fail "$c" "this Go did not inline newBlock into allocInlined: the fixture tests nothing"
	elif [ "$got" = "$want" ]; then
		pass "$c: main.newBlock (inline) under main.allocInlined, the whole trace as runtime/pprof's"
	else
		fail "$c" "the trace through main.newBlock differs from the program's own"
	fi
}

# The agent with --go-heap: 1 s windows over both of the program's checkpoints, pushed to the
# stand-in collector (push API and OTLP) and written to a directory. Its cases: deltas,
# push_memory, otlp_memory.
OTLP_INC=/var/cache/ebpfprof/otlp-proto-1.11.0-1/usr/include
test_agent() {
	local d=$tmp/agent bin=$FIX/goheap-go1.19 agent port
	[ -x "$bin" ] || { skip deltas "no fixture $bin"; return; }
	mkdir -p "$d/prof" "$d/otlp"
	start_collector "$d/coll.log" -otlp-dir "$d/otlp" || { fail deltas "collector did not start"; return; }
	start_heap "$bin" "$d/fx" 1 || { fail deltas "the fixture never got ready"; return; }
	"$EBPFPROF" agent --go-heap --interval 1 --pid "$HEAP_PID" --output-dir "$d/prof" \
		--push "http://$COLLECTOR_ADDR" --push-api --push-otlp "http://$COLLECTOR_ADDR" \
		--listen 127.0.0.1:0 2>"$d/agent.err" &
	agent=$!
	port=$(wait_port "$d/agent.err") || { fail deltas "the agent did not start: $(tail -1 "$d/agent.err")"; return; }
	sleep 2.5	# a window or two of checkpoint 1
	touch "$d/fx/go1"
	wait_ready "$d/fx" 2 || { fail deltas "the fixture never reached checkpoint 2"; return; }
	sleep 2.5	# and of checkpoint 2
	curl -sf "http://127.0.0.1:$port/metrics" >"$d/metrics"
	stop $agent
	stop $COLLECTOR_PID
	check_deltas "$d"
	check_push "$d"
	check_otlp "$d"
	check_metrics "$d"
}

# /metrics: what the windows read, as counters
check_metrics() {	# dir
	local reads buckets
	reads=$(awk '/^ebpfprof_goheap_reads_total / { print $2 }' "$1/metrics")
	buckets=$(awk '/^ebpfprof_goheap_buckets_total / { print $2 }' "$1/metrics")
	if [ "${reads:-0}" -ge 3 ] && [ "${buckets:-0}" -ge 3 ] &&
		grep -q '^ebpfprof_goheap_skipped_total{reason="unknown_version"} 0' "$1/metrics"; then
		pass "heap_metrics: /metrics says $reads reads of $buckets buckets"
	else
		grep goheap "$1/metrics" | head -5; fail heap_metrics "reads ${reads:-none}, buckets ${buckets:-none}"
	fi
}

# the windows' alloc_space, summed, is the program's own total over both checkpoints
check_deltas() {	# dir
	local d=$1 f why="" n
	n=$(ls "$d"/prof/*.memory-*.pb.gz 2>/dev/null | wc -l)
	[ "$n" -ge 3 ] || { fail deltas "$n heap windows written: $(tail -2 "$d/agent.err")"; return; }
	for f in "$d"/prof/*.memory-*.pb.gz; do flat_values "$f" alloc_space; done >"$d/windows"
	flat_values "$d/fx/own2.pb.gz" alloc_space >"$d/own"
	for f in main.allocFreed main.allocRetained; do
		local sum own
		sum=$(awk -v f=$f '$1 == f { t += $2 } END { print t + 0 }' "$d/windows")
		own=$(value_of "$d/own" $f)
		echo "  deltas: $f: $n windows sum to $sum B, the program's own profile says $own B"
		awk -v a="$sum" -v b="$own" 'BEGIN { exit !(b > 0 && a / b > 0.99 && a / b < 1.01) }' ||
			why="$why $f($sum/$own)"
	done
	# each window is a delta: the first holds checkpoint 1's, not everything
	[ -z "$why" ] && pass "deltas: $n windows' alloc_space sum to the program's total within 1 %" ||
		fail deltas "sums off:$why"
}

# Pyroscope's push API: __name__ memory, the four sample types, alloc_* marked as deltas already
check_push() {	# dir
	local verdict
	verdict=$(python3 - "$1/coll.log" <<'EOF2'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
mem = [r for r in recs if r.get("api") == "push" and r.get("profile_type") == "memory"]
ok = [r for r in mem if r["status"] == 200 and r.get("labels", {}).get("__delta__") == "false"
      and r.get("sample_types") == ["alloc_objects/count", "alloc_space/bytes", "inuse_objects/count", "inuse_space/bytes"]]
errs = sorted({r.get("error") or str(r.get("sample_types")) for r in mem if r not in ok})
print("ok %d" % len(ok) if ok and not errs else "%d accepted of %d: %s" % (len(ok), len(mem), "; ".join(errs[:3])))
EOF2
)
	case $verdict in
	ok*) pass "push_memory: ${verdict#ok } windows accepted as memory:{alloc,inuse}_{objects,space}" ;;
	*) fail push_memory "$verdict" ;;
	esac
}

# OTLP: the same windows decoded by the published proto, with the heap's sample types
check_otlp() {	# dir
	local d=$1 verdict
	[ -d "$OTLP_INC/opentelemetry" ] && command -v protoc >/dev/null &&
		/usr/bin/python3 -c 'import google.protobuf' 2>/dev/null ||
		{ skip otlp_memory "no OpenTelemetry proto or protoc (make test TESTS=delivery fetches it)"; return; }
	mkdir -p "$d/py"
	protoc -I "$OTLP_INC" --python_out="$d/py" \
		"$OTLP_INC"/opentelemetry/proto/collector/profiles/v1development/profiles_service.proto \
		"$OTLP_INC"/opentelemetry/proto/profiles/v1development/profiles.proto \
		"$OTLP_INC"/opentelemetry/proto/common/v1/common.proto \
		"$OTLP_INC"/opentelemetry/proto/resource/v1/resource.proto || { fail otlp_memory "protoc failed"; return; }
	/usr/bin/python3 "$(dirname "$0")/otlp_decode.py" "$d/py" "$d"/otlp/*.bin >"$d/otlp.json" 2>"$d/otlp.err" ||
		{ fail otlp_memory "the published proto does not decode our export: $(head -1 "$d/otlp.err")"; return; }
	verdict=$(python3 - "$d/otlp.json" <<'EOF2'
import json, sys
want = ["alloc_objects/count", "alloc_space/bytes", "inuse_objects/count", "inuse_space/bytes"]
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
mem = [r for r in recs if r["types"] == want]
errs = [e for r in mem for e in r["errors"]]
alloc = sum(r["totals"][1] for r in mem)
print("ok %d %d" % (len(mem), alloc) if mem and alloc > 0 and not errs else "%d heap exports, errors %s" % (len(mem), errs[:3]))
EOF2
)
	case $verdict in
	ok*) pass "otlp_memory: $(echo "$verdict" | cut -d' ' -f2) exports with the heap's sample types decode" ;;
	*) fail otlp_memory "$verdict" ;;
	esac
}

# /ingest: the heap windows as pprof with the four sample types, each accepted (no __delta__:
# the ingest names types by the profile's sample types)
test_ingest() {
	local d=$tmp/ingest agent verdict
	mkdir -p "$d"
	start_collector "$d/coll.log" || { fail ingest_memory "collector did not start"; return; }
	start_heap "$FIX/goheap-go1.19" "$d/fx" 1 || { fail ingest_memory "the fixture never got ready"; return; }
	"$EBPFPROF" agent --go-heap --interval 1 --pid "$HEAP_PID" --push "http://$COLLECTOR_ADDR" 2>"$d/err" &
	agent=$!
	wait_started "$d/err" || { fail ingest_memory "the agent did not start"; return; }
	sleep 2.5
	stop $agent
	stop $COLLECTOR_PID
	verdict=$(python3 - "$d/coll.log" <<'EOF2'
import json, sys
want = ["alloc_objects/count", "alloc_space/bytes", "inuse_objects/count", "inuse_space/bytes"]
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
mem = [r for r in recs if r.get("api") == "ingest" and r.get("sample_types") == want]
bad = [r.get("error") or r["status"] for r in mem if r["status"] != 200 or "__delta__" in r.get("labels", {})]
print("ok %d" % len(mem) if mem and not bad else "%d heap windows, refused or labelled: %s" % (len(mem), bad[:3]))
EOF2
)
	case $verdict in
	ok*) pass "ingest_memory: ${verdict#ok } heap windows accepted by /ingest" ;;
	*) fail ingest_memory "$verdict" ;;
	esac
}

# The page: four types to switch between, each with its own split (Chromium renders it)
test_html() {
	local d=$tmp/html a f
	command -v chromium >/dev/null || { skip html "chromium is not installed (make deps-test)"; return; }
	start_heap "$FIX/goheap-go1.19" "$d" 1 || { fail html "the fixture never got ready"; return; }
	"$EBPFPROF" --mode heap --pid "$HEAP_PID" --duration 0.1 --format html -o "$d/h.html" 2>"$d/err" ||
		{ fail html "ebpfprof failed: $(tail -1 "$d/err")"; return; }
	for t in alloc_space inuse_space; do
		timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run \
			--user-data-dir="$d/chrome-$t" --dump-dom "file://$d/h.html?type=$t" >"$d/$t.dom" 2>/dev/null
		python3 "$(dirname "$0")/flame_check.py" rows "$d/$t.dom" >"$d/$t.rows"
	done
	a=$(awk '$1 == "main.allocFreed" { print $2 + 0 }' "$d/alloc_space.rows")
	f=$(awk '$1 == "main.allocRetained" { print $2 + 0 }' "$d/inuse_space.rows")
	echo "  html: alloc_space allocFreed self ${a:-none} %, inuse_space allocRetained self ${f:-none} %"
	if grep -q '>alloc_objects</button>.*>alloc_space</button>.*>inuse_objects</button>.*class="on">inuse_space</button>' "$d/inuse_space.dom" &&
		awk -v a="${a:-0}" -v f="${f:-0}" 'BEGIN { exit !(a >= 70 && a <= 80 && f >= 95) }'; then
		pass "html: the page switches alloc_space (allocFreed ${a} %) and inuse_space (allocRetained ${f} %)"
	else
		grep -o '<span id="types">.\{0,400\}' "$d/inuse_space.dom"; fail html "types or shares off"
	fi
}

# Go processes that start, exit and exec while host-wide reads run: every read ends in a profile
test_churn() {
	local d=$tmp/churn i bad=0 runs=12 churner
	mkdir -p "$d"
	(	# each copy lives 0-60 ms: many are read while they start, run and exit; half exec sleep
		while :; do
			for i in 1 2 3; do
				if [ $((RANDOM % 2)) = 0 ]; then
					"$FIX/goheap-go1.19" "$d" >/dev/null 2>&1 & p=$!
				else
					(sleep 0.0$((RANDOM % 5)); exec "$FIX/goheap-go1.19" "$d") >/dev/null 2>&1 & p=$!
				fi
				(sleep 0.0$((RANDOM % 6)); kill -9 $p) 2>/dev/null &
			done
			sleep 0.02
		done
	) & churner=$!
	for i in $(seq $runs); do
		timeout 30 "$EBPFPROF" --mode heap --duration 0.05 -v -o "$d/p$i.pb.gz" 2>"$d/e$i" &&
			go tool pprof -raw "$d/p$i.pb.gz" >/dev/null 2>&1 || { bad=$((bad + 1)); tail -2 "$d/e$i"; }
	done
	kill $churner 2>/dev/null; wait $churner 2>/dev/null
	# a copy started as the churner died has no killer (one was found running 40 minutes on);
	# twice, for one whose subshell was about to exec it
	for i in 1 2; do pkill -9 -f "^$FIX/goheap-go1.19 $d\$"; sleep 0.1; done 2>/dev/null
	grep -ho 'go heap: [0-9]* processes read, [0-9]* skipped' "$d"/e* | awk '{ r += $3; s += $6 } END { printf "  churn: %d reads, %d skipped over the runs\n", r, s }'
	[ $bad = 0 ] && pass "churn: $runs host-wide reads under exits and execs, each a readable profile" ||
		fail churn "$bad of $runs runs failed"
}

# Native allocations through uprobes (--mode alloc): a C program's 3:1 split, its kept site in use,
# and what a call to malloc or free costs with the probes, measured by the program itself; with glibc's
# allocator, jemalloc and tcmalloc preloaded, and jemalloc linked into the executable
native_check() {	# case, fixture, library to preload ("" for none), allocator that must be probed
	local name=$1 bin=$2 preload=$3 want=$4 d=$tmp/$1 why="" base probed stats_was
	[ -x "$bin" ] || { skip $name "no fixture $bin"; return; }
	[ -z "$preload" ] || [ -e "$preload" ] || { skip $name "no $preload (make deps-test installs it)"; return; }
	mkdir -p "$d/base"
	touch "$d/base/go" "$d/base/end"
	base=$(LD_PRELOAD=$preload "$bin" "$d/base" 40000 | awk '/^done/ { print $5 }')
	stats_was=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -qw kernel.bpf_stats_enabled=1
	alloc_run "$d" "$bin" "$preload" 40000
	sysctl -qw kernel.bpf_stats_enabled="$stats_was"
	probed=$NS_PER_CALL
	echo "  $name: a malloc or free call: ${base:-?} ns without the probes, ${probed:-?} ns with them (the program's own clock)"
	grep -o 'alloc: .*\|alloc cost: .*\|alloc bpf: [0-9]* ns per entry probe run, [0-9]* ns per return' "$d/err" |
		sed "s/^/  $name: /"
	grep -q "^ebpfprof: sampling the allocations.*$want" "$d/err" || why="$why not-probed($want)"
	split_check "$name" "$d"
	why="$why$SPLIT_OFF"
	grep -q 'lost: 0 live blocks untracked' "$d/err" || why="$why losses"
	[ -z "$why" ] && pass "$name: $want: 3:1 within 10 %, total within 10 %, only the kept site in use; ${base} -> ${probed} ns a call" ||
		{ tail -3 "$d/err"; fail $name "off:$why"; }
}

# Runs BIN for ROUNDS rounds under --mode alloc with ARGS, from its first call to its "done": DIR/p.pb.gz,
# DIR/err; sets ASKED_THREE, ASKED_ONE (the bytes each site asked for) and NS_PER_CALL
alloc_run() {	# dir bin preload rounds [ebpfprof args...]
	local d=$1 bin=$2 preload=$3 rounds=$4 pid eb
	shift 4
	mkdir -p "$d/run"
	LD_PRELOAD=$preload "$bin" "$d/run" "$rounds" >"$d/out" &
	pid=$!
	"$EBPFPROF" --mode alloc --pid $pid --duration 120 -v -o "$d/p.pb.gz" "$@" 2>"$d/err" &
	eb=$!
	for _ in $(seq 300); do grep -q '^ebpfprof: sampling the allocations' "$d/err" && break; sleep 0.1; done
	touch "$d/run/go"
	for _ in $(seq 600); do grep -q '^done' "$d/out" && break; sleep 0.1; done
	kill -INT $eb; wait $eb
	touch "$d/run/end"
	read -r _ ASKED_THREE ASKED_ONE _ NS_PER_CALL < <(grep "^done" "$d/out")
}

# The 3:1 split of alloc_run's profile in DIR, its total, only the kept site in use; SPLIT_OFF says
# what is off ("" when nothing)
split_check() {	# case dir
	local name=$1 d=$2 a=$ASKED_THREE b=$ASKED_ONE three one share total
	SPLIT_OFF=""
	flat_values "$d/p.pb.gz" alloc_space >"$d/alloc"
	flat_values "$d/p.pb.gz" inuse_space >"$d/inuse"
	three=$(value_of "$d/alloc" alloc_three) one=$(value_of "$d/alloc" alloc_one)
	share=$(share_of "$d/inuse" alloc_one)
	total=$(awk '{ t += $2 } END { print t + 0 }' "$d/alloc")
	echo "  $name: alloc_space alloc_three $three B, alloc_one $one B (asked $a, $b); inuse alloc_one $share %"
	awk -v x="$three" -v y="$one" -v ta="$a" -v tb="$b" \
		'BEGIN { if (!y) exit 1; r = (x / y) / (ta / tb); exit !(r > 0.9 && r < 1.1) }' ||
		SPLIT_OFF="$SPLIT_OFF ratio($three:$one)"
	awk -v t="$total" -v w="$((a + b))" 'BEGIN { r = t / w; exit !(r > 0.9 && r < 1.1) }' ||
		SPLIT_OFF="$SPLIT_OFF total($total of $((a + b)))"
	awk -v s="$share" 'BEGIN { exit !(s >= 95) }' || SPLIT_OFF="$SPLIT_OFF inuse($share)"
}

# A live map smaller than the blocks kept (--live-storage-size 16; the program keeps 256 blocks, ~30
# of them sampled): the blocks it has no room for are counted and said, stay out of inuse_* (at most
# the map's 16 blocks in use, scaled), and the split is still right
test_native_live_full() {
	local name=native_live_full d=$tmp/native_live_full bin=$FIX/alloc_split max=16 lost inuse cap why=""
	[ -x "$bin" ] || { skip $name "no fixture $bin"; return; }
	alloc_run "$d" "$bin" "" 20000 --live-storage-size $max
	grep -o 'alloc: .*' "$d/err" | sed "s/^/  $name: /"
	lost=$(grep -o "lost: [0-9]* live blocks untracked (live map of $max full" "$d/err" | awk '{ print $2 }')
	[ "${lost:-0}" -gt 0 ] || why="$why not-counted(${lost:-no line})"
	split_check "$name" "$d"
	why="$why$SPLIT_OFF"
	# the map's blocks of 64 KiB, each scaled as runtime/pprof scales a sample of 64 KiB at 512 KiB
	inuse=$(awk '{ t += $2 } END { printf "%.0f", t }' "$d/inuse")
	cap=$(awk -v n=$max 'BEGIN { b = 65536; printf "%d", n * b / (1 - exp(-b / 524288)) + 1 }')
	echo "  $name: inuse_space $inuse B, at most $cap B ($max blocks scaled)"
	awk -v u="$inuse" -v c="$cap" 'BEGIN { exit !(u > 0 && u <= c) }' || why="$why inuse-total($inuse of at most $cap)"
	[ -z "$why" ] && pass "$name: $lost blocks past a live map of $max counted; in use at most the map's; 3:1 within 10 %" ||
		{ tail -3 "$d/err"; fail $name "off:$why"; }
}
LIBDIR=/usr/lib/x86_64-linux-gnu
test_native() { native_check native "$FIX/alloc_split" "" libc.so.6; }
test_native_jemalloc() { native_check native_jemalloc "$FIX/alloc_split" $LIBDIR/libjemalloc.so.2 libjemalloc.so.2; }
test_native_tcmalloc() {
	native_check native_tcmalloc "$FIX/alloc_split" $LIBDIR/libtcmalloc_minimal.so.4 libtcmalloc_minimal.so.4
}
test_native_static() { native_check native_static "$FIX/alloc_split_static_jemalloc" "" alloc_split_static_jemalloc; }

# A release whose layout we do not know: two copies of the 1.19 fixture whose version strings say
# go1.99, beside the fixture itself; each copy skipped, said once with its version, counted
test_unknown() {
	local c=unknown_version d=$tmp/unknown bin=$FIX/goheap-go1.19 ver new p1 p2 p3 n why=""
	[ -x "$bin" ] || { skip $c "no fixture $bin"; return; }
	mkdir -p "$d"
	ver=$(go version "$bin" | awk '{ print $2 }')
	new=$(sed 's/^go1\.[0-9][0-9]/go1.99/' <<<"$ver")
	sed "s/${ver//./\\.}/$new/g" "$bin" >"$d/goheap-unknown" && chmod +x "$d/goheap-unknown"
	[ "$new" != "$ver" ] && [ "$(go version "$d/goheap-unknown" | awk '{ print $2 }')" = "$new" ] ||
		{ fail $c "could not make $ver say $new in a copy of $bin"; return; }
	start_heap "$d/goheap-unknown" "$d/u1" 1 && p1=$HEAP_PID &&
		start_heap "$d/goheap-unknown" "$d/u2" 1 && p2=$HEAP_PID &&
		start_heap "$bin" "$d/known" 1 && p3=$HEAP_PID ||
		{ fail $c "a fixture never got ready"; return; }
	"$EBPFPROF" --mode heap --pid "$p1,$p2,$p3" --duration 0.1 -v -o "$d/p.pb.gz" 2>"$d/err" ||
		why="$why exit($(tail -1 "$d/err"))"
	touch "$d"/{u1,u2,known}/go{1,2}
	grep 'do not know\|processes read\|^ebpfprof: goheap:' "$d/err" | cut -c1-160 | sed "s/^/  $c: /"
	for p in $p1 $p2; do
		n=$(grep -c "^ebpfprof: go heap: pid $p runs $new, whose heap profile layout we do not know" "$d/err")
		[ "$n" = 1 ] || why="$why said-$n-times($p)"
	done
	n=$(grep -c 'do not know' "$d/err")
	[ "$n" = 2 ] || why="$why $n-lines-say-so"
	grep -q '^ebpfprof: go heap: 1 processes read, 2 skipped' "$d/err" || why="$why read/skipped"
	grep -q '^ebpfprof: goheap: .*skipped_total{reason="unknown_version"}=2 ' "$d/err" || why="$why not-counted"
	go tool pprof -tags "$d/p.pb.gz" 2>/dev/null | awk '/^ pid:/ { f = 1; next } f && !NF { exit } f { print $NF }' >"$d/pids"
	[ "$(cat "$d/pids")" = "$p3" ] || why="$why pids($(tr '\n' ' ' <"$d/pids"))"
	[ "$(value_of <(flat_values "$d/p.pb.gz" alloc_space) main.allocRetained)" != 0 ] || why="$why known-unread"
	[ -z "$why" ] && pass "$c: two $new processes skipped, each said once and counted; the $ver one read" ||
		fail $c "off:$why"
}

test_go119() { check_release go1.19 "$FIX/goheap-go1.19"; }
test_go124() { check_release go1.24 "$FIX/goheap-go1.24"; }

run_test test_go119 go1.19 go1.19_inline
run_test test_go124 go1.24 go1.24_inline
run_test test_unknown unknown_version
run_test test_agent deltas push_memory otlp_memory heap_metrics
run_test test_ingest ingest_memory
run_test test_html
run_test test_churn
run_test test_native
run_test test_native_jemalloc
run_test test_native_tcmalloc
run_test test_native_static
run_test test_native_live_full
