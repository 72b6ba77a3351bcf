#!/usr/bin/env bash
# test_runtime_modes.sh -- interpreted frames in every mode and output: Debian 12's Node 20, Ruby 3.1,
# PHP 8.2 and Perl 5.36 in off-CPU mode (each main thread's blocked time under its waiting function,
# below its caller, split as the script measured) and in one CPU profile written as pprof, folded,
# top, the flame graph (read by Chromium) and OTLP (read by protoc's classes of the published proto):
# the runtime's names, one count in all, the hot function above the cold one; ~15 s, all in 2 runs
set -u
SUITE=runtime_modes
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
FDIR=$(cd "$HERE/../fixtures" && pwd)
FIX=$BUILD/fixtures	# the collector, for start_collector
SECS=${MODES_SECONDS:-2}	# wall seconds each off-CPU script blocks, counted from its gate
TOL=${MODES_TOLERANCE:-5}	# points between a waiter's share in the profile and the script's own
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; [ -n "${MODES_KEEP:-}" ] || rm -rf "$tmp"' EXIT

# wanted LIST V: whether a VERSIONS list ("3.1 3.4"; unset: every one) asks for V
wanted() { [ -z "$1" ] || [[ " $1 " == *" $2 "* ]]; }

# The runtimes: a tag each, its interpreter, and what each check expects of its frames.
# OFF_*: the off-CPU script, its two waiters (blocked 10 ms and 30 ms in turns), the function each
# blocks in as the profile names it, and the waiters' caller. CPU_*: the split script, its hot and
# its cold function.
declare -A RUN OFF_SCRIPT NAP LONG NAP_IN LONG_IN CALLER CPU_ARGS HOT COLD COMM
TAGS=()
add() { TAGS+=("$1"); RUN[$1]=$2; COMM[$1]=$3; }
if [ ! -x /usr/bin/ruby3.1 ]; then
	skip ruby3.1-offcpu "no /usr/bin/ruby3.1 (Debian 12's ruby3.1)"
	skip ruby3.1-outputs "no /usr/bin/ruby3.1 (Debian 12's ruby3.1)"
elif wanted "${RUBY_VERSIONS:-}" 3.1; then
	add ruby3.1 /usr/bin/ruby3.1 ruby3.1
	OFF_SCRIPT[ruby3.1]=block.rb NAP[ruby3.1]=Block#nap LONG[ruby3.1]=Block#poll
	NAP_IN[ruby3.1]=Kernel#sleep LONG_IN[ruby3.1]=IO.select CALLER[ruby3.1]=Block#run
	# the gate there already: split.rb runs at once
	CPU_ARGS[ruby3.1]="$FDIR/ruby/split.rb 60 $tmp/open.gate"
	HOT[ruby3.1]=Split#alpha COLD[ruby3.1]=Split#beta
fi
if [ ! -x /usr/bin/php8.2 ]; then
	skip php8.2-offcpu "no /usr/bin/php8.2 (Debian 12's php8.2-cli)"
	skip php8.2-outputs "no /usr/bin/php8.2 (Debian 12's php8.2-cli)"
else
	add php8.2 /usr/bin/php8.2 php8.2
	OFF_SCRIPT[php8.2]=block.php NAP[php8.2]=Block::nap LONG[php8.2]=linger
	NAP_IN[php8.2]=usleep LONG_IN[php8.2]=usleep CALLER[php8.2]="{main}"
	CPU_ARGS[php8.2]="$FDIR/php/split.php 120" HOT[php8.2]=Hot::alpha COLD[php8.2]=beta
fi
if [ "$(/usr/bin/perl -e 'printf "%vd", $^V' 2>/dev/null)" != 5.36.0 ]; then
	skip perl5.36-offcpu "/usr/bin/perl is not Debian 12's perl 5.36"
	skip perl5.36-outputs "/usr/bin/perl is not Debian 12's perl 5.36"
