#!/usr/bin/env bash
# check.sh -- reads what one guest sent back (tests/vm/suite.sh) with go tool pprof and Python, on the host
# Usage: KREL=<guest uname -r> check.sh DIR; prints PASS/FAIL/SKIP lines and the measurements
set -u
SUITE=vm
dir=$1
pass() { echo "PASS: $SUITE/$1"; }
fail() { echo "FAIL: $SUITE/$1: $2"; }
skip() { echo "SKIP: $SUITE/$1: $2"; }
kv=$(echo "${KREL:-0.0}" | awk -F'[.-]' '{ printf "%d%02d\n", $1, $2 }')
FP_FALLBACK='user stacks by frame pointers only'
STEPS_WALK='CFI walk: a global function per'
top() { go tool pprof -top -nodecount=200 -symbolize=none "$@" 2>/dev/null; }
raw() { go tool pprof -raw -symbolize=none "$@" 2>/dev/null; }
. "$(dirname "$0")/../lib/pprof_wall.sh"	# cum_pct, within, thread_wall_ns, profile_seconds
. "$(dirname "$0")/../lib/pprof_traces.sh"	# java_thread_shares, named_share
. "$(dirname "$0")/../lib/labels_check.sh"	# tag_pct, check_tctx

# the one-shot CPU profile: user and kernel frames named, read by pprof
check_cpu() {
	local f=$dir/cpu.pb.gz t
	[ -s "$f" ] || { fail pprof_cpu "no profile came back"; return; }
	t=$(top "$f")
	if raw "$f" | grep -q '^PeriodType: cpu nanoseconds' && grep -q 'cpu_split_fifty' <<<"$t" &&
		grep -Eq ' (do_syscall_64|entry_SYSCALL_64[a-z_]*|do_el0_svc|el0_svc)$' <<<"$t" && grep -q 'syscall_heavy_loop\| main$' <<<"$t" &&
		! grep -q '\[lost ' <<<"$t"; then
		pass pprof_cpu
	else
		head -15 <<<"$t" | sed 's/^/  /'; fail pprof_cpu "pprof shows no cpu_split_fifty, kernel entry or syscall_heavy frame, or a lost stack"
	fi
}

# what the profiler said of the kernel: no frame-pointer fallback; the steps walk said before 5.17, once
check_fallback_lines() {
	local e=$dir/cpu.err n s
	[ -s "$e" ] || { fail fallback_lines "no stderr came back"; return; }
	n=$(grep -c "$FP_FALLBACK" "$e")
	s=$(grep -c "$STEPS_WALK" "$e")
	if [ "$n" = 0 ] && { { [ "$kv" -lt 517 ] && [ "$s" = 1 ]; } || { [ "$kv" -ge 517 ] && [ "$s" = 0 ]; }; }; then
		pass fallback_lines
	else
		fail fallback_lines "the frame-pointer fallback said $n times, the steps walk $s times on $KREL"
	fi
	# any other warning (a lost stack or sample among them) is a failure
	if grep 'warning' "$e" | grep -qv "$FP_FALLBACK"; then
		grep warning "$e" | sed 's/^/  /'; fail no_other_warning "a warning besides the kernel's fallback"
	else
		pass no_other_warning
	fi
	# BPF cost under software emulation: only relative figures mean anything (docs/RELIABILITY.md)
	sed -n 's/^ebpfprof: bpf: \(.*\)/  bpf: \1/p' "$e"
}

# the stack maps as the probe chose them: preallocated where perf_event programs need it (before 6.1)
check_stack_maps() {
	local line
	line=$(sed -n 's/^ebpfprof: sampler stack maps: //p' "$dir/cpu.err")
	echo "  stack maps: ${line:-not said}"
	if [ -z "$line" ]; then
		fail stack_maps "-v did not say the stack maps' fill"
	elif { [ "$kv" -lt 601 ] && [[ "$line" == *"(preallocated)"* ]]; } ||
		{ [ "$kv" -ge 601 ] && [[ "$line" != *"(preallocated)"* ]]; }; then
		pass stack_maps
	else
		fail stack_maps "preallocation wrong for $KREL: $line"
	fi
}

