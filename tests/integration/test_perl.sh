#!/usr/bin/env bash
# test_perl.sh -- Perl subs named with no flags (the context stack walked in BPF): the CPU split of two subs within 5 points and their lines, an XS call in the middle of the stack in order, wall time, subs made at run time and freed, ithreads; Debian 12's 5.36 and Debian 13's 5.40 (chrooted), a perl 5.36 and a 5.40 each in a Docker container, one embedded through libperl.so, the agent, a version we do not know
set -u
SUITE=perl
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../lib/docker.sh"
PDIR=$(cd "$(dirname "$0")/../fixtures/perl" && pwd)
FREQ=${PERL_FREQUENCY:-299}
SECS=${PERL_SECONDS:-6}		# seconds of each profile: 3 left 5.40's split 6 points off in one run of eight
TOL=${PERL_TOLERANCE:-5}
PERL_VERSIONS=${PERL_VERSIONS:-"5.36 5.40"}
tmp=$(mktemp -d)
ROOT=
rootdir=
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; [ -n "$rootdir" ] && rm -rf "$rootdir"; rm -rf "$tmp"' EXIT

# perl_cmd VERSION: sets PCMD, the command that runs that perl, and PFDIR, the fixtures' directory it sees
# (5.36: the host's; 5.40: Debian 13's, chrooted in tests/lib/trixie_root.sh's root); false if there is none
perl_cmd() {
	case $1 in
	5.36)
		[ -x /usr/bin/perl ] && [ "$(/usr/bin/perl -e 'print $^V')" = v5.36.0 ] || return 1
		PCMD=/usr/bin/perl PFDIR=$PDIR ;;
	5.40)
		if [ -z "$ROOT" ]; then
			ROOT=$(bash "$(dirname "$0")/../lib/trixie_root.sh" 2>"$tmp/root.err" | tail -1) &&
				[ -x "$ROOT/usr/bin/perl" ] || { ROOT=; return 1; }
			rootdir=$(mktemp -d "$ROOT/tmp/ebpfprof-perl.XXXXXX") && cp "$PDIR"/*.pl "$rootdir/" ||
				return 1
		fi
		PCMD="chroot $ROOT /usr/bin/perl" PFDIR=/tmp/${rootdir##*/} ;;
	*) return 1 ;;
	esac
}

# start NAME CMD FIXTURE ARGS...: runs the fixture in the background; PID is the perl's (for chroot, its child's pid is its own: exec)
start() {
	local name=$1 cmd=$2
	shift 2
	# shellcheck disable=SC2086
	$cmd "$@" >"$tmp/$name.out" 2>&1 &
	PID=$!
	sleep 1	# past start-up
}

# profile NAME PID [options...]: profiles PID for SECS into $tmp/NAME.pb.gz (the process runs on)
profile() {
	local name=$1 pid=$2
	shift 2
	"$EBPFPROF" -v --pid "$pid" --frequency "$FREQ" --duration "$SECS" "$@" \
		--output "$tmp/$name.pb.gz" 2>"$tmp/$name.err"
}

# profile_window NAME PID: as profile, and the fixture counts its split from the profile's start
# (SIGUSR1 once ebpfprof says it is profiling) to its end, so both cover one window
profile_window() {
	local name=$1 pid=$2 prof
	"$EBPFPROF" -v --pid "$pid" --frequency "$FREQ" --duration "$SECS" \
		--output "$tmp/$name.pb.gz" 2>"$tmp/$name.err" &
	prof=$!
	wait_profiling "$tmp/$name.err" $prof 600
	kill -USR1 "$pid" 2>/dev/null
	wait $prof
}