elif wanted "${PERL_VERSIONS:-}" 5.36; then
	add perl5.36 /usr/bin/perl perl
	# select(undef, undef, undef, t) is an op, not a sub: the waiting function is its native pp
	OFF_SCRIPT[perl5.36]=block.pl NAP[perl5.36]=Block::nap LONG[perl5.36]=Block::linger
	NAP_IN[perl5.36]=Perl_pp_sselect LONG_IN[perl5.36]=Perl_pp_sselect CALLER[perl5.36]="(main)"
	CPU_ARGS[perl5.36]="$FDIR/perl/split.pl 60"
	HOT[perl5.36]=Split::alpha COLD[perl5.36]=Split::beta
fi
if [ "$(/usr/bin/node --version 2>/dev/null | cut -d. -f1)" != v20 ]; then
	skip node20-offcpu "no /usr/bin/node of major 20 (Debian 12's nodejs)"
	skip node20-outputs "no /usr/bin/node of major 20 (Debian 12's nodejs)"
elif wanted "${NODE_VERSIONS:-}" debian; then
	add node20 /usr/bin/node node
	# Atomics.wait blocks the main thread with its JavaScript caller on the stack
	OFF_SCRIPT[node20]=block.js NAP[node20]=nap LONG[node20]=linger
	NAP_IN[node20]=v8::internal::Builtin_AtomicsWait
	LONG_IN[node20]=v8::internal::Builtin_AtomicsWait CALLER[node20]=run
	CPU_ARGS[node20]="$FDIR/node/split.js 60" HOT[node20]=alpha COLD[node20]=beta
fi
case $BUILD in
*/san)
	# the sanitizer pass's 30 s: one runtime (all four took 21 s there), the one whose walk has the
	# most native code around it
	for t in "${TAGS[@]}"; do
		[ "$t" = node20 ] && continue
		skip "$t-offcpu" "the sanitizer pass runs node20's cases only (its 30 s budget)"
		skip "$t-outputs" "the sanitizer pass runs node20's cases only (its 30 s budget)"
	done
	[[ " ${TAGS[*]} " == *" node20 "* ]] && TAGS=(node20) || TAGS=()
	;;