check_mode() {	# mode, sample types, functions...
	local m=$1 types=$2 f=$dir/$1.pb.gz t fn
	shift 2
	[ -s "$f" ] || { fail "pprof_$m" "no profile came back"; return; }
	t=$(top "$f")
	raw "$f" | grep -q "$types" || { fail "pprof_$m" "sample types are not '$types'"; return; }
	# nothing lost: 6.1 once lost most walked stacks to a misread map result
	grep -q '\[lost ' <<<"$t" && { grep '\[lost ' <<<"$t" | sed 's/^/  /'; fail "pprof_$m" "stacks lost"; return; }
	for fn in "$@"; do
		grep -q " $fn$" <<<"$t" || { head -12 <<<"$t" | sed 's/^/  /'; fail "pprof_$m" "no $fn"; return; }
	done
	pass "pprof_$m"
}

# Wall mode: the fixture's main thread's blocked phases, each within 5 points of the share of the
# profile's time the program measured itself. Shares of the profile's length, not of the thread's
# wall time in it: under emulation on a loaded host the CPU sampling timer runs late and the kernel
# skips the periods it overran (fg_burn came 10 to 29 % short on 5.10 and 6.1, and 49 Hz did not
# help), which would inflate every other share; the compute phase is checked on the host
# (tests/integration/test_wall.sh) and only printed here.
check_wall_split() {
	local f=$dir/wall.pb.gz pid t fn want got ms ok=1
	[ -s "$f" ] && [ -s "$dir/wall.measured" ] || { fail wall_split "no profile or measurement came back"; return; }
	pid=$(cat "$dir/wall.pid")
	ms=$(awk -v s="$(profile_seconds "$f")" 'BEGIN { print s * 1000 }')
	t=$(mktemp)
	# a numeric value would be read as a range: the parentheses keep it a regexp
	top -unit=ms -sample_index=wall -tagfocus="tid=($pid)" "$f" >"$t"
	for fn in fg_wait fg_nap fg_burn; do
		want=$(awk -v f=$fn '{ for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }' "$dir/wall.measured")
		got=$(awk -v f=$fn -v ms="$ms" '$6 == f { v = $4; sub("ms", "", v); printf "%.1f\n", 100 * v / ms; x = 1 }
			END { if (!x) print -1 }' "$t")
		echo "  wall: $fn $got% of the profile's $ms ms (measured $want%)"
		[ $fn = fg_burn ] || within "$got" "$want" 5 || ok=0
	done
	if [ $ok = 1 ]; then
		pass wall_split
	else
		head -15 "$t" | sed 's/^/  /'; fail wall_split "a blocked phase's share is off by more than 5 points"
	fi
	rm -f "$t"
}

# off-CPU stacks whole by frame pointers: the fixture's blocked phases under main, at least 99 % of the time
check_offcpu_stacks() {
	local f=$dir/off-cpu.pb.gz pid t wait_ nap main_
	[ -s "$f" ] || { fail offcpu_stacks "no profile came back"; return; }
	pid=$(cat "$dir/off-cpu.pid")
	t=$(mktemp)
	top -sample_index=off_cpu -relative_percentages -tagfocus="tid=($pid)" "$f" >"$t"
	wait_=$(cum_pct "$t" fg_wait) nap=$(cum_pct "$t" fg_nap) main_=$(cum_pct "$t" main)
	echo "  off-cpu: main thread's blocked time under fg_wait $wait_%, fg_nap $nap%, main $main_%"
	# the rest: preemption while computing, under fg_burn
	if awk -v w="$wait_" -v n="$nap" -v m="$main_" 'BEGIN { exit !(w > 50 && n > 5 && m >= 99) }'; then
		pass offcpu_stacks
	else
		head -15 "$t" | sed 's/^/  /'; fail offcpu_stacks "blocked time not under fg_wait and fg_nap, whole to main"
	fi
	rm -f "$t"
}

# The agent's wall windows: the main thread's blocked time adds up, window by window, to the share
# of its life it measured itself waiting and napping (within 5 points), and no window holds more
# than its length: time lost or counted twice at a boundary would not. Its CPU samples are left
# out: under emulation the sampler's timer runs late (a quarter of 199 Hz samples on 5.10).
check_agent_wall() {
	local pid f off d want got offs=0 dur=0 n=0 over=0
	[ -s "$dir/agent_wall.measured" ] || { fail agent_wall_windows "nothing came back"; return; }
	pid=$(cat "$dir/agent_wall.pid")
	want=$(awk '{ print $2 + $6 }' "$dir/agent_wall.measured")
	for f in "$dir"/wall_window_*.pb.gz; do
		[ -s "$f" ] || continue
		n=$((n + 1))
		off=$(thread_sample_ns "$f" $pid off_cpu)
		d=$(profile_seconds "$f")
		awk -v o=$off -v d="${d:-0}" 'BEGIN { exit !(o / 1e9 <= d * 1.01) }' || over=$((over + 1))
		offs=$((offs + off))
		dur=$(awk -v a="$dur" -v b="${d:-0}" 'BEGIN { print a + b }')
	done
	got=$(awk -v o=$offs -v d="$dur" 'BEGIN { printf "%.1f", (d > 0 ? 100 * o / 1e9 / d : -1) }')
	echo "  agent wall: $n windows, main thread blocked $(awk -v o=$offs 'BEGIN { print o / 1e9 }') s in $dur s: $got% (measured $want%), $over windows over their length"
	if [ $n -ge 4 ] && [ $over = 0 ] && within "$got" "$want" 5; then
		pass agent_wall_windows
	else
		fail agent_wall_windows "$n windows, $over over their length, blocked $got% against $want%"
	fi
}

# the agent's windows at the collector: contiguous to the nanosecond, summing to what BPF took
check_agent() {
	local log=$dir/collector.log taken
	[ -s "$log" ] || { fail agent_windows "no collector log came back"; return; }
	taken=$(sed -n 's/.*agent stopped: \([0-9]*\) samples taken.*/\1/p' "$dir/agent.err" 2>/dev/null)
	if python3 - "$log" "${taken:--1}" <<'EOF'; then
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ok = [r for r in reqs if r.get("status") == 200 and r.get("name") == "cpu_split"]
errs = []
if len(ok) != len(reqs):
    errs.append("%d of %d requests not 200 for cpu_split" % (len(reqs) - len(ok), len(reqs)))
if len(ok) < 3:
    errs.append("%d windows, want >= 3" % len(ok))
for a, b in zip(ok, ok[1:]):
    if b["time_nanos"] != a["time_nanos"] + a["duration_nanos"]:
        errs.append("windows not contiguous: %d+%d then %d" % (a["time_nanos"], a["duration_nanos"], b["time_nanos"]))
        break
total = sum(r["total"] for r in ok)
if total != int(sys.argv[2]):
    errs.append("windows sum to %d samples, the agent took %s" % (total, sys.argv[2]))
print("  agent: %d windows, %d samples, none lost at a boundary" % (len(ok), total) if not errs else "")
for e in errs:
    print("  " + e)
sys.exit(1 if errs else 0)
EOF
		pass agent_windows
	else
		fail agent_windows "windows lost, doubled or not contiguous (see above)"
	fi
}

# the guest's Perl or PHP program (suite.sh's test_script_named): at least 90 % of its samples name
# FN under CALLER, and FN's hottest line is its loop's, line 3 of the script (PHP's: 4): the leaf's
# line read from the interpreter's registers where it keeps it (the Zend VM's)
check_script() {	# name fn caller line
	local f=$dir/$1.pb.gz hit all line
	[ -s "$f" ] || { grep -q "^SKIP: vm/$1_runs" "$dir/console.log.txt" 2>/dev/null || fail $1_named "no profile came back"; return; }
	read -r hit all < <(named_share "$f" "$2" "$3")
	line=$(go tool pprof -lines -top -nodecount=100 -symbolize=none "$f" 2>/dev/null |
		awk -v fn="$2" '$6 == fn { n = split($7, a, ":"); print a[n]; exit }')
	echo "  $1: $hit of $all ms of samples name $2 under $3; $2's hottest line $line"
	# at least 20 samples at 99 Hz, as the suite's other checks ask
	if [ "${all:-0}" -ge 200 ] && [ $((hit * 100)) -ge $((all * 90)) ] && [ "$line" = "$4" ]; then
		pass $1_named
	else
		go tool pprof -traces -symbolize=none "$f" 2>/dev/null | head -30 | sed 's/^/  /'
		fail $1_named "$hit of $all ms named, hottest line ${line:-none} (want $4)"
	fi
}

# the guest's Ruby program under YJIT: most of its samples in YJIT's code, marked, and no Ruby frame lost
check_ruby_jit() {
	local f=$dir/ruby.pb.gz jit lost
	[ -s "$f" ] || return 0	# check_script said why
	case ${KREL:-} in *arm64*) skip ruby_jit "arm64's guest runs Debian's Ruby 3.1, whose YJIT is x86-64's only"; return ;; esac
	jit=$(go tool pprof -top -cum -nodecount=500 -symbolize=none "$f" 2>/dev/null |
		awk '/ \[ruby jit code\]$/ { sub("%", "", $5); print int($5); exit }')
	lost=$(go tool pprof -top -nodecount=500 -symbolize=none "$f" 2>/dev/null | grep -c 'ruby frames lost')
	echo "  ruby: ${jit:-0}% of its samples under [ruby jit code]; $lost kinds of lost Ruby frames"
	if [ "${jit:-0}" -ge 50 ] && [ "$lost" = 0 ]; then
		pass ruby_jit
	else
		fail ruby_jit "${jit:-0}% of samples in YJIT's code (>= 50%), $lost kinds of lost frames"
	fi
}

