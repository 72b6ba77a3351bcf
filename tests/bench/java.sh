#!/usr/bin/env bash
# java.sh -- HotSpot frames: BPF ns per sample for a JVM (JIT and -Xint) against a native process, memory of the names cached per JVM, time to the first named frame, share of main-thread samples named and whole
# usage: java.sh [SECONDS (8)]; needs kernel.bpf_stats_enabled (set here, restored after)
set -u
cd "$(dirname "$0")/../.."
EBPFPROF=${EBPFPROF:-build/ebpfprof}
F=build/fixtures
secs=${1:-8}
out=$(mktemp -d)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled=$old_stats; kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$out"' EXIT
sysctl -qw kernel.bpf_stats_enabled=1
export PATH=$PATH:/usr/lib/go/bin

profile() {	# name pid: BPF ns per sample, the java line of -v
	local name=$1 pid=$2
	"$EBPFPROF" -v --pid "$pid" --frequency 999 --duration "$secs" -o "$out/$name.pb.gz" 2>"$out/$name.err"
	printf '%-28s %s\n' "$name" "$(sed -n 's/.*bpf: .* \([0-9]* ns per sample\).*/\1/p' "$out/$name.err")"
}

# the main thread's samples (comm java, the launcher's idle thread aside): carrying a Split frame, reaching the thread start
shares() {
	go tool pprof -traces -symbolize=none "$1" 2>/dev/null | awk '
		function done() { if (java && !idle) { t += w; if (named) n += w; if (!cut) c += w } }
		/^-+\+/ { done(); w = 0; java = named = cut = idle = 0; first = 1; next }
		/ comm: / { java = ($2 == "java"); next }
		/^ +[a-z]+: / { next }
		{ if (first) { w = $1; sub(/[a-z]+$/, "", w); f = $2; first = 0 } else f = $1
		  if (f ~ /^Split\./) named = 1
		  if (f ~ /truncated user stack|frames lost/) cut = 1
		  if (f == "pthread_join" || f == "__pthread_clockjoin_ex") idle = 1 }
		END { done(); if (t) printf "%.1f%% named, %.1f%% whole (of %d ms)", 100 * n / t, 100 * c / t, t }'
}

echo "BPF cost per sample at 999 Hz, $secs s each (--unwind cfi, the default):"
"$F/cpu_split" $((secs + 3)) >/dev/null & profile native-cpu_split $!
wait
for home in /usr/lib/jvm/*/; do
	home=$(readlink -f "$home")
	[ -x "$home/bin/javac" ] && [ ! -e "$out/$(basename "$home")" ] || continue
	mkdir -p "$out/$(basename "$home")"
	"$home/bin/javac" -d "$out/$(basename "$home")" tests/fixtures/java/Split.java || continue
	for mode in jit xint; do
		name="$(basename "$home")-$mode"
		opt=(); warm=2
		[ $mode = xint ] && { opt=(-Xint); warm=0; }
		touch "$out/gate"
		"$home/bin/java" "${opt[@]}" -cp "$out/$(basename "$home")" Split split $((secs * 3)) \
			"$out/gate" "$warm" >/dev/null &
		pid=$!
		sleep $((warm + 1))
		profile "$name" $pid
		kill $pid 2>/dev/null; wait $pid 2>/dev/null
		sed -n 's/^ebpfprof: java: /    /p' "$out/$name.err"
		echo "    main thread: $(shares "$out/$name.pb.gz")"
	done
done

# the time from a JVM's discovery to its first frame named, whole-system profile, JVM started after
home=$(readlink -f /usr/lib/jvm/*/ | head -1)
"$EBPFPROF" -v --duration 8 -o "$out/new.pb.gz" 2>"$out/new.err" &
prof=$!
sleep 3
touch "$out/gate"
"$home/bin/java" -cp "$out/$(basename "$home")" Split split 2 "$out/gate" 0 >/dev/null
wait $prof
echo "a JVM started under a whole-system profile:"
sed -n 's/^ebpfprof: java: /    /p' "$out/new.err"