esac
if [ ${#TAGS[@]} = 0 ]; then
	skip all "none of ruby3.1, php8.2, perl 5.36 and Debian's node 20 is here and wanted"
	exit 0
fi

# --- off-CPU: the main thread blocked in two functions of the script's own ---

# offcpu_read TRACES PID NAP NAP_IN LONG LONG_IN CALLER: "ordered_nap all_nap ordered_long all_long"
# in ms of PID's main thread asleep: all_X under waiter X, ordered_X of it with X's waiting function
# nearer the leaf than X and X called by CALLER. pprof -traces blocks: labels, then the weight
# and the leaf, then its callers, root last.
offcpu_read() {
	python3 - "$@" <<'EOF'
import re, sys
traces, pid, nap, nap_in, long_, long_in, caller = sys.argv[1:]
unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
got = {nap: [0.0, 0.0], long_: [0.0, 0.0]}
wait_fn = {nap: nap_in, long_: long_in}

def flush(b):
    if not b["frames"] or b["labels"].get("pid") != pid or b["labels"].get("tid") != pid:
        return
    if b["labels"].get("state") != "sleeping":
        return
    f = b["frames"]
    for w in (nap, long_):
        if w not in f:
            continue
        i = f.index(w)
        got[w][1] += b["weight"]
        if wait_fn[w] in f[:i] and i + 1 < len(f) and f[i + 1] == caller:
            got[w][0] += b["weight"]

b = {"labels": {}, "frames": [], "weight": 0.0}
for line in open(traces):
    line = line.rstrip("\n")
    if line.startswith("-----"):
        flush(b)
        b = {"labels": {}, "frames": [], "weight": 0.0}
        continue
    if not b["frames"]:
        m = re.match(r"^\s*([a-z_]+):\s+(\S.*)$", line)
        if m:
            b["labels"][m.group(1)] = m.group(2).strip()
            continue
        m = re.match(r"^\s*([0-9.]+)(ns|us|ms|s)\s+(\S.*)$", line)
        if m:
            b["weight"] = float(m.group(1)) * unit[m.group(2)]
            b["frames"].append(m.group(3).strip())
        continue
    if line.strip():
        b["frames"].append(line.strip())
flush(b)
print("%.1f %.1f %.1f %.1f" % (got[nap][0], got[nap][1], got[long_][0], got[long_][1]))
EOF
}

offcpu_run() {
	local t pids="" prof want got on an ol al res n l order
	declare -A PID=()
	for t in "${TAGS[@]}"; do
		selected "$t-offcpu" || continue
		"${RUN[$t]}" "$FDIR/runtime_modes/${OFF_SCRIPT[$t]}" "$SECS" "$tmp/off.gate" \
			>"$tmp/$t-offcpu.out" 2>&1 &
		PID[$t]=$!
		pids=$pids${pids:+,}$!
	done
	[ -n "$pids" ] || return 0
	"$EBPFPROF" -v --mode off-cpu --per-thread --pid "$pids" --duration 120 \
		--output "$tmp/offcpu.pb.gz" 2>"$tmp/offcpu.err" &
	prof=$!
	wait_profiling "$tmp/offcpu.err" $prof 600
	touch "$tmp/off.gate"	# the scripts count from now, inside the profile
	# each prints what it measured, then holds still: the profile ends before any process does
	for _ in $(seq 600); do
		local done=1
		for t in "${!PID[@]}"; do
			[ -s "$tmp/$t-offcpu.out" ] || { kill -0 "${PID[$t]}" 2>/dev/null && done=0; }
		done
		[ $done = 1 ] && break
		sleep 0.1
	done
	kill -INT $prof 2>/dev/null
	wait $prof
	for t in "${!PID[@]}"; do stop "${PID[$t]}" 2>/dev/null; done
	go tool pprof -traces -symbolize=none -sample_index=off_cpu "$tmp/offcpu.pb.gz" \
		>"$tmp/offcpu.traces" 2>/dev/null
	for t in "${TAGS[@]}"; do
		[ -n "${PID[$t]:-}" ] || continue
		read -r _ n _ l <"$tmp/$t-offcpu.out" || true
		if ! [[ "${n:-}" =~ ^[0-9.]+$ && "${l:-}" =~ ^[0-9.]+$ ]]; then
			fail "$t-offcpu" "the script measured nothing: $(head -c 200 "$tmp/$t-offcpu.out")"
			continue
		fi
		want=$(awk -v a="$n" -v b="$l" 'BEGIN { printf "%.1f", 100 * a / (a + b) }')
		res=$(offcpu_read "$tmp/offcpu.traces" "${PID[$t]}" "${NAP[$t]}" "${NAP_IN[$t]}" \
			"${LONG[$t]}" "${LONG_IN[$t]}" "${CALLER[$t]}")
		read -r on an ol al <<<"$res"
		got=$(awk -v a="$on" -v b="$ol" 'BEGIN { if (a + b) printf "%.1f", 100 * a / (a + b) }')
		order="${NAP_IN[$t]} < ${NAP[$t]} < ${CALLER[$t]} in $on of $an ms, \
${LONG_IN[$t]} < ${LONG[$t]} < ${CALLER[$t]} in $ol of $al ms"
		# every sleeping ms under a waiter has its waiting function above it and its caller below
		if awk -v on="$on" -v an="$an" -v ol="$ol" -v al="$al" -v g="${got:-x}" -v w="$want" \
			-v tol="$TOL" 'BEGIN { d = g - w; exit !(an > 0 && al > 0 && on >= 0.99 * an &&
				ol >= 0.99 * al && g != "x" && d <= tol && -d <= tol) }'; then
			pass "$t-offcpu: ${NAP[$t]} ${got}% of the two waiters' blocked time \
(measured ${want}%); $order"
		else
			fail "$t-offcpu" "${NAP[$t]} ${got:-none}% of the two waiters' blocked time, \
measured ${want}% (tolerance $TOL); $order"
			# the main thread's stacks, so a miss can be placed from the log alone
			awk -v p="${PID[$t]}" '/^-----/ { if (b ~ ("tid:  " p "\n")) print b; b = ""; next }
				{ b = b $0 "\n" }' "$tmp/offcpu.traces" |
				grep -vE '^ +(__|schedule|do_|entry_|futex)' | head -40
		fi
	done
}

