#!/usr/bin/env bash
# test_wall.sh -- off-CPU and wall-clock modes on the fgprof scenario, read back with go tool pprof
set -u
SUITE=wall
. "$(dirname "$0")/lib.sh"
FIX=$BUILD/fixtures
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT

. "$(dirname "$0")/../lib/pprof_wall.sh"	# cum_pct, within, thread_wall_ns, profile_seconds

fgprof_case() {	# name, program, functions...: each phase's share of the main thread's wall time vs measured
	local name=$1 prog=$2; shift 2
	# it runs until the profile ends, however long the profiler takes to start: SIGTERM stops it
	"$prog" 60 >"$tmp/measured" & local pid=$!
	sleep 0.5
	"$EBPFPROF" --pid $pid --mode wall --per-thread --duration 5 --output "$tmp/wall.pb.gz" 2>"$tmp/wall.err" ||
		{ kill $pid; wait $pid; fail $name "ebpfprof failed: $(tail -1 "$tmp/wall.err")"; return; }
	kill -TERM $pid
	wait $pid
	# a numeric value would be read as a range: the parentheses keep it a regexp
	go tool pprof -top -nodecount=100 -symbolize=none -sample_index=wall -relative_percentages -tagfocus="tid=($pid)" \
		"$tmp/wall.pb.gz" >"$tmp/wall.top" 2>/dev/null
	local ok=1 f want got
	for f in "$@"; do
		want=$(awk -v f=$f '{ for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }' "$tmp/measured")
		got=$(cum_pct "$tmp/wall.top" $f)
		echo "  $f: $got% of the thread's wall time (measured $want%)"
		within "$got" "$want" 5 || ok=0
	done
	# the thread's wall time in the profile against the run's duration
	local total dur
	total=$(go tool pprof -raw -symbolize=none -sample_index=wall "$tmp/wall.pb.gz" 2>/dev/null |
		awk -v t="tid:[$pid]" '/^ +[0-9]+ +[0-9]+ +[0-9]+:/ { v = $3 } index($0, t) { s += v } END { print s / 1e9 }')
	dur=$(go tool pprof -raw -symbolize=none "$tmp/wall.pb.gz" 2>/dev/null | awk '/^Duration:/ { print $2 + 0 }')
	echo "  main thread: $total s of wall time in a $dur s profile"
	awk -v t="$total" -v d="$dur" 'BEGIN { exit !(t > 0.95 * d && t < 1.05 * d) }' || ok=0
	[ $ok = 1 ] && pass $name || { head -20 "$tmp/wall.top"; fail $name "shares or total off by more than 5"; }
}

test_fgprof() {
	fgprof_case fgprof_wall "$FIX/fgprof" fg_wait fg_burn fg_nap
	if [ -x "$FIX/symbols/go_fgprof" ]; then
		fgprof_case fgprof_wall_go "$FIX/symbols/go_fgprof" main.goWait main.goBurn main.goNap
	else
		skip fgprof_wall_go "go is not installed"
	fi
}

test_cpu_mode_hides_waiting() {	# the same program in cpu mode: only the computing function
	"$FIX/fgprof" 4 >/dev/null & local pid=$!
	sleep 0.3
	"$EBPFPROF" --pid $pid --duration 3 --frequency 299 --output "$tmp/cpu.pb.gz" 2>/dev/null
	wait $pid
	go tool pprof -top -symbolize=none "$tmp/cpu.pb.gz" >"$tmp/cpu.top" 2>/dev/null
	local burn wait_
	burn=$(cum_pct "$tmp/cpu.top" fg_burn)
	wait_=$(cum_pct "$tmp/cpu.top" fg_wait)
	if awk -v b="$burn" -v w="$wait_" 'BEGIN { exit !(b >= 90 && w < 5) }'; then
		pass cpu_mode
	else
		fail cpu_mode "fg_burn $burn%, fg_wait $wait_% of CPU samples"
	fi
}

test_offcpu_states() {	# off-cpu mode: sample types and the state label of sleeping blocks
	"$FIX/fgprof" 3 >/dev/null & local pid=$!
	sleep 0.3
	"$EBPFPROF" --pid $pid --mode off-cpu --duration 2 --output "$tmp/off.pb.gz" 2>/dev/null
	wait $pid
	local raw
	raw=$(go tool pprof -raw -symbolize=none "$tmp/off.pb.gz" 2>/dev/null)
	if grep -q 'off_cpu/nanoseconds\[dflt\] blocks/count' <<<"$raw" && grep -q 'state:\[sleeping\]' <<<"$raw" &&
		go tool pprof -top -symbolize=none "$tmp/off.pb.gz" 2>/dev/null | grep -q fg_nap; then
		pass offcpu_mode
	else
		fail offcpu_mode "sample types, state label or fg_nap missing"
	fi
}

test_wall_types() {	# one pprof, three sample types, wall the default
	local raw
	"$FIX/fgprof" 7 >/dev/null & local pid=$!
	sleep 0.3
	"$EBPFPROF" --pid $pid --mode wall --per-thread --duration 2 --output "$tmp/wall.pb.gz" 2>/dev/null
	kill $pid; wait $pid 2>/dev/null
	raw=$(go tool pprof -raw -symbolize=none "$tmp/wall.pb.gz" 2>/dev/null)
	if grep -q 'cpu/nanoseconds off_cpu/nanoseconds wall/nanoseconds\[dflt\]' <<<"$raw" &&
		grep -q 'state:\[running\]' <<<"$raw"; then
		pass wall_types
	else
		grep -m2 nanoseconds <<<"$raw"; fail wall_types "sample types or running state missing"
	fi
}

