#!/usr/bin/env bash
# ruby.sh -- CRuby frames: BPF ns per sample for a Ruby process against a native one, cost and memory of naming iseqs, share of samples with every Ruby frame named, per version (3.1 and the static 3.3 under YJIT too)
# usage: ruby.sh [SECONDS (8)]; BPF run-time statistics are held on by a BPF_ENABLE_STATS descriptor while it runs
set -u
cd "$(dirname "$0")/../.."
EBPFPROF=${EBPFPROF:-build/ebpfprof}
F=build/fixtures
secs=${1:-8}
out=$(mktemp -d)
# the Debian roots 3.3 and 3.4 run in, chrooted
declare -A ROOTS=([3.3]=$(bash tests/lib/trixie_root.sh 2>/dev/null) [3.4]=$(bash tests/lib/ruby34_root.sh 2>/dev/null))
# CRuby 3.3 built static with YJIT from Debian's source (tests/lib/ruby_static.sh), run on the host
static=$(bash tests/lib/ruby_static.sh 2>/dev/null)
sub="tmp/ebpfprof-ruby-bench.$$"
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$out"; for r in "${ROOTS[@]}"; do [ -z "$r" ] || rm -rf "${r:?}/$sub"; done' EXIT
export PATH=$PATH:/usr/lib/go/bin

. tests/bench/runtime_lib.sh
bpf_stats_hold

# samples with a Ruby frame whose every Ruby frame is named (no unknown method, no lost mark): only
# those with a Ruby frame count, unlike runtime_lib.sh's, which this one replaces
named_share() {
	go tool pprof -traces -symbolize=none "$1" 2>/dev/null | awk '
		function ms(v) { return v ~ /ms$/ ? v + 0 : v ~ /us$/ ? v / 1000 : v ~ /s$/ ? v * 1000 : v + 0 }
		function flush() { if (w && rb) { all += w; if (!bad) ok += w } w = 0; bad = 0; rb = 0 }
		/^-+\+/ { flush(); next }
		$1 ~ /:$/ { next }
		NF >= 2 && !w { w = ms($1); $1 = "" }
		/[A-Z][A-Za-z0-9_:]*[#.]|<main>|block in|unknown ruby|ruby frames lost/ { rb = 1 }
		/unknown ruby|ruby frames lost/ { bad = 1 }
		END { flush(); if (all) printf "%.1f %% of %d ms", 100 * ok / all, all }'
}

# run V SCRIPT ARGS...: a Ruby (3.3 and 3.4 in their Debian roots; 3.1-yjit: 3.1 with --yjit; 3.3-static,
# 3.3-static-yjit: the static build) in the background
run() {
	local v=$1 script=$2 r; shift 2
	if [ "$v" = 3.1 ] || [ "$v" = 3.1-yjit ]; then
		ruby3.1 $([ "$v" = 3.1 ] || echo --yjit) "$script" "$@" >/dev/null &
	elif [[ "$v" = 3.3-static* ]]; then
		"$static/ruby" $([ "$v" = 3.3-static ] || echo --yjit) "$script" "$@" >/dev/null &
	else
		r=${ROOTS[$v]}
		mkdir -p "$r/$sub" && cp "$script" "$r/$sub/"
		chroot "$r" "ruby$v" "/$sub/$(basename "$script")" "$@" >/dev/null &
	fi
	RPID=$!
}

# many iseqs: 2,000 methods made by eval, each called every round
cat >"$out/many.rb" <<'RB'
class Many; end
2000.times { |i| Many.class_eval("def m#{i}(n) s = 0; n.times { |k| s += k ^ #{i} }; s end", "many_#{i}.rb", 1) }
stop = Process.clock_gettime(Process::CLOCK_MONOTONIC) + Float(ARGV[0])
o = Many.new
while Process.clock_gettime(Process::CLOCK_MONOTONIC) < stop
  2000.times { |i| o.send(:"m#{i}", 20) }
end
RB

echo "BPF cost per sample at 999 Hz, $secs s each (--unwind cfi, the default):"
"$F/cpu_split" $((secs + 3)) >/dev/null &
pid=$!
profile native-cpu_split $pid
wait $pid
for v in 3.1 3.1-yjit 3.3 3.4 3.3-static 3.3-static-yjit; do
	ROOT=${ROOTS[$v]:-}
	if [[ "$v" = 3.3-static* ]]; then
		[ -n "$static" ] || { echo "ruby$v: the static build failed (tests/lib/ruby_static.sh)"; continue; }
	elif [[ "$v" != 3.1* ]] && [ ! -x "$ROOT/usr/bin/ruby$v" ]; then
		echo "ruby$v: no Debian root with it"
		continue
	fi
	touch "$out/go"	# the gate, open from the start: the profile begins later
	[ -z "$ROOT" ] || { mkdir -p "$ROOT/$sub" && touch "$ROOT/$sub/go"; }
	gate=$([ -z "$ROOT" ] && echo "$out/go" || echo "/$sub/go")
	run "$v" tests/fixtures/ruby/cfunc.rb $((secs + 2)) "$gate"
	pid=$RPID
	sleep 1
	profile "ruby$v-cfunc" $pid
	wait $pid
	sed -n 's/^ebpfprof: ruby: /    /p' "$out/ruby$v-cfunc.err"
	echo "    samples with every Ruby frame named: $(named_share "$out/ruby$v-cfunc.pb.gz")"
	run "$v" "$out/many.rb" $((secs + 3))
	pid=$RPID
	sleep 2
	profile "ruby$v-2000-eval-methods" $pid
	wait $pid
	sed -n 's/^ebpfprof: ruby: /    /p' "$out/ruby$v-2000-eval-methods.err"
	echo "    samples with every Ruby frame named: $(named_share "$out/ruby$v-2000-eval-methods.pb.gz")"
done