# --- one CPU profile, every output: the agent's first window of each process as pprof (converted
# to folded, top and html) and as OTLP; the runtime's hot and cold function in each, one count ---

# the counts each output gives of the hot and the cold function, one "output hot cold total" line
# each, all in samples; html's in percent of the total
outputs_read() {	# tag, window pprof, otlp json
	local t=$1 pb=$2 hot=${HOT[$1]} cold=${COLD[$1]}
	# go tool pprof: the independent reader of the pprof itself
	go tool pprof -top -nodecount=100000 -symbolize=none -sample_index=samples "$pb" 2>/dev/null |
		awk -v h="$hot" -v c="$cold" '
			/^Showing nodes accounting for/ { for (i = 1; i <= NF; i++) if ($i == "total") t = $(i - 1) }
			{ n = $6; for (i = 7; i <= NF; i++) n = n " " $i }
			n == h { hh = $4 } n == c { cc = $4 } END { print "pprof", hh + 0, cc + 0, t + 0 }'
	# folded: a function counts once in a stack that holds it, as pprof's cum does
	awk -v h="$hot" -v c="$cold" '
			{ n = $NF; $NF = ""; s = ";" substr($0, 1, length($0) - 1) ";"; t += n }
			index(s, ";" h ";") { hh += n }
			index(s, ";" c ";") { cc += n }
			END { print "folded", hh + 0, cc + 0, t + 0 }' "$tmp/$t.folded"
	# top: self self% total total% |bar| function
	awk -v h="$hot" -v c="$cold" '/^Showing top/ { t = $(NF - 1) }
			/\|/ { n = $0; sub(/^[^|]*\|[^|]*\| /, "", n) }
			/\|/ && n == h { hh = $3 }
			/\|/ && n == c { cc = $3 }
			END { print "top", hh + 0, cc + 0, t + 0 }' "$tmp/$t.top"
	# the page as Chromium left it, searched for the hot function: the share its search matched
	# (each stack once) and whether a frame of the graph carries its name
	awk -v h="$hot" '$1 == "share" { sub("%", "", $2); m = $2 } $1 == "frames" { f = $2 }
			END { print "html%", m + 0, f + 0, 100 }' "$tmp/$t.page"
	/usr/bin/python3 - "$3" "${COMM[$t]}" "$hot" "$cold" <<'EOF2'
import json, sys
path, svc, hot, cold = sys.argv[1:]
w = [json.loads(l) for l in open(path) if json.loads(l)["service"] == svc]
w.sort(key=lambda o: o["time"])
if w:
    i = w[0]["incl"]
    print("otlp", i.get(hot, 0), i.get(cold, 0), w[0]["total"])
EOF2
}

