#!/usr/bin/env bash
# test_agent.sh -- the real agent against a real loopback Pyroscope collector, its pull endpoint and its files
set -u
SUITE=agent
. "$(dirname "$0")/lib.sh"
FIX=$BUILD/fixtures
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT

# Checks the collector log: every request 200, name and labels, contiguous in-order windows.
check_windows() {	# log, service, min_windows, expected_total (or -)
	python3 - "$@" <<'EOF'
import json, sys
log, service, min_windows, expected = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
reqs = [json.loads(l) for l in open(log) if l.strip()]
ok = [r for r in reqs if r.get("status") == 200 and r.get("name") == service]
bad = [r for r in reqs if r.get("status") != 200]
errs = []
if bad and expected != "allow-rejects":
    errs.append("non-200 requests: %s" % [(r.get("status"), r.get("error")) for r in bad][:3])
if len(ok) < min_windows:
    errs.append("%d windows of %s, want >= %d" % (len(ok), service, min_windows))
# to the nanosecond, by the profiles' own times: the query's whole seconds overlap by
# one after a window shorter than a second (a late harvest on a loaded machine)
for a, b in zip(ok, ok[1:]):
    if b["time_nanos"] != a["time_nanos"] + a["duration_nanos"]:
        errs.append("windows not contiguous or out of order: %d+%d then %d" %
                    (a["time_nanos"], a["duration_nanos"], b["time_nanos"]))
        break
    if b["from"] < a["from"] or b["until"] < a["until"]:
        errs.append("windows out of order: %s..%s then %s..%s" % (a["from"], a["until"], b["from"], b["until"]))
        break
for r in ok:
    if r.get("sampleRate", 0) <= 0 or r.get("samples", 0) <= 0:
        errs.append("bad window %s" % r)
        break
    if r["labels"].get("env") != "test" or not r["labels"].get("hostname"):
        errs.append("labels missing: %s" % r["labels"])
        break
total = sum(r["total"] for r in ok)
if expected not in ("-", "allow-rejects") and total != int(expected):
    errs.append("windows sum to %d samples, the BPF counter says %s" % (total, expected))
print("  %d windows, %d samples" % (len(ok), total))
for e in errs:
    print("  " + e)
sys.exit(1 if errs else 0)
EOF
}

test_push_no_loss() {	# windows arrive contiguous, and sum exactly to the samples BPF took
	start_collector "$tmp/push.log" || { fail push_no_loss "collector did not start"; return; }
	"$FIX/cpu_split" 30 & local work=$!
	"$EBPFPROF" agent --interval 1 --frequency 499 --pid $work --push "http://$COLLECTOR_ADDR" \
		--label env=test 2>"$tmp/agent.err" & local agent=$!
	wait_started "$tmp/agent.err"
	sleep 5.5
	# an http:// push goes out on a plain socket: libcurl and its TLS libraries are never loaded
	local tls_libs
	tls_libs=$(grep -cE 'libcurl|libssl|libcrypto' "/proc/$agent/maps")
	local start=$SECONDS
	stop $agent; local rc=$?
	stop $COLLECTOR_PID
	kill $work
	local taken
	taken=$(sed -n 's/.*agent stopped: \([0-9]*\) samples taken.*/\1/p' "$tmp/agent.err")
	if [ $rc = 0 ] && [ $((SECONDS - start)) -lt 8 ] && [ -n "$taken" ] && [ "$tls_libs" = 0 ] &&
		check_windows "$tmp/push.log" cpu_split 5 "$taken"; then
		pass "push_no_loss: every window delivered, libcurl and OpenSSL not loaded"
	else
		tail -3 "$tmp/agent.err"; fail push_no_loss "rc=$rc, taken=$taken, libcurl/OpenSSL mappings $tls_libs (see above)"
	fi
}

