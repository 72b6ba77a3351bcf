#!/usr/bin/env bash
# test_ruby.sh -- CRuby frames walked in BPF, 3.1 (Debian 12), 3.3 (a Debian 13 root), 3.4 (experimental's, in a root of its own) and 3.3 built static with YJIT (Debian's source; with and without its local symbols): CPU split and hot line, threads, a C method between Ruby frames in order, a stack past the walk's bound, wall time in sleep, YJIT's code, 3.1 and 3.3 each in a container, a version we do not know
set -u
SUITE=ruby
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../lib/docker.sh"
RBDIR=$(cd "$(dirname "$0")/../fixtures/ruby" && pwd)
FREQ=${RUBY_FREQUENCY:-199}
SECS=${RUBY_SECONDS:-3}	# CPU (or wall) seconds of each run
TOL=${RUBY_TOLERANCE:-5}
tmp=$(mktemp -d)
declare -A ROOTS=()	# version -> the Debian root it runs in, chrooted
declare -A HOST=([ruby3.1]=/usr/bin/ruby3.1)	# version -> its interpreter, run on the host
ROOT=""			# the Debian 13 root's (3.3), for the container
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; container_cleanup; [ -n "${RUBY_KEEP:-}" ] || rm -rf "$tmp"; for r in "${ROOTS[@]}"; do rm -rf "$r/tmp/ebpfprof-ruby.$$"; done' EXIT

# wanted V: whether RUBY_VERSIONS ("3.1 3.4"; unset: every one) asks for V
wanted() { [ -z "${RUBY_VERSIONS:-}" ] || [[ " $RUBY_VERSIONS " == *" ${1#ruby} "* ]]; }

