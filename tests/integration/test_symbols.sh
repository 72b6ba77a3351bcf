#!/usr/bin/env bash
# test_symbols.sh -- deep symbolization through the real profiler: Go, DWARF inline frames, C++, debug files, JIT maps
set -u
SUITE=symbols
. "$(dirname "$0")/lib.sh"
SYM=$BUILD/fixtures/symbols
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT

# profile: name, extra flags, program args...: writes $tmp/NAME.raw (go tool pprof -raw)
profile() {
	local name=$1 flags=$2; shift 2
	"$@" & local pid=$!	# killed below: it outlives a profiler that loads slowly
	sleep 0.3
	# shellcheck disable=SC2086
	"$EBPFPROF" --pid $pid --duration 2 --frequency 299 $flags --output "$tmp/$name.pb.gz" \
		2>"$tmp/$name.err"
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	go tool pprof -raw -symbolize=none "$tmp/$name.pb.gz" >"$tmp/$name.raw" 2>/dev/null
}

# inline LOCFILE CALLEE CALLER: a Location whose first line is CALLEE and next line CALLER
has_inline() {
	awk -v callee="$2" -v caller="$3" '
		/^Locations/ { in_loc = 1; next }
		/^Mappings/ { in_loc = 0 }
		in_loc && /^ +[0-9]+: 0x/ { name = ($3 ~ /^M=/) ? $4 : $3; prev = (name == callee); next }
		in_loc && prev && $1 == caller { found = 1 }
		in_loc { prev = 0 }
		END { exit !found }' "$1"
}

line_of() { grep -n "$2" "$1" | head -1 | cut -d: -f1; }

test_go_stripped() {
	[ -x "$SYM/go_hot_stripped" ] || { skip go_stripped "go is not installed"; return; }
	profile go "" "$SYM/go_hot_stripped" 120
	local mix_line
	mix_line=$(line_of tests/fixtures/symbols/go_hot.go MARK_MIX)
	if grep -Eq "main\.goHot .*go_hot\.go:[0-9]+" "$tmp/go.raw" &&
		grep -Eq "main\.mix .*go_hot\.go:$mix_line " "$tmp/go.raw" &&
		has_inline "$tmp/go.raw" main.mix main.goHot &&
		grep -q 'go_hot_stripped .*\[FN\]\[FL\]\[LN\]\[IN\]' "$tmp/go.raw"; then
		pass go_stripped
	else
		sed -n '/^Locations/,$p' "$tmp/go.raw" | head -20
		fail go_stripped "no main.goHot / inlined main.mix at go_hot.go:$mix_line"
	fi
}

test_c_inline() {	# -O2 -g: the inlined helper is a Line of its caller's Location, with its line
	profile c "" "$SYM/c_inline" 120
	local mix_line
	mix_line=$(line_of tests/fixtures/symbols/c_inline.c MARK_C_MIX)
	if grep -Eq "c_mix .*c_inline\.c:$mix_line " "$tmp/c.raw" && has_inline "$tmp/c.raw" c_mix c_hot; then
		pass c_inline
	else
		sed -n '/^Locations/,$p' "$tmp/c.raw" | head -20
		fail c_inline "no inline c_mix (c_inline.c:$mix_line) under c_hot"
	fi
}

test_debuglink() {	# stripped binary, debug info in a separate file named by .gnu_debuglink
	profile link "" "$SYM/c_inline_debuglink" 120
	if grep -q "c_hot" "$tmp/link.raw" && has_inline "$tmp/link.raw" c_mix c_hot; then
		pass debuglink
	else
		fail debuglink "names or lines not found through .gnu_debuglink"
	fi
}

test_cxx_demangle() {
	profile cxx "" "$SYM/cxx_tmpl" 120
	profile cxxfull "--demangle full" "$SYM/cxx_tmpl" 120
	profile cxxnone "--demangle none" "$SYM/cxx_tmpl" 120
	# short keeps template arguments: the <long> and <double> instantiations stay apart
	if grep -q 'ebpfprof_test::Worker<long>::spin ' "$tmp/cxx.raw" &&
		grep -q 'ebpfprof_test::Worker<double>::spin ' "$tmp/cxx.raw" &&
		grep -q 'ebpfprof_test::Worker<long>::spin(int)' "$tmp/cxxfull.raw" &&
		grep -q '_ZN13ebpfprof_test6WorkerIlE4spinEi' "$tmp/cxxnone.raw"; then
		pass cxx_demangle
	else
		grep -h spin "$tmp"/cxx*.raw | sort -u | head; fail cxx_demangle "short/full/none names wrong"
	fi
}