test_outage() {	# collector down for three windows, then back: every window arrives, in order
	local port
	port=$(free_port)
	"$FIX/cpu_split" 60 & local work=$!
	"$EBPFPROF" agent --interval 1 --pid $work --push "http://127.0.0.1:$port" --label env=test \
		2>"$tmp/outage.err" & local agent=$!
	wait_started "$tmp/outage.err"
	sleep 3.5
	start_collector "$tmp/outage.log" -listen "127.0.0.1:$port" || { fail outage "collector did not start"; return; }
	# the retries back off with full jitter, doubling to 30 s: after 3.5 s down the next one may
	# be 13 s away (a fixed 8 s wait once saw none arrive). Until ten windows are in, 45 s at most
	local i
	for i in $(seq 450); do
		[ "$(grep -c '"status": *200' "$tmp/outage.log" 2>/dev/null)" -ge 10 ] && break
		sleep 0.1
	done
	stop $agent; local rc=$?
	stop $COLLECTOR_PID
	kill $work
	local taken
	taken=$(sed -n 's/.*agent stopped: \([0-9]*\) samples taken.*/\1/p' "$tmp/outage.err")
	if [ $rc = 0 ] && check_windows "$tmp/outage.log" cpu_split 10 "$taken"; then
		pass outage
	else
		tail -3 "$tmp/outage.err"; fail outage "rc=$rc"
	fi
}

test_rejected_and_metrics() {	# a 400 drops one window, counted; /metrics parses and counts it
	start_collector "$tmp/rej.log" -fail-status 400 -fail-count 1 || { fail rejected "collector did not start"; return; }
	"$FIX/cpu_split" 30 & local work=$!
	"$EBPFPROF" agent --interval 1 --pid $work --push "http://$COLLECTOR_ADDR" --label env=test \
		--listen 127.0.0.1:0 2>"$tmp/rej.err" & local agent=$!
	local port
	port=$(wait_port "$tmp/rej.err") || { fail rejected "agent did not listen"; stop $agent; return; }
	sleep 4
	curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/metrics.txt"
	local health
	health=$(curl -sf "http://127.0.0.1:$port/healthz")
	stop $agent
	stop $COLLECTOR_PID
	kill $work
	if grep -q '^ebpfprof_push_rejected_total 1$' "$tmp/metrics.txt" &&
		check_windows "$tmp/rej.log" cpu_split 2 allow-rejects >/dev/null; then
		pass rejected
	else
		grep push_ "$tmp/metrics.txt"; fail rejected "400 not counted once, or no later window delivered"
	fi
	# every line is a comment or "name{labels} value"; the sampler counters are there, and the
	# stack maps' fill of the last harvest (a window of samples stored some stack)
	local malformed stored
	malformed=$(grep -Evc '^(# (HELP|TYPE) [a-z_][a-z0-9_]* .*|[a-z_][a-z0-9_]*(\{[a-z_][a-z0-9_]*="[^"]*"(,[a-z_][a-z0-9_]*="[^"]*")*\})? -?[0-9.e+]+)$' "$tmp/metrics.txt")
	stored=$(awk '/^ebpfprof_stack_map_entries\{/ { s += $2 } END { print s + 0 }' "$tmp/metrics.txt")
	if [ "$malformed" = 0 ] && grep -Eq '^ebpfprof_samples_total [1-9]' "$tmp/metrics.txt" &&
		grep -q '^ebpfprof_resident_memory_bytes' "$tmp/metrics.txt" && [ "$health" = ok ] &&
		[ "$stored" -gt 0 ] && grep -Eq '^ebpfprof_stack_map_capacity\{map="stacks"\} [1-9]' "$tmp/metrics.txt"; then
		pass metrics
	else
		grep stack_map "$tmp/metrics.txt"
		fail metrics "$malformed malformed lines, healthz '$health', $stored stacks in the maps at the last harvest"
	fi
}