# root_ruby V SCRIPT: V, if the root SCRIPT makes (or has cached) holds it, with the fixtures copied in
root_ruby() {
	local v=$1 r
	wanted "$v" || return 1
	r=$(bash "$(dirname "$0")/../lib/$2" 2>/dev/null) && [ -x "$r/usr/bin/$v" ] || return 1
	mkdir -p "$r/tmp/ebpfprof-ruby.$$"
	cp "$RBDIR"/*.rb "$r/tmp/ebpfprof-ruby.$$/"
	ROOTS[$v]=$r
	rubies+=("$v")
}

# each version: its tag, how to run it, and where its scripts and gates are as it sees them
rubies=()
[ -x /usr/bin/ruby3.1 ] && wanted ruby3.1 && rubies+=(ruby3.1)
root_ruby ruby3.3 trixie_root.sh && ROOT=${ROOTS[ruby3.3]}
t0=$SECONDS
root_ruby ruby3.4 ruby34_root.sh && echo "# ruby3.4's root ready in $((SECONDS - t0)) s"
# a static CRuby with YJIT, built once (tests/lib/ruby_static.sh): its ruby, and a copy without local symbols
t0=$SECONDS
if { wanted ruby3.3-static || wanted ruby3.3-stripped; } && ! static=$(bash "$(dirname "$0")/../lib/ruby_static.sh"); then
	skip static "CRuby 3.3 did not build from Debian's source (tests/lib/ruby_static.sh)"
elif [ -n "${static:-}" ]; then
	echo "# the static CRuby ready in $((SECONDS - t0)) s"
	HOST[ruby3.3-static]=$static/ruby HOST[ruby3.3-stripped]=$static/ruby-stripped
	wanted ruby3.3-static && rubies+=(ruby3.3-static)
	wanted ruby3.3-stripped && rubies+=(ruby3.3-stripped)
fi
[ ${#rubies[@]} -gt 0 ] || { skip all "no CRuby (ruby3.1 here, ruby3.3 and ruby3.4 in Debian roots)"; exit 0; }

# dir V: where V's scripts and gate files are, on the host
dir() { [ -n "${HOST[$1]:-}" ] && echo "$tmp" || echo "${ROOTS[$1]}/tmp/ebpfprof-ruby.$$"; }
# run V SCRIPT ARGS...: V running a fixture in the background (3.3 and 3.4 in their roots: a chroot); sets RPID.
# RUBY_OPTS (--yjit) go to the interpreter.
run() {
	local v=$1 script=$2; shift 2
	if [ -n "${HOST[$v]:-}" ]; then
		"${HOST[$v]}" ${RUBY_OPTS:-} "$RBDIR/$script" "$@" &
	else
		chroot "${ROOTS[$v]}" "/usr/bin/$v" ${RUBY_OPTS:-} "/tmp/ebpfprof-ruby.$$/$script" "$@" &
	fi
	RPID=$!
}
# gate V NAME: the gate's path as V sees it
gate() { [ -n "${HOST[$1]:-}" ] && echo "$tmp/$2.gate" || echo "/tmp/ebpfprof-ruby.$$/$2.gate"; }

# profile NAME PID ARGS...: attaches, then opens the gate; stop_profile ends it
start_profile() {
	local name=$1 v=$2; shift 2
	"$EBPFPROF" -v "$@" --frequency "$FREQ" --duration 120 --output "$tmp/$name.pb.gz" 2>"$tmp/$name.err" &
	PROF=$!
	wait_profiling "$tmp/$name.err" $PROF 300
	touch "$(dir "$v")/$name.gate"
}
stop_profile() { kill -INT "$PROF" 2>/dev/null; wait "$PROF"; }

cum() { pprof_top "$@" | awk -v f="$2" '{ n = $6; for (i = 7; i <= NF; i++) n = n " " $i } n == f { sub("%", "", $5); print $5; exit }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", 100 * a / (a + b) }'; }
near() { awk -v g="$1" -v w="$2" -v t="$TOL" 'BEGIN { d = g - w; exit !(d <= t && -d <= t) }'; }

# every Ruby frame of the profile named: the runtime's own count, and no unknown frame in it
named_check() {
	local name=$1 line
	line=$(grep '^ebpfprof: ruby:' "$tmp/$name.err" | tail -1)
	if [[ "$line" =~ frames_named_total=([1-9][0-9]*) ]] && [[ "$line" == *" frames_unnamed_total=0 "* ]] &&
		! pprof_top "$tmp/$name.pb.gz" | grep -q 'unknown ruby'; then
		pass "$name named: every Ruby frame named ($(grep -o "frames_named_total=[0-9]*" <<<"$line"))"
	else
		fail "$name named" "${line:-no ruby: line}"
		# a stack with the unnamed frame, so a miss can be placed from the log alone
		go tool pprof -traces "$tmp/$name.pb.gz" 2>/dev/null | awk '/^-+\+/ { if (hit) { print s; exit } s = ""; hit = 0; next }
			{ s = s "  " $0 "\n" } /unknown ruby/ { hit = 1 }' | head -30
	fi
}

# has_yjit V: whether V's build has YJIT
has_yjit() {
	local bin=${HOST[$1]:-chroot ${ROOTS[$1]} /usr/bin/$1}

	$bin --yjit -e 'exit(defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled? ? 0 : 1)' 2>/dev/null
}

# jit_check NAME: the split run under YJIT: most of Split#alpha's samples in its code, marked, none lost
jit_check() {
	local name=$1 line share
	line=$(grep '^ebpfprof: ruby:' "$tmp/$name.err" | tail -1)
	share=$(go tool pprof -top -cum -unit=ms -nodecount=500 -focus='^Split#alpha$' -symbolize=none "$tmp/$name.pb.gz" 2>/dev/null |
		awk '/ Split#alpha$/ { a = $4 } / \[ruby jit code\]$/ { j = $4 } END { sub("ms", "", a); sub("ms", "", j); if (a > 0) printf "%d", 100 * j / a; else print 0 }')
	if [[ "$line" == *" frames_lost_jit_total=0 "* ]] && [[ "$line" =~ frames_jit_total=([1-9][0-9]*) ]] &&
		[ "${share:-0}" -ge 50 ]; then
		pass "$name jit: $share% of Split#alpha's samples in YJIT's code, marked; none lost"
	else
		fail "$name jit" "$share% of Split#alpha's samples under [ruby jit code]: $(grep -o 'frames_lost_jit_total=[0-9]* frames_jit_total=[0-9]*' <<<"$line")"
	fi
}

# split V [THREADS] [yjit]: alpha's share of alpha + beta against the CPU the script measured, and its hot line
split_check() {
	local v=$1 threads=${2:-1} mode=${3:-} name a b want got line hot tids
	name=$v-split
	[ "$threads" = 1 ] || name=$v-threads
	[ -z "$mode" ] || name=$v-$mode
	selected "$name" || return 0
	if [ "$mode" = yjit ] && ! has_yjit "$v"; then
		skip "$name" "$v is built without YJIT"
		return 0
	fi
	# steps: the walk of kernels before 5.17 (a global function per few frames), forced
	local walk=
	[ "$mode" = steps ] && walk=steps mode=
	RUBY_OPTS=${mode:+--$mode} run "$v" split.rb "$SECS" "$(gate "$v" "$name")" "$threads" hold >"$tmp/$name.out"
	local pid=$RPID i
	# profiled from its gate on: an iseq read while the interpreter's start still builds it is
	# unnamed (counted), and named_check asks for none
	for i in $(seq 1 600); do
		[ -e "$(dir "$v")/$name.gate.ready" ] || ! kill -0 "$pid" 2>/dev/null && break
		sleep 0.1
	done
	EBPFPROF_CFI_WALK=$walk start_profile "$name" "$v" --pid "$pid" --per-thread
	# its split printed, it waits: the profile ends before the process does
	for i in $(seq 1 1200); do
		grep -q '^alpha ' "$tmp/$name.out" || ! kill -0 "$pid" 2>/dev/null && break
		sleep 0.1
	done
	stop_profile
	stop "$pid"
	read -r _ a _ b <"$tmp/$name.out"
	want=$(pct "$a" "$b")
	a=$(cum "$tmp/$name.pb.gz" Split#alpha)
	b=$(cum "$tmp/$name.pb.gz" Split#beta)
	if [ -z "$a" ] || [ -z "$b" ]; then
		fail "$name" "Split#alpha or Split#beta missing: $(pprof_top "$tmp/$name.pb.gz" | sed -n 6,16p | tr '\n' '|')"
		# what the profiler said of the process, so a miss can be explained from the log alone
		grep -E '^ebpfprof: (pid |symbols:|unwind tables:|ruby:|sampler:)' "$tmp/$name.err" | cut -c1-600 | sed 's/^/  /'
		return
	fi
	got=$(pct "$a" "$b")
	hot=$(grep -n 'HOT alpha' "$RBDIR/split.rb" | cut -d: -f1)
	line=$(go tool pprof -top -cum -lines -nodecount=500 -symbolize=none "$tmp/$name.pb.gz" 2>/dev/null |
		awk '$6 == "Split#alpha" { print $7; exit }')
	tids=$(go tool pprof -tags -focus='^Split#alpha$' -symbolize=none "$tmp/$name.pb.gz" 2>/dev/null |
		awk '/^ tid:/ { on = 1; next } /^ [a-z]+:/ { on = 0 } on && /%/ { n++ } END { print n + 0 }')
	if ! near "$got" "$want"; then
		fail "$name" "profile $got% alpha, measured $want% (tolerance $TOL points)"
	elif [ "${line##*/}" != "split.rb:$hot" ]; then
		fail "$name" "Split#alpha's hottest line is '$line', not split.rb:$hot: $(go tool pprof -top -cum -lines -nodecount=500 -symbolize=none "$tmp/$name.pb.gz" 2>/dev/null | grep 'Split#alpha' | head -3 | tr -s ' \n' ' ')"
	elif [ -n "$walk" ] && ! grep -q "CFI walk: a global function per" "$tmp/$name.err"; then
		fail "$name" "EBPFPROF_CFI_WALK=steps did not take the steps build"
	elif [ "$tids" -lt "$threads" ]; then
		fail "$name" "Split#alpha seen in $tids threads of $threads"
	else
		pass "$name: profile $got% alpha, measured $want%; hottest line $line; $tids thread(s)"
	fi
	[ "$threads" != 1 ] || named_check "$name"
	[ "$mode" != yjit ] || jit_check "$name"
}

