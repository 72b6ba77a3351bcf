#!/usr/bin/env bash
# python.sh -- CPython frames: BPF ns per sample for a Python process against a native one, cost and memory of naming code objects, share of Python frames named
# usage: python.sh [SECONDS (8)]; needs kernel.bpf_stats_enabled (set here, restored after)
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

# one profile of PID: BPF ns per sample, and the python line of -v
profile() {
	local name=$1 pid=$2
	"$EBPFPROF" -v --pid "$pid" --frequency 999 --duration "$secs" -o "$out/$name.pb.gz" 2>"$out/$name.err"
	printf '%-22s %s\n' "$name" "$(sed -n 's/.*bpf: .* \([0-9]* ns per sample\).*/\1/p' "$out/$name.err")"
}

echo "BPF cost per sample at 999 Hz, $secs s each (--unwind cfi, the default):"
"$F/cpu_split" $((secs + 3)) >/dev/null & profile native-cpu_split $!
wait
for py in /root/.pyenv/versions/3.{8,10,12,13}*/bin/python3.{8,10,12,13} /usr/bin/python3.11; do
	[ -x "$py" ] || continue
	name=$(basename "$py")
	[ "${py#/usr/}" != "$py" ] && name=$name-static
	touch "$out/gate"
	"$py" tests/fixtures/python/split.py alternate "$secs" "$out/gate" >/dev/null &
	profile "$name" $!
	wait
	sed -n 's/^ebpfprof: python: /    /p' "$out/$name.err"
	total=$(go tool pprof -traces -symbolize=none "$out/$name.pb.gz" 2>/dev/null | grep -cE '^ +split\.')
	bad=$(go tool pprof -traces -symbolize=none "$out/$name.pb.gz" 2>/dev/null |
		grep -cE 'unknown python function|python frames lost')
	echo "    Python frames in the profile: $total named, $bad unnamed or lost"
done

# memory per cached code object: a module of many functions, each run once
cat >"$out/many.py" <<'PY'
import sys, time
src = "\n".join("def f%d(n):\n    s = 0\n    for i in range(n):\n        s += i\n    return s\n" % i
                for i in range(3000))
ns = {}
exec(compile(src, "many_funcs.py", "exec"), ns)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    for i in range(3000):
        ns["f%d" % i](50)
PY
py=$(ls /root/.pyenv/versions/3.12*/bin/python3.12 | head -1)
"$py" "$out/many.py" $((secs + 2)) &
profile many-functions-3.12 $!
wait
sed -n 's/^ebpfprof: python: /    /p' "$out/many-functions-3.12.err"