test_pull() {	# go tool pprof reads the pull endpoint, whole machine and ?pid=
	"$FIX/cpu_split" 30 & local work=$!
	"$EBPFPROF" agent --listen 127.0.0.1:0 --frequency 99 2>"$tmp/pull.err" & local agent=$!
	local port
	port=$(wait_port "$tmp/pull.err") || { fail pull "agent did not listen"; stop $agent; return; }
	go tool pprof -timeout 60 -raw -symbolize=none "http://127.0.0.1:$port/debug/pprof/profile?seconds=2" \
		>"$tmp/pull.raw" 2>"$tmp/pull.stderr"
	go tool pprof -timeout 60 -raw -symbolize=none "http://127.0.0.1:$port/debug/pprof/profile?seconds=1&pid=$work" \
		>"$tmp/pullpid.raw" 2>/dev/null
	stop $agent
	kill $work
	local others
	others=$(grep -o 'pid:\[[0-9]*\]' "$tmp/pullpid.raw" | sort -u | grep -vc "pid:\[$work\]")
	if grep -q cpu_split_fifty "$tmp/pull.raw" && grep -Eq '^Duration: (1\.9|2)' "$tmp/pull.raw" &&
		grep -q cpu_split_fifty "$tmp/pullpid.raw" && [ "$others" = 0 ]; then
		pass pull
	else
		head -5 "$tmp/pull.raw" "$tmp/pull.stderr"; tail -5 "$tmp/pull.err"; fail pull "profile missing cpu_split or pid filter leaked ($others)"
	fi
}

