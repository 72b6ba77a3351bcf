# suite.sh -- the compatibility suite, run by busybox sh inside the guest against its real kernel
# Prints PASS/FAIL/SKIP lines; profiles go to the host as base64 (vmtest-file NAME ... vmtest-end)
# and are read there with go tool pprof (tests/vm/check.sh). No go, no python in here.
E=/opt/ebpfprof/ebpfprof
FIX=/opt/ebpfprof/fix
O=/tmp/out
mkdir -p $O
chmod 0777 /tmp $O
SUITE=vm
pass() { echo "PASS: $SUITE/$1"; }
fail() { echo "FAIL: $SUITE/$1: $2"; }
skip() { echo "SKIP: $SUITE/$1: $2"; }
emit() {	# name file: to the host
	echo "vmtest-file $1"
	base64 "$2"
	echo "vmtest-end"
}
show() { grep -v '^libbpf: ' "$1" | sed 's/^/  /'; }	# a run's stderr, indented, without libbpf's chatter

rel=$(uname -r)
echo "vmtest-kernel $rel"
# kernel version as one number: 5.10 -> 510, 6.12 -> 612
kv=$(echo "$rel" | awk -F'[.-]' '{ printf "%d%02d\n", $1, $2 }')
echo "  kernel $rel, $(nproc) CPUs, BTF $([ -r /sys/kernel/btf/vmlinux ] && echo yes || echo no), perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid)"

# the fallback line (no kernel here says it: every one walks CFI, in steps before 5.17)
FP_FALLBACK='user stacks by frame pointers only'
STEPS_WALK='CFI walk: a global function per'

# --- one-shot CPU profile: a CPU-bound program and a syscall-bound one, kernel and user frames ---
test_cpu_oneshot() {
	# long-lived: a loaded host's emulated guest may take most of a minute to start a profile
	$FIX/cpu_split 180 >/dev/null & a=$!
	$FIX/syscall_heavy 180 >/dev/null & b=$!
	sleep 0.5
	$E --pid $a,$b --duration 4 --frequency 199 -v --output $O/cpu.pb.gz 2>$O/cpu.err
	rc=$?
	$E --pid $b --duration 2 --format folded --output $O/sys.folded 2>$O/sys.err
	rc2=$?
	kill $a $b; wait $a $b 2>/dev/null
	show $O/cpu.err
	if [ $rc = 0 ] && [ -s $O/cpu.pb.gz ]; then
		emit cpu.pb.gz $O/cpu.pb.gz
		emit cpu.err $O/cpu.err
		pass cpu_oneshot_runs
	else
		fail cpu_oneshot_runs "exit $rc"
	fi
	# frame pointers would skip the caller of libc's leaf read(): CFI walks it, on every kernel
	# (the syscall entry: x86-64's, arm64's el0_svc)
	if [ $rc2 = 0 ] && grep -Eq '^syscall_heavy;.*;main;.*(do_syscall_64|entry_SYSCALL_64[a-z_]*|do_el0_svc|el0_svc)_\[k\]' $O/sys.folded &&
		grep -q 'syscall_heavy_loop' $O/sys.folded; then
		pass kernel_and_user_frames
	else
		show $O/sys.err; head -3 $O/sys.folded 2>/dev/null | sed 's/^/  /'
		fail kernel_and_user_frames "exit $rc2, or no named kernel frame under syscall_heavy_loop"
	fi
}

