#!/usr/bin/env bash
# node.sh -- Node.js frames: BPF ns per sample for a Node process against a native one, cost and memory of naming functions, share of samples with every JavaScript frame named, per Node version
# usage: node.sh [SECONDS (8)]; BPF run-time statistics are held on by a BPF_ENABLE_STATS descriptor
# while it runs (counted by the kernel, so a kernel.bpf_stats_enabled another tool sets is left alone)
set -u
cd "$(dirname "$0")/../.."
EBPFPROF=${EBPFPROF:-build/ebpfprof}
F=build/fixtures
NODE_CACHE=${NODE_CACHE:-/var/cache/ebpfprof/node}
NODE_VERSIONS=${NODE_VERSIONS:-"debian 18 20 22 24 26"}
secs=${1:-8}
out=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$out"' EXIT
export PATH=$PATH:/usr/lib/go/bin

. tests/bench/runtime_lib.sh
bpf_stats_hold

node_bin() {
	[ "$1" = debian ] && { echo /usr/bin/node; return; }
	echo "$NODE_CACHE/$1/package/bin/node"
}

echo "BPF cost per sample at 999 Hz, $secs s each (--unwind cfi, the default):"
"$F/cpu_split" $((secs + 3)) >/dev/null &
pid=$!
profile native-cpu_split $pid
wait $pid
for v in $NODE_VERSIONS; do
	node=$(node_bin "$v")
	[ -x "$node" ] || { echo "node$v: no $node (make test fetches it)"; continue; }
	"$node" tests/fixtures/node/split.js $((secs + 3)) >/dev/null &
	pid=$!
	sleep 1.5
	profile "node$v-split" $pid
	wait $pid
	sed -n 's/^ebpfprof: v8: /    /p' "$out/node$v-split.err"
	echo "    samples with every JavaScript frame named: $(named_share "$out/node$v-split.pb.gz" 'unknown javascript function|javascript frames lost|\[\[anon\]')"
done

# memory and cost per cached function: a script of many functions, each run every round
cat >"$out/many.js" <<'JS'
const fns = [];
for (let i = 0; i < 3000; i++)
  fns.push(new Function('n', `let s = 0; for (let i = 0; i < n; i++) s += i ^ ${i}; return s; //# sourceURL=many_funcs_${i}.js`));
const end = Date.now() + 1000 * Number(process.argv[2]);
let sink = 0;
while (Date.now() < end) for (const f of fns) sink += f(200);
JS
node=$(node_bin 20)
"$node" "$out/many.js" $((secs + 3)) >/dev/null &
pid=$!
sleep 1.5
profile many-functions-node20 $pid
wait $pid
sed -n 's/^ebpfprof: v8: /    /p' "$out/many-functions-node20.err"
