#!/usr/bin/env bash
# test_churn.sh -- the agent while 500 short-lived processes a second come and go: no crash, RSS bounded, caches evicted, windows arrive
set -u
SUITE=churn
. "$(dirname "$0")/lib.sh"
SECS=${CHURN_SECONDS:-30} RATE=${CHURN_RATE:-500} INTERVAL=2
# the last third may grow this much over the middle one: a window's pprof, not a leak
GROWTH_KB=$((8 * 1024))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# under ASan the resident set is the sanitizer's shadow and quarantine, not ours
asan=0
ldd "$EBPFPROF" 2>/dev/null | grep -q libasan && asan=1

# one run of the bench answers all four cases
selected no_crash rss_bounded caches_evicted windows_arrive || exit 0
INTERVAL=$INTERVAL bash "$(dirname "$0")/../bench/churn.sh" "$SECS" "$RATE" "$tmp" >"$tmp/bench.out" 2>&1
sed 's/^/  /' "$tmp/bench.out"
[ -s "$tmp/rss.tsv" ] || { fail run "the bench did not run (see above)"; exit 0; }

python3 - "$tmp" "$SECS" "$RATE" "$INTERVAL" "$GROWTH_KB" "$asan" <<'EOF2' | only_selected
import json, re, sys
d, secs, rate, interval, growth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
asan = sys.argv[6] == "1"
def result(name, ok, why):
    print(("PASS: churn/%s" % name) if ok else ("FAIL: churn/%s: %s" % (name, why)))

rc = open(d + "/rc").read().strip()
rss = [tuple(map(int, l.split())) for l in open(d + "/rss.tsv") if len(l.split()) == 2]
m = re.search(r"spawned (\d+)", open(d + "/churn.out").read())
spawned = int(m.group(1)) if m else 0
result("no_crash", rc == "0" and len(rss) >= secs - 1 and spawned >= secs * rate // 2,
       "agent exit status %s, alive %d of %d s, %d processes spawned" % (rc, len(rss), secs, spawned))

third = secs // 3
mid = [kb for t, kb in rss if third < t <= 2 * third]
last = [kb for t, kb in rss if t > 2 * third]
ok = mid and last and max(last) <= max(mid) + growth and max(last) < 256 * 1024
if asan:
    print("SKIP: churn/rss_bounded: an ASan build: its shadow memory and quarantine are the RSS")
else:
    result("rss_bounded", ok, "RSS peak %s kB in the middle third, %s kB in the last (bound: +%d kB, < 256 MB)"
           % (max(mid) if mid else "-", max(last) if last else "-", growth))

rows = [l.split() for l in open(d + "/metrics.tsv")]
head, rows = rows[0], rows[1:]
col = lambda row, name: float(row[head.index(name)]) if row[head.index(name)] != "-" else -1
during = [r for r in rows if r[0] != "after"]
after = [r for r in rows if r[0] == "after"]
peak = max((col(r, "ebpfprof_processes") for r in during), default=0)
sym_peak = max((col(r, "ebpfprof_symbol_processes") for r in during), default=0)
if after:
    a = after[0]
    evicted, procs, syms = col(a, "ebpfprof_processes_evicted_total"), col(a, "ebpfprof_processes"), col(a, "ebpfprof_symbol_processes")
    # a process that exited unsampled right after its exec was never read, so never cached
    unread = col(a, "ebpfprof_process_execs_unsampled_total")
    ok = unread >= 0 and evicted + unread >= spawned / 2 and procs <= peak / 4 and 0 <= syms <= sym_peak / 4
    why = "after the churn: %d evicted + %d never read of %d spawned, %d of peak %d processes, %d of peak %d in the symbolizer" % (
        evicted, unread, spawned, procs, peak, syms, sym_peak)
else:
    ok, why = False, "no metrics after the churn"
result("caches_evicted", ok, why)

reqs = [json.loads(l) for l in open(d + "/push.log") if l.strip()]
bad = [r for r in reqs if r.get("status") != 200]
windows = sorted({r["from"] for r in reqs if r.get("status") == 200})
churn = sum(1 for r in reqs if r.get("status") == 200 and r.get("name") == "churn")
ok = not bad and len(windows) >= secs // interval - 2 and churn > 0
result("windows_arrive", ok, "%d windows (want >= %d), %d of churn, %d refused" %
       (len(windows), secs // interval - 2, churn, len(bad)))
EOF2
exit "${PIPESTATUS[0]}"	# the checker's own crash still fails the suite
