# labels_check.sh -- reading the labels of profiles with go tool pprof, for tests/integration/test_labels.sh and tests/vm/check.sh

# a label's share of the samples that carry its key, as go tool pprof -tags prints it
tag_pct() {	# file key value
	go tool pprof -tags "$1" 2>/dev/null |
		awk -v k="$2:" -v v="$3" '$1 == k { on = 1; next } on && /^ *$/ { exit }
			on && $NF == v { match($0, /[0-9.]+%/); print substr($0, RSTART, RLENGTH - 1); found = 1; exit } END { if (!found) print -1 }'
}

# every labelled sample of a thread-context program checked against what the program did: the
# thread its span id names took it (tid), its trace id is that request's, and it is in the function
# that request ran (work_even or work_odd by the request's parity); where it has an http_route
# (OpenTelemetry's program), that is /even or /odd by the same parity. Prints "labelled
# wrong_thread wrong_trace wrong_function unlabelled_in_work wrong_route labelled_in_work_invalid
# in_work_invalid".
check_tctx() {	# pprof out
	go tool pprof -raw "$1" 2>/dev/null | python3 -c '
import re, sys
tids = dict(l.split()[1:4:2] for l in open(sys.argv[1]) if l.startswith("thread "))
tid_thread = {v: int(k) for k, v in tids.items()}
text = sys.stdin.read()
samples, locs = text.split("\nLocations\n")[0], text.split("\nLocations\n")[1]
funcs, cur = {}, None
for l in locs.split("\n"):
    m = re.match(r"\s+(\d+): 0x[0-9a-f]+ M=\d+ (\S+)", l)
    if m:
        cur = m.group(1); funcs[cur] = [m.group(2)]
    elif cur and l.strip() and not l.startswith("Mappings"):
        funcs[cur].append(l.split()[0])
    if l.startswith("Mappings"):
        break
stats = dict(labelled=0, thread=0, trace=0, function=0, unlabelled=0, route=0, invalid=0, in_invalid=0)
stack = None
for l in samples.split("\n"):
    m = re.match(r"\s+\d+\s+\d+: ([\d ]+)$", l)
    if m:
        stack = [f for i in m.group(1).split() for f in funcs.get(i, [])]
        continue
    if stack is None or not l.strip():
        continue
    lab = dict(re.findall(r"(\w+):\[([^\]]*)\]", l))
    stats["in_invalid"] += "work_invalid" in stack
    in_work = [f for f in stack if f in ("work_even", "work_odd", "wait_even", "wait_odd")]
    if "span_id" not in lab:
        stats["unlabelled"] += bool(in_work)
        stack = None
        continue
    stats["labelled"] += 1
    stats["invalid"] += "work_invalid" in stack
    t, r = int(lab["span_id"][:8], 16), int(lab["span_id"][8:], 16)
    stats["route"] += "http_route" in lab and lab["http_route"] != ("/odd" if r % 2 else "/even")
    stats["thread"] += tid_thread.get(lab.get("tid")) != t
    stats["trace"] += lab.get("trace_id") != "%016x%016x" % (t, r)
    stats["function"] += bool(in_work) and not in_work[0].endswith("_odd" if r % 2 else "_even")
    stack = None
print(*stats.values())
' "$2"
}