test_agent_windows() {	# 1 s windows: the thread's wall time adds up across them, none dropped or doubled
	"$FIX/fgprof" 8 >/dev/null & local pid=$!
	sleep 0.3
	"$EBPFPROF" agent --mode wall --per-thread --interval 1 --pid $pid --output-dir "$tmp/win" \
		2>"$tmp/agent.err" & local agent=$!
	wait_started "$tmp/agent.err"
	sleep 4.5
	kill -TERM $agent; wait $agent; local rc=$?
	kill $pid 2>/dev/null; wait $pid 2>/dev/null
	local f wall=0 dur=0 n=0
	for f in "$tmp"/win/*.pb.gz; do
		[ -f "$f" ] || continue
		n=$((n + 1))
		w=$(thread_wall_ns "$f" $pid)
		d=$(profile_seconds "$f")
		wall=$((wall + w))
		dur=$(awk -v a="$dur" -v b="$d" 'BEGIN { print a + b }')
	done
	echo "  $n windows: main thread $(awk -v w=$wall 'BEGIN { print w / 1e9 }') s of wall time in $dur s of windows"
	if [ $rc = 0 ] && [ $n -ge 4 ] && awk -v w=$wall -v d="$dur" 'BEGIN { exit !(w / 1e9 > 0.95 * d && w / 1e9 < 1.05 * d) }'; then
		pass agent_windows
	else
		tail -2 "$tmp/agent.err"; fail agent_windows "rc=$rc, $n windows, wall time does not add up"
	fi
}

wall_chain_case() {	# name, program: each half under its whole chain from main, near the split the program measured
	local name=$1 prog=$2
	"$prog" 6 >"$tmp/$name.measured" & local pid=$!
	sleep 0.5
	"$EBPFPROF" --pid $pid --mode wall --duration 4 --output "$tmp/$name.pb.gz" 2>"$tmp/$name.err" ||
		{ fail $name "ebpfprof failed: $(tail -1 "$tmp/$name.err")"; return; }
	wait $pid
	go tool pprof -top -cum -nodecount=200 -symbolize=none -sample_index=wall "$tmp/$name.pb.gz" \
		>"$tmp/$name.top" 2>/dev/null
	local spin doze ok=1 f want got
	read -r _ spin _ doze <"$tmp/$name.measured"
	for f in spin_outer:$spin spin_inner:$spin doze_outer:$doze doze_inner:$doze main:100; do
		want=${f#*:}; f=${f%%:*}
		got=$(cum_pct "$tmp/$name.top" $f)
		echo "  $f: $got% of wall time (measured $want%)"
		within "$got" "$want" 5 || ok=0
	done
	# stacks that end early: at most 1 % (CPU samples in the vDSO, which has no unwind rows yet)
	local trunc
	trunc=$(awk '/truncated user stack/ { sub("%", "", $5); print $5; f = 1 } END { if (!f) print 0 }' "$tmp/$name.top")
	echo "  truncated: $trunc%"
	awk -v t="$trunc" 'BEGIN { exit !(t <= 1) }' || ok=0
	[ $ok = 1 ] && pass $name || { head -30 "$tmp/$name.top"; fail $name "a half is not under its whole chain from main"; }
}

test_wall_without_frame_pointers() {	# CFI at switch-out: -O2 -fomit-frame-pointer sleeping in nanosleep, fp sleeping in usleep
	wall_chain_case wall_nofp_nanosleep "$FIX/doze_nofp"
	wall_chain_case wall_fp_usleep "$FIX/doze_fp_usleep"
}

# off-cpu mode: the sleeping half under main -> doze_outer -> doze_inner, walked by CFI at the switch-out
# (doze_nofp has no frame pointers)
offcpu_chain_case() {	# name [env...]: the walk's build as the env picks it
	local name=$1 pid
	shift
	selected "$name" || return 0
	# outlives the profile, however long the profiler takes to load
	"$FIX/doze_nofp" 120 >/dev/null & pid=$!
	env "$@" "$EBPFPROF" --pid $pid --mode off-cpu --duration 2 --output "$tmp/$name.pb.gz" 2>"$tmp/$name.err"
	kill $pid 2>/dev/null; wait $pid 2>/dev/null
	# the sleeping blocks only: preemption while spinning grows with the host's load
	go tool pprof -top -cum -nodecount=200 -symbolize=none -sample_index=off_cpu -tagfocus=state=sleeping -relative_percentages \
		"$tmp/$name.pb.gz" 2>/dev/null >"$tmp/$name.top"
	local inner outer main_
	inner=$(cum_pct "$tmp/$name.top" doze_inner)
	outer=$(cum_pct "$tmp/$name.top" doze_outer)
	main_=$(cum_pct "$tmp/$name.top" main)
	echo "  sleeping time under doze_inner $inner%, doze_outer $outer%, main $main_%"
	if awk -v i="$inner" -v o="$outer" -v m="$main_" 'BEGIN { exit !(i >= 99 && o == i && m >= 99) }'; then
		pass $name
	else
		head -30 "$tmp/$name.top"; tail -3 "$tmp/$name.err"
		fail $name "the sleep is not under doze_inner -> doze_outer -> main"
	fi
}

test_offcpu_chain() {	# the build this kernel takes, and the steps build (kernels before 5.17) forced
	offcpu_chain_case offcpu_chain
	offcpu_chain_case offcpu_chain_steps EBPFPROF_CFI_WALK=steps
}

run_test test_fgprof fgprof_wall fgprof_wall_go
run_test test_wall_types
run_test test_agent_windows
run_test test_cpu_mode_hides_waiting cpu_mode
run_test test_offcpu_states offcpu_mode
run_test test_wall_without_frame_pointers wall_nofp_nanosleep wall_fp_usleep
run_test test_offcpu_chain offcpu_chain offcpu_chain_steps