# Python classes of the published proto (protoc), and a reader of our export with them: per body,
# its service, window start, samples/count total and each function's inclusive count
otlp_decoder() {
	local inc
	inc=$(otlp_proto)
	OTLP_WHY="Debian's opentelemetry-proto $OTLP_PROTO_VERSION could not be fetched"
	[ -n "$inc" ] || return 1
	command -v protoc >/dev/null && /usr/bin/python3 -c 'import google.protobuf' 2>/dev/null ||
		{ OTLP_WHY="protoc or python3-protobuf missing (make deps-test)"; return 1; }
	mkdir -p "$tmp/otlp_py"
	OTLP_WHY="protoc could not compile the published proto"
	otlp_python "$inc" "$tmp/otlp_py" || return 1
	cat >"$tmp/otlp_read.py" <<'EOF2'
import json, sys
sys.path.insert(0, sys.argv[1])
from opentelemetry.proto.collector.profiles.v1development import profiles_service_pb2
for body in sys.argv[2:]:
    req = profiles_service_pb2.ExportProfilesServiceRequest()
    req.ParseFromString(open(body, "rb").read())
    d, s = req.dictionary, req.dictionary.string_table
    for rp in req.resource_profiles:
        attrs = {kv.key: kv.value.string_value for kv in rp.resource.attributes}
        for sp in rp.scope_profiles:
            for p in sp.profiles:
                t = p.sample_type
                if (s[t.type_strindex], s[t.unit_strindex]) != ("samples", "count"):
                    continue
                incl, total = {}, 0
                for smp in p.samples:
                    v = sum(smp.values)
                    total += v
                    names = set()
                    for li in d.stack_table[smp.stack_index].location_indices:
                        for ln in d.location_table[li].lines:
                            names.add(s[d.function_table[ln.function_index].name_strindex])
                    for n in names:
                        incl[n] = incl.get(n, 0) + v
                print(json.dumps({"service": attrs.get("service.name", ""), "total": total,
                                  "time": p.time_unix_nano, "incl": incl}))
EOF2
}

# chrome_page TAG: the page $tmp/TAG.html once Chromium ran its script, searched for TAG's hot
# function (?q=^NAME$): "share S%" its search matched, "frames N" frames of the graph named so
chrome_page() {
	local t=$1 dir q
	dir=$(mktemp -d "$tmp/chrome.XXXXXX")
	q=$(python3 -c 'import re, sys, urllib.parse as u; print(u.quote("^%s$" % re.escape(sys.argv[1])))' \
		"${HOT[$t]}")
	timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--window-size=1200,800 --user-data-dir="$dir" --dump-dom "file://$tmp/$t.html?q=$q" \
		2>/dev/null >"$tmp/$t.dom" || return 1
	echo "share $(python3 "$HERE/flame_check.py" attr "$tmp/$t.dom" matched data-share)"
	echo "frames $(grep -oF ">${HOT[$t]}</div>" "$tmp/$t.dom" | wc -l)"
}

