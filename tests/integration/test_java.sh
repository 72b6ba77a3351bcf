#!/usr/bin/env bash
# test_java.sh -- HotSpot frames walked in BPF with no JVM flags: CPU split of two methods within 5 points, named and whole stacks, lines, a C2 inline frame, -Xint, wall time in Thread.sleep, a JVM in another mount namespace, a JVM a shell execs, the agent
set -u
SUITE=java
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../lib/pprof_traces.sh"	# java_thread_shares
JDIR=$(cd "$(dirname "$0")/../fixtures/java" && pwd)
FREQ=${JAVA_FREQUENCY:-199}
SECS=${JAVA_SECONDS:-3}		# CPU seconds of each split run
WARM=${JAVA_WARMUP:-1.5}	# CPU seconds of JIT warm-up before the profile starts
TOL=${JAVA_TOLERANCE:-5}
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; umount -l "$tmp/ns" 2>/dev/null; rm -rf "$tmp"' EXIT

# every HotSpot JDK under /usr/lib/jvm, once each (Debian adds alias links)
jdks=()
declare -A seen
for d in /usr/lib/jvm/*/; do
	r=$(readlink -f "$d")
	[ -x "$r/bin/javac" ] && [ -e "$r/lib/server/libjvm.so" ] && [ -z "${seen[$r]:-}" ] || continue
	seen[$r]=1
	jdks+=("$r")
done

# Debian 12 packages OpenJDK 17 only: OpenJDK 11 (HotSpot's layout before JDK 15) comes from
# bullseye's packages, unpacked once under a cache outside the tree, not installed
JDK_CACHE=${JDK_CACHE:-/var/cache/ebpfprof/jdk}
jdk11() {
	local root=$JDK_CACHE/11 j l
	j=$root/usr/lib/jvm/java-11-openjdk-amd64
	if [ ! -x "$j/bin/javac" ]; then
		APT_DIR=$JDK_CACHE/apt
		. "$(dirname "$0")/../lib/debian_apt.sh"
		apt_update >/dev/null 2>&1 &&
			apt_download "$JDK_CACHE/debs" openjdk-11-jre-headless/bullseye \
				openjdk-11-jdk-headless/bullseye 2>/dev/null || return 1
		rm -rf "$root" && mkdir -p "$root" || return 1
		for l in "$JDK_CACHE"/debs/openjdk-11-*.deb; do dpkg-deb -x "$l" "$root" || return 1; done
		rm -f "$JDK_CACHE"/debs/openjdk-11-*.deb
		# its conf links point into /etc/java-11-openjdk: to the unpacked copy instead
		find "$j" -type l -lname '/etc/*' | while read -r l; do ln -sfn "$root$(readlink "$l")" "$l"; done
	fi
	[ -x "$j/bin/javac" ] && echo "$j"
}
old_jdks=()	# the split, inline and -Xint checks; the others run on the machine's own JDKs
if j11=$(jdk11); then
	[ -n "${seen[$j11]:-}" ] || old_jdks=("$j11")
else
	skip jdk11 "OpenJDK 11 could not be fetched from Debian bullseye into $JDK_CACHE"
fi
[ ${#jdks[@]} -gt 0 ] || { skip all "no JDK with javac under /usr/lib/jvm"; exit 0; }

tag() { basename "$1"; }

# classes JDK: Split.java compiled by that JDK at test time
classes() {
	local out="$tmp/classes-$(tag "$1")"
	[ -e "$out/Split.class" ] || "$1/bin/javac" -d "$out" "$JDIR/Split.java" >"$tmp/javac.log" 2>&1
	echo "$out"
}

start_profile() {	# name, options...: attaches, then opens $tmp/NAME.gate
	local name=$1; shift
	"$EBPFPROF" "$@" --frequency "$FREQ" --duration 120 --output "$tmp/$name.pb.gz" \
		2>"$tmp/$name.err" &
	PROF=$!
	wait_profiling "$tmp/$name.err" $PROF 300
	touch "$tmp/$name.gate"
}
stop_profile() { kill -INT "$PROF" 2>/dev/null; wait "$PROF"; }

cum() { pprof_top "$1" | awk -v f="$2" '$6 == f { sub("%", "", $5); print $5; exit }'; }
within() { awk -v g="$1" -v w="$2" -v t="$TOL" 'BEGIN { d = g - w; exit !(d <= t && -d <= t) }'; }

# the first line pprof reports for FN in profile $1, by flat samples
hot_line() {
	go tool pprof -top -lines -nodecount=500 -symbolize=none "$1" 2>/dev/null |
		awk -v f="$2" '$6 == f { print $7; exit }'
}

# split_check JDK NAME [JVM OPTIONS]: the alpha/beta split, named and whole stacks, hot lines
split_check() {
	local jdk=$1 name=$2 cls a b want got n c t why warm=$WARM
	shift 2
	local cases=("$name" "$name split" "$name named and whole" "$name lines")
	[[ " $* " == *" -Xint "* ]] || cases+=("$name inline")	# inline_check reads this run's profile
	selected "${cases[@]}" || return 0
	cls=$(classes "$jdk")
	[[ " $* " == *" -Xint "* ]] && warm=0
	"$jdk/bin/java" "$@" -cp "$cls" Split split "$SECS" "$tmp/$name.gate" "$warm" \
		>"$tmp/$name.out" 2>&1 &
	local pid=$!
	# the JVM runs its warm-up meanwhile; the gate opens once the profile is attached
	start_profile "$name" --pid "$pid" -v	# -v: the Java reader's counts, shown on a failure
	wait "$pid"
	stop_profile
	read -r _ a _ b <"$tmp/$name.out"
	a=${a:-0}; b=${b:-0}
	want=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a + b) printf "%.1f", 100 * a / (a + b) }')
	a=$(cum "$tmp/$name.pb.gz" Split.alpha)
	b=$(cum "$tmp/$name.pb.gz" Split.beta)
	if [ -z "$a" ] || [ -z "$b" ] || [ -z "$want" ]; then
		fail "$name" "alpha or beta missing: $(pprof_top "$tmp/$name.pb.gz" | head -14 | tr '\n' '|') $(grep -m1 '^ebpfprof: java:' "$tmp/$name.err")"
		return
	fi
	got=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", 100 * a / (a + b) }')
	if within "$got" "$want"; then
		pass "$name split: profile $got% alpha, measured $want%"
	else
		fail "$name split" "profile $got% alpha, measured $want% (tolerance $TOL points)"
	fi
	read -r n c t < <(java_thread_shares "$tmp/$name.pb.gz")
	if [ "$t" -gt 0 ] && [ $((n * 100)) -ge $((t * 90)) ] && [ $((c * 100)) -ge $((t * 95)) ]; then
		pass "$name named and whole: of $t ms of the main thread $n carry a Split frame, $c reach the thread's start"
	else
		# where the cut stacks end, and the reader's counts: what a failure in CI can show
		why=$(cut_trace "$tmp/$name.pb.gz"; grep -m2 '^ebpfprof: \(java\|sampler\):' "$tmp/$name.err")
		fail "$name named and whole" "of $t ms of the main thread $n carry a Split frame (>= 90%),\
 $c reach the thread's start (>= 95%); heaviest cut: $(echo $why)"
	fi
	local l want_l bad=""
	for fn in beta mix; do
		want_l="Split.java:$(grep -n "HOT $fn" "$JDIR/Split.java" | cut -d: -f1)"
		l=$(hot_line "$tmp/$name.pb.gz" "Split.$fn")
		[ "$l" = "$want_l" ] || bad="$bad Split.$fn hottest at '$l', not $want_l;"
	done
	if [ -z "$bad" ]; then
		pass "$name lines: the hottest lines of Split.beta and Split.mix are their loop bodies"
	else
		fail "$name lines" "$bad"
	fi
}

# inline_check NAME: a Location whose Lines are Split.mix inlined into Split.alpha (C2)
inline_check() {
	local name=$1
	selected "$name inline" || return 0
	if go tool pprof -raw -symbolize=none "$tmp/$name.pb.gz" 2>/dev/null | awk '
		/^ *[0-9]+: 0x/ { prev = ($0 ~ / Split\.mix /); next }
		prev && / Split\.alpha / { found = 1 } { prev = 0 } END { exit !found }'; then
		pass "$name inline: Split.mix inlined by C2 is a Line of its own under Split.alpha"
	else
		fail "$name inline" "no Location with Split.mix inlined into Split.alpha"
	fi
}

# wall JDK: Split.compute against Split.doze (Thread.sleep) in wall time, against the program's clock
wall_check() {
	local jdk=$1 name pc pd want got c d
	name="$(tag "$jdk")-wall"
	selected "$name" || return 0
	"$jdk/bin/java" -cp "$(classes "$jdk")" Split wall "$SECS" "$tmp/$name.gate" \
		>"$tmp/$name.out" 2>&1 &
	local pid=$!
	start_profile "$name" --mode wall --pid "$pid"
	wait "$pid"
	stop_profile
	read -r _ c _ d <"$tmp/$name.out"
	pc=$(cum "$tmp/$name.pb.gz" Split.compute)
	pd=$(cum "$tmp/$name.pb.gz" Split.doze)
	if [ -z "$pc" ] || [ -z "$pd" ] || [ -z "${d:-}" ]; then
		fail "$name" "compute or doze missing: $(pprof_top "$tmp/$name.pb.gz" | head -14 | tr '\n' '|')"
		return
	fi
	want=$(awk -v c="$c" -v d="$d" 'BEGIN { printf "%.1f", 100 * d / (c + d) }')
	got=$(awk -v c="$pc" -v d="$pd" 'BEGIN { printf "%.1f", 100 * d / (c + d) }')
	if within "$got" "$want"; then
		pass "$name: Split.doze (Thread.sleep) $got% of the main thread's wall time, measured $want%"
	else
		fail "$name" "Split.doze $got% of the wall time, measured $want% (tolerance $TOL points)"
	fi
}

# a JVM whose files exist only in its own mount namespace (a container's view)
container_check() {
	local jdk=$1 name n c t
	name="$(tag "$jdk")-mntns"
	selected "$name" || return 0
	mkdir -p "$tmp/ns"
	cp -r "$(classes "$jdk")" "$tmp/ns-classes"
	unshare --mount --propagation private sh -c '
		mount -t tmpfs none "$1" && mkdir "$1/jdk" "$1/cls" &&
		mount --bind "$2" "$1/jdk" && mount --bind "$3" "$1/cls" &&
		exec "$1/jdk/bin/java" -cp "$1/cls" Split split "$4" "$5" "$6"' \
		sh "$tmp/ns" "$jdk" "$tmp/ns-classes" "$SECS" "$tmp/$name.gate" "$WARM" \
		>"$tmp/$name.out" 2>&1 &
	local pid=$!
	sleep 0.5
	# -v: a failure shows the profiler's own count of JVMs walked, looks too early and lost frames
	start_profile "$name" -v --pid "$pid"
	wait "$pid"
	stop_profile
	read -r n c t < <(java_thread_shares "$tmp/$name.pb.gz")
	if [ "$t" -gt 0 ] && [ $((n * 100)) -ge $((t * 90)) ] && [ ! -e "$tmp/ns/jdk/bin/java" ]; then
		pass "$name: a JVM in its own mount namespace: $n of $t ms of its main thread named"
	else
		fail "$name" "$n of $t ms of the main thread named: $(head -3 "$tmp/$name.out" | tr '\n' '|')$(
			grep -E 'java:|error|warning' "$tmp/$name.err" | head -5 | tr '\n' '|')"
	fi
}

# the agent's pull endpoint names Java frames; /metrics counts them
# exec_check JDK: a shell that execs the JVM once the profile runs (a launcher script's way): the
# same process, a new image: its Java frames named
exec_check() {
	local jdk=$1 name a b n c t
	name="$(tag "$jdk")-exec"
	selected "$name" || return 0
	sh -c 'while [ ! -e "$3" ]; do sleep 0.05; done; exec "$0" -cp "$1" Split split "$2" "$3" 0.5' \
		"$jdk/bin/java" "$(classes "$jdk")" "$SECS" "$tmp/$name.gate" >"$tmp/$name.out" 2>&1 &
	local pid=$!
	start_profile "$name" --pid "$pid" -v
	wait "$pid"
	stop_profile
	a=$(cum "$tmp/$name.pb.gz" Split.alpha)
	b=$(cum "$tmp/$name.pb.gz" Split.beta)
	read -r n c t < <(java_thread_shares "$tmp/$name.pb.gz")
	if [ -n "$a" ] && [ -n "$b" ] && [ "$t" -gt 0 ] && [ $((n * 100)) -ge $((t * 90)) ]; then
		pass "$name: Split.alpha and Split.beta named; of $t ms of the main thread $n carry a Split frame"
	else
		fail "$name" "alpha '$a', beta '$b'; of ${t:-0} ms of the main thread ${n:-0} carry a Split frame (>= 90%) $(grep -m1 '^ebpfprof: java:' "$tmp/$name.err")"
	fi
}

agent_check() {
	local jdk=$1 name port a b named
	name="$(tag "$jdk")-agent"
	selected "$name" || return 0
	"$EBPFPROF" agent --listen 127.0.0.1:0 --frequency 99 2>"$tmp/$name.err" &
	local agent=$!
	port=$(wait_port "$tmp/$name.err") || { fail "$name" "agent did not listen"; stop $agent; return; }
	touch "$tmp/$name.gate"
	"$jdk/bin/java" -cp "$(classes "$jdk")" Split split 4 "$tmp/$name.gate" 0.5 >/dev/null 2>&1 &
	local pid=$! try
	# a JVM starting on a busy machine may miss the first window: up to three 2 s pulls
	for try in 1 2 3; do
		sleep 1
		go tool pprof -top -symbolize=none \
			"http://127.0.0.1:$port/debug/pprof/profile?seconds=2&pid=$pid" >"$tmp/$name.top" 2>/dev/null
		awk '$6 == "Split.alpha" { a = 1 } $6 == "Split.beta" { b = 1 } END { exit !(a && b) }' \
			"$tmp/$name.top" && break
	done
	curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/$name.metrics"
	wait "$pid"
	stop $agent
	a=$(awk '$6 == "Split.alpha"' "$tmp/$name.top" | wc -l)
	b=$(awk '$6 == "Split.beta"' "$tmp/$name.top" | wc -l)
	named=$(sed -n 's/^ebpfprof_java_frames_named_total \([0-9]*\)$/\1/p' "$tmp/$name.metrics")
	if [ "$a" = 1 ] && [ "$b" = 1 ] && [ "${named:-0}" -gt 0 ] &&
		grep -Eq '^ebpfprof_java_processes_total [1-9]' "$tmp/$name.metrics"; then
		pass "$name: the pull endpoint names Split.alpha and Split.beta; /metrics: $named frames named"
	else
		fail "$name" "alpha $a, beta $b in the pull profile; frames named '${named:-}'"
	fi
}

for jdk in "${jdks[@]}" "${old_jdks[@]}"; do
	split_check "$jdk" "$(tag "$jdk")-jit"
	inline_check "$(tag "$jdk")-jit"
	split_check "$jdk" "$(tag "$jdk")-xint" -Xint
done
wall_check "${jdks[0]}"
container_check "${jdks[0]}"
exec_check "${jdks[0]}"
agent_check "${jdks[${#jdks[@]} - 1]}"
