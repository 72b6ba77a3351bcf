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

. tests/bench/runtime_lib.sh
bpf_stats_hold

# run NAME CMD ARGS...: profiles CMD ARGS (started 1 s before), prints its figures
run() {
	local name=$1
	shift
	"$@" >/dev/null 2>&1 &
	local pid=$!
	sleep 1
	profile "$name" $pid
	sed -n 's/^ebpfprof: perl: /    /p' "$out/$name.err"
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	echo "    samples with every Perl frame named: $(named_share "$out/$name.pb.gz" 'unknown perl|perl frames lost')"
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
