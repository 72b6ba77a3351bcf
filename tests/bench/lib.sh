# lib.sh -- helpers of the comparison benchmarks: arithmetic, rusage, profilers started and stopped alike, a busy machine, perf stack folding
# Sourced by compare.sh, slowdown.sh and whole.sh, from the repository root.
EBPFPROF=${EBPFPROF:-build/ebpfprof}
FIX=${FIX:-build/fixtures}
BT_PROG='profile:hz:%s { @[kstack, ustack, comm] = count(); }'
# The agent's whole job in bpftrace: the same stacks, and each new process told to userspace within
# 25 ms, while it may still be read (its pid and cgroup at exec, in a map printed when it holds any)
BT_JOB='profile:hz:%s { @[kstack, ustack, comm] = count(); }
tracepoint:sched:sched_process_exec { @execs[pid, cgroup] = nsecs; @pending = 1; }
interval:ms:25 /@pending/ { print(@execs); clear(@execs); @pending = 0; }'

calc() { awk "BEGIN { print $1 }"; }
now() { date +%s.%N; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# the median of the numbers on stdin, one a line
median() {
	sort -g | awk '{ v[NR] = $1 } END { if (!NR) print "-"; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# wait_line FILE REGEXP [SECONDS]: until a line of FILE matches (0), or the time is up (1)
wait_line() {
	local i
	for i in $(seq $((${3:-15} * 10))); do
		grep -Eqs "$2" "$1" && return 0
		sleep 0.1
	done
	return 1
}

# rusage_run OUT CMD...: runs CMD in the foreground; writes "user_s system_s maxrss_kib exit_code" of
# CMD and its children to OUT, and CMD's own pid to OUT.pid. The caller signals that pid, not the wrapper.
# Linux carries ru_maxrss across exec, so it is never below the forked python's RSS (about 11 MB).
rusage_run() {
	python3 -c '
import os, resource, signal, sys
out = sys.argv[1]
pid = os.fork()
if pid == 0:
	open(out + ".pid", "w").write("%d\n" % os.getpid())
	signal.signal(signal.SIGINT, signal.SIG_DFL)
	os.execvp(sys.argv[2], sys.argv[2:])
signal.signal(signal.SIGINT, signal.SIG_IGN)
_, status = os.waitpid(pid, 0)
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
open(out, "w").write("%.3f %.3f %d %d\n" % (ru.ru_utime, ru.ru_stime, ru.ru_maxrss, code))
sys.exit(code)' "$@"
}

# bpf_prog_stats PID: "run_time_ns run_cnt all_run_time_ns" of the BPF programs PID holds open: the
# first two summed over its perf_event programs (the sampler, one run a sample), the third over all of
# them (the exec tracepoint too: the whole cost to the system). From /proc/PID/fdinfo; counted only
# while kernel.bpf_stats_enabled=1
bpf_prog_stats() {
	awk '/^prog_type:/ { pe = ($2 == 7) } /^run_time_ns:/ { all += $2; if (pe) t += $2 }
		pe && /^run_cnt:/ { c += $2; pe = 0 } END { printf "%d %d %d\n", t, c, all }' /proc/"$1"/fdinfo/* 2>/dev/null
}

# bpf_prog_stats_named PID NAME: the same, the first two over the programs bpftool names NAME (the
# sampler where another perf_event program runs beside it: bpftrace names a probe's program by its
# last part, profile:hz:19 "19", interval:ms:25 "25")
bpf_prog_stats_named() {
	local id
	for id in $(awk '/^prog_id:/ { print $2 }' /proc/"$1"/fdinfo/* 2>/dev/null | sort -u); do
		bpftool prog show id "$id" 2>/dev/null | head -1
	done | awk -v want="$2" '{ n = t = c = ""
		for (i = 2; i < NF; i++) {
			if ($i == "name") n = $(i + 1)
			if ($i == "run_time_ns") t = $(i + 1)
			if ($i == "run_cnt") c = $(i + 1)
		}
		all += t; if (n == want) { rt += t; rc += c } }
		END { printf "%d %d %d\n", rt, rc, all }'
}

# profiler_start NAME HZ DIR: starts a whole-system profiler under rusage_run; returns once it samples.
# NAME is none, ebpfprof, perf or bpftrace. Sets PROF_PID (the profiler) and PROF_WRAP (the wrapper).
profiler_start() {
	local name=$1 hz=$2 dir=$3 i
	PROF_PID="" PROF_WRAP=""
	rm -f "$dir/$name".*
	case $name in
	none) return 0 ;;
	ebpfprof)
		rusage_run "$dir/$name.rusage" "$EBPFPROF" --duration 1000000 --frequency "$hz" --verbose \
			--output "$dir/$name.pb.gz" 2>"$dir/$name.err" & ;;
	perf)
		rusage_run "$dir/$name.rusage" perf record -F "$hz" -a -g -o "$dir/perf.data" \
			>"$dir/$name.out" 2>"$dir/$name.err" & ;;
	bpftrace)
		# bpftrace 0.17 warns about RLIMIT_MEMLOCK on kernels that no longer need it
		rusage_run "$dir/$name.rusage" bpftrace -e "$(printf "$BT_PROG" "$hz")" \
			>"$dir/$name.out" 2>"$dir/$name.err" & ;;
	esac
	PROF_WRAP=$!
	for i in $(seq 100); do [ -s "$dir/$name.rusage.pid" ] && break; sleep 0.05; done
	PROF_PID=$(cat "$dir/$name.rusage.pid" 2>/dev/null)
	case $name in
	ebpfprof) wait_line "$dir/$name.err" '^ebpfprof: profiling' ;;
	bpftrace) wait_line "$dir/$name.out" '^Attaching' && sleep 0.3 ;;
	perf) sleep 1.5 ;;	# perf record prints nothing when its events are open
	esac
}

# profiler_stop: SIGINT to the profiler; waits until it has exited (its output complete)
profiler_stop() {
	[ -n "$PROF_PID" ] || return 0
	kill -INT "$PROF_PID" 2>/dev/null
	wait "$PROF_WRAP" 2>/dev/null
	PROF_PID="" PROF_WRAP=""
}

# A busy machine for the whole-system runs: CPU-bound, syscall-bound, 100 idle processes and
# a loop starting about 100 short-lived processes a second. busy_stop ends exactly these.
BUSY_PIDS=()
busy_start() {	# seconds
	local s=$1 i
	for i in $(seq "$(nproc)"); do
		"$FIX/cpu_split" "$s" & BUSY_PIDS+=($!)
		"$FIX/syscall_heavy" "$s" & BUSY_PIDS+=($!)
	done
	for i in $(seq 100); do sleep "$s" & BUSY_PIDS+=($!); done
	( end=$((SECONDS + ${s%.*})); while [ $SECONDS -lt $end ]; do
		for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done; sleep 0.1; done ) & BUSY_PIDS+=($!)
}
busy_stop() {
	[ ${#BUSY_PIDS[@]} = 0 ] && return 0
	kill "${BUSY_PIDS[@]}" 2>/dev/null
	wait "${BUSY_PIDS[@]}" 2>/dev/null
	BUSY_PIDS=()
}

# fold_perf_script: `perf script` text on stdin -> folded stacks "comm;root;...;leaf count" on stdout.
# Written here because FlameGraph's stackcollapse-perf.pl cannot be fetched offline; kernel frames get _[k].
fold_perf_script() {
	perl -ne '
		sub flush { $n{join(";", $comm, @st)}++ if defined $comm; undef $comm; @st = () }
		if (/^(\S.*?)\s+\d+(?:\/\d+)?\s+(?:\[\d+\]\s+)?[\d.]+:/) {	# comm tid [cpu] time: ...
			flush(); ($comm = $1) =~ tr/ ;/__/; next;
		}
		if (/^\s+[0-9a-f]+\s+(.*)\s+\(([^()]*)\)\s*$/) {			# ip sym+off (dso), leaf first
			my ($s, $d) = ($1, $2);
			$s =~ s/\+0x[0-9a-f]+$//;
			$s = "[" . ($d =~ s|.*/||r) . "]" if $s eq "[unknown]";
			$s =~ tr/;/_/;
			$s .= "_[k]" if $d =~ /^\[kernel\./;
			unshift @st, $s; next;
		}
		flush() if /^\s*$/;
		END { flush(); print "$_ $n{$_}\n" for sort keys %n }'
}
