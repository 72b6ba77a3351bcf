#!/usr/bin/env bash
# perl.sh -- Perl frames: BPF ns per sample for a perl process against a native one, cost and memory of naming subs, share of samples with every Perl frame named, per perl version
# usage: perl.sh [SECONDS (8)]; BPF run-time statistics are held on by a BPF_ENABLE_STATS descriptor
# while it runs (counted by the kernel, so a kernel.bpf_stats_enabled another tool sets is left alone)
set -u
cd "$(dirname "$0")/../.."
EBPFPROF=${EBPFPROF:-build/ebpfprof}
F=build/fixtures
P=tests/fixtures/perl
secs=${1:-8}
out=$(mktemp -d)
ROOT=$(bash tests/lib/trixie_root.sh 2>/dev/null | tail -1)
rootdir=
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; [ -n "$rootdir" ] && rm -rf "$rootdir"; rm -rf "$out"' EXIT
export PATH=$PATH:/usr/lib/go/bin

# BPF_ENABLE_STATS (command 32, BPF_STATS_RUN_TIME): on while the descriptor is open
python3 -c '
import ctypes, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
attr = ctypes.create_string_buffer(128)
fd = libc.syscall(321, 32, attr, 128)
if fd < 0:
    raise SystemExit("BPF_ENABLE_STATS: errno %d" % ctypes.get_errno())
signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
time.sleep(3600)' &
sleep 0.3

# one profile of PID: BPF ns per sample, and the perl line of -v
profile() {
	local name=$1 pid=$2
	"$EBPFPROF" -v --pid "$pid" --frequency 999 --duration "$secs" -o "$out/$name.pb.gz" 2>"$out/$name.err"
	printf '%-22s %s\n' "$name" "$(sed -n 's/.*bpf: .* \([0-9]* ns per sample\).*/\1/p' "$out/$name.err")"
	sed -n 's/^ebpfprof: perl: /    /p' "$out/$name.err"
}

# samples whose stack has every Perl frame named (no unknown sub or file, no lost mark)
named_share() {
	go tool pprof -traces "$1" 2>/dev/null | awk '
		function ms(v) { return v ~ /ms$/ ? v + 0 : v ~ /us$/ ? v / 1000 : v ~ /s$/ ? v * 1000 : v + 0 }
		function flush() { if (w) { all += w; if (!bad) ok += w } w = 0; bad = 0 }
		/^-+\+/ { flush(); next }
		$1 ~ /:$/ { next }
		NF >= 2 && !w { w = ms($1); $1 = "" }
		/unknown perl|perl frames lost/ { bad = 1 }
		END { flush(); if (all) printf "%.1f %% of %d ms", 100 * ok / all, all }'
}

# run NAME CMD ARGS...: profiles CMD ARGS (started 1 s before), prints its figures
run() {
	local name=$1
	shift
	"$@" >/dev/null 2>&1 &
	local pid=$!
	sleep 1
	profile "$name" $pid
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	echo "    samples with every Perl frame named: $(named_share "$out/$name.pb.gz")"
}

echo "BPF cost per sample at 999 Hz, $secs s each (--unwind cfi, the default):"
"$F/cpu_split" $((secs + 3)) >/dev/null &
pid=$!
profile native-cpu_split $pid
wait $pid

# many subs made at run time (string eval), each run every round: cost and memory per cached name
cat >"$out/many.pl" <<'PL'
my @subs = map { eval "sub { my \$s = 0; \$s += \$_ ^ $_ for 1 .. 200; \$s }" } 1 .. 3000;
my $end = time + $ARGV[0];
while (time < $end) { $_->() for @subs }
PL
run perl5.36-split /usr/bin/perl $P/split.pl $((secs + 3))
run perl5.36-xs /usr/bin/perl $P/xs.pl $((secs + 3))
run perl5.36-many-subs /usr/bin/perl "$out/many.pl" $((secs + 3))
if [ -x "$ROOT/usr/bin/perl" ]; then
	rootdir=$(mktemp -d "$ROOT/tmp/ebpfprof-perl.XXXXXX")
	cp $P/*.pl "$out/many.pl" "$rootdir/"
	d=/tmp/${rootdir##*/}
	run perl5.40-split chroot "$ROOT" /usr/bin/perl $d/split.pl $((secs + 3))
	run perl5.40-xs chroot "$ROOT" /usr/bin/perl $d/xs.pl $((secs + 3))
else
	echo "perl5.40: no trixie root (bash tests/lib/trixie_root.sh)"
fi