# A pool's children, forked and never exec'd, under the agent: named (from their parent's maps when
# copied), and labelled with their parent's executable (copied from its process table, or read)
test_fork_children() {
	"$EBPFPROF" agent --listen 127.0.0.1:0 --frequency 99 2>"$tmp/fork.err" & local agent=$!
	local port copied
	port=$(wait_port "$tmp/fork.err") || { fail fork_children "agent did not listen"; stop $agent; return; }
	go tool pprof -timeout 60 -proto "http://127.0.0.1:$port/debug/pprof/profile?seconds=6" \
		>"$tmp/fork.pb.gz" 2>/dev/null & local pull=$!
	sleep 0.5
	"$FIX/fork_pool" 4 20 60 >/dev/null
	wait $pull
	copied=$(curl -sf "http://127.0.0.1:$port/metrics" | awk '
		$1 == "ebpfprof_processes_copied_total" { c = $2 }
		$1 == "ebpfprof_processes_forks_read_total" { r = $2 }
		$1 == "ebpfprof_symbol_forks_refused_unknown_total" { u = $2 }
		$1 == "ebpfprof_symbol_forks_refused_unsettled_total" { s = $2 }
		END { printf "%d %d children named from their parent, %d read (parent unread %d, unsettled %d)", c, c, r, u, s }')
	stop $agent
	echo "  ${copied#* }"
	# as the one-shot's: the compute children (half of about 80) are copied, not read
	if [ "${copied%% *}" -lt 10 ]; then
		fail fork_children "fewer than 10 copied: ${copied#* }"
	elif go tool pprof -traces "$tmp/fork.pb.gz" 2>/dev/null | fork_children_named "$FIX/fork_pool"; then
		pass fork_children
	else
		fail fork_children "children unnamed, one kind missing, or not labelled"
	fi
}

test_output_dir() {	# no backend: windows land in --output-dir, bounded by --retention
	"$FIX/cpu_split" 30 & local work=$!
	EBPFPROF_INTERVAL=1 "$EBPFPROF" agent --pid $work --output-dir "$tmp/profiles" --retention 3 \
		2>"$tmp/dir.err" & local agent=$!
	wait_started "$tmp/dir.err"
	sleep 5.5
	stop $agent; local rc=$?
	kill $work
	local n first
	n=$(ls "$tmp/profiles" | grep -c '^cpu_split-.*\.pb\.gz$')
	first=$(ls "$tmp/profiles" | head -1)
	if [ $rc = 0 ] && [ "$n" = 3 ] &&
		go tool pprof -top -symbolize=none "$tmp/profiles/$first" 2>/dev/null | grep -q cpu_split_; then
		pass output_dir
	else
		ls -la "$tmp/profiles"; fail output_dir "rc=$rc, $n files (want 3 with --retention 3)"
	fi
}

# scoped_series DIR CGROUP NAME: cpu_split in the cgroup directory DIR, syscall_heavy outside it, the
# agent run with --cgroup CGROUP; prints the series it wrote (NAME.err keeps its log)
scoped_series() {
	"$FIX/cpu_split" 30 & local inside=$!
	"$FIX/syscall_heavy" 30 & local outside=$!
	echo $inside >"$1/cgroup.procs"
	"$EBPFPROF" agent --interval 1 --cgroup "$2" --output-dir "$tmp/$3" 2>"$tmp/$3.err" &
	local agent=$!
	wait_started "$tmp/$3.err"
	sleep 3.5
	stop $agent
	kill $inside $outside
	wait $inside $outside 2>/dev/null
	ls "$tmp/$3" 2>/dev/null | sed 's/-[0-9T.]*Z\.pb\.gz$//' | sort -u | tr '\n' ' '
}

test_cgroup_scope() {	# --cgroup samples only the processes of that cgroup v2 subtree
	local mnt services
	mnt=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
	[ -n "$mnt" ] || { skip cgroup_scope "cgroup v2 is not mounted"; return; }
	local cg="$mnt/ebpfprof-test-$$"
	mkdir "$cg" 2>/dev/null || { skip cgroup_scope "cannot create a cgroup under $mnt"; return; }
	services=$(scoped_series "$cg" "/ebpfprof-test-$$" cg)
	rmdir "$cg"
	if [ "$services" = "cpu_split " ]; then
		pass cgroup_scope
	else
		tail -2 "$tmp/cg.err"; fail cgroup_scope "series: '$services' (want only cpu_split)"
	fi
}

test_cgroup_v1_scope() {	# --cgroup on a v1 hierarchy (v1 and hybrid hosts): a nested cgroup's process kept, others not
	local mnt services
	mnt=$(awk '$9 == "cgroup" && $NF ~ /(^|,)(cpu|memory|pids)(,|$)/ { print $5; exit }' /proc/self/mountinfo)
	[ -n "$mnt" ] || { skip cgroup_v1_scope "no cgroup v1 hierarchy with a controller on this host"; return; }
	local name="ebpfprof-v1-$$" cg="$mnt/ebpfprof-v1-$$"
	mkdir -p "$cg/inner" 2>/dev/null || { skip cgroup_v1_scope "cannot create a cgroup under $mnt"; return; }
	services=$(scoped_series "$cg/inner" "/$name" cg1)
	rmdir "$cg/inner" "$cg"
	if [ "$services" = "cpu_split " ] && grep -q "sampling only cgroup $cg (cgroup v1" "$tmp/cg1.err"; then
		pass "cgroup_v1_scope: $mnt: only the process in a cgroup below $name, said in one line"
	else
		tail -2 "$tmp/cg1.err"; fail cgroup_v1_scope "series: '$services' (want only cpu_split)"
	fi
}

# sh IN_CGROUP PROCS SHORT_LIVED: runs short_lived (300 ms of CPU) after moving itself (the pid $!
# names) into the cgroup PROCS belongs to
IN_CGROUP='echo $$ >"$1" && exec "$2" 0 300'

test_cgroup_cache_v1() {	# v1 and hybrid hosts: each memory cgroup's file read once, each process labelled by its own
	local mnt id_a id_b port agent saved bad
	mnt=$(awk '$9 == "cgroup" && $NF ~ /(^|,)memory(,|$)/ { print $5; exit }' /proc/self/mountinfo)
	[ -n "$mnt" ] || { skip cgroup_cache_v1 "no cgroup v1 memory hierarchy on this host (v2 only: make vmtest checks that cache)"; return; }
	id_a=$(printf 'a%.0s' $(seq 64)) id_b=$(printf 'b%.0s' $(seq 64))
	mkdir -p "$mnt/docker/$id_a" "$mnt/docker/$id_b" 2>/dev/null ||
		{ skip cgroup_cache_v1 "cannot create a cgroup under $mnt"; return; }
	"$EBPFPROF" agent --interval 1 --frequency 99 --group-by container --listen 127.0.0.1:0 \
		--output-dir "$tmp/cc" 2>"$tmp/cc.err" & agent=$!
	port=$(wait_port "$tmp/cc.err") || { fail cgroup_cache_v1 "agent did not listen"; stop $agent; return; }
	# alternating, so each read follows one of the other container's
	: >"$tmp/cc.pids"
	for _ in 1 2 3 4 5; do
		sh -c "$IN_CGROUP" _ "$mnt/docker/$id_a/cgroup.procs" "$FIX/short_lived" &
		echo "a $!" >>"$tmp/cc.pids"; wait $!
		sh -c "$IN_CGROUP" _ "$mnt/docker/$id_b/cgroup.procs" "$FIX/short_lived" &
		echo "b $!" >>"$tmp/cc.pids"; wait $!
	done
	sleep 1.5
	saved=$(curl -sf "http://127.0.0.1:$port/metrics" | awk '/^ebpfprof_process_cgroup_reads_saved_total/ { print $2 }')
	stop $agent
	rmdir "$mnt/docker/$id_a" "$mnt/docker/$id_b"
	rmdir "$mnt/docker" 2>/dev/null
	# every sample of a container's series is of a pid started in that container
	bad=$(for c in a b; do
		id=$id_a; [ $c = b ] && id=$id_b
		for f in "$tmp/cc/$id"-*.pb.gz; do
			[ -e "$f" ] || { echo "no series for container $c"; continue; }
			go tool pprof -raw "$f" 2>/dev/null | sed -n 's/.*pid:\[\([0-9]*\)\].*/\1/p'
		done | sort -u | while read -r pid; do
			grep -q "^$c $pid\$" "$tmp/cc.pids" || echo "container $c has pid $pid"
		done
	done)
	if [ -z "$bad" ] && [ "${saved:-0}" -ge 8 ]; then
		pass "cgroup_cache_v1: $saved cgroup files not read, every sample under its own container"
	else
		tail -3 "$tmp/cc.err"; fail cgroup_cache_v1 "saved ${saved:-missing} (want >= 8); ${bad:-labels right}"
	fi
}

test_bad_agent_flags() {
	local ok=1 rc
	for args in "--interval 0" "--group-by pod" "--label novalue" "--scope pod --cgroup /x" "--bogus"; do
		timeout 5 "$EBPFPROF" agent $args >/dev/null 2>"$tmp/err"; rc=$?
		if [ $rc != 2 ] || [ "$(wc -l <"$tmp/err")" != 1 ]; then
			ok=0; echo "  '$args': rc=$rc: $(cat "$tmp/err")"
		fi
	done
	EBPFPROF_GROUP_BY=bogus timeout 5 "$EBPFPROF" agent >/dev/null 2>&1; rc=$?
	[ $rc = 2 ] || { ok=0; echo "  EBPFPROF_GROUP_BY=bogus: rc=$rc"; }
	[ $ok = 1 ] && pass bad_flags || fail bad_flags "see above"
}

run_test test_bad_agent_flags bad_flags
run_test test_push_no_loss
run_test test_outage
run_test test_rejected_and_metrics rejected metrics
run_test test_pull
run_test test_fork_children
run_test test_output_dir
run_test test_cgroup_scope
run_test test_cgroup_v1_scope
run_test test_cgroup_cache_v1
