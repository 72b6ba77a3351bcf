#!/usr/bin/env bash
# php.sh -- PHP frames: BPF ns per sample for a PHP process against a native one, share of samples with every PHP frame named, cost and memory of naming functions; Debian 12's PHP 8.2 and Debian 13's 8.4
# usage: php.sh [SECONDS (8)]; BPF run-time statistics are held on by a BPF_ENABLE_STATS descriptor
# while it runs (counted by the kernel, so a kernel.bpf_stats_enabled another tool sets is left alone)
set -u
cd "$(dirname "$0")/../.."
EBPFPROF=${EBPFPROF:-build/ebpfprof}
F=build/fixtures
secs=${1:-8}
ROOT=$(bash tests/lib/trixie_root.sh 2>/dev/null) || ROOT=
out=$(mktemp -d "${ROOT:-/tmp}/tmp/ebpfprof-php-bench.XXXXXX" 2>/dev/null || mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$out"' EXIT
export PATH=$PATH:/usr/lib/go/bin
cp tests/fixtures/php/split.php "$out/"

. tests/bench/runtime_lib.sh
bpf_stats_hold

# a script of many functions, each called every round: the cost and memory of naming one
many() {
	echo '<?php'
	for i in $(seq 3000); do echo "function f$i(\$n) { \$s = 0; for (\$i = 0; \$i < \$n; \$i++) { \$s += \$i ^ $i; } return \$s; }"; done
	echo '$end = microtime(true) + (float)$argv[1]; $sink = 0;'
	echo 'while (microtime(true) < $end) { for ($i = 1; $i <= 3000; $i++) { $sink += ("f$i")(50); } }'
}
many >"$out/many.php"

declare -A PHP=([php8.2]=/usr/bin/php8.2)
[ -n "$ROOT" ] && PHP[php8.4]="chroot $ROOT php8.4"
inside() { [ "$1" = php8.4 ] && echo "${2#"$ROOT"}" || echo "$2"; }

echo "BPF cost per sample at 999 Hz, $secs s each (--unwind cfi, the default):"
"$F/cpu_split" $((secs + 3)) >/dev/null &
pid=$!
profile native-cpu_split $pid
wait $pid
for t in php8.2 php8.4; do
	[ -n "${PHP[$t]:-}" ] || { echo "$t: not here (tests/lib/trixie_root.sh builds Debian 13's)"; continue; }
	# shellcheck disable=SC2086
	${PHP[$t]} "$(inside $t "$out/split.php")" $((secs + 3)) >/dev/null &
	pid=$!
	sleep 1
	profile "$t-split" $pid
	wait $pid
	sed -n 's/^ebpfprof: php: /    /p' "$out/$t-split.err"
	echo "    samples with every PHP frame named: $(named_share "$out/$t-split.pb.gz" 'unknown php function|php frames lost')"
	# shellcheck disable=SC2086
	${PHP[$t]} "$(inside $t "$out/many.php")" $((secs + 3)) >/dev/null &
	pid=$!
	sleep 1
	profile "$t-many-functions" $pid
	wait $pid
	sed -n 's/^ebpfprof: php: /    /p' "$out/$t-many-functions.err"
	awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
		END { if (v["functions_total"]) printf "    per function named: %.1f us to read, %.0f bytes cached\n",
			1e6 * v["read_seconds_total"] / v["functions_total"], v["function_cache_bytes"] / v["functions_total"] }' \
		< <(sed -n 's/^ebpfprof: php: //p' "$out/$t-many-functions.err")
done
