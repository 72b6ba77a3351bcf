# runtime_lib.sh -- helpers of the per-runtime benches (node.sh, php.sh, perl.sh, ruby.sh): BPF run-time statistics held on, one profile's BPF ns per sample, the share of samples fully named
# Sourced from the repository root after the script sets EBPFPROF, secs (seconds a profile) and out (its files' directory).

# bpf_stats_hold: BPF_ENABLE_STATS (command 32, BPF_STATS_RUN_TIME) on while a background holder keeps its
# descriptor open (counted by the kernel, so a kernel.bpf_stats_enabled another tool sets is left alone);
# the caller's EXIT trap kills its jobs, the holder among them
bpf_stats_hold() {
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
}

# profile NAME PID: profiles PID at 999 Hz for $secs into $out/NAME.pb.gz (-v in $out/NAME.err);
# prints NAME and the BPF ns per sample
profile() {
	local name=$1 pid=$2
	"$EBPFPROF" -v --pid "$pid" --frequency 999 --duration "$secs" -o "$out/$name.pb.gz" 2>"$out/$name.err"
	printf '%-26s %s\n' "$name" "$(sed -n 's/.*bpf: .* \([0-9]* ns per sample\).*/\1/p' "$out/$name.err")"
}

# named_share PROFILE BAD: "P % of N ms": the weight of the samples no frame of which matches the
# regular expression BAD (the runtime's unknown-function and lost marks)
named_share() {
	# through the environment: awk -v would take the backslashes of BAD as escapes
	go tool pprof -traces "$1" 2>/dev/null | BAD=$2 awk '
		function ms(v) { return v ~ /ms$/ ? v + 0 : v ~ /us$/ ? v / 1000 : v ~ /s$/ ? v * 1000 : v + 0 }
		function flush() { if (w) { all += w; if (!bad) ok += w } w = 0; bad = 0 }
		/^-+\+/ { flush(); next }
		$1 ~ /:$/ { next }
		NF >= 2 && !w { w = ms($1); $1 = "" }
		$0 ~ ENVIRON["BAD"] { bad = 1 }
		END { flush(); if (all) printf "%.1f %% of %d ms", 100 * ok / all, all }'
}