# the guest's Java program: its main thread's samples named by a Split frame (>= 90 %) and whole
# to the thread's start (>= 95 %), as on the host (tests/integration/test_java.sh)
check_java() {
	local f=$dir/java.pb.gz n c t v tid
	[ -s "$f" ] || { grep -q "^SKIP: vm/java_runs" "$dir/console.log.txt" 2>/dev/null || fail java_named "no profile came back"; return; }
	tid=$(cat "$dir/java.tid" 2>/dev/null)
	[ -n "$tid" ] || { fail java_named "the guest did not say the main thread's tid"; return; }
	read -r n c t < <(java_thread_shares "$f" "$tid")
	# System.nanoTime's share (the vDSO's clock_gettime): most samples under emulation on arm64
	read -r _ _ v < <(java_thread_shares "$f" "$tid" '^__kernel_clock_gettime$|^__vdso_clock_gettime$')
	echo "  java: of ${t:-0} ms of the main thread $n carry a Split frame," \
		"$c reach the thread's start; $((t - v)) ms in the vDSO"
	# at least 20 samples at 99 Hz, as the suite's other checks ask: the guest's CPU is the host's leftovers
	if [ "${t:-0}" -ge 200 ] && [ $((n * 100)) -ge $((t * 90)) ] && [ $((c * 100)) -ge $((t * 95)) ]; then
		pass java_named
	else
		top "$f" | head -15 | sed 's/^/  /'
		echo "  java: heaviest cut trace $(cut_trace "$f")"
		fail java_named "of $t ms of the main thread $n named (>= 90%), $c whole (>= 95%)"
	fi
}