# --- user stacks by CFI on every kernel: one bpf_loop from 5.17, steps of a global function before ---
# the share of a fixture's samples in LEAF whose stack matches RE (from the thread's entry): "hit all"
stack_share() {	# folded leaf re
	awk -v leaf=";$2" -v re="$3" '{ n = $NF; if (index($0, leaf)) { all += n; if ($0 ~ re) hit += n } }
		END { printf "%.0f %.0f\n", hit, all }' "$1" 2>/dev/null
}
# profiles FIXTURE with --unwind cfi and holds LEAF's stacks to RE in >= 99 % of at least 20 samples
unwind_whole() {	# name fixture leaf re
	n=$1
	$FIX/$2 180 >/dev/null & p=$!
	sleep 0.5
	$E --unwind cfi --pid $p --duration 3 --no-kernel --format folded -v -o $O/$n.folded 2>$O/$n.err
	rc=$?
	kill $p 2>/dev/null; wait $p 2>/dev/null
	got=$(stack_share $O/$n.folded "$3" "$4")
	hit=${got% *} all=${got#* }
	cut=$(awk '/\[truncated user stack\]|\[unknown\]/ { c += $NF } END { print c + 0 }' $O/$n.folded 2>/dev/null)
	echo "  unwind $n: $hit of $all samples in $3 whole from the thread's entry; ${cut:-?} truncated or unknown"
	walked=loop
	grep -q "$STEPS_WALK" $O/$n.err && walked=steps
	if [ $rc = 0 ] && [ "${all:-0}" -ge 20 ] && [ $((hit * 100)) -ge $((all * 99)) ] &&
		{ [ $kv -ge 517 ] || [ $walked = steps ]; }; then
		pass unwind_$n
	else
		show $O/$n.err | grep -v 'ebpfprof: [a-z0-9]*: processes_total' | tail -5
		head -3 $O/$n.folded 2>/dev/null | sed 's/^/  /'
		fail unwind_$n "exit $rc, $hit of $all whole, walk $walked"
	fi
}
test_unwind_cfi() {
	unwind_whole deep unwind_deep uw_chain_5 \
		'^unwind_deep;_start;.*;main;uw_chain_1;uw_chain_2;uw_chain_3;uw_chain_4;uw_chain_5'
	unwind_whole cxx unwind_cxx uw_cxx_leaf '^unwind_cxx;_start;.*;main;uw_cxx_outer;uw_cxx_middle;uw_cxx_leaf'
	# a signal handler's samples: through the signal frame (libc's __restore_rt on x86-64, the
	# vDSO's __kernel_rt_sigreturn on arm64) into the code it struck, whole from _start
	unwind_whole signal unwind_signal uw_sig_work \
		'^unwind_signal;_start;.*;main;uw_sig_outer;uw_sig_interrupted;.*;uw_sig_handler;uw_sig_work'
	unwind_whole gosha unwind_gosha crypto/sha256.block \
		'^unwind_gosha;runtime.goexit;runtime.main;main.main;main.uwGoCaller;main.uwGoHash;'
}

# --- off-CPU user stacks by CFI on every kernel: the same walk at the switch-out, in steps before 5.17 ---
test_offcpu_cfi() {
	$FIX/unwind_deep 180 block >/dev/null & p=$!
	sleep 0.5
	$E --mode off-cpu --unwind cfi --pid $p --duration 3 --no-kernel --format folded -v \
		-o $O/offcpu-cfi.folded 2>$O/offcpu-cfi.err
	rc=$?
	kill $p 2>/dev/null; wait $p 2>/dev/null
	# blocked time (ns) in nanosleep under the leaf, and how much of it is whole from _start
	got=$(stack_share $O/offcpu-cfi.folded uw_chain_5 \
		'^unwind_deep;_start;.*;main;uw_chain_1;uw_chain_2;uw_chain_3;uw_chain_4;uw_chain_5;')
	hit=${got% *} all=${got#* }
	walks=$(sed -n 's/.*offcpu_unwind_cfi_total=\([0-9]*\).*/\1/p' $O/offcpu-cfi.err)
	echo "  off-cpu cfi: $hit of $all ns blocked under uw_chain_5 whole from _start; ${walks:-?} CFI walks"
	walked=loop
	grep -q "$STEPS_WALK" $O/offcpu-cfi.err && walked=steps
	# at least a second of the 3 s blocked, >= 99 % of it whole (a no-FP caller chain: frame pointers lose it)
	if [ $rc = 0 ] && [ "${all:-0}" -ge 1000000000 ] && [ $((hit / 1000 * 100)) -ge $((all / 1000 * 99)) ] &&
		[ "${walks:-0}" -gt 0 ] && { [ $kv -ge 517 ] || [ $walked = steps ]; }; then
		pass offcpu_cfi
	else
		show $O/offcpu-cfi.err | grep -v 'processes_total' | tail -5
		sort -k2 -nr $O/offcpu-cfi.folded 2>/dev/null | head -3 | sed 's/^/  /'
		fail offcpu_cfi "exit $rc, $hit of $all ns whole, walk $walked"
	fi
}

# --- a Python program's functions named on every kernel (the CFI walk's Python reader) ---
test_python_named() {
	# pyenv's build (x86-64), or Debian's arm64 python3.11 (libpython linked in)
	py=$(ls -d /root/.pyenv/versions/3.11*/bin/python3.11 /usr/bin/python3.11 2>/dev/null | tail -1)
	[ -n "$py" ] || { skip python_named "no CPython 3.11 in the initramfs"; return; }
	$py -S $FIX/chain.py 180 & p=$!
	sleep 1
	$E --unwind cfi --pid $p --duration 3 --no-kernel --format folded -v -o $O/py.folded 2>$O/py.err
	rc=$?
	kill $p 2>/dev/null; wait $p 2>/dev/null
	got=$(stack_share $O/py.folded chain.py_leaf \
		'^python3.11;_start;.*;_PyEval_EvalFrameDefault;chain.<module>;chain.py_top;chain.py_mid;chain.py_leaf')
	hit=${got% *} all=${got#* }
	echo "  python: $hit of $all samples in chain.py_leaf whole and named from _start"
	if [ $rc = 0 ] && [ "${all:-0}" -ge 20 ] && [ $((hit * 100)) -ge $((all * 99)) ]; then
		pass python_named
	else
		show $O/py.err | grep -v 'processes_total' | tail -5
		sort -k2 -nr $O/py.folded 2>/dev/null | head -3 | sed 's/^/  /'
		fail python_named "exit $rc, $hit of $all named"
	fi
}

# --- a Perl and a PHP program's functions named on every kernel (their readers); read on the host ---
# A loop in spin on its own line, called by outer forever: 4 s of it profiled by pid, from 2 s on
# (past the interpreter's start, slow under emulation)
test_script_named() {	# name, interpreter, script
	local name=$1 bin=$2 p e rc
	[ -x "$bin" ] || { skip ${name}_runs "no $bin in the initramfs"; return; }
	printf '%s\n' "$3" >$O/$name.script
	$bin $O/$name.script >/dev/null 2>&1 & p=$!
	sleep 2
	$E --pid $p --duration 4 --frequency 99 -v --output $O/$name.pb.gz 2>$O/$name.err & e=$!
	wait $e
	rc=$?
	kill $p 2>/dev/null; wait $p 2>/dev/null
	if [ $rc = 0 ] && [ -s $O/$name.pb.gz ]; then
		emit $name.pb.gz $O/$name.pb.gz
		grep "^ebpfprof: $name: processes_total" $O/$name.err | cut -c1-100 | sed 's/^/  /'
		pass ${name}_runs
	else
		show $O/$name.err | tail -5
		fail ${name}_runs "exit $rc"
	fi
}

# --- a Java program's methods named on every kernel (the CFI walk's HotSpot reader); read on the host ---
test_java_named() {
	j=/opt/jre/bin/java
	[ -x $j ] || { skip java_runs "no JRE in the initramfs (OpenJDK 17's jlink on the host)"; return; }
	rm -f $O/java.gate
	# 3 s of warm-up before the gate: C2 compiles alpha and beta, the profile sees compiled code
	$j -Xmx64m -XX:+UseSerialGC -cp $FIX/java Split split 900 $O/java.gate 3 >/dev/null 2>&1 & p=$!
	# past the JDK's own start (its Finalizer thread is made before main runs): main waits at the gate
	n=0
	while [ $n -lt 300 ] && ! cat /proc/$p/task/*/comm 2>/dev/null | grep -q '^Finalizer'; do
		sleep 0.2; n=$((n + 1))
	done
	$E --pid $p --per-thread --duration 5 --frequency 99 -v --output $O/java.pb.gz 2>$O/java.err & e=$!
	n=0
	while [ $n -lt 600 ] && ! grep -qs '^ebpfprof: profiling' $O/java.err && kill -0 $e 2>/dev/null; do
		sleep 0.2; n=$((n + 1))
	done
	touch $O/java.gate
	# the Java main thread: the launcher's first thread (its own waits in pthread_join)
	ls /proc/$p/task | sort -n | awk -v p=$p '$1 > p { print; exit }' >$O/java.tid
	wait $e
	rc=$?
	kill $p 2>/dev/null; wait $p 2>/dev/null
	if [ $rc = 0 ] && [ -s $O/java.pb.gz ]; then
		emit java.pb.gz $O/java.pb.gz
		emit java.tid $O/java.tid
		grep '^ebpfprof: java:' $O/java.err | sed 's/^/  /'
		pass java_runs
	else
		show $O/java.err | tail -5
		fail java_runs "exit $rc"
	fi
}

# --- what a walk costs here: BPF ns per sample and start-up, fp against cfi (and its steps build) ---
# measured, not held to a bound: under software emulation only the ratios mean anything
uptime_cs() { awk '{ printf "%d\n", $1 * 100 }' /proc/uptime; }
walk_cost() {	# label env unwind
	$FIX/unwind_deep 300 >/dev/null & p=$!
	sleep 0.5
	t0=$(uptime_cs)
	env $2 $E --unwind $3 --pid $p --duration 0.1 --no-kernel --format folded -o /dev/null 2>/dev/null
	t1=$(uptime_cs)
	env $2 $E --unwind $3 --pid $p --duration 5 --frequency 99 --no-kernel --format folded -v \
		-o $O/cost-$1.folded 2>$O/cost-$1.err
	ns=$(sed -n 's/.* ns total, \([0-9]*\) ns per sample.*/\1/p' $O/cost-$1.err)
	got=$(stack_share $O/cost-$1.folded uw_chain_5 '^unwind_deep;_start;.*;main;uw_chain_1;uw_chain_2;uw_chain_3;uw_chain_4;uw_chain_5')
	insns=$(sed -n 's/.*processed \([0-9]*\) insns.*/\1/p' $O/cost-$1.err | tail -1)
	kill $p 2>/dev/null; wait $p 2>/dev/null
	echo "  walk cost $1: ${ns:-?} BPF ns per sample, start-up $(((t1 - t0) * 10)) ms, verifier ${insns:-?} insns, ${got% *} of ${got#* } samples in uw_chain_5 whole"
}
test_walk_cost() {
	sysctl -qw kernel.bpf_stats_enabled=1
	walk_cost fp EBPFPROF_CFI_WALK= fp
	walk_cost cfi EBPFPROF_CFI_WALK= cfi
	[ $kv -ge 517 ] && walk_cost cfi-steps EBPFPROF_CFI_WALK=steps cfi
	sysctl -qw kernel.bpf_stats_enabled=0
}

test_unwind_fp() {	# frame pointers: cpu_split keeps them, main to its leaves
	$FIX/cpu_split 60 >/dev/null & p=$!
	sleep 0.5
	$E --unwind fp --pid $p --duration 2 --no-kernel --format folded -o $O/fp.folded 2>$O/fp.err
	rc=$?
	kill $p 2>/dev/null; wait $p 2>/dev/null
	if [ $rc = 0 ] && grep -q '^cpu_split;.*main;cpu_split_fifty' $O/fp.folded; then
		pass unwind_fp
	else
		show $O/fp.err; head -3 $O/fp.folded 2>/dev/null | sed 's/^/  /'; fail unwind_fp "exit $rc, no main;cpu_split_fifty"
	fi
}

# --- off-CPU and wall modes: claims by atomic exchange (5.12+) or by token before; read on the host ---
# At 49 Hz: an emulated CPU's sampling timer runs late on a loaded host, and the kernel skips the
# periods it overran: at 199 Hz 6.1 lost 29 % of the main thread's CPU samples (its off-CPU time 3 %).
test_mode() {	# mode: the fgprof fixture, one thread's phases measured by itself, one profile per thread
	m=$1
	# the fixture prints its split when it ends: it outlives the profile (slow to load under emulation)
	$FIX/fgprof 600 >$O/$m.measured & p=$!
	sleep 0.5
	$E --pid $p --mode $m --per-thread --duration 5 --frequency 49 -v --output $O/$m.pb.gz 2>$O/$m.err &
	e=$!
	# the split measured from the profile's start: the start-up slowed the program's wake-ups
	for i in $(seq 600); do
		grep -q '^ebpfprof: profiling' $O/$m.err && break
		kill -0 $e 2>/dev/null || break
		sleep 0.2
	done
	kill -USR1 $p
	wait $e
	rc=$?
	kill -TERM $p; wait $p
	grep -E '^ebpfprof: (bpf|off-cpu)' $O/$m.err | sed 's/^/  /'
	if [ $rc = 0 ] && [ -s $O/$m.pb.gz ] && [ -s $O/$m.measured ]; then
		echo $p >$O/$m.pid
		emit $m.pb.gz $O/$m.pb.gz
		emit $m.measured $O/$m.measured
		emit $m.pid $O/$m.pid
		pass ${m}_runs
	else
		show $O/$m.err; fail ${m}_runs "exit $rc"
	fi
}

# a unit test that loads BPF, against this kernel: its PASS line, or why not
run_unit() {	# name, the PASS line's case, command...
	name=$1 want=$2
	shift 2
	"$@" >$O/$name.out 2>&1
	rc=$?
	sed 's/^/  /' $O/$name.out | grep -v 'PASS\|FAIL'
	if [ $rc = 0 ] && grep -q "^PASS: $want" $O/$name.out; then
		pass $name
	else
		fail $name "exit $rc: $(grep -v '^  ' $O/$name.out | tail -1)"
	fi
}

# --- a task's user registers read from its kernel stack, as kernels before 5.15 need (bpf/regs.bpf.h) ---
test_user_regs() {
	run_unit user_regs user_regs/test_user_regs $FIX/test_user_regs
}

# --- one sleep cut by a harvest every 0.5 s: each window its share, the shares the whole sleep (3 ms) ---
test_offcpu_windows() {
	run_unit offcpu_windows offcpu/test_window_boundaries env TEST_CASES=window_boundaries $FIX/test_offcpu
}

# --- the agent in wall mode: windows cut while threads block, read on the host for time lost or doubled ---
test_agent_wall() {
	$FIX/fgprof 600 >$O/agent_wall.measured & p=$!
	$E agent --mode wall --per-thread --interval 1 --frequency 199 --pid $p --output-dir $O/win 2>$O/agent_wall.err & a=$!
	for i in $(seq 120); do
		grep -q '^ebpfprof: agent: ' $O/agent_wall.err && break
		sleep 0.5
	done
	kill -USR1 $p	# the split measured from here: the agent's start-up slowed the program's wake-ups
	sleep 5.5
	kill -TERM $a; wait $a; rc=$?
	kill -TERM $p; wait $p
	n=0
	for f in $O/win/*.pb.gz; do
		[ -f "$f" ] || continue
		n=$((n + 1))
		emit wall_window_$n.pb.gz $f
	done
	echo $p >$O/agent_wall.pid
	emit agent_wall.pid $O/agent_wall.pid
	emit agent_wall.measured $O/agent_wall.measured
	if [ $rc = 0 ] && [ $n -ge 4 ]; then
		pass agent_wall_runs
	else
		show $O/agent_wall.err; fail agent_wall_runs "exit $rc, $n windows"
	fi
}

# --- the agent: windows pushed to the loopback collector; the host checks them for boundary loss ---
test_agent() {
	$FIX/collector -log $O/collector.log >$O/collector.out 2>&1 & c=$!
	addr=
	for i in $(seq 50); do
		addr=$(awk '/^listening/ { print $2; exit }' $O/collector.out)
		[ -n "$addr" ] && break
		sleep 0.2
	done
	[ -n "$addr" ] || { fail agent_windows "collector did not start"; kill $c; return; }
	$FIX/cpu_split 300 >/dev/null & w=$!	# outlives a start-up of minutes on a loaded host
	$E agent --interval 1 --frequency 199 --pid $w --push "http://$addr" --label env=test 2>$O/agent.err & a=$!
	# start-up under emulation takes seconds: wait for four windows at the collector, at most 60 s
	for i in $(seq 120); do
		[ "$(grep -c . $O/collector.log 2>/dev/null)" -ge 4 ] && break
		sleep 0.5
	done
	kill -TERM $a; wait $a; rc=$?
	sleep 0.3
	kill $c $w; wait $c $w 2>/dev/null
	tail -3 $O/agent.err | sed 's/^/  /'
	if [ $rc = 0 ] && [ -s $O/collector.log ]; then
		emit collector.log $O/collector.log
		emit agent.err $O/agent.err
		pass agent_runs
	else
		fail agent_runs "exit $rc, collector log $(wc -c <$O/collector.log 2>/dev/null) bytes"
	fi
}

# --- a process's own labels read in BPF on every kernel (the steps build's walk before 5.17): Go
# pprof labels, and custom labels of the C program's two threads; read on the host (check_labels) ---
test_labels() {
	for f in golabels-1.19 tctx; do
		[ -x $FIX/$f ] || { skip labels_runs "no $f in the initramfs"; return; }
	done
	$FIX/golabels-1.19 600 >/dev/null & g=$!
	$FIX/tctx 1000000 2 >$O/tctx.out & t=$!
	sleep 0.5
	$E --pid $g --duration 5 --frequency 99 -v --output $O/golabels.pb.gz 2>$O/golabels.err
	rc=$?
	$E --pid $t --per-thread --duration 5 --frequency 99 -v --output $O/tctx.pb.gz 2>$O/tctx.err
	rc2=$?
	kill $g $t; wait $g $t 2>/dev/null
	grep -h 'labels_read_total\|^ebpfprof: labels:' $O/golabels.err $O/tctx.err | sed 's/^/  /'
	if [ $rc = 0 ] && [ $rc2 = 0 ] && [ -s $O/golabels.pb.gz ] && [ -s $O/tctx.pb.gz ]; then
		for f in golabels.pb.gz golabels.err tctx.pb.gz tctx.out tctx.err; do
			emit $f $O/$f
		done
		pass labels_runs
	else
		show $O/golabels.err | tail -3; show $O/tctx.err | tail -3
		fail labels_runs "exit $rc (Go), $rc2 (C)"
	fi
}

# --- a pure cgroup v2 host (this guest): processes of one cgroup have their cgroup file read once ---
test_cgroup_reads() {
	mkdir -p /sys/fs/cgroup/churn || { skip cgroup_reads "cannot make a cgroup"; return; }
	$E agent --interval 1 --frequency 99 --listen 127.0.0.1:7071 --output-dir $O/cg 2>$O/cg.err & a=$!
	for i in $(seq 120); do
		grep -q '^ebpfprof: agent: ' $O/cg.err && break
		sleep 0.5
	done
	# five processes in one new cgroup, each computing past the 20 ms after which it is read
	# (an idle one would wait longer: collect/exec_defer.h)
	(echo 0 >/sys/fs/cgroup/churn/cgroup.procs && for i in 1 2 3 4 5; do $FIX/short_lived 0 300; done)
	sleep 1.5
	saved=$(wget -qO- http://127.0.0.1:7071/metrics | awk '/^ebpfprof_process_cgroup_reads_saved_total/ { print $2 }')
	kill -TERM $a; wait $a
	rmdir /sys/fs/cgroup/churn
	# the first of the five is read, the next four (and other processes' repeats) are not
	if [ "${saved:-0}" -ge 4 ]; then
		echo "  cgroup files not read: $saved"
		pass cgroup_reads
	else
		show $O/cg.err; fail cgroup_reads "ebpfprof_process_cgroup_reads_saved_total ${saved:-missing}, want >= 4"
	fi
}

# --- least privilege: uid nobody with CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH, CAP_SYSLOG ---
as_nobody() {	# caps(comma list, +x form) command...
	caps=$1; shift
	/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all,$caps \
		--ambient-caps=-all,$caps --bounding-set=-all,$caps "$@"
}
run_priv() {	# as a unit with LimitMEMLOCK=infinity runs it (a no-op from 5.11 on); sets rc
	(cd $O && ulimit -l unlimited && as_nobody $all $E --pid $a,$b --duration 2 --format folded \
		--output $O/priv.folded 2>$O/priv.err)
	rc=$?
}
test_privilege() {
	[ -x /usr/bin/setpriv ] || { skip least_privilege "no setpriv in the initramfs"; return; }
	$FIX/cpu_split 120 >/dev/null & a=$!
	$FIX/syscall_heavy 120 >/dev/null & b=$!
	sleep 0.5
	all=+bpf,+perfmon,+sys_ptrace,+dac_read_search,+syslog
	if [ $kv -lt 511 ]; then
		# maps count against RLIMIT_MEMLOCK before 5.11: without room, one line says so
		(cd $O && ulimit -l 64 && as_nobody $all $E --pid $a --duration 1 --format folded \
			--output $O/memlock.folded 2>$O/memlock.err)
		rc=$?
		if [ $rc = 2 ] && [ "$(wc -l <$O/memlock.err)" = 1 ] &&
			grep -q 'RLIMIT_MEMLOCK.*CAP_SYS_RESOURCE' $O/memlock.err && [ ! -e $O/memlock.folded ]; then
			pass memlock_said
		else
			show $O/memlock.err; fail memlock_said "exit $rc, want 2 and a line naming RLIMIT_MEMLOCK"
		fi
	fi
	run_priv
	if [ $rc = 2 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 2 ]; then
		# Debian's level 3 leaves perf events to CAP_SYS_ADMIN on some kernels: said in one line
		if grep -q 'perf_event_paranoid is above 2.*CAP_SYS_ADMIN' $O/priv.err &&
			[ "$(grep -vc "$FP_FALLBACK" $O/priv.err)" = 1 ] && [ ! -e $O/priv.folded ]; then
			pass paranoid_said
		else
			show $O/priv.err; fail paranoid_said "exit 2 without a line naming perf_event_paranoid"
		fi
		sysctl -qw kernel.perf_event_paranoid=2
		run_priv
	fi
	(cd $O && as_nobody +perfmon,+sys_ptrace,+dac_read_search,+syslog $E --pid $a --duration 1 --format folded \
		--output $O/nobpf.folded 2>$O/nobpf.err)
	rc2=$?
	# no warning but the kernel's own fallback
	if [ $rc = 0 ] && grep -q 'cpu_split_fifty' $O/priv.folded && grep -Eq ';[a-zA-Z_][a-zA-Z0-9_.]*_\[k\]' $O/priv.folded &&
		! grep warning $O/priv.err | grep -qv "$FP_FALLBACK"; then
		pass least_privilege
	else
		show $O/priv.err
		(cd $O && as_nobody $all $E -vv --pid $a --duration 1 --output /dev/null 2>&1 | grep -v 'relo #\|: found \|map .*created\|CO-RE' | tail -40 | sed 's/^/  dbg /')
		fail least_privilege "exit $rc, or frames unnamed, or a warning"
	fi
	kill $a $b; wait $a $b 2>/dev/null
	if [ $rc2 = 2 ] && [ "$(wc -l <$O/nobpf.err)" = 1 ] && grep -q 'CAP_BPF and CAP_PERFMON' $O/nobpf.err &&
		[ ! -e $O/nobpf.folded ]; then
		pass without_cap_bpf
	else
		show $O/nobpf.err; fail without_cap_bpf "exit $rc2, want 2 and one line"
	fi
}

test_cpu_oneshot
test_unwind_cfi
test_offcpu_cfi
test_unwind_fp
test_python_named
test_script_named perl /usr/bin/perl 'sub spin {
	my $s = 0;
	for my $i (1 .. 100000) { $s += $i * 3 % 7 }
	return $s;
}
sub outer { spin() while 1 }
outer();'
test_script_named php /usr/bin/php8.2 '<?php
function spin() {
	$s = 0;
	for ($i = 0; $i < 100000; $i++) { $s += $i * 3 % 7; }
	return $s;
}
function outer() { while (true) { spin(); } }
outer();'
# x86-64's static CRuby 3.3 with YJIT on from the start, before the profiler finds the process, or
# arm64's Debian 3.1 (no YJIT); line 3 is spin's loop, whose call of Integer#^ makes YJIT store the pc
export RUBYOPT=--disable-gems
rb=$(ls /usr/bin/ruby /usr/bin/ruby3.1 2>/dev/null | head -1)
test_script_named ruby "${rb:-/usr/bin/ruby}" \
'def spin
  s = 0; i = 0
  while i < 100_000 do s += (i * 3) ^ i; i += 1 end
  s
end
def outer; spin while true; end
RubyVM::YJIT.enable if defined?(RubyVM::YJIT) && RubyVM::YJIT.respond_to?(:enable)
outer'
unset RUBYOPT
test_java_named
test_walk_cost
test_mode off-cpu
test_mode wall
test_agent_wall
test_user_regs
test_offcpu_windows
test_agent
test_labels
test_cgroup_reads
test_privilege
