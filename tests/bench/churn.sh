#!/usr/bin/env bash
# churn.sh -- the agent while RATE short-lived processes a second start for SECONDS: RSS every 5 s, caches, windows
# usage: churn.sh [SECONDS (60)] [RATE (500)] [OUTDIR]
#   INTERVAL=N  the agent's window (default 5 s)
# OUTDIR keeps rss.tsv (second, VmRSS kB, every second), metrics.tsv (second and
# the agent's gauges and counters, every 5 s, then once more after the churn has
# stopped and three windows passed), agent.err, churn.out, push.log and rc (the
# agent's exit status). test_churn.sh asserts on them.
set -u
cd "$(dirname "$0")/../.."
EBPFPROF=${EBPFPROF:-$PWD/build/ebpfprof}
BUILD=${BUILD:-$PWD/build}
FIX=$BUILD/fixtures
secs=${1:-60} rate=${2:-500} out=${3:-}
interval=${INTERVAL:-5}
keep=1
[ -n "$out" ] || { out=$(mktemp -d); keep=0; }
mkdir -p "$out"
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; [ $keep = 1 ] || rm -rf "$out"' EXIT

"$FIX/collector" -log "$out/push.log" >"$out/collector.out" 2>&1 &
collector=$!
for _ in $(seq 50); do
	addr=$(awk '/^listening/ { print $2; exit }' "$out/collector.out" 2>/dev/null)
	[ -n "$addr" ] && break
	sleep 0.1
done
[ -n "$addr" ] || { echo "churn.sh: the collector did not start" >&2; exit 1; }
"$EBPFPROF" agent --interval "$interval" --frequency 99 --push "http://$addr" --label env=bench \
	--listen 127.0.0.1:0 2>"$out/agent.err" &
agent=$!
for _ in $(seq 100); do
	port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$out/agent.err")
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || { echo "churn.sh: the agent did not listen" >&2; cat "$out/agent.err" >&2; exit 1; }

metric() {	# metrics file, name: its value, or - when absent
	awk -v n="$2" '$1 == n { v = $2 } END { print (v == "" ? "-" : v) }' "$1"
}
names="ebpfprof_processes ebpfprof_processes_evicted_total ebpfprof_symbol_processes
ebpfprof_symbol_mappings ebpfprof_symbol_cache_files ebpfprof_symbol_cache_bytes
ebpfprof_push_sent_total ebpfprof_process_events_dropped_total
ebpfprof_process_execs_unsampled_total"
scrape() {	# second
	curl -sf "http://127.0.0.1:$port/metrics" >"$out/m.txt" || return
	local row=$1
	for n in $names; do row="$row $(metric "$out/m.txt" "$n")"; done
	echo "$row" >>"$out/metrics.tsv"
}
echo "second $names" | tr '\n' ' ' | sed 's/ $/\n/' >"$out/metrics.tsv"
: >"$out/rss.tsv"

"$FIX/churn" "$secs" "$rate" >"$out/churn.out" 2>&1 &
churn=$!
for t in $(seq 1 "$secs"); do
	sleep 1
	kill -0 $agent 2>/dev/null || break
	echo "$t $(awk '/^VmRSS/ { print $2 }' /proc/$agent/status)" >>"$out/rss.tsv"
	[ $((t % 5)) = 0 ] && scrape "$t"
done
wait $churn
# three windows without churn: what the exited processes held must be gone
sleep $((3 * interval + 1))
scrape after
kill -TERM $agent 2>/dev/null
wait $agent
echo $? >"$out/rc"
kill -TERM $collector 2>/dev/null
wait $collector 2>/dev/null

echo "churn: $(cat "$out/churn.out"); agent interval ${interval} s, exit status $(cat "$out/rc")"
printf '%8s %9s %10s %10s %10s %10s\n' second rss_MB processes evicted sym_procs sym_files
awk 'NR == FNR { rss[$1] = $2; next }
	FNR > 1 { printf "%8s %9s %10s %10s %10s %10s\n", $1, ($1 in rss) ? sprintf("%.1f", rss[$1] / 1024) : "-",
		$2, $3, $4, $6 }' "$out/rss.tsv" "$out/metrics.tsv"
python3 - "$out/push.log" <<'PY'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ok = [r for r in reqs if r.get("status") == 200]
print("windows pushed: %d accepted of %d requests, %d from churn" %
      (len(ok), len(reqs), sum(1 for r in ok if r.get("name") == "churn")))
PY
