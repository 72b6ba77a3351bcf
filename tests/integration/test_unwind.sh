#!/usr/bin/env bash
# test_unwind.sh -- CFI unwinding in BPF: full user stacks of code built without frame pointers
set -u
SUITE=unwind
. "$(dirname "$0")/lib.sh"
F=$BUILD/fixtures/unwind
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; kill $(jobs -p) 2>/dev/null' EXIT

# profile FIXTURE-ARGS... with UNWIND into $tmp/NAME.folded; the fixture runs 6 s, we sample 4 s of it
profile() {	# name unwind cmd...
	local name=$1 unwind=$2; shift 2
	"$@" 6 >/dev/null 2>&1 &
	local pid=$!
	sleep 0.5
	"$EBPFPROF" --unwind "$unwind" --pid "$pid" --duration 4 --format folded --no-kernel -v \
		-o "$tmp/$name.folded" 2>"$tmp/$name.err"
	local rc=$?
	wait "$pid" 2>/dev/null
	return $rc
}

# share (percent, one decimal) of the samples whose stack has frame LEAF that also contain CHAIN
# (frames in a row; the last one may be a prefix: qsort matches qsort_r)
share() {	# file leaf chain
	awk -v leaf="$2" -v chain="$3" '{
		n = $NF; stack = substr($0, 1, length($0) - length($NF) - 1)
		if (index(";" stack ";", ";" leaf ";")) { all += n; if (index(";" stack, ";" chain)) hit += n }
	} END { printf "%.1f %d\n", all ? 100 * hit / all : 0, all }' "$1"
}

# expect: name file leaf chain min-percent
expect_chain() {
	local name=$1 file=$2 leaf=$3 chain=$4 min=$5 got
	read -r pct n < <(share "$file" "$leaf" "$chain")
	echo "  $name: $pct% of $n samples in $leaf show $chain"
	if [ "$n" -lt 100 ]; then
		fail "$name" "only $n samples in $leaf"
	elif awk -v p="$pct" -v m="$min" 'BEGIN { exit !(p >= m) }'; then
		pass "$name"
	else
		fail "$name" "$pct% < $min% ($(sort -t' ' -k2 -nr "$file" | head -3 | tr '\n' '|'))"
	fi
}

deep_chain="main;uw_chain_1;uw_chain_2;uw_chain_3;uw_chain_4;uw_chain_5"

# five deep, -fomit-frame-pointer, frames of different sizes: the whole chain to main
test_deep_cfi() {
	if profile deep cfi "$F/unwind_deep"; then
		expect_chain deep_cfi "$tmp/deep.folded" uw_chain_5 "$deep_chain" 99
	else
		fail deep_cfi "ebpfprof failed: $(tail -1 "$tmp/deep.err")"
	fi
}

# the same with frame pointers only: what --unwind cfi is for (the comparison is reported)
test_fp_vs_cfi() {
	local fp_pct cfi_pct
	if profile deep_fp fp "$F/unwind_deep"; then
		read -r fp_pct _ < <(share "$tmp/deep_fp.folded" uw_chain_5 "$deep_chain")
		read -r cfi_pct _ < <(share "$tmp/deep.folded" uw_chain_5 "$deep_chain")
		echo "  complete stacks of unwind_deep: fp $fp_pct%, cfi $cfi_pct%"
		if awk -v f="$fp_pct" -v c="$cfi_pct" 'BEGIN { exit !(c > f + 50) }'; then
			pass fp_vs_cfi
		else
			fail fp_vs_cfi "fp $fp_pct% vs cfi $cfi_pct%: frame pointers should lose this chain"
		fi
	else
		fail fp_vs_cfi "ebpfprof --unwind fp failed: $(tail -1 "$tmp/deep_fp.err")"
	fi
}

# a callback under libc's qsort (libc has no frame pointers): libc and the caller both show
test_qsort_libc() {
	if profile qsort cfi "$F/unwind_qsort"; then
		expect_chain qsort_libc "$tmp/qsort.folded" uw_compare "main;uw_sort_caller;qsort" 99
	else
		fail qsort_libc "ebpfprof failed: $(tail -1 "$tmp/qsort.err")"
	fi
}

# C++ with exception tables
test_cxx_exceptions() {
	if profile cxx cfi "$F/unwind_cxx"; then
		expect_chain cxx_exceptions "$tmp/cxx.folded" uw_cxx_leaf \
			"main;uw_cxx_outer;uw_cxx_middle;uw_cxx_leaf" 99
	else
		fail cxx_exceptions "ebpfprof failed: $(tail -1 "$tmp/cxx.err")"
	fi
}