outputs_run() {
	local t pids="" agent pb otlp=1 html=1 errs line a b n
	declare -A PID=()
	for t in "${TAGS[@]}"; do
		selected "$t-outputs" || continue
		# shellcheck disable=SC2086
		"${RUN[$t]}" ${CPU_ARGS[$t]} >"$tmp/$t-outputs.out" 2>&1 &
		PID[$t]=$!
		pids=$pids${pids:+,}$!
	done
	[ -n "$pids" ] || return 0
	touch "$tmp/open.gate"
	otlp_decoder || otlp=0
	command -v chromium >/dev/null || html=0
	mkdir -p "$tmp/win" "$tmp/otlp"
	if ! start_collector "$tmp/collector.log" -otlp-dir "$tmp/otlp"; then
		for t in "${!PID[@]}"; do fail "$t-outputs" "the collector did not start"; done
		return
	fi
	# one window of 3 s: each process's series written as pprof and exported as OTLP
	"$EBPFPROF" agent -v --interval 3 --frequency 199 --pid "$pids" --output-dir "$tmp/win" \
		--push-otlp "http://$COLLECTOR_ADDR" 2>"$tmp/agent.err" &
	agent=$!
	for _ in $(seq 600); do
		[ "$(find "$tmp/win" -name '*.pb.gz' | wc -l)" -ge ${#PID[@]} ] &&
			[ "$(find "$tmp/otlp" -name '*.bin' | wc -l)" -ge ${#PID[@]} ] && break
		kill -0 $agent 2>/dev/null || break
		sleep 0.1
	done
	stop $agent
	stop "$COLLECTOR_PID"
	for t in "${!PID[@]}"; do stop "${PID[$t]}" 2>/dev/null; done
	if [ $otlp = 1 ] && ! /usr/bin/python3 "$tmp/otlp_read.py" "$tmp/otlp_py" "$tmp"/otlp/*.bin \
		>"$tmp/otlp.json" 2>"$tmp/otlp.err"; then
		# not a skip: our export is what failed
		for t in "${!PID[@]}"; do fail "$t-outputs" "OTLP: $(tail -1 "$tmp/otlp.err")"; done
		return
	fi
	for t in "${TAGS[@]}"; do
		[ -n "${PID[$t]:-}" ] || continue
		# the first window of the process's series (files are SERVICE-START.pb.gz)
		pb=$(find "$tmp/win" -name "${COMM[$t]}-*.pb.gz" | sort | head -1)
		if [ -z "$pb" ]; then
			fail "$t-outputs" "no window written for ${COMM[$t]}: \
$(grep -v '^libbpf' "$tmp/agent.err" | tail -2 | tr '\n' '|')"
			continue
		fi
		if ! { "$EBPFPROF" convert "$pb" --format folded --output "$tmp/$t.folded" &&
			COLUMNS=400 "$EBPFPROF" convert "$pb" --format top --top 100000 --output "$tmp/$t.top" &&
			"$EBPFPROF" convert "$pb" --output "$tmp/$t.html"; } 2>"$tmp/$t.convert.err"; then
			fail "$t-outputs" "convert failed: $(tail -1 "$tmp/$t.convert.err")"
			continue
		fi
		if [ $html = 1 ]; then
			chrome_page "$t" >"$tmp/$t.page" || : >"$tmp/$t.page"
		else
			: >"$tmp/$t.page"
		fi
		[ $otlp = 1 ] || : >"$tmp/otlp.json"
		outputs_read "$t" "$pb" "$tmp/otlp.json" >"$tmp/$t.counts"
		errs=$(awk -v html=$html -v otlp=$otlp -v h="${HOT[$t]}" '
			{ o[$1] = 1; hh[$1] = $2; cc[$1] = $3; tt[$1] = $4 }
			END {
				p = "pprof"
				if (hh[p] < 20 || hh[p] <= cc[p] || cc[p] == 0)
					printf "go tool pprof: %s in %d of %d samples, the cold one in %d; ",
						h, hh[p], tt[p], cc[p]
				n = split("folded top" (otlp ? " otlp" : ""), k, " ")
				for (i = 1; i <= n; i++)
					if (!o[k[i]] || hh[k[i]] != hh[p] || cc[k[i]] != cc[p] || tt[k[i]] != tt[p])
						printf "%s: %s %d, cold %d of %d (go tool pprof: %d, %d of %d); ",
							k[i], h, hh[k[i]], cc[k[i]], tt[k[i]], hh[p], cc[p], tt[p]
				# the page shows two decimals
				ph = tt[p] ? 100 * hh[p] / tt[p] : 0
				d = hh["html%"] - ph
				if (html && (d > 0.006 || d < -0.006 || cc["html%"] < 1))
					printf "html (Chromium): search for %s matched %.2f%%, %d frames %s; ",
						h, hh["html%"], cc["html%"], "named (go tool pprof: " sprintf("%.2f%%)", ph)
			}' "$tmp/$t.counts")
		read -r _ a b n < <(grep '^pprof ' "$tmp/$t.counts")
		line="${HOT[$t]} in $a, ${COLD[$t]} in $b of $n samples in go tool pprof, folded, top"
		[ $html = 1 ] && line="$line, the flame graph in Chromium"
		[ $otlp = 1 ] && line="$line, OTLP"
		if [ -z "$errs" ]; then
			pass "$t-outputs: $line"
		else
			fail "$t-outputs" "$errs"
		fi
		[ $html = 1 ] || skip "$t-outputs-html" "chromium is not installed (make deps-test)"
		[ $otlp = 1 ] || skip "$t-outputs-otlp" "$OTLP_WHY"
	done
}

offcpu_run
outputs_run