# labels in this kernel: the Go program's endpoints both among its samples' labels and every sample
# synthetic; each labelled sample of the C program its own thread's request (check_tctx); read by
# the steps build's walk before 5.17
check_labels() {
	local g=$dir/golabels.pb.gz t=$dir/tctx.pb.gz checkout browse kind nread labelled thread trace func
	# the arm64 guest carries no labelled programs (labels read x86-64's TLS layout): said by the guest
	grep -q '^SKIP: vm/labels_runs' "$dir/console.log.txt" 2>/dev/null &&
		{ skip labels "the guest ran no labelled programs"; return; }
	[ -s "$g" ] && [ -s "$t" ] || { fail labels "no labelled profiles came back"; return; }
	checkout=$(tag_pct "$g" endpoint /checkout)
	browse=$(tag_pct "$g" endpoint /browse)
	kind=$(tag_pct "$g" request_kind synthetic)
	nread=$(grep -o "labels_read_total=[0-9]*" "$dir/golabels.err" | head -1 | cut -d= -f2)
	read -r labelled thread trace func _ < <(check_tctx "$t" "$dir/tctx.out")
	echo "  labels: Go endpoint /checkout $checkout%, /browse $browse%, synthetic $kind% of ${nread:-?} labelled; C $labelled samples with ids: $thread of another thread, $trace a wrong trace, $func in the other request's function"
	if [ "${nread:-0}" -ge 20 ] && [ "${checkout%.*}" -gt 0 ] && [ "${browse%.*}" -gt 0 ] && [ "${kind%.*}" = 100 ] &&
		[ "${labelled:-0}" -ge 20 ] && [ "$thread" = 0 ] && [ "$trace" = 0 ] && [ "$func" = 0 ] &&
		{ [ "$kv" -ge 517 ] || grep -q "$STEPS_WALK" "$dir/golabels.err"; }; then
		pass labels
	else
		fail labels "Go: ${nread:-?} labelled, /checkout $checkout%, /browse $browse%, synthetic $kind%; C: $labelled labelled, $thread wrong thread, $trace wrong trace, $func wrong function"
	fi
}

check_cpu
check_java
check_script perl main::spin main::outer 3
check_script php spin outer 4
check_script ruby Object#spin Object#outer 3
check_ruby_jit
check_fallback_lines
check_stack_maps
check_mode off-cpu 'off_cpu/nanoseconds\[dflt\] blocks/count' fg_nap
check_mode wall 'cpu/nanoseconds off_cpu/nanoseconds wall/nanoseconds\[dflt\]' fg_burn fg_nap
check_offcpu_stacks
check_wall_split
check_agent_wall
check_agent
check_labels