# a PIE calling into a shared library, both without frame pointers
test_pie_shared_lib() {
	if profile pie_lib cfi "$F/unwind_pie_lib"; then
		expect_chain pie_shared_lib "$tmp/pie_lib.folded" uw_lib_inner \
			"main;uw_exe_fn;uw_lib_outer;uw_lib_inner" 99
	else
		fail pie_shared_lib "ebpfprof failed: $(tail -1 "$tmp/pie_lib.err")"
	fi
}

# a signal handler's samples: the walk crosses libc's __restore_rt (its CIE says "S") into
# the registers the kernel saved, so the interrupted code and its callers show below the handler
test_signal_handler() {
	if profile signal cfi "$F/unwind_signal"; then
		expect_chain signal_handler "$tmp/signal.folded" uw_sig_work "uw_sig_handler;uw_sig_work" 99
		expect_chain signal_interrupted "$tmp/signal.folded" uw_sig_work \
			"_start;__libc_start_main@@GLIBC_2.34;__libc_start_call_main;main;uw_sig_outer;uw_sig_interrupted" 99
	else
		fail signal_handler "ebpfprof failed: $(tail -1 "$tmp/signal.err")"
	fi
}

# the same through the steps build that kernels before 5.17 take (a global function per few frames)
test_signal_steps() {
	if EBPFPROF_CFI_WALK=steps profile signal_steps cfi "$F/unwind_signal"; then
		if grep -q "CFI walk: a global function per" "$tmp/signal_steps.err"; then
			expect_chain signal_handler_steps "$tmp/signal_steps.folded" uw_sig_work \
				"uw_sig_handler;uw_sig_work" 99
			expect_chain signal_interrupted_steps "$tmp/signal_steps.folded" uw_sig_work \
				"_start;__libc_start_main@@GLIBC_2.34;__libc_start_call_main;main;uw_sig_outer;uw_sig_interrupted" 99
		else
			fail signal_handler_steps "EBPFPROF_CFI_WALK=steps did not take the steps build"
		fi
	else
		fail signal_handler_steps "ebpfprof failed: $(tail -1 "$tmp/signal_steps.err")"
	fi
}

# Go calling C through cgo: CFI for the C part, frame pointers for Go's
test_cgo_mixed() {
	if [ ! -x "$F/unwind_cgo" ]; then
		skip cgo_mixed "no Go toolchain: the cgo fixture was not built"
	elif profile cgo cfi "$F/unwind_cgo"; then
		expect_chain cgo_mixed "$tmp/cgo.folded" uw_cgo_leaf "main.main" 99
		expect_chain cgo_c_chain "$tmp/cgo.folded" uw_cgo_leaf "uw_cgo_outer;uw_cgo_leaf" 99
	else
		fail cgo_mixed "ebpfprof failed: $(tail -1 "$tmp/cgo.err")"
	fi
}

