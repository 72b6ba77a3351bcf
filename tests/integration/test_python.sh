#!/usr/bin/env bash
# test_python.sh -- CPython 3.8+ frames walked in BPF: CPU split of two functions within 5 points, the hot line, threads, json object_hook order, wall time in sleep and recv, a short-lived process named, a run past the walk's bound ending in its mark (3.11+)
set -u
SUITE=python
. "$(dirname "$0")/lib.sh"
PYDIR=$(cd "$(dirname "$0")/../fixtures/python" && pwd)
FREQ=${PYTHON_FREQUENCY:-199}
SECS=${PYTHON_SECONDS:-4}	# CPU seconds of each split run
TOL=${PYTHON_TOLERANCE:-5}
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT

# every CPython 3.8+ on the machine: pyenv's shared builds and Debian's static one; PYTHON_VERSIONS
# ("3.8 3.13 static"), when set, keeps those minor versions of pyenv's, and Debian's static build
# if it names "static" (CI's sanitizer pass: the oldest, the newest, and the static one)
wanted() {	# PATH MINOR
	[ -z "${PYTHON_VERSIONS:-}" ] && return 0
	if [ "${1#/usr/}" != "$1" ]; then
		[[ " $PYTHON_VERSIONS " == *" static "* ]]
	else
		[[ " $PYTHON_VERSIONS " == *" 3.$2 "* ]]
	fi
}
pythons=()
for p in /root/.pyenv/versions/3.*/bin/python3.* /usr/bin/python3.*; do
	[[ "$p" =~ python3\.([0-9]+)$ ]] && [ -x "$p" ] && [ "${BASH_REMATCH[1]}" -ge 8 ] || continue
	wanted "$p" "${BASH_REMATCH[1]}" && pythons+=("$p")
