#!/usr/bin/env bash
# test_identity.sh -- processes whose identity changes under the profiler (an exec, a recycled pid, forks): each named by its own image
set -u
SUITE=identity
. "$(dirname "$0")/lib.sh"
FIX=$BUILD/fixtures
ID=$FIX/identity
PY=/usr/bin/python3.11
PYEXEC=$(cd "$(dirname "$0")/../fixtures/python" && pwd)/pyexec.py
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; [ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT

# A stack is whole when its root is _start and no frame is a pseudo frame ("[truncated user stack]",
# "[unknown]", "[lost ...]"; an unnamed address in a stripped binary is its truth). The first samples
# of a new image, before its tables load, are walked by frame pointers, which stop in libc's start
# code, marked: each image may have as many as 50 ms at 99 Hz gives (its announcement read, its maps
# and tables loaded on this loaded 2-core machine), and no more.
WHOLE_MAX=5

# profile NAME ARGS...: the one-shot in the background (PROF), returning once it samples and has
# read the processes already running
profile() {
	local name=$1 i
	shift
	"$EBPFPROF" -v "$@" 2>"$tmp/$name.err" &
	PROF=$!
	for i in $(seq 150); do
		if grep -qs "profiling" "$tmp/$name.err"; then
			sleep 1	# the processes running before it are read first
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# folded PROFILE...: every profile's stacks as folded lines, on stdout
folded() {
	local f
	for f in "$@"; do
		"$EBPFPROF" convert "$f" --format folded --output "$tmp/one.folded" 2>/dev/null && cat "$tmp/one.folded"
	done
}

# halves FOLDED COMM1:FN1:MS1 COMM2:FN2:MS2: samples of each (comm, function) pair, whole or not,
# and their shares against the measured CPU (MS); true when both are named, whole, within 5 points
halves() {
	awk -v a="$2" -v b="$3" -v whole_max="$WHOLE_MAX" '
	BEGIN { split(a, A, ":"); split(b, B, ":") }
	{
		n = $NF; line = $0; sub(/ [0-9]+$/, "", line); k = split(line, f, ";")
		h = 0
		if (f[1] == A[1] && index(line, A[2])) h = 1
		else if (f[1] == B[1] && index(line, B[2])) h = 2
		if (!h) next
		whole = f[2] == "_start"
		for (i = 2; i <= k; i++) if (f[i] ~ /^\[(truncated|unknown|lost)/) whole = 0
		got[h] += n; if (!whole) { broken[h] += n; if (!shown[h]++) print "  not whole: " $0 }
	}
	END {
		tot = got[1] + got[2]
		if (!tot || !(A[3] + B[3])) { print "  no samples of either half"; exit 1 }
		share = 100 * got[1] / tot; want = 100 * A[3] / (A[3] + B[3]); d = share - want
		if (d < 0) d = -d
		printf "  %s: %d samples (%.1f%%, measured %.1f%%), %d not whole; %s: %d samples, %d not whole\n",
			A[2], got[1], share, want, broken[1], B[2], got[2], broken[2]
		exit !(got[1] > 0 && got[2] > 0 && d <= 5 && broken[1] <= whole_max && broken[2] <= whole_max)
	}' "$1"
}

# The py_cpu_ms and beta_cpu_ms a pyexec.py run printed
measured() { sed -n "s/^$2=//p" "$1"; }

# A Python program computes 2 s, then execs a C program that computes 1.5 s: both halves named by
# their own images, whole to _start, each within 5 points of its measured CPU
test_python_exec() {
	[ -x "$PY" ] || { skip python_exec "no $PY"; return; }
	profile pyexec --duration 7 --frequency 99 --output "$tmp/pyexec.pb.gz" ||
		{ fail python_exec "ebpfprof did not start: $(tail -1 "$tmp/pyexec.err")"; return; }
	"$PY" "$PYEXEC" "$ID" 2 1.5 >"$tmp/pyexec.out"
	wait $PROF || { fail python_exec "ebpfprof failed: $(tail -1 "$tmp/pyexec.err")"; return; }
	folded "$tmp/pyexec.pb.gz" >"$tmp/pyexec.folded"
	halves "$tmp/pyexec.folded" "python3.11:tally_invoices:$(measured "$tmp/pyexec.out" py_cpu_ms)" \
		"identity:burn_beta:$(measured "$tmp/pyexec.out" beta_cpu_ms)" &&
		pass python_exec || fail python_exec "a half unnamed, not whole, or its share off by more than 5 points"
}

# The same in the agent, across a window boundary (3 s windows): every window's files together
test_python_exec_agent() {
	[ -x "$PY" ] || { skip python_exec_agent "no $PY"; return; }
	EBPFPROF_INTERVAL=3 "$EBPFPROF" agent --frequency 99 --output-dir "$tmp/windows" \
		--retention 100 2>"$tmp/agent.err" &
	local agent=$!
	wait_started "$tmp/agent.err"
	"$PY" "$PYEXEC" "$ID" 2 1.5 >"$tmp/agent.out"
	sleep 3.5	# the last window closes
	stop $agent
	folded "$tmp"/windows/*.pb.gz >"$tmp/agent.folded"
	echo "  $(ls "$tmp/windows" | wc -l) window files"
	halves "$tmp/agent.folded" "python3.11:tally_invoices:$(measured "$tmp/agent.out" py_cpu_ms)" \
		"identity:burn_beta:$(measured "$tmp/agent.out" beta_cpu_ms)" &&
		pass python_exec_agent ||
		fail python_exec_agent "a half unnamed, not whole, or its share off by more than 5 points"
}

# a pid nothing holds, some way ahead of the last one given
free_pid() {
	local last max p
	last=$(cat /proc/sys/kernel/ns_last_pid) max=$(cat /proc/sys/kernel/pid_max)
	for ((p = last + 300; ; p++)); do
		((p < max)) || p=300
		[ -e /proc/$p ] || { echo $p; return; }
	done
}

# recycled NAME FIRST... -- SECOND...: FIRST runs as pid P and exits, then SECOND as pid P, both
# started by one launcher binary (so their exec counts are equal), under a whole-system profile.
# Their output goes to NAME.1 and NAME.2; false when the second did not get the first one's pid.
recycled() {
	local name=$1 p first=() second=()
	shift
	while [ "$1" != -- ]; do first+=("$1"); shift; done
	shift
	second=("$@")
	p=$(free_pid)
	profile "$name" --duration 9 --frequency 99 --output "$tmp/$name.pb.gz" || return 1
	"$ID" at "$p" "${first[@]}" >"$tmp/$name.1" || return 1
	"$ID" at "$p" "${second[@]}" >"$tmp/$name.2" || return 1
	echo "  both at pid $p"
	wait $PROF || return 1
	folded "$tmp/$name.pb.gz" >"$tmp/$name.folded"
}

# Two programs at one pid: the first one's samples named by its own maps, not the second's
test_recycled_pid() {
	recycled recycled "$ID" burn alpha 1.5 -- "$ID" burn beta 1.5 ||
		{ fail recycled_pid "could not run both at one pid: $(tail -1 "$tmp/recycled.err")"; return; }
	halves "$tmp/recycled.folded" "identity:burn_alpha:$(measured "$tmp/recycled.1" alpha_cpu_ms)" \
		"identity:burn_beta:$(measured "$tmp/recycled.2" beta_cpu_ms)" &&
		pass recycled_pid || fail recycled_pid "a holder's samples unnamed, not whole, or off by more than 5 points"
}

# Another binary at the recycled pid: its names and the first one's each from their own files
test_recycled_pid_other() {
	recycled other "$ID" burn gamma 1.5 -- "$FIX/cpu_split" 2 ||
		{ fail recycled_pid_other "could not run both at one pid: $(tail -1 "$tmp/other.err")"; return; }
	local split
	split=$(awk '$1 ~ /^cpu_split;/ && /cpu_split_(fifty|thirty|twenty)/ { s += $NF } END { print s + 0 }' \
		"$tmp/other.folded")
	echo "  cpu_split: $split samples in its own functions"
	[ "$split" -gt 50 ] &&
		awk -v w="$WHOLE_MAX" '$1 ~ /^identity;/ && /burn_gamma/ {
			n = $NF; t += n; if ($1 !~ /^identity;_start;/ || $0 ~ /;\[(truncated|unknown|lost)/) b += n }
			END { printf "  burn_gamma: %d samples, %d not whole\n", t, b; exit !(t > 50 && b <= w) }' \
			"$tmp/other.folded" &&
		pass recycled_pid_other || fail recycled_pid_other "a holder's samples unnamed or not whole"
}

# At a recycled pid, a process idle past every exec wait (2.5 s) before it computes is named
test_recycled_pid_idle() {
	recycled idle "$ID" burn alpha 1 -- "$ID" idle_burn 3 gamma 1.5 ||
		{ fail recycled_pid_idle "could not run both at one pid: $(tail -1 "$tmp/idle.err")"; return; }
	halves "$tmp/idle.folded" "identity:burn_alpha:$(measured "$tmp/idle.1" alpha_cpu_ms)" \
		"identity:burn_gamma:$(measured "$tmp/idle.2" gamma_cpu_ms)" &&
		pass recycled_pid_idle || fail recycled_pid_idle "a holder's samples unnamed, not whole, or off by more than 5 points"
}

# Two programs at one pid under the agent (3 s windows): each holder named by its own maps
test_recycled_pid_agent() {
	local p
	p=$(free_pid)
	EBPFPROF_INTERVAL=3 "$EBPFPROF" agent --frequency 99 --output-dir "$tmp/rwindows" \
		--retention 100 2>"$tmp/ragent.err" &
	local agent=$!
	wait_started "$tmp/ragent.err"
	sleep 1	# the processes running before it are read first
	"$ID" at "$p" "$ID" burn alpha 1.5 >"$tmp/ragent.1" &&
		"$ID" at "$p" "$ID" burn beta 1.5 >"$tmp/ragent.2" ||
		{ stop $agent; fail recycled_pid_agent "could not run both at one pid"; return; }
	echo "  both at pid $p"
	sleep 3.5	# the last window closes
	stop $agent
	folded "$tmp"/rwindows/*.pb.gz >"$tmp/ragent.folded"
	halves "$tmp/ragent.folded" "identity:burn_alpha:$(measured "$tmp/ragent.1" alpha_cpu_ms)" \
		"identity:burn_beta:$(measured "$tmp/ragent.2" beta_cpu_ms)" &&
		pass recycled_pid_agent ||
		fail recycled_pid_agent "a holder's samples unnamed, not whole, or off by more than 5 points"
}

# Threads a process starts after it was first sampled and read: named, whole to their start
test_threads() {
	profile threads --duration 4 --frequency 99 --output "$tmp/threads.pb.gz" ||
		{ fail threads "ebpfprof did not start"; return; }
	"$ID" threads 2 1.5
	wait $PROF || { fail threads "ebpfprof failed: $(tail -1 "$tmp/threads.err")"; return; }
	folded "$tmp/threads.pb.gz" >"$tmp/threads.folded"
	awk -v w="$WHOLE_MAX" '$1 ~ /^identity;/ && /burn_thread/ {
		n = $NF; t += n
		if ($0 !~ /;start_thread;burn_thread/ || $0 ~ /;\[(truncated|unknown|lost)/) b += n
	} END {
		printf "  burn_thread: %d samples, %d not named whole to start_thread\n", t, b
		exit !(t > 100 && b <= w)
	}' "$tmp/threads.folded" && pass threads || fail threads "threads unnamed or not whole"
}

# 50 forked children computing 40 ms each and exiting, and a vfork+exec child: all named (their
# first samples, walked by frame pointers until their tables load, end marked truncated)
test_forks() {
	profile forks --duration 6 --frequency 199 --output "$tmp/forks.pb.gz" ||
		{ fail forks "ebpfprof did not start"; return; }
	"$ID" forks 50 40
	"$ID" vfork "$ID" burn gamma 1 >"$tmp/vfork.out"
	wait $PROF || { fail forks "ebpfprof failed: $(tail -1 "$tmp/forks.err")"; return; }
	folded "$tmp/forks.pb.gz" >"$tmp/forks.folded"
	awk '$1 ~ /^identity;/ && /burn_(child|gamma)/ {
		n = $NF; fn = $0 ~ /burn_child/ ? "child" : "gamma"; t[fn] += n
		if ($0 !~ /;main;burn;burn_gamma|;main;forks;burn_child/ || $0 ~ /;\[(unknown|lost)/) b[fn] += n
	} END {
		printf "  forked children: %d samples, %d unnamed; vfork child: %d samples, %d unnamed\n",
			t["child"], b["child"], t["gamma"], b["gamma"]
		exit !(t["child"] > 100 && t["gamma"] > 100 && !b["child"] && !b["gamma"])
	}' "$tmp/forks.folded" && pass forks || fail forks "children unnamed or not whole"
}

run_test test_python_exec python_exec
run_test test_python_exec_agent python_exec_agent
run_test test_recycled_pid recycled_pid
run_test test_recycled_pid_other recycled_pid_other
run_test test_recycled_pid_idle recycled_pid_idle
run_test test_recycled_pid_agent recycled_pid_agent
run_test test_threads threads
run_test test_forks forks
