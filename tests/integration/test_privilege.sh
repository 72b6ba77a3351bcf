#!/usr/bin/env bash
# test_privilege.sh -- as uid nobody with only CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH, CAP_SYSLOG; then without each
set -u
SUITE=privilege
. "$(dirname "$0")/lib.sh"
FIX=$BUILD/fixtures
CAPS="bpf perfmon sys_ptrace dac_read_search syslog"
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT

command -v setpriv >/dev/null || { skip all "setpriv (util-linux) is not installed"; exit 0; }
[ "$(id -u)" = 0 ] || { skip all "needs root to switch to nobody"; exit 0; }
chmod 0755 "$tmp"
mkdir -m 0777 "$tmp/out"
# the profiled processes belong to root; one runs a binary only root may read (mode 0711)
cp "$FIX/cpu_split" "$tmp/secret_split"
chmod 0711 "$tmp/secret_split"
"$tmp/secret_split" 120 & split=$!
"$FIX/syscall_heavy" 120 & sys=$!

as_nobody() {	# capabilities (space-separated, may be empty), command...: as uid nobody with only those
	local caps=$1 list=
	shift
	for c in $caps; do list="$list,+$c"; done
	list=${list#,}
	# ambient capabilities survive execve for a non-root uid; the bounding set keeps the rest out.
	# exec: in a subshell, the subshell's pid becomes the program's
	exec setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all${list:+,$list} \
		--ambient-caps=-all${list:+,$list} --bounding-set=-all${list:+,$list} "$@"
}

profile() {	# name, capabilities: one-shot of both processes into out/NAME.folded; sets RC
	(cd "$tmp/out" && as_nobody "$2" timeout 60 "$EBPFPROF" --duration 2 --pid "$split,$sys" \
		--format folded --output "$tmp/out/$1.folded" 2>"$tmp/$1.err")
	RC=$?
}

without() {	# capability: CAPS without it
	local out=
	for c in $CAPS; do [ "$c" = "$1" ] || out="$out $c"; done
	echo "$out"
}

user_named() { grep -q 'cpu_split_fifty' "$1" 2>/dev/null; }
user_sampled() { grep -q '^secret_split;' "$1" 2>/dev/null; }
# a kernel frame is "name_[k]"; unnamed ones keep their address: "[[kernel.kallsyms]+0x..]_[k]"
kernel_named() { grep -Eq ';[a-zA-Z_][a-zA-Z0-9_.]*_\[k\]' "$1" 2>/dev/null; }
kernel_sampled() { grep -q '_\[k\]' "$1" 2>/dev/null; }

test_all_caps() {
	profile all "$CAPS"
	if [ $RC = 0 ] && user_named "$tmp/out/all.folded" && kernel_named "$tmp/out/all.folded" &&
		! grep -q warning "$tmp/all.err"; then
		pass all_caps
	else
		cat "$tmp/all.err"; fail all_caps "exit $RC, user frames named: $(user_named "$tmp/out/all.folded" && echo yes || echo no), kernel: $(kernel_named "$tmp/out/all.folded" && echo yes || echo no)"
	fi
}

test_without_syslog() {	# kptr_restrict hides kernel addresses: kernel frames counted, unnamed, said once
	profile nosyslog "$(without syslog)"
	if [ "$(cat /proc/sys/kernel/kptr_restrict)" = 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 1 ]; then
		skip without_syslog "kernel.kptr_restrict=0 and perf_event_paranoid<=1 show addresses to everyone"
	elif [ $RC = 0 ] && kernel_sampled "$tmp/out/nosyslog.folded" && ! kernel_named "$tmp/out/nosyslog.folded" &&
		user_named "$tmp/out/nosyslog.folded" && grep -q 'kernel addresses are hidden' "$tmp/nosyslog.err"; then
		pass without_syslog
	else
		cat "$tmp/nosyslog.err"; fail without_syslog "exit $RC, or kernel frames named / not said"
	fi
}

test_without_ptrace() {	# no way into another user's /proc/PID/root: its files unread, frames kept unnamed, said once
	profile noptrace "$(without sys_ptrace)"
	if [ $RC = 0 ] && user_sampled "$tmp/out/noptrace.folded" && ! user_named "$tmp/out/noptrace.folded" &&
		kernel_named "$tmp/out/noptrace.folded" && grep -q 'needs CAP_SYS_PTRACE' "$tmp/noptrace.err" &&
		[ "$(grep -c 'needs CAP_SYS_PTRACE' "$tmp/noptrace.err")" = 1 ]; then
		pass without_ptrace
	else
		cat "$tmp/noptrace.err"; fail without_ptrace "exit $RC, or user frames named / not said once"
	fi
}

test_without_dac_read_search() {	# a binary only root may read: its frames unnamed, libc's named, said once
	profile nodac "$(without dac_read_search)"
	if [ $RC = 0 ] && user_sampled "$tmp/out/nodac.folded" && ! user_named "$tmp/out/nodac.folded" &&
		grep -q '__libc_start_call_main' "$tmp/out/nodac.folded" &&
		grep -q 'secret_split.*needs CAP_DAC_READ_SEARCH' "$tmp/nodac.err"; then
		pass without_dac_read_search
	else
		cat "$tmp/nodac.err"; fail without_dac_read_search "exit $RC, or frames named / not said"
	fi
}

test_without_bpf_or_perfmon() {	# nothing can sample: one line naming the capabilities, exit 2, no output file
	local ok=1
	for c in bpf perfmon; do
		profile "no$c" "$(without $c)"
		if [ $RC != 2 ] || [ "$(wc -l <"$tmp/no$c.err")" != 1 ] ||
			! grep -q 'CAP_BPF and CAP_PERFMON' "$tmp/no$c.err" || [ -e "$tmp/out/no$c.folded" ]; then
			ok=0; echo "  without $c: exit $RC: $(cat "$tmp/no$c.err")"
		fi
	done
	[ $ok = 1 ] && pass without_bpf_or_perfmon || fail without_bpf_or_perfmon "see above"
}

test_agent() {	# the agent too: windows written, /metrics served, a clean stop
	(cd "$tmp/out" && as_nobody "$CAPS" "$EBPFPROF" agent --interval 1 --output-dir "$tmp/out/windows" \
		--spool-dir "$tmp/out/spool" --listen 127.0.0.1:0 2>"$tmp/agent.err") & local agent=$!
	local port=
	for _ in $(seq 100); do
		port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$tmp/agent.err")
		[ -n "$port" ] && break
		sleep 0.1
	done
	sleep 3
	local metrics
	metrics=$(curl -sf "http://127.0.0.1:$port/metrics" | grep -c '^ebpfprof_samples_total [1-9]')
	kill -TERM "$agent"
	wait "$agent"; local rc=$?
	local n
	n=$(ls "$tmp/out/windows" 2>/dev/null | grep -c 'secret_split-')
	# the whole machine is profiled: a process mapping a deleted file (a sealed memfd) is
	# said once, as it must be without CAP_CHECKPOINT_RESTORE; any other warning fails
	if [ $rc = 0 ] && [ "$metrics" = 1 ] && [ "$n" -ge 2 ] &&
		! grep warning "$tmp/agent.err" | grep -qv 'needs CAP_CHECKPOINT_RESTORE'; then
		pass agent
	else
		cat "$tmp/agent.err"; fail agent "exit $rc, metrics '$metrics', $n windows of secret_split"
	fi
}

run_test test_all_caps
run_test test_without_syslog
run_test test_without_ptrace
run_test test_without_dac_read_search
run_test test_without_bpf_or_perfmon
run_test test_agent
