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
}

test_go119() { check_release go1.19 "$FIX/goheap-go1.19"; }
test_go124() { check_release go1.24 "$FIX/goheap-go1.24"; }

run_test test_go119 go1.19
run_test test_go124 go1.24