stop() { kill -TERM "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

cum() { go tool pprof -top -cum -nodecount=200 "$1" 2>/dev/null | awk -v f="$2" '$6 == f { sub("%", "", $5); print $5; exit }'; }
within() { awk -v g="$1" -v w="$2" -v t="$TOL" 'BEGIN { d = g - w; exit !(d <= t && -d <= t) }'; }
# the line pprof -lines gives function FN's samples most often: "file:line"
hot_line() {
	go tool pprof -lines -top -nodecount=200 "$1" 2>/dev/null | awk -v f="$2" '$6 == f { print $7; exit }'
}
# the line of the fixture FILE holding marker M
marker_line() { grep -n "$2" "$PDIR/$1" | head -1 | cut -d: -f1; }
# every Perl frame named: the -v line of the profile NAME
all_named() { grep -q '^ebpfprof: perl: processes_total=1 .* frames_unnamed_total=0 ' "$tmp/$1.err"; }

# split NAME CMD DIR: alpha's share of alpha and beta against the program's own, within TOL points, every frame named,
# each sub's samples on its loop's line
split_check() {
	local name=$1 cmd=$2 dir=$3 a b wa line want msg ok=1
	start "$name" "$cmd" "$dir/split.pl" 60
	profile_window "$name" "$PID"
	stop "$PID"
	a=$(cum "$tmp/$name.pb.gz" Split::alpha)
	b=$(cum "$tmp/$name.pb.gz" Split::beta)
	read -r _ wa _ < <(grep '^alpha ' "$tmp/$name.out") || true
	if [ -z "$a" ] || [ -z "$b" ] || [ -z "${wa:-}" ]; then
		fail "$name" "alpha ${a:-unnamed}, beta ${b:-unnamed}, measured '$(head -c 200 "$tmp/$name.out")'"
		return
	fi
	a=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", 100 * a / (a + b) }')
	msg="Split::alpha $a% (measured $wa%)"
	within "$a" "$wa" || ok=0
	all_named "$name" || { ok=0; msg="$msg; $(grep '^ebpfprof: perl:' "$tmp/$name.err" | grep -o 'frames_unnamed_total=[0-9]*')"; }
	for f in alpha beta; do
		line=$(hot_line "$tmp/$name.pb.gz" "Split::$f")
		want="split.pl:$(marker_line split.pl "${f^^}_LOOP")"
		[ "${line##*/}" = "$want" ] || ok=0
		msg="$msg; Split::$f at ${line##*/} (want $want)"
	done
	[ $ok = 1 ] && pass "$name: $msg" || fail "$name" "$msg"
}

# the Perl and XS frames of each stack holding Xs::inner, leaf first, as one line each
xs_orders() {
	go tool pprof -traces "$1" 2>/dev/null | awk '
		function flush() { if (has) print seq; seq = ""; has = 0; first = 0 }
		/^-+\+/ { flush(); next }
		$1 ~ /:$/ { next }
		{ f = first ? $1 : $2; first = 1 }
		f == "Xs::inner" { has = 1 }
		f ~ /^Xs::|^\(main\)$|Util/ { seq = seq (seq == "" ? "" : " ") f }
		END { flush() }'
}

# xs NAME CMD DIR: Xs::outer calls List::Util::first (XS), whose block calls Xs::inner: every stack through inner
# holds them in that order, the XS frame (Util.so, stripped: named by its file) between the Perl ones
xs_check() {
	local name=$1 cmd=$2 dir=$3 want="Xs::inner Xs::__ANON__ [Util.so] Xs::outer (main)" n bad
	start "$name" "$cmd" "$dir/xs.pl" 60
	profile "$name" "$PID"
	stop "$PID"
	xs_orders "$tmp/$name.pb.gz" >"$tmp/$name.orders"
	n=$(wc -l <"$tmp/$name.orders")
	bad=$(grep -vcxF "$want" "$tmp/$name.orders")
	if [ "$n" -gt 0 ] && [ "$bad" = 0 ] && all_named "$name"; then
		pass "$name: $n stacks through Xs::inner, each $want"
	else
		fail "$name" "$bad of $n stacks through Xs::inner not '$want': $(grep -vxF "$want" "$tmp/$name.orders" | sort | uniq -c | sort -rn | head -2 | tr -s ' \n' ' ')"
	fi
}

# reuse NAME CMD DIR: subs made by string eval, each run about 3 ms and freed, the next in their memory: every
# frame named by its own eval's file and line (the program says which line each eval's loop is on), the rest counted
reuse_check() {
	local name=$1 cmd=$2 dir=$3 res named unnamed shown
	start "$name" "$cmd" "$dir/reuse.pl" 60
	profile "$name" "$PID"
	stop "$PID"
	# "frames wrong": each main::__ANON__ (eval N):L against the line the program gave (eval N)
	res=$(go tool pprof -traces -lines "$tmp/$name.pb.gz" 2>/dev/null |
		grep -o 'main::__ANON__ (eval [0-9]*):[0-9]*' | awk '
		NR == FNR { m["(eval " $2 ")"] = $3; next }
		{ match($0, /\(eval [0-9]+\)/); f = substr($0, RSTART, RLENGTH); n++
		  if (m[f] != substr($0, RSTART + RLENGTH + 1)) bad++ }
		END { print n + 0, bad + 0 }' <(sed 's/)//' "$tmp/$name.out") -)
	named=$(grep '^ebpfprof: perl:' "$tmp/$name.err" | grep -o 'frames_named_total=[0-9]*' | cut -d= -f2)
	unnamed=$(grep '^ebpfprof: perl:' "$tmp/$name.err" | grep -o 'frames_unnamed_total=[0-9]*' | cut -d= -f2)
	# a sub freed before userspace read it stays unnamed (how many depends on the machine's load): counted
	shown=$(go tool pprof -traces "$tmp/$name.pb.gz" 2>/dev/null | grep -c 'unknown perl sub')
	if [ "${res% *}" -gt 0 ] && [ "${res#* }" = 0 ] && { [ "$shown" = 0 ] || [ "${unnamed:-0}" -gt 0 ]; }; then
		pass "$name: ${res% *} frames of subs freed since, each on its own eval's line; $unnamed unnamed of $((named + unnamed)), counted"
	else
		fail "$name" "${res#* } of ${res% *} frames on another eval's line; ${unnamed:-?} unnamed counted, $shown shown"
	fi
}

# the threads (tids) whose stacks hold FN, from a --per-thread profile, separated by spaces
tids_of() {
	go tool pprof -traces "$1" 2>/dev/null | awk -v fn="$2" '
		function flush() { if (has) seen[t] = 1; t = ""; has = 0; first = 0 }
		/^-+\+/ { flush(); next }
		$1 == "tid:" { t = $2; next }
		$1 ~ /:$/ { next }
		{ f = first ? $1 : $2; first = 1; if (f == fn) has = 1 }
		END { flush(); for (k in seen) printf "%s ", k }'
}

# threads NAME CMD DIR: two ithreads, each with its own interpreter (found through its TLS), each sub named in its
# own thread only, none the main thread, no frame lost
threads_check() {
	local name=$1 cmd=$2 dir=$3 l r
	start "$name" "$cmd" "$dir/threads.pl" 60
	profile "$name" "$PID" --per-thread
	stop "$PID"
	l=$(tids_of "$tmp/$name.pb.gz" Thr::left)
	r=$(tids_of "$tmp/$name.pb.gz" Thr::right)
	if [ -n "$l" ] && [ -n "$r" ] && [ "$(wc -w <<<"$l")" = 1 ] && [ "$(wc -w <<<"$r")" = 1 ] &&
		[ "$l" != "$r" ] && [ "${l% }" != "$PID" ] && [ "${r% }" != "$PID" ] && all_named "$name" &&
		grep -q '^ebpfprof: perl: .* frames_lost_thread_total=0 ' "$tmp/$name.err"; then
		pass "$name: Thr::left in thread ${l% } only, Thr::right in thread ${r% } only (process $PID)"
	else
		fail "$name" "Thr::left in threads '${l:-none}', Thr::right in '${r:-none}' (process $PID); $(grep -o 'frames_lost_thread_total=[0-9]*' "$tmp/$name.err")"
	fi
}

# deep NAME CMD DIR: 41 nested subs in one runops call, past its bound of 32 contexts: the innermost 32 named, then
# the walk's mark, counted
deep_check() {
	local name=$1 cmd=$2 dir=$3 shown counted named
	start "$name" "$cmd" "$dir/deep.pl" 60
	profile "$name" "$PID"
	stop "$PID"
	# per stack through Deep::spin: how many Deep:: frames before the mark
	shown=$(go tool pprof -traces "$tmp/$name.pb.gz" 2>/dev/null | awk '
		function flush() { if (spin) print n, mark; n = 0; mark = 0; spin = 0; first = 0 }
		/^-+\+/ { flush(); next }
		$1 ~ /:$/ { next }
		{ f = first ? $0 : substr($0, index($0, $2)); first = 1; sub(/^ +/, "", f)
		  if (f ~ /^Deep::/ && !mark) n++; if (f == "Deep::spin") spin = 1
		  if (f == "[perl frames lost: too deep]") mark = 1 }
		END { flush() }' | sort | uniq -c | sort -rn)
	counted=$(grep '^ebpfprof: perl:' "$tmp/$name.err" | grep -o 'frames_lost_depth_total=[0-9]*' | cut -d= -f2)
	# the 32 contexts: Deep::spin, its foreach loop, and 30 Deep::down
	# (entering spin, before its loop: 32 Deep:: frames)
	if [ -n "$shown" ] && awk '!($2 == 31 || $2 == 32) || $3 != 1 { exit 1 }' <<<"$shown" &&
		[ "${counted:-0}" -gt 0 ]; then
		pass "$name: every stack through Deep::spin has 31 or 32 Deep:: frames then [perl frames lost: too deep] ($(head -1 <<<"$shown" | awk '{ print $1 " stacks " $2 }') the most), $counted counted"
	else
		fail "$name" "stacks: '$(head -3 <<<"$shown" | tr -s ' \n' ' ')' (count, Deep:: frames, mark); counted ${counted:-none}"
	fi
}

# thread_share FILE TID FN: the percent of thread TID's wall time with FN on the stack
thread_share() {
	go tool pprof -traces "$1" 2>/dev/null | awk -v tid="$2" -v fn="$3" '
		function ms(w) { return w ~ /ms$/ ? w + 0 : w ~ /us$/ ? w / 1000 : w ~ /s$/ ? w * 1000 : w + 0 }
		function flush() { if (t == tid) { all += wt; if (has) hit += wt } t = ""; wt = 0; has = 0; first = 0 }
		/^-+\+/ { flush(); next }
		$1 == "tid:" { t = $2; next }
		$1 ~ /:$/ { next }
		!first && NF >= 2 { wt = ms($1); first = 1; if ($2 == fn) has = 1; next }
		first && $1 == fn { has = 1 }
		END { flush(); if (all) printf "%.1f\n", 100 * hit / all }'
}

# wall NAME CMD DIR: the share of wall time under Wall::compute against the program's own clock, the rest in Wall::rest
wall_check() {
	local name=$1 cmd=$2 dir=$3 c r want
	start "$name" "$cmd" "$dir/wall.pl" 60
	profile "$name" "$PID" --mode wall --per-thread
	stop "$PID"
	c=$(thread_share "$tmp/$name.pb.gz" "$PID" Wall::compute)
	r=$(thread_share "$tmp/$name.pb.gz" "$PID" Wall::rest)
	read -r _ want < <(grep '^compute ' "$tmp/$name.out") || true
	if [ -n "$c" ] && [ -n "$r" ] && [ -n "${want:-}" ] && within "$c" "$want" &&
		within "$r" "$(awk -v w="$want" 'BEGIN { print 100 - w }')"; then
		pass "$name: Wall::compute $c% of the wall time (measured $want%), Wall::rest $r%"
	else
		fail "$name" "Wall::compute ${c:-unnamed}%, Wall::rest ${r:-unnamed}% of the wall time, measured ${want:-nothing}%"
	fi
}

# NAME ROOT VERSION: a perl in its own pid and mount namespaces, taken from ROOT (the host's tree for
# 5.36, Debian 13's for 5.40), its script on a volume only it sees
container_check() {
	local name=$1 root=$2 v=$3 img=ebpfprof-perl-test pid a
	case $BUILD in */san) skip "$name" "containers run in the plain pass only, as tests/containers do"; return ;; esac
	docker_up || { skip "$name" "$DOCKER_WHY"; return; }
	docker rm -f $img >/dev/null 2>&1
	# the interpreter, its libraries, and the modules split.pl loads (strict, warnings, Time::HiRes): 30 MB
	docker_image_from $img "$root" /usr/bin/perl usr/lib/x86_64-linux-gnu/perl-base \
		"usr/lib/x86_64-linux-gnu/perl/$v" &&
		docker run -d --name $img -v "$PDIR:/mnt:ro" $img /usr/bin/perl /mnt/split.pl 60 >/dev/null &&
		pid=$(docker inspect -f '{{.State.Pid}}' $img)
	if [ -z "${pid:-}" ] || [ "$pid" = 0 ]; then
		fail "$name" "the container did not start: $(docker logs $img 2>&1 | head -c 200)"
	else
		sleep 1	# past start-up
		profile "$name" "$pid"
		a=$(hot_line "$tmp/$name.pb.gz" Split::alpha)
		if [ "$a" = "/mnt/split.pl:$(marker_line split.pl ALPHA_LOOP)" ] && all_named "$name"; then
			pass "$name: Split::alpha at $a, named in a Docker container from the host"
		else
			fail "$name" "Split::alpha at ${a:-unnamed}; $(grep 'perl:' "$tmp/$name.err")"
		fi
	fi
	docker rm -f $img >/dev/null 2>&1
	docker image rm -f $img >/dev/null 2>&1
	docker_down
}

# a perl whose PL_version we do not know (a copy of 5.36 with the byte changed): native frames only, said once
unknown_check() {
	local name=$1 pl=$tmp/perl-unknown off
	cp /usr/bin/perl "$pl" || return
	off=$(python3 - "$pl" <<'PY'
import struct, subprocess, sys
f = sys.argv[1]
sym = [l.split() for l in subprocess.run(["nm", "-D", "--defined-only", f], capture_output=True,
       text=True).stdout.splitlines() if l.endswith(" PL_version")]
addr = int(sym[0][0], 16)
for l in subprocess.run(["readelf", "-lW", f], capture_output=True, text=True).stdout.splitlines():
    w = l.split()
    if w and w[0] == "LOAD" and int(w[2], 16) <= addr < int(w[2], 16) + int(w[4], 16):
        print(addr - int(w[2], 16) + int(w[1], 16))
PY
)
	[ -n "$off" ] && printf '\x63' | dd of="$pl" bs=1 seek="$off" conv=notrunc status=none ||
		{ skip "$name" "could not patch a copy of /usr/bin/perl"; return; }
	start "$name" "$pl" "$PDIR/split.pl" 60
	profile "$name" "$PID"
	stop "$PID"
	if grep -q '^ebpfprof: perl: processes_total=0 unknown_versions_total=1 ' "$tmp/$name.err" &&
		[ "$(grep -c 'a perl of a version we do not know' "$tmp/$name.err")" = 1 ] &&
		[ -z "$(cum "$tmp/$name.pb.gz" Split::alpha)" ] && [ -n "$(cum "$tmp/$name.pb.gz" Perl_runops_standard)" ]; then
		pass "$name: perl 5.99 kept native (Perl_runops_standard), said once"
	else
		fail "$name" "$(grep -E 'perl:|do not know' "$tmp/$name.err" | head -3 | tr '\n' ' ')"
	fi
}

# the agent: a perl started after it, named by the pull endpoint (a 2 s profile) and counted in /metrics; the same
# process's one-shot folded output
agent_check() {
	local name=$1 port pid agent named try
	"$EBPFPROF" agent --listen 127.0.0.1:0 --frequency 99 2>"$tmp/$name.err" &
	agent=$!
	port=$(wait_port "$tmp/$name.err") || { fail "$name" "agent did not listen"; stop $agent; return; }
	/usr/bin/perl "$PDIR/split.pl" 30 >/dev/null 2>&1 &
	pid=$!
	# a process starting on a busy machine may miss the first window: up to three 2 s pulls
	for try in 1 2 3; do
		sleep 1
		go tool pprof -top "http://127.0.0.1:$port/debug/pprof/profile?seconds=2&pid=$pid" \
			>"$tmp/$name.top" 2>/dev/null
		awk '$6 == "Split::alpha" { a = 1 } $6 == "Split::beta" { b = 1 } END { exit !(a && b) }' \
			"$tmp/$name.top" && break
	done
	curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/$name.metrics"
	stop $agent
	"$EBPFPROF" --pid "$pid" --duration 1 --format folded --output "$tmp/$name.folded" 2>/dev/null
	stop "$pid"
	named=$(sed -n 's/^ebpfprof_perl_frames_named_total \([0-9]*\)$/\1/p' "$tmp/$name.metrics")
	if awk '$6 == "Split::alpha" { a = 1 } $6 == "Split::beta" { b = 1 } END { exit !(a && b) }' "$tmp/$name.top" &&
		[ "${named:-0}" -gt 0 ] && grep -Eq '^ebpfprof_perl_processes_total [1-9]' "$tmp/$name.metrics" &&
		grep -q '^# HELP ebpfprof_perl_unknown_versions_total ' "$tmp/$name.metrics" &&
		grep -q ';(main);main::timed;Split::alpha;' "$tmp/$name.folded"; then
		pass "$name: Split::alpha and Split::beta named by the pull endpoint, $named frames named in /metrics, folded (main);main::timed;Split::alpha"
	else
		fail "$name" "pull: $(grep -cE ' Split::(alpha|beta)$' "$tmp/$name.top") of alpha, beta; frames named: ${named:-none}; folded: $(grep -c 'Split::alpha' "$tmp/$name.folded" 2>/dev/null)"
	fi
}

version_checks() {	# v: every check of one perl
	local v=$1 t=perl$1
	selected "$t-split" "$t-xs" "$t-wall" "$t-reuse" "$t-threads" "$t-deep" || return 0
	if ! perl_cmd "$v"; then
		skip "$t-split" "no perl $v (the host's 5.36, or tests/lib/trixie_root.sh's: $(tail -1 "$tmp/root.err" 2>/dev/null))"
		return 0
	fi
	selected "$t-split" && split_check "$t-split" "$PCMD" "$PFDIR"
	selected "$t-xs" && xs_check "$t-xs" "$PCMD" "$PFDIR"
	selected "$t-wall" && wall_check "$t-wall" "$PCMD" "$PFDIR"
	selected "$t-reuse" && reuse_check "$t-reuse" "$PCMD" "$PFDIR"
	selected "$t-threads" && threads_check "$t-threads" "$PCMD" "$PFDIR"
	selected "$t-deep" && deep_check "$t-deep" "$PCMD" "$PFDIR"
	return 0
}

# each perl readied here, not in the subshells each_version runs: the root's copy of the scripts
# is made once, and removed at exit
for v in $PERL_VERSIONS; do perl_cmd "$v" || true; done
each_version version_checks $PERL_VERSIONS

if selected perl5.36-container; then
	if [ -x /usr/bin/perl ] && [ -d /usr/lib/x86_64-linux-gnu/perl/5.36 ]; then
		container_check perl5.36-container / 5.36
	else
		skip perl5.36-container "no perl 5.36 on the host"
	fi
fi
if selected perl5.40-container; then
	if perl_cmd 5.40; then
		container_check perl5.40-container "$ROOT" 5.40
	else
		skip perl5.40-container "no perl 5.40 root"
	fi
fi
# a program embedding libperl.so (perl in a library, not the executable): the main thread's interpreter
if selected perl5.36-libperl; then
	if [ -x "$BUILD/fixtures/embedperl" ]; then
		split_check perl5.36-libperl "$BUILD/fixtures/embedperl" "$PDIR"
	else
		skip perl5.36-libperl "no $BUILD/fixtures/embedperl (tests/fixtures/perl.mk)"
	fi
fi
selected perl5.36-agent && agent_check perl5.36-agent
selected perl-unknown && unknown_check perl-unknown
exit 0