# stripped Go through crypto/sha256's assembly (rbp a plain register there): unwound from
# .gopclntab's pcsp tables, every sample reaches runtime.goexit with its Go caller shown
test_go_pcsp() {
	local total cut
	if [ ! -x "$F/unwind_gosha" ]; then
		skip go_pcsp "no Go toolchain: the Go fixture was not built"
	elif profile gosha cfi "$F/unwind_gosha"; then
		read -r total cut < <(awk '{ t += $NF } /\[truncated user stack\]|\[unknown\]/ { c += $NF }
			END { print t + 0, c + 0 }' "$tmp/gosha.folded")
		echo "  stripped Go + sha256: $cut of $total samples truncated or unknown"
		if [ "$total" -ge 100 ] && [ $((cut * 100)) -le "$total" ]; then
			pass go_pcsp_whole
		else
			fail go_pcsp_whole "$cut of $total samples truncated or unknown (> 1%)"
		fi
		expect_chain go_pcsp_caller "$tmp/gosha.folded" crypto/sha256.block \
			"runtime.goexit;runtime.main;main.main;main.uwGoCaller;main.uwGoHash" 99
	else
		fail go_pcsp_whole "ebpfprof failed: $(tail -1 "$tmp/gosha.err")"
	fi
}

# stripped Go flooded with signals: a sample in Go's handler unwinds through the kernel's
# signal frame (runtime.sigreturn) into the code the signal struck, and one in time.now's vDSO
# call hops back from g0's stack; both reach runtime.goexit or runtime.mstart
test_go_signals() {
	local total cut sig
	if [ ! -x "$F/unwind_gosha" ]; then
		skip go_signals "no Go toolchain: the Go fixture was not built"
	elif profile gosig cfi "$F/unwind_gosha" signals; then
		read -r total cut sig < <(awk '{ t += $NF } /\[truncated user stack\]|\[unknown\]/ { c += $NF }
			/;runtime\.sigreturn[^;]*;runtime\.(cgoS|s)igtramp/ { s += $NF }
			END { print t + 0, c + 0, s + 0 }' "$tmp/gosig.folded")
		echo "  Go under a flood of signals: $sig of $total samples in its handler, $cut truncated or unknown"
		if [ "$total" -lt 100 ] || [ $((sig * 100)) -lt $((total * 2)) ]; then
			fail go_signals "too few samples in the signal handler to tell ($sig of $total, under 2%)"
		elif [ $((cut * 100)) -le "$total" ]; then
			pass go_signals
		else
			fail go_signals "$cut of $total samples truncated or unknown (> 1%): $(grep -m3 -E 'truncated|unknown' "$tmp/gosig.folded" | cut -c1-200)"
		fi
	else
		fail go_signals "ebpfprof failed: $(tail -1 "$tmp/gosig.err")"
	fi
}

# stripped Go recovering from nil loads: Go's handler makes the fault a call to sigpanic by
# pushing the faulting pc, the first byte of main.uwGoLoad. That frame is the load itself, named
# and unwound there as Go's own unwinder does, not at the byte before (the function laid out before)
test_go_sigpanic() {
	if [ ! -x "$F/unwind_gosha" ]; then
		skip go_sigpanic "no Go toolchain: the Go fixture was not built"
	elif profile gopanic cfi "$F/unwind_gosha" panics; then
		expect_chain go_sigpanic "$tmp/gopanic.folded" runtime.sigpanic \
			"runtime.goexit;runtime.main;main.main;main.uwGoPanics;main.uwGoTry;main.uwGoLoad;runtime.sigpanic" 99
	else
		fail go_sigpanic "ebpfprof failed: $(tail -1 "$tmp/gopanic.err")"
	fi
}

# a process's first samples, before userspace loaded its tables, use frame pointers and are counted
test_fallback_counted() {
	local fallback walked
	( for i in $(seq 20); do "$BUILD/fixtures/short_lived"; done ) &
	"$EBPFPROF" --unwind cfi --duration 3 --format folded -v -o "$tmp/short.folded" 2>"$tmp/short.err"
	wait
	fallback=$(sed -n 's/.*unwind_fp_fallback_total=\([0-9]*\).*/\1/p' "$tmp/short.err")
	walked=$(sed -n 's/.*unwind_cfi_total=\([0-9]*\).*/\1/p' "$tmp/short.err")
	echo "  short-lived processes: $walked stacks walked with CFI, $fallback by frame pointers first"
	if [ -n "$fallback" ] && [ "$fallback" -gt 0 ] && [ "${walked:-0}" -gt "$fallback" ]; then
		pass fallback_counted
	else
		fail fallback_counted "expected some counted frame-pointer fallbacks: $(grep 'user stacks' "$tmp/short.err")"
	fi
}

# deep_cut FILE: "N CUT": unwind_deep's samples in uw_chain_5, and those without the whole chain
deep_cut() {
	awk -v chain="$deep_chain" '/^unwind_deep;/ && /;uw_chain_5/ {
		stack = substr($0, 1, length($0) - length($NF) - 1)
		n += $NF; if (!index(stack ";", chain ";")) cut += $NF } END { print n + 0, cut + 0 }' "$1"
}

# an exec drops the tables built for the image before: bash, given its tables at the start
# (--pid), computes, then execs unwind_deep. Each of its stacks is whole but those taken by frame
# pointers (counted) before its own tables loaded, none walked with bash's
test_exec_new_tables() {
	local pid prof drops fallback deep cut
	bash -c 'while [ ! -e "$1" ]; do :; done; exec "$0" 6 >/dev/null' "$F/unwind_deep" "$tmp/go" &
	pid=$!
	"$EBPFPROF" --unwind cfi --pid "$pid" --duration 6 --format folded --no-kernel -v \
		-o "$tmp/exec.folded" 2>"$tmp/exec.err" &
	prof=$!
	for _ in $(seq 300); do grep -qs "profiling the given" "$tmp/exec.err" && break; sleep 0.1; done
	sleep 1
	touch "$tmp/go"	# bash computed a second under the profiler: now the exec
	wait "$prof"
	wait "$pid"
	drops=$(sed -n 's/.*unwind_exec_drops_total=\([0-9]*\).*/\1/p' "$tmp/exec.err")
	fallback=$(sed -n 's/.*unwind_fp_fallback_total=\([0-9]*\).*/\1/p' "$tmp/exec.err")
	read -r deep cut < <(deep_cut "$tmp/exec.folded")
	echo "  bash then unwind_deep in one process: ${drops:-no} exec dropped its tables; $deep samples in uw_chain_5, $cut without the whole chain, ${fallback:-?} taken by frame pointers"
	if [ "${drops:-0}" -ne 1 ] || ! grep -q "^bash;" "$tmp/exec.folded"; then
		fail exec_new_tables "expected bash's samples and one exec dropping its tables: $(grep 'user stacks' "$tmp/exec.err")"
	elif [ "$deep" -lt 100 ]; then
		fail exec_new_tables "only $deep samples in uw_chain_5"
	elif [ "$cut" -gt "${fallback:-0}" ]; then
		fail exec_new_tables "$cut of $deep stacks of unwind_deep cut, more than the ${fallback:-0} taken by frame pointers"
	else
		pass exec_new_tables
	fi
}

# a row array that fills: in 1 MB, the tables of perl, then unwind_deep's, then bash's, which
# execs a compiler (cc1: hundreds of thousands of rows) once perl has been killed. The compiler's do
# not fit, so the array is reset: perl's table (31k rows: with the live ones, more than the half
# of the array that a reset keeps) is dropped and unwind_deep's moves down, given
# back without being parsed again. Each of unwind_deep's stacks stays whole but those taken by frame
# pointers (counted: while its tables were being moved), and those are under 5 %
test_reset_keeps_live() {
	local cc1 gone deep_pid cc prof resets compactions fallback deep cut
	cc1=$(gcc -print-prog-name=cc1 2>/dev/null)
	if [ ! -x "$cc1" ]; then
		skip reset_keeps_live "no cc1 (gcc) to fill the row array"
		return
	fi
	for i in $(seq 300); do echo "int f$i(int x) { int s = 0; for (int k = 0; k < x; k++) s += k * $i ^ (s >> 3); return s; }"; done >"$tmp/fill.c"
	perl -e 'sleep 60' &
	gone=$!
	"$F/unwind_deep" 30 >/dev/null 2>&1 &
	deep_pid=$!
	bash -c 'while [ ! -e "$1" ]; do sleep 0.05; done; exec "$0" -quiet -O2 "$2" -o /dev/null' \
		"$cc1" "$tmp/fill_go" "$tmp/fill.c" &
	cc=$!
	# the tables load in the order the pids are given
	"$EBPFPROF" --unwind cfi --unwind-table-mb 1 --frequency 499 --pid "$gone,$deep_pid,$cc" \
		--duration 6 --format folded --no-kernel -v -o "$tmp/reset.folded" 2>"$tmp/reset.err" &
	prof=$!
	for _ in $(seq 300); do grep -qs "profiling the given" "$tmp/reset.err" && break; sleep 0.1; done
	sleep 1
	kill "$gone"; wait "$gone" 2>/dev/null
	sleep 0.5
	touch "$tmp/fill_go"
	wait "$prof"
	kill "$deep_pid" "$cc" 2>/dev/null; wait "$deep_pid" "$cc" 2>/dev/null
	resets=$(sed -n 's/.*unwind_table_resets_total=\([0-9]*\).*/\1/p' "$tmp/reset.err")
	compactions=$(sed -n 's/.*unwind_table_compactions_total=\([0-9]*\).*/\1/p' "$tmp/reset.err")
	fallback=$(sed -n 's/.*unwind_fp_fallback_total=\([0-9]*\).*/\1/p' "$tmp/reset.err")
	read -r deep cut < <(deep_cut "$tmp/reset.folded")
	echo "  1 MB of rows: ${resets:-?} resets, ${compactions:-?} kept the live tables; $deep samples in uw_chain_5, $cut without the whole chain, ${fallback:-?} taken by frame pointers"
	if [ "${resets:-0}" -lt 1 ] || [ "${compactions:-0}" != "$resets" ]; then
		fail reset_keeps_live "expected resets, each keeping the live tables: $(grep -o 'unwind_table_[a-z_]*=[0-9]*' "$tmp/reset.err" | tr '\n' ' ')"
	elif [ "$deep" -lt 100 ]; then
		fail reset_keeps_live "only $deep samples in uw_chain_5"
	elif [ "$cut" -gt "${fallback:-0}" ] || [ $((cut * 20)) -gt "$deep" ]; then
		fail reset_keeps_live "$cut of $deep stacks of unwind_deep cut: over 5 %, or over the ${fallback:-0} taken by frame pointers"
	else
		pass reset_keeps_live
	fi
}

# a compiler whose libraries take a quarter of a second and more to parse (libLLVM and
# libclang-cpp, two million rows; 3x that under the sanitizers) starts, and a small program 50 ms
# later: the small one's tables wait for no large build, so its stacks are whole but for its first
# 50 ms at most (5 samples at 99 Hz); the compiler's, built aside, come to it later: its stacks
# are whole from then on (50 at least: walked by frame pointers, its code shows no _start). (Built
# in turn, the small program's waited, 10 to 30 samples.)
test_big_build_aside() {
	local clang prof cc id=$BUILD/fixtures/identity
	clang=$(command -v clang)
	if [ -z "$clang" ] || ! ldd "$(readlink -f "$clang")" | grep -q libLLVM; then
		skip big_build_aside "no clang linked to libLLVM: no large build to wait for"
		return
	fi
	for i in $(seq 600); do echo "int f$i(int x) { int s = 0; for (int k = 0; k < x; k++) s += k * $i ^ (s >> 3); return s; }"; done >"$tmp/big.c"
	"$EBPFPROF" -v --frequency 99 --duration 5 --unwind-table-mb 32 --format folded \
		-o "$tmp/aside.folded" 2>"$tmp/aside.err" &
	prof=$!
	wait_profiling "$tmp/aside.err" $prof || { fail big_build_aside "ebpfprof did not start"; return; }
	sleep 1	# the processes running before it are read first
	"$clang" -O2 -c "$tmp/big.c" -o /dev/null &
	cc=$!
	sleep 0.05
	"$id" burn alpha 1 >/dev/null
	wait "$prof"
	kill "$cc" 2>/dev/null; wait "$cc" 2>/dev/null
	awk '$1 ~ /^(identity|clang);/ {
		n = $NF; c = $1 ~ /^clang;/; t[c] += n
		if ($1 !~ /^[a-z]*;_start;/ || $0 ~ /;\[(truncated|unknown|lost)/) b[c] += n
	} END {
		printf "  identity: %d samples, %d not whole; clang: %d samples, %d not whole\n",
			t[0], b[0], t[1], b[1]
		exit !(t[0] > 30 && b[0] <= 5 && t[1] - b[1] >= 50)
	}' "$tmp/aside.folded" && pass big_build_aside ||
		fail big_build_aside "the small program's stacks waited for the compiler's tables, or the compiler's never came: $(grep -o 'unwind tables:.*' "$tmp/aside.err")"
}

# --unwind takes three words and nothing else
test_bad_unwind() {
	if "$EBPFPROF" --unwind sideways --duration 1 2>"$tmp/bad.err"; then
		fail bad_unwind "accepted --unwind sideways"
	elif [ "$(wc -l <"$tmp/bad.err")" -eq 1 ] && grep -q "invalid --unwind" "$tmp/bad.err"; then
		pass bad_unwind
	else
		fail bad_unwind "$(cat "$tmp/bad.err")"
	fi
}

run_test test_deep_cfi deep_cfi fp_vs_cfi	# fp_vs_cfi compares its deep.folded
run_test test_fp_vs_cfi
run_test test_qsort_libc
run_test test_cxx_exceptions
run_test test_pie_shared_lib
run_test test_signal_handler signal_handler signal_interrupted
run_test test_signal_steps signal_handler_steps signal_interrupted_steps
run_test test_cgo_mixed cgo_mixed cgo_c_chain
run_test test_go_pcsp go_pcsp go_pcsp_whole go_pcsp_caller
run_test test_go_signals
run_test test_go_sigpanic
run_test test_fallback_counted
run_test test_exec_new_tables
run_test test_reset_keeps_live
run_test test_big_build_aside
run_test test_bad_unwind