# cfunc V: leaf under "block in Object#outer" under Array#map under Object#outer, in that order, in each stack
cfunc_check() {
	local v=$1 name=$1-cfunc res
	selected "$name" || return 0
	run "$v" cfunc.rb "$SECS" "$(gate "$v" "$name")"
	local pid=$RPID
	start_profile "$name" "$v" --pid "$pid"
	wait "$pid"
	stop_profile
	res=$(go tool pprof -traces -symbolize=none "$tmp/$name.pb.gz" 2>/dev/null | awk '
		function check() {
			if (leaf) { n++; if (leaf < blk && blk < map && map < out) ok++ }
			leaf = blk = map = out = i = 0
		}
		/^-----/ { check(); next }
		{ i++; sub(/^[ \t]*[0-9.]+[a-z]*[ \t]+/, ""); sub(/^[ \t]+/, "") }
		$0 ~ /^Object#leaf/ && !leaf { leaf = i }
		$0 ~ /^block in Object#outer/ && !blk { blk = i }
		$0 ~ /^Array#map/ && !map { map = i }
		$0 ~ /^Object#outer/ && !out { out = i }
		END { check(); print ok + 0, n + 0 }')
	read -r ok n <<<"$res"
	if [ "$n" -gt 20 ] && [ $((ok * 100)) -ge $((n * 95)) ]; then
		pass "$name: $ok of $n stacks in Object#leaf read outer, Array#map, block in outer, leaf in order"
	else
		fail "$name" "$ok of $n stacks in Object#leaf in order: $(go tool pprof -traces -symbolize=none "$tmp/$name.pb.gz" 2>/dev/null | sed -n 3,14p | tr -s ' \n' ' ')"
	fi
}

# fiber V: a Fiber's samples hold its own frames (under Kernel#loop), the main fiber's its own: the execution
# context followed across Fiber switches
fiber_check() {
	local v=$1 name=$1-fiber res
	selected "$name" || return 0
	run "$v" fiber.rb "$SECS" "$(gate "$v" "$name")"
	local pid=$RPID
	start_profile "$name" "$v" --pid "$pid"
	wait "$pid"
	stop_profile
	res=$(go tool pprof -traces -symbolize=none "$tmp/$name.pb.gz" 2>/dev/null | awk '
		function check() {
			if (fib) { nf++; if (loop && !mn) okf++ }
			if (mn) { nm++; if (!loop && !fib) okm++ }
			fib = mn = loop = 0
		}
		/^-----/ { check(); next }
		/Object#spin_in_fiber/ { fib = 1 }
		/Object#spin_in_main/ { mn = 1 }
		/Kernel#loop/ { loop = 1 }
		END { check(); print okf + 0, nf + 0, okm + 0, nm + 0 }')
	read -r okf nf okm nm <<<"$res"
	if [ "$nf" -gt 5 ] && [ "$nm" -gt 5 ] && [ "$okf" = "$nf" ] && [ "$okm" = "$nm" ]; then
		pass "$name: $nf stacks in the Fiber under Kernel#loop, $nm in the main fiber, none mixed"
	else
		fail "$name" "$okf of $nf Fiber stacks and $okm of $nm main ones hold their own frames only"
	fi
}

# wall V: Wall#compute against Wall#doze (sleep) in wall time, as the script measured them
wall_check() {
	local v=$1 name=$1-wall c d pc pd want got
	selected "$name" || return 0
	run "$v" wall.rb "$SECS" "$(gate "$v" "$name")" >"$tmp/$name.out"
	local pid=$RPID
	start_profile "$name" "$v" --mode wall --pid "$pid"
	wait "$pid"
	stop_profile
	read -r _ c _ d <"$tmp/$name.out"
	pc=$(cum "$tmp/$name.pb.gz" Wall#compute)
	pd=$(cum "$tmp/$name.pb.gz" Wall#doze)
	if [ -z "$pc" ] || [ -z "$pd" ] || [ -z "${d:-}" ]; then
		fail "$name" "Wall#compute or Wall#doze missing: $(pprof_top "$tmp/$name.pb.gz" | sed -n 6,16p | tr '\n' '|')"
		return
	fi
	want=$(pct "$c" "$d")
	got=$(pct "$pc" "$pd")
	if near "$got" "$want" && cum "$tmp/$name.pb.gz" Kernel#sleep >/dev/null; then
		pass "$name: Wall#compute $got% of compute + doze wall time, measured $want%"
	else
		fail "$name" "Wall#compute $got% of wall time, measured $want% (tolerance $TOL points)"
	fi
}

# evalgc V: methods made by eval, run 30 ms of CPU, removed and collected: each named as itself (genN from
# generated_N.rb, never another's name at a reused address), none unknown
evalgc_check() {
	local v=$1 name=$1-evalgc made res own other unknown
	selected "$name" || return 0
	run "$v" evalgc.rb "$SECS" "$(gate "$v" "$name")" >"$tmp/$name.out"
	local pid=$RPID
	start_profile "$name" "$v" --pid "$pid"
	wait "$pid"
	stop_profile
	read -r made <"$tmp/$name.out"
	res=$(go tool pprof -top -nodecount=1000 -symbolize=none -lines "$tmp/$name.pb.gz" 2>/dev/null | awk '
		match($0, / (Churn#)?gen[0-9]+ /) {
			f = substr($0, RSTART + 1, RLENGTH - 2); g = f; sub(/.*gen/, "", g)
			if ($0 ~ ("generated_" g "\\.rb:")) { own[g] = 1; if (f ~ /#/) cls[g] = 1 } else bad++
		}
		END { n = c = 0; for (g in own) n++; for (g in cls) c++; print n, bad + 0, c }')
	read -r own other cls <<<"$res"
	unknown=$(pprof_top "$tmp/$name.pb.gz" | grep -c 'unknown ruby')
	if [ "${made:-0}" -gt 10 ] && [ $((own * 10)) -ge $((made * 8)) ] && [ "$other" = 0 ] && [ "$unknown" = 0 ]; then
		pass "$name: $own of $made collected eval methods named with their own file ($cls with their class), none unknown or another's"
	else
		fail "$name" "$own of ${made:-?} eval methods named as themselves, $other as another, $unknown unknown"
	fi
}

# deep V: Deep#down recursing 60 deep in a block Array#map yields to, past the control frames one vm_exec call
# may run: every stack through Deep#spin holds Deep#spin, then Deep#down to the bound's count of Ruby frames,
# then the mark, and no Ruby frame below it (the rest of that run is not read, so none is placed under the
# native frames that called it); the marks counted
deep_check() {
	local v=$1 name=$1-deep bound shown counted
	selected "$name" || return 0
	bound=$(sed -n 's/^#define RB_MAX_RUN \([0-9]*\)$/\1/p' "$(dirname "$0")/../../include/ruby.h")
	run "$v" deep.rb 120
	local pid=$RPID
	start_profile "$name" "$v" --pid "$pid"
	sleep 2	# some 60 stacks through Deep#spin at 199 Hz
	stop_profile
	stop "$pid"
	go tool pprof -traces -symbolize=none "$tmp/$name.pb.gz" >"$tmp/$name.traces" 2>/dev/null
	shown=$(bound_shapes "$tmp/$name.traces" Deep#spin Deep#down "[ruby frames lost: too deep]" \
		'^(Deep#|block in |Array#map|Object#outer|<main>)')
	counted=$(grep '^ebpfprof: ruby:' "$tmp/$name.err" | grep -o 'frames_lost_deep_total=[0-9]*' | cut -d= -f2)
	if [ -n "$bound" ] && bound_held "$shown" "$bound" && [ "${counted:-0}" -gt 0 ]; then
		pass "$name: all $(awk '{ n += $1 } END { print n }' <<<"$shown") stacks through Deep#spin: Deep#spin, $((bound - 1)) Deep#down, [ruby frames lost: too deep], no Ruby frame below; $counted marks counted"
	else
		fail "$name" "stacks (count, Ruby frames, mark, Ruby frames below it, out of order): '$(head -3 <<<"$shown" | tr -s ' \n' ' ')'; bound ${bound:-unread}; counted ${counted:-none}"
	fi
}

# unknown: ruby3.1 on a copy of its libruby whose ruby_version says 3.9.2 (loaded through LD_LIBRARY_PATH),
# a version we have no layout for: its stacks native (rb_vm_exec, no Split#alpha), said once, counted once
unknown_check() {
	local name=ruby-unknown lib=$tmp/lib so path off was line maps alpha
	selected "$name" || return 0
	[ -x /usr/bin/ruby3.1 ] && wanted ruby3.1 || { skip "$name" "no ruby3.1 here to patch"; return; }
	read -r so path < <(ldd /usr/bin/ruby3.1 | awk '$1 ~ /^libruby/ { print $1, $3; exit }')
	mkdir -p "$lib" && cp "$path" "$lib/$so" || { skip "$name" "no libruby to copy"; return; }
	# ruby_version's file offset: its address in the LOAD segment holding it
	off=$(python3 - "$lib/$so" <<'PY'
import subprocess, sys
f = sys.argv[1]
sym = [l.split() for l in subprocess.run(["nm", "-D", "--defined-only", f], capture_output=True,
       text=True).stdout.splitlines() if l.endswith(" ruby_version")]
addr = int(sym[0][0], 16)
for l in subprocess.run(["readelf", "-lW", f], capture_output=True, text=True).stdout.splitlines():
    w = l.split()
    if w and w[0] == "LOAD" and int(w[2], 16) <= addr < int(w[2], 16) + int(w[4], 16):
        print(addr - int(w[2], 16) + int(w[1], 16))
PY
)
	was=$(dd if="$lib/$so" bs=1 skip="${off:-0}" count=4 status=none)
	[ -n "$off" ] && [ "$was" = 3.1. ] && printf 9 | dd of="$lib/$so" bs=1 seek=$((off + 2)) conv=notrunc status=none ||
		{ skip "$name" "could not patch a copy of $path (ruby_version read '$was')"; return; }
	LD_LIBRARY_PATH=$lib /usr/bin/ruby3.1 --disable-gems "$RBDIR/split.rb" "$SECS" "$tmp/$name.gate" >/dev/null &
	local pid=$!
	start_profile "$name" ruby3.1 --pid "$pid"
	maps=$(grep -c "$lib/$so" "/proc/$pid/maps" 2>/dev/null)
	wait "$pid"
	stop_profile
	line=$(grep '^ebpfprof: ruby:' "$tmp/$name.err" | tail -1)
	alpha=$(cum "$tmp/$name.pb.gz" Split#alpha)
	if [ "${maps:-0}" -gt 0 ] &&
		[[ "$line" == "ebpfprof: ruby: processes_total=0 jit_processes_total=0 unknown_versions_total=1 "* ]] &&
		[ "$(grep -c 'CRuby 3.9.2 is a version we do not walk' "$tmp/$name.err")" = 1 ] &&
		[ -z "$alpha" ] && [ -n "$(cum "$tmp/$name.pb.gz" rb_vm_exec)" ]; then
		pass "$name: CRuby \"3.9.2\" (a patched libruby) kept native (rb_vm_exec, no Split#alpha), said once, counted once"
	else
		fail "$name" "patched libruby mapped ${maps:-0} times; $(cut -c1-120 <<<"$line"); said $(grep -c 'do not walk' "$tmp/$name.err") times; Split#alpha ${alpha:-absent}"
	fi
}

# agent: the pull endpoint names a Ruby process's methods, and /metrics has the runtime's families
agent_check() {
	local v=$1 name=$1-agent port named
	selected "$name" || return 0
	touch "$(dir "$v")/$name.gate"
	run "$v" split.rb "$SECS" "$(gate "$v" "$name")" >/dev/null
	local pid=$RPID
	"$EBPFPROF" agent --frequency 99 --interval 2 --listen 127.0.0.1:0 2>"$tmp/$name.err" &
	local agent=$!
	port=$(wait_port "$tmp/$name.err") || { fail "$name" "the agent did not start"; stop $agent; return; }
	curl -sf -o "$tmp/$name.pb.gz" "http://127.0.0.1:$port/debug/pprof/profile?seconds=2&pid=$pid"
	named=$(curl -sf "http://127.0.0.1:$port/metrics" | sed -n 's/^ebpfprof_ruby_frames_named_total \([0-9]*\)$/\1/p')
	stop $agent
	wait "$pid"
	if cum "$tmp/$name.pb.gz" Split#alpha >/dev/null && [ -n "$(cum "$tmp/$name.pb.gz" Split#alpha)" ] &&
		[ "${named:-0}" -gt 0 ]; then
		pass "$name: the pull endpoint's profile holds Split#alpha; ebpfprof_ruby_frames_named_total $named"
	else
		fail "$name" "Split#alpha missing from the pull, or no named frames in /metrics (${named:-none})"
	fi
}

# container V ROOT: V in a Docker container made from ROOT (the host's tree for 3.1, the Debian 13 root
# for 3.3; its files only): found through its root, its methods named, its split within 5 points
IMG=ebpfprof-test-ruby-$$
container_cleanup() {
	docker rm -f "$IMG" >/dev/null 2>&1
	docker image rm -f "$IMG:latest" >/dev/null 2>&1
	docker_down	# a daemon we started goes with us
}
container_check() {
	local v=$1 root=$2 name=$1-container pid a b want got
	selected "$name" || return 0
	case $BUILD in */san) skip "$name" "containers run in the plain pass only, as tests/containers do"; return ;; esac
	[ -n "$root" ] && [ -x "$root/usr/bin/$v" ] || { skip "$name" "no $v (for 3.3: no Debian 13 root)"; return; }
	docker_up || { skip "$name" "$DOCKER_WHY"; return; }
	rm -rf "$tmp/ctr"
	mkdir -p "$tmp/ctr/g"
	cp "$RBDIR/split.rb" "$tmp/ctr/split.rb"
	# the interpreter, the libraries it loads and Ruby's own library: 30 MB, imported in seconds
	docker_image_from "$IMG:latest" "$root" "/usr/bin/$v" "usr/lib/ruby/${v#ruby}.0" \
		"usr/lib/x86_64-linux-gnu/ruby/${v#ruby}.0" --exclude='*/rubygems*' ||
		{ fail "$name" "docker import failed"; return; }
	docker run -d --name "$IMG" -v "$tmp/ctr:/t" "$IMG:latest" "/usr/bin/$v" --disable-gems \
		/t/split.rb "$SECS" /t/g/go >/dev/null || { fail "$name" "docker run failed"; return; }
	pid=$(docker inspect -f '{{.State.Pid}}' "$IMG")
	"$EBPFPROF" -v --pid "$pid" --frequency "$FREQ" --duration 120 --output "$tmp/$name.pb.gz" 2>"$tmp/$name.err" &
	PROF=$!
	for _ in $(seq 300); do grep -qs '^ebpfprof: profiling' "$tmp/$name.err" && break; sleep 0.1; done
	touch "$tmp/ctr/g/go"
	docker wait "$IMG" >/dev/null
	stop_profile
	read -r _ a _ b < <(docker logs "$IMG" 2>/dev/null)
	want=$(pct "${a:-0}" "${b:-1}")
	a=$(cum "$tmp/$name.pb.gz" Split#alpha)
	b=$(cum "$tmp/$name.pb.gz" Split#beta)
	if [ -n "$a" ] && [ -n "$b" ] && near "$(pct "$a" "$b")" "$want"; then
		pass "$name: profile $(pct "$a" "$b")% alpha, measured $want%, in a container"
	else
		fail "$name" "Split#alpha ${a:-missing}, Split#beta ${b:-missing}, measured $want% alpha: $(grep -E 'ruby:|warning' "$tmp/$name.err" | head -2)"
	fi
	named_check "$name"
	docker rm -f "$IMG" >/dev/null 2>&1
	docker image rm -f "$IMG:latest" >/dev/null 2>&1
}

version_checks() {	# v: every check of one Ruby
	local v=$1
	# without its local symbols, a static CRuby is found by its code: the split is that path's check
	if [ "$v" = ruby3.3-stripped ]; then
		split_check "$v"
		return 0
	fi
	split_check "$v"
	split_check "$v" 2
	cfunc_check "$v"
	deep_check "$v"
	wall_check "$v"
	split_check "$v" 1 yjit
	[ "$v" = ruby3.1 ] && split_check "$v" 1 steps
	# the newest version shares the others' walk: Fibers and eval'd methods are 3.1's and 3.3's cases,
	# as they are for the static build, whose difference is how it is found and its YJIT
	[ "$v" = ruby3.4 ] || [ "$v" = ruby3.3-static ] && return 0
	fiber_check "$v"
	evalgc_check "$v"
	return 0
}

each_version version_checks "${rubies[@]}"
agent_check "${rubies[0]}"
unknown_check
wanted ruby3.1 && container_check ruby3.1 /
wanted ruby3.3 && container_check ruby3.3 "$ROOT"
container_cleanup