test_debuginfod() {	# a real debuginfod on loopback serves the debug file of a binary that names none
	command -v debuginfod >/dev/null || { skip debuginfod "debuginfod is not installed"; return; }
	mkdir -p "$tmp/dbgsrv" "$tmp/cache"
	cp "$SYM/c_inline_debuglink.debug" "$tmp/dbgsrv/c_inline.debug"
	objcopy --strip-all --remove-section=.gnu_debuglink "$SYM/c_inline" "$tmp/c_inline_bare"
	local port bid
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	bid=$(readelf -n "$tmp/c_inline_bare" | awk '/Build ID/ { print $3 }')
	debuginfod -F -p "$port" -d "$tmp/dbgsrv.sqlite" -t 1 "$tmp/dbgsrv" >"$tmp/dbgsrv.log" 2>&1 &
	local srv=$!
	for _ in $(seq 100); do
		curl -sf -o /dev/null "http://127.0.0.1:$port/buildid/$bid/debuginfo" && break
		sleep 0.2
	done
	DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_CACHE_PATH="$tmp/cache" \
		profile dbgd "--debuginfod" "$tmp/c_inline_bare" 120
	kill $srv; wait $srv 2>/dev/null
	if has_inline "$tmp/dbgd.raw" c_mix c_hot; then
		pass debuginfod
	else
		tail -3 "$tmp/dbgsrv.log"; fail debuginfod "debug info for $bid not used"
	fi
}

test_node_perf_map() {	# JIT code named through /tmp/perf-PID.map (node --perf-basic-prof)
	command -v node >/dev/null || { skip node_perf_map "node is not installed"; return; }
	(cd "$tmp" && exec node --perf-basic-prof --no-logfile-per-isolate --logfile=- -e '
		function ebpfprofHotLoop(n) { let x = 0; for (let i = 0; i < n; i++) x = (x * 31 + i) % 1000003; return x; }
		const end = Date.now() + 5000; let s = 0;
		while (Date.now() < end) s += ebpfprofHotLoop(100000);' >/dev/null) &
	local pid=$!
	sleep 1.5
	"$EBPFPROF" --pid $pid --duration 2 --frequency 299 --output "$tmp/node.pb.gz" 2>/dev/null
	kill $pid 2>/dev/null; wait $pid 2>/dev/null
	rm -f "/tmp/perf-$pid.map"
	if go tool pprof -top -symbolize=none "$tmp/node.pb.gz" 2>/dev/null | grep -q 'ebpfprofHotLoop'; then
		pass node_perf_map
	else
		fail node_perf_map "the JS function is not named"
	fi
}

# A perf map older than its process is an earlier holder's of the pid, left behind (CPython's
# -X perf never removes its map): its names are not this process's. jit_spin runs code no file
# and no map of its own names; a map naming that code, planted a minute before the process
# started, is refused and counted; the same map written after the start names it, so the refusal
# is for its age alone.
test_stale_perf_map() {
	local pid addr map when seen refused
	"$SYM/jit_spin" >"$tmp/jit.addr" & pid=$!
	for _ in $(seq 50); do [ -s "$tmp/jit.addr" ] && break; sleep 0.1; done
	addr=$(cat "$tmp/jit.addr") map=/tmp/perf-$pid.map
	for when in stale fresh; do
		printf '%s 40 ebpfprof_planted_jit\n' "$addr" >"$map"
		[ $when = fresh ] || touch -d '-1 min' "$map"
		"$EBPFPROF" -v --pid $pid --duration 2 --frequency 299 --output "$tmp/jit_$when.pb.gz" \
			2>"$tmp/jit_$when.err"
		seen=$(go tool pprof -top -symbolize=none "$tmp/jit_$when.pb.gz" 2>/dev/null |
			grep -c ebpfprof_planted_jit)
		refused=$(grep -o 'symbol_perf_maps_refused_total=[0-9]*' "$tmp/jit_$when.err" | cut -d= -f2)
		eval "${when}_seen=\$seen ${when}_refused=\${refused:-?}"
	done
	kill $pid; wait $pid 2>/dev/null
	rm -f "$map"
	# shellcheck disable=SC2154
	local said="a map older than the process: named ${stale_seen}x, refused $stale_refused; written after it: named ${fresh_seen}x, refused $fresh_refused"
	if [ "$stale_seen" = 0 ] && [ "$stale_refused" = 1 ] && [ "$fresh_seen" -gt 0 ] &&
		[ "$fresh_refused" = 0 ]; then
		pass "stale_perf_map: $said"
	else
		fail stale_perf_map "$said"
	fi
}

run_test test_go_stripped
run_test test_c_inline
run_test test_debuglink
run_test test_cxx_demangle
run_test test_debuginfod
run_test test_node_perf_map
run_test test_stale_perf_map