done
[ ${#pythons[@]} -gt 0 ] || { skip all "no CPython 3.8+ on this machine"; exit 0; }

tag() { echo "$(basename "$1")$([ "${1#/usr/}" != "$1" ] && echo -static)"; }

# profile NAME PID...: attaches to the pids, then opens $tmp/NAME.gate; the caller waits and stops it
start_profile() {
	local name=$1; shift
	"$EBPFPROF" "$@" --frequency "$FREQ" --duration 120 --output "$tmp/$name.pb.gz" \
		2>"$tmp/$name.err" &
	PROF=$!
	wait_profiling "$tmp/$name.err" $PROF 300
	touch "$tmp/$name.gate"
}
stop_profile() { kill -INT "$PROF" 2>/dev/null; wait "$PROF"; }

# cum share (percent) of the samples whose stack holds function $2 in profile $1
cum() { pprof_top "$1" | awk -v f="$2" '$6 == f { sub("%", "", $5); print $5; exit }'; }

# split PY MODE [PYTHON OPTIONS]: the profile's alpha/beta split against the one the script measured
split_check() {
	local py=$1 mode=$2 name t a b want got line hot
	t=$(tag "$py")
	name="$t-$mode"
	# xperf_check picks its own run
	[ "$mode" = xperf ] || selected "$name" "$name split" "$name line" "$name named" || return 0
	"$py" "${@:3}" "$PYDIR/split.py" "$mode" "$SECS" "$tmp/$name.gate" >"$tmp/$name.out" 2>&1 &
	local pid=$!
	start_profile "$name" --pid "$pid"
	wait "$pid"
	stop_profile
	# -X perf leaves its map behind: a later holder of the pid would find it
	[ "$mode" != xperf ] || rm -f "/tmp/perf-$pid.map"
	read -r _ a _ b <"$tmp/$name.out"
	want=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", 100 * a / (a + b) }')
	a=$(cum "$tmp/$name.pb.gz" split.alpha)
	b=$(cum "$tmp/$name.pb.gz" split.beta)
	if [ -z "$a" ] || [ -z "$b" ]; then
		fail "$name" "alpha or beta missing from the profile: $(pprof_top "$tmp/$name.pb.gz" | head -12 | tr '\n' '|')"
		return
	fi
	got=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", 100 * a / (a + b) }')
	if awk -v g="$got" -v w="$want" -v t="$TOL" 'BEGIN { d = g - w; exit !(d <= t && -d <= t) }'; then
		pass "$name split: profile $got% alpha, measured $want%"
	else
		fail "$name split" "profile $got% alpha, measured $want% (tolerance $TOL points)"
	fi
	# the hottest line of alpha is its loop body
	hot=$(grep -n 'HOT alpha' "$PYDIR/split.py" | cut -d: -f1)
	line=$(go tool pprof -top -lines -nodecount=500 -symbolize=none "$tmp/$name.pb.gz" 2>/dev/null |
		awk '$6 == "split.alpha" { print $7 }' | head -1)
	if [ "$line" = "$PYDIR/split.py:$hot" ]; then
		pass "$name line: split.alpha's hottest line is $line"
	else
		fail "$name line" "split.alpha's hottest line is '$line', not split.py:$hot"
	fi
	named_check "$name"
}

# wall PY: compute / time.sleep / socket.recv shares of wall time against the script's own clock
wall_check() {
	local py=$1 name out fn want got bad=""
	name="$(tag "$py")-wall"
	selected "$name" || return 0
	"$py" "$PYDIR/wall.py" "$SECS" "$tmp/$name.gate" >"$tmp/$name.out" 2>&1 &
	local pid=$!
	start_profile "$name" --mode wall --pid "$pid"
	wait "$pid"
	stop_profile
	read -r _ c _ d _ r <"$tmp/$name.out"
	local sum_m sum_p pc pd pr
	pc=$(cum "$tmp/$name.pb.gz" wall.compute)
	pd=$(cum "$tmp/$name.pb.gz" wall.doze)
	pr=$(cum "$tmp/$name.pb.gz" wall.receive)
	if [ -z "$pc" ] || [ -z "$pd" ] || [ -z "$pr" ] || [ -z "${r:-}" ]; then
		fail "$name" "compute, doze or receive missing: $(pprof_top "$tmp/$name.pb.gz" | head -14 | tr '\n' '|')"
		return
	fi
	out=""
	for fn in compute:$c:$pc doze:$d:$pd receive:$r:$pr; do
		IFS=: read -r f m g <<<"$fn"
		want=$(awk -v m="$m" -v c="$c" -v d="$d" -v r="$r" 'BEGIN { printf "%.1f", 100 * m / (c + d + r) }')
		got=$(awk -v g="$g" -v a="$pc" -v b="$pd" -v e="$pr" 'BEGIN { printf "%.1f", 100 * g / (a + b + e) }')
		out="$out $f $got% (measured $want%)"
		awk -v g="$got" -v w="$want" -v t="$TOL" 'BEGIN { d = g - w; exit !(d <= t && -d <= t) }' || bad=1
	done
	if [ -z "$bad" ]; then
		pass "$name:$out"
	else
		fail "$name" "$out (tolerance $TOL points)"
	fi
}

# -X perf (3.12+): its trampolines are crossed, not a stack's end, and never double a Python frame
xperf_check() {
	local py=$1 name total trunc doubled
	name="$(tag "$py")-xperf"
	selected "$name" "$name split" "$name line" "$name named" "$name whole" || return 0
	split_check "$py" xperf -X perf
	go tool pprof -traces -symbolize=none "$tmp/$name.pb.gz" 2>/dev/null >"$tmp/$name.traces"
	total=$(grep -c '^-----' "$tmp/$name.traces")
	trunc=$(grep -c 'truncated user stack' "$tmp/$name.traces")
	doubled=$(grep -c 'py::' "$tmp/$name.traces")
	if [ "$total" -gt 10 ] && [ $((trunc * 100)) -le "$total" ] && [ "$doubled" = 0 ]; then
		pass "$name whole: $trunc of $total stacks truncated, no py:: perf-map frame doubling a Python one"
	else
		fail "$name whole" "$trunc of $total stacks truncated, $doubled py:: frames"
	fi
}

# off-cpu PY: the Python functions that wait, time.sleep against socket.recv, as the script measured them
offcpu_check() {
	local py=$1 name pd pr want got
	name="$(tag "$py")-offcpu"
	selected "$name" || return 0
	"$py" "$PYDIR/wall.py" "$SECS" "$tmp/$name.gate" >"$tmp/$name.out" 2>&1 &
	local pid=$!
	start_profile "$name" --mode off-cpu --pid "$pid"
	wait "$pid"
	stop_profile
	read -r _ c _ d _ r <"$tmp/$name.out"
	pd=$(cum "$tmp/$name.pb.gz" wall.doze)
	pr=$(cum "$tmp/$name.pb.gz" wall.receive)
	if [ -z "$pd" ] || [ -z "$pr" ] || [ -z "${r:-}" ]; then
		fail "$name" "doze or receive missing: $(pprof_top "$tmp/$name.pb.gz" | head -12 | tr '\n' '|')"
		return
	fi
	want=$(awk -v d="$d" -v r="$r" 'BEGIN { printf "%.1f", 100 * d / (d + r) }')
	got=$(awk -v d="$pd" -v r="$pr" 'BEGIN { printf "%.1f", 100 * d / (d + r) }')
	if awk -v g="$got" -v w="$want" -v t="$TOL" 'BEGIN { d = g - w; exit !(d <= t && -d <= t) }'; then
		pass "$name: time.sleep in wall.doze $got% of the waiting, measured $want%"
	else
		fail "$name" "wall.doze $got% of the waiting, measured $want%"
	fi
}

# asyncio: a coroutine's frames are frames, the task's coroutine under the event loop's run
aio_check() {
	local py=$1 name share
	name="$(tag "$py")-asyncio"
	selected "$name" || return 0
	"$py" "$PYDIR/aio.py" 3 "$tmp/$name.gate" >/dev/null 2>&1 &
	local pid=$!
	# _asyncio mapped before the profiler first reads the process: a library mapped after is walked
	# by frame pointers until the profiler reads the maps again, which is not what this checks
	for _ in $(seq 100); do grep -qs '_asyncio' "/proc/$pid/maps" && break; sleep 0.1; done
	start_profile "$name" --pid "$pid"
	wait "$pid"
	stop_profile
	go tool pprof -traces -symbolize=none "$tmp/$name.pb.gz" 2>/dev/null >"$tmp/$name.traces"
	# the share of samples in crunch whose stack reads crunch <- worker <- ... <- asyncio's _run_once
	share=$(awk '
		/^-+/ { if (c) { n++; if (w && r) ok++ } c = w = r = 0; next }
		{ f = $NF; if (f == "aio.crunch") c = 1; if (c && f == "aio.worker") w = 1;
		  if (w && f ~ /_run_once$/) r = 1 }
		END { if (c) { n++; if (w && r) ok++ } printf "%d %d", ok, n }' "$tmp/$name.traces")
	read -r ok n <<<"$share"
	if [ "$n" -gt 20 ] && [ $((ok * 100)) -ge $((n * 99)) ]; then
		pass "$name: $ok of $n crunch stacks go through the worker coroutine to the event loop"
	else
		fail "$name" "$ok of $n crunch stacks go through the worker coroutine to the event loop"
	fi
}

# the agent: its pull endpoint names Python frames as the one-shot profiler does, /metrics counts them
agent_check() {
	local py=$1 name port a b named skipped
	name="$(tag "$py")-agent"
	selected "$name" || return 0
	"$EBPFPROF" agent --listen 127.0.0.1:0 --frequency 99 2>"$tmp/$name.err" &
	local agent=$!
	port=$(wait_port "$tmp/$name.err") || { fail "$name" "agent did not listen"; stop $agent; return; }
	touch "$tmp/$name.gate"
	# three execs of one non-Python binary, each computing past the 20 ms an exec waits (an idle
	# one waits longer): the first one's symbols are read, the other two are known to hold no interpreter
	for _ in 1 2 3; do "$BUILD/fixtures/short_lived" 0 200; done
	"$py" "$PYDIR/split.py" threads 3 "$tmp/$name.gate" >/dev/null 2>&1 &
	local pid=$!
	sleep 0.5
	go tool pprof -timeout 60 -top -symbolize=none \
		"http://127.0.0.1:$port/debug/pprof/profile?seconds=2&pid=$pid" >"$tmp/$name.top" 2>/dev/null
	curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/$name.metrics"
	wait "$pid"
	stop $agent
	a=$(awk '$6 == "split.alpha"' "$tmp/$name.top" | wc -l)
	b=$(awk '$6 == "split.beta"' "$tmp/$name.top" | wc -l)
	named=$(sed -n 's/^ebpfprof_python_frames_named_total \([0-9]*\)$/\1/p' "$tmp/$name.metrics")
	skipped=$(sed -n 's/^ebpfprof_python_files_skipped_total \([0-9]*\)$/\1/p' "$tmp/$name.metrics")
	if [ "$a" = 1 ] && [ "$b" = 1 ] && [ "${named:-0}" -gt 0 ] && [ "${skipped:-0}" -ge 2 ] &&
		grep -Eq '^ebpfprof_python_processes_total [1-9]' "$tmp/$name.metrics"; then
		pass "$name: the pull endpoint names split.alpha and split.beta; /metrics: $named frames named, $skipped executables not read again"
	else
		fail "$name" "alpha $a, beta $b in the pull profile; frames named '${named:-}', executables skipped '${skipped:-}' (want >= 2)"
	fi
}

# the share of Python frames named; lost walks are counted as unnamed too
named_check() {
	local name=$1 total bad
	go tool pprof -traces -symbolize=none "$tmp/$name.pb.gz" 2>/dev/null >"$tmp/$name.traces"
	total=$(grep -cE '^ +[^ ]*(split|threading|hook)\.[A-Za-z_<]' "$tmp/$name.traces")
	bad=$(grep -cE 'unknown python function|python frames lost' "$tmp/$name.traces")
	echo "info: $name: $total named Python frames in traces, $bad unnamed or lost"
	if [ "$total" -gt 0 ] && [ $((bad * 100)) -le "$total" ]; then
		pass "$name named: $bad of $((total + bad)) Python frames unnamed"
	else
		fail "$name named" "$bad unnamed or lost Python frames against $total named"
	fi
}

# json.loads (the C scanner) calls object_hook: hook -> eval loop -> C scanner -> raw_decode -> loads -> run
hook_check() {
	local py=$1 name
	name="$(tag "$py")-hook"
	selected "$name" || return 0
	# it runs until the profile is done: loading may take longer than its 3 s on a loaded machine
	"$py" "$PYDIR/hook.py" 120 >/dev/null 2>&1 &
	local pid=$!
	start_profile "$name" --pid "$pid"
	sleep 3
	stop_profile
	kill "$pid"; wait "$pid" 2>/dev/null
	go tool pprof -traces -symbolize=none "$tmp/$name.pb.gz" 2>/dev/null >"$tmp/$name.traces"
	# pprof -traces: one frame a line, leaf first, traces apart by dashes
	if awk '
		/^-+/ { ok += done(); n = 0; delete at; next }
		{ f = $NF; if ($1 ~ /^[0-9.]+[a-z]*$/ && NF > 1) f = $NF; n++;
		  if (f == "hook.object_hook" && !at["hook"]) at["hook"] = n;
		  if (f == "_PyEval_EvalFrameDefault" && at["hook"] && !at["eval"]) at["eval"] = n;
		  if (f ~ /raw_decode$/ && !at["raw"]) at["raw"] = n;
		  if (f == "json.loads" && !at["loads"]) at["loads"] = n;
		  if (f == "hook.run" && !at["run"]) at["run"] = n }
		function done() { return at["hook"] && at["hook"] < at["eval"] && at["eval"] < at["raw"] &&
				  at["raw"] < at["loads"] && at["loads"] < at["run"] }
		END { ok += done(); exit !ok }' "$tmp/$name.traces"; then
		pass "$name: object_hook under the C scanner under raw_decode under json.loads under run"
	else
		fail "$name" "no stack with object_hook -> eval loop -> raw_decode -> json.loads -> run in order"
	fi
}

# a process that starts and ends while the profile runs is named after it ended
short_check() {
	local py=$1 name
	name="$(tag "$py")-short"
	selected "$name" || return 0
	start_profile "$name"
	"$py" "$PYDIR/short.py"
	sleep 0.5
	stop_profile
	if go tool pprof -top -lines -nodecount=500 -symbolize=none "$tmp/$name.pb.gz" 2>/dev/null |
		grep -q "short.short_lived_work $PYDIR/short.py:"; then
		pass "$name: a 0.4 s process is named after it exited"
	else
		fail "$name" "short.short_lived_work not in the profile"
	fi
}

# code made at run time and freed, its address reused by the next: every function named as
# itself (read while it lived, by address and tag), though the process is gone at the end.
# MODE lines: each starts on its own line; same: all on line 1, told apart by co_version (3.12+)
# or by the hash of the name
reuse_check() {
	local py=$1 mode=$2 name n=20 said named unknown spread pid
	name="$(tag "$py")-reuse$([ "$mode" = same ] && echo -same-line)"
	selected "$name" || return 0
	start_profile "$name"
	"$py" "$PYDIR/reuse.py" $n $mode >"$tmp/$name.out" &
	pid=$!
	wait "$pid"
	said=$(cat "$tmp/$name.out")
	stop_profile
	# its own samples only, shares of them: another version's checks run at once (each_version),
	# and its reuse.py names its functions gen.f0 ... too
	go tool pprof -top -nodecount=1000 -symbolize=none -tagfocus="pid=^$pid\$" \
		-relative_percentages "$tmp/$name.pb.gz" 2>/dev/null >"$tmp/$name.top"
	named=$(awk '$6 ~ /^gen\.f[0-9]+$/ { print $6 }' "$tmp/$name.top" | sort -u | wc -l)
	unknown=$(awk '$6 == "[unknown" && $7 == "python" { sub("%", "", $2); print $2 }' "$tmp/$name.top")
	# each ran 100 ms of CPU: one named for another would hold twice the samples of the rest
	spread=$(awk '$6 ~ /^gen\.f[0-9]+$/ { sub("%", "", $5); print $5 }' "$tmp/$name.top" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) printf "%s %s", v[int((NR + 1) / 2)], v[NR] }')
	# the premise: addresses were reused (fewer than half of them distinct)
	if [[ "$said" =~ ^$n\ functions,\ ([0-9]+)\ code ]] && [ "${BASH_REMATCH[1]}" -lt $((n / 2)) ] &&
		[ "$named" -ge $((n - 3)) ] && awk -v u="${unknown:-0}" 'BEGIN { exit !(u <= 1) }' &&
		awk -v s="$spread" 'BEGIN { split(s, a, " "); exit !(a[1] > 0 && a[2] <= 1.5 * a[1]) }'; then
		pass "$name: $said; $named of them named, ${unknown:-0}% unknown, cum % median/most $spread"
	else
		fail "$name" "$said; $named of $n functions named, ${unknown:-0}% [unknown python function], cum % median/most '$spread'"
	fi
}

# CPython we do not walk (3.7, and 3.6 without _PyRuntime): native frames only, said once per
# version however many processes run it, counted per process in -v; never a guessed Python frame
unknown_check() {
	local py37=/root/.pyenv/versions/3.7.16/bin/python3.7 py36=/root/.pyenv/versions/3.6.15/bin/python3.6
	local name=unknown p1 p2 p3 said37 said36 counted
	selected $name || return 0
	[ -x "$py37" ] && [ -x "$py36" ] || { skip $name "no pyenv CPython 3.7.16 and 3.6.15 here"; return; }
	"$py37" "$PYDIR/split.py" alternate 2 "$tmp/$name.gate" >/dev/null 2>&1 & p1=$!
	"$py37" "$PYDIR/split.py" alternate 2 "$tmp/$name.gate" >/dev/null 2>&1 & p2=$!
	"$py36" -c 'import os, time
while not os.path.exists("'"$tmp/$name.gate"'"): time.sleep(0.05)
end = time.time() + 2
while time.time() < end: sum(i * i for i in range(300))' & p3=$!
	start_profile $name -v --pid "$p1,$p2,$p3"
	wait $p1 $p2 $p3
	stop_profile
	said37=$(grep -c 'CPython 3.7 in .* is a version we do not know' "$tmp/$name.err")
	said36=$(grep -c 'is a CPython older than 3.7' "$tmp/$name.err")
	counted=$(sed -n 's/.*python: .*unknown_versions_total=\([0-9]*\).*/\1/p' "$tmp/$name.err")
	go tool pprof -traces -symbolize=none "$tmp/$name.pb.gz" 2>/dev/null >"$tmp/$name.traces"
	if [ "$said37" = 1 ] && [ "$said36" = 1 ] && [ "${counted:-0}" = 3 ] &&
		grep -q ' _PyEval_EvalFrameDefault$' "$tmp/$name.traces" &&
		! grep -qE 'split\.|unknown python function|python frames lost' "$tmp/$name.traces"; then
		pass "$name: 3.7 and 3.6 said once each, 3 processes counted, native frames only"
	else
		grep -i python "$tmp/$name.err" | head -5
		fail $name "3.7 said $said37 times, 3.6 $said36, counted '${counted:-}', eval loop $(grep -c _PyEval_EvalFrameDefault "$tmp/$name.traces") traces, Python names $(grep -cE 'split\.' "$tmp/$name.traces")"
	fi
}

# deep PY (3.11+): deep.down recursing 40 deep in a lambda map calls, past the frames one interpreter
# loop call may run: every stack through deep.spin holds deep.spin, the bound's other frames all
# deep.down, the mark, and no Python frame below it (none of the cut run's placed under map's
# native frames); the marks counted
deep_check() {
	local py=$1 name bound shown counted
	name="$(tag "$py")-deep"
	selected "$name" || return 0
	bound=$(sed -n 's/^#define PY_MAX_RUN \([0-9]*\)$/\1/p' "$(dirname "$0")/../../include/python.h")
	"$py" "$PYDIR/deep.py" 120 >"$tmp/$name.out" 2>&1 &
	local pid=$!
	start_profile "$name" -v --pid "$pid"
	sleep 2	# some 100 stacks through deep.spin at 199 Hz
	stop_profile
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	go tool pprof -traces -symbolize=none "$tmp/$name.pb.gz" >"$tmp/$name.traces" 2>/dev/null
	shown=$(bound_shapes "$tmp/$name.traces" deep.spin deep.down "[python frames lost: too deep]" \
		'^deep\.')
	counted=$(sed -n 's/.*frames_lost_total{reason="too_deep"}=\([0-9]*\).*/\1/p' "$tmp/$name.err")
	if [ -n "$bound" ] && bound_held "$shown" "$bound" && [ "${counted:-0}" -gt 0 ]; then
		pass "$name: all $(awk '{ n += $1 } END { print n }' <<<"$shown") stacks through deep.spin: deep.spin, $((bound - 1)) deep.down, [python frames lost: too deep], no Python frame below; $counted marks counted"
	else
		fail "$name" "stacks (count, Python frames, mark, Python frames below it, out of order): '$(head -3 <<<"$shown" | tr -s ' \n' ' ')'; bound ${bound:-unread}; counted ${counted:-none}"
	fi
}

version_checks() {	# py: every check of one CPython
	local py=$1
	split_check "$py" alternate
	split_check "$py" threads
	hook_check "$py"
	wall_check "$py"
	aio_check "$py"
	[[ "$py" =~ python3\.1[2-9]$ ]] && xperf_check "$py"
	reuse_check "$py" lines
	reuse_check "$py" same
	[[ "$py" =~ python3\.1[1-9]$ ]] && deep_check "$py"
	return 0
}

each_version version_checks "${pythons[@]}"
agent_check "${pythons[0]}"
offcpu_check "${pythons[0]}"
short_check "${pythons[0]}"
short_check "${pythons[${#pythons[@]} - 1]}"
unknown_check
