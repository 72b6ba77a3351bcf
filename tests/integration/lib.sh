# lib.sh -- helpers for integration scripts: which cases run, pass/fail/skip reporting and pprof read-back

# --- which cases run: make test TESTS=SUITE/CASE (tests/run.sh) ---
# tests/run.sh exports TEST_CASES, the CASE patterns TESTS gave this suite, separated by spaces;
# unset or empty, every case runs. A case's name is what its result line prints between "SUITE/"
# and the first colon ("PASS: python/python3.11-reuse: ..." is python3.11-reuse). A pattern picks
# the cases whose name contains it; * ? [...] are the shell's wildcards. Work a suite does before
# its cases (fixtures, a collector, an image) still runs; the cases not picked do not.

selected() {	# names...: true when a pattern picks one of the names (or there is no pattern)
	[ -n "${TEST_CASES:-}" ] || return 0
	local pats p n
	read -ra pats <<<"$TEST_CASES"
	for p in "${pats[@]}"; do
		for n in "$@"; do
			# shellcheck disable=SC2053
			[[ "$n" == *$p* ]] && return 0
		done
	done
	return 1
}

# run_test FUNCTION [CASE...]: calls FUNCTION when one of the cases it reports is picked; by
# default its one case is its own name without test_. A function reporting several lists them.
run_test() {
	local fn=$1
	shift
	[ $# -gt 0 ] || set -- "${fn#test_}"
	selected "$@" || return 0
	"$fn"
}

# each_version FUNCTION ITEM...: FUNCTION ITEM for every item, two at a time (EACH_AT_ONCE, 2 by
# default: a core each), each one's output whole and in the items' order. For a runtime's versions:
# the CPU splits their checks measure are each process's own CPU time, which the other process
# does not take, and each profile is of its own process. A function runs in a subshell: what it
# sets is gone after.
each_version() {
	local fn=$1 dir i=0 j done_pid p pids=() at_once=${EACH_AT_ONCE:-2}
	shift
	dir=$(mktemp -d)
	for item in "$@"; do
		while [ ${#pids[@]} -ge "$at_once" ]; do
			wait -n -p done_pid "${pids[@]}"
			# shellcheck disable=SC2207
			pids=($(for p in "${pids[@]}"; do [ "$p" = "$done_pid" ] || echo "$p"; done))
		done
		"$fn" "$item" >"$dir/$i" 2>&1 &
		pids+=($!)
		i=$((i + 1))
	done
	for p in "${pids[@]}"; do wait "$p"; done
	for ((j = 0; j < i; j++)); do cat "$dir/$j"; done
	rm -rf "$dir"
}

# Results; PASS and SKIP of a case not picked (one run as another's setup) are not printed,
# FAIL always is, and so is a suite skipped as a whole ("all").
pass() { selected "${1%%:*}" && echo "PASS: $SUITE/$1"; return 0; }
fail() { echo "FAIL: $SUITE/$1: $2"; }
skip() { { [ "$1" = all ] || selected "${1%%:*}"; } && echo "SKIP: $SUITE/$1: $2"; return 0; }

only_selected() {	# the same for result lines printed by another program: stdin to stdout
	local line name
	while IFS= read -r line; do
		case $line in
		"PASS: "* | "SKIP: "*)
			name=${line#*/}
			selected "${name%%:*}" || continue
			;;
		esac
		printf '%s\n' "$line"
	done
}

pprof_top() {	# file: go tool pprof -top with our own symbols only
	go tool pprof -top -nodecount=200 -symbolize=none "$@" 2>/dev/null
}

# --- the agent and the loopback collector (tests/fixtures/collector), for agent scripts ---

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_collector() {	# log, extra flags...: sets COLLECTOR_PID and COLLECTOR_ADDR (needs FIX)
	local log=$1; shift
	# its own output file: a shared one could still hold the last collector's address
	"$FIX/collector" -log "$log" "$@" >"$log.out" 2>&1 &
	COLLECTOR_PID=$!
	for _ in $(seq 50); do
		COLLECTOR_ADDR=$(awk '/^listening/ { print $2; exit }' "$log.out" 2>/dev/null)
		[ -n "$COLLECTOR_ADDR" ] && return 0
		sleep 0.1
	done
	return 1
}

stop() { kill -TERM "$1" 2>/dev/null; wait "$1"; }

wait_profiling() {	# stderr file, pid[, tenths]: waits until that one-shot says it samples, or exits (60 s by default)
	for _ in $(seq "${3:-600}"); do
		grep -qs '^ebpfprof: profiling' "$1" && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

wait_started() {	# agent stderr file: waits until the agent says it samples (a loaded machine loads BPF slowly)
	for _ in $(seq 300); do
		grep -qs '^ebpfprof: agent: ' "$1" && return 0
		sleep 0.1
	done
	return 1
}

wait_port() {	# agent stderr file: prints the port the agent bound, once it samples
	wait_started "$1" || return 1
	for _ in $(seq 100); do
		local p
		p=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$1")
		[ -n "$p" ] && { echo "$p"; return 0; }
		sleep 0.1
	done
	return 1
}

# --- OTLP: the published OpenTelemetry .proto files, from Debian's opentelemetry-proto package (cached) ---

OTLP_PROTO_VERSION=1.11.0-1
OTLP_CACHE=/var/cache/ebpfprof/otlp-proto-$OTLP_PROTO_VERSION
otlp_proto() {	# prints the include dir, or nothing when the archive cannot be reached
	local deb=opentelemetry-proto_${OTLP_PROTO_VERSION}_all.deb
	if [ ! -d "$OTLP_CACHE/usr/include/opentelemetry" ]; then
		mkdir -p "$OTLP_CACHE" &&
			curl -sfL --max-time 60 -o "$OTLP_CACHE/$deb" \
				"http://deb.debian.org/debian/pool/main/o/opentelemetry-proto/$deb" &&
			dpkg-deb -x "$OTLP_CACHE/$deb" "$OTLP_CACHE" || { rm -rf "$OTLP_CACHE"; return; }
	fi
	echo "$OTLP_CACHE/usr/include"
}

otlp_python() {	# include dir, out dir: Python classes of the profiles proto, by protoc
	protoc -I "$1" --python_out="$2" \
		"$1"/opentelemetry/proto/collector/profiles/v1development/profiles_service.proto \
		"$1"/opentelemetry/proto/profiles/v1development/profiles.proto \
		"$1"/opentelemetry/proto/common/v1/common.proto \
		"$1"/opentelemetry/proto/resource/v1/resource.proto
}

# --- a walk past its bound (the interpreters' deep checks) ---
# bound_shapes TRACES SPIN DOWN MARK OURS [PID]: from go tool pprof -traces text, each stack through
# frame SPIN (of PID, if given) as "frames-before-the-mark mark after out-of-order": the runtime's
# frames before MARK, whether MARK is there, the runtime's frames after it, and frames out of order
# (SPIN not innermost, DOWN before it, another of ours before the mark); OURS is a regex of the names
# of every frame of the script's runtime. Counted by shape, the commonest first.
bound_shapes() {
	awk -v spin="$2" -v down="$3" -v markname="$4" -v ours="$5" -v pid="${6:-}" '
		function flush() {
			if ((pid == "" || p == pid) && seen) print n, mark, after, bad
			p = ""; n = mark = after = bad = seen = first = 0
		}
		/^-+\+/ { flush(); next }
		$1 == "pid:" { p = $2; next }
		$1 ~ /:$/ { next }
		!first && NF >= 2 { first = 1; $1 = "" }
		{ sub(/^ +/, "") }
		mark { if ($0 ~ ours) after++; next }
		$0 == markname { mark = 1; next }
		$0 == spin { if (n) bad++; seen = 1; n++; next }
		$0 == down { if (!seen) bad++; n++; next }
		$0 ~ ours { bad++ }
		END { flush() }' "$1" | sort | uniq -c | sort -rn
}
# bound_held SHAPES BOUND: at least 10 stacks, every one BOUND frames, then the mark, and none of the
# runtime's frames below it or out of order
bound_held() {
	[ -n "$1" ] && [ "$(awk '{ n += $1 } END { print n }' <<<"$1")" -ge 10 ] &&
		awk -v b="$2" '$2 != b || $3 != 1 || $4 != 0 || $5 != 0 { exit 1 }' <<<"$1"
}

# fork_children_named [EXE] < go tool pprof -traces: of fork_pool's children (every pid but the one in
# pool_parent_spin), at least 20 sampled, at most 5 % of their time with an unnamed frame, a fifth or
# more in pool_child_burn (the parent's code) and in cos (libm, mapped after the fork); with EXE,
# 95 % or more labelled exe EXE (the agent's, copied from the parent for a copied child)
fork_children_named() {
	awk -v exe="${1:-}" '
		function flush() {
			if (c == "fork_pool" && n) {
				tot[pid] += v; un[pid] += bad * v; b[pid] += burn * v; cs[pid] += cosf * v
				ex[pid] += (e == exe) * v
				if (par) parent[pid] = 1
			}
			c = e = ""; n = bad = burn = cosf = par = v = 0
		}
		/^-+\+/ { flush(); next }
		$1 == "pid:" { pid = $2; next }
		$1 == "comm:" { c = $2; next }
		$1 == "exe:" { e = $2; next }
		$1 ~ /:$/ { next }
		{
			if (!n++) v = $1 + 0
			bad = bad || $0 ~ /<unknown>|\+0x[0-9a-f]+/
			burn = burn || $0 ~ /pool_child_burn/
			cosf = cosf || $0 ~ /cos/
			par = par || $0 ~ /pool_parent_spin/
		}
		END {
			flush()
			for (p in tot) if (!(p in parent)) { T += tot[p]; U += un[p]; B += b[p]; C += cs[p]; X += ex[p]; k++ }
			printf "  %d children sampled, %.0f ms: %.0f ms with an unnamed frame, %.0f ms in pool_child_burn, %.0f ms in cos", k, T, U, B, C
			if (exe != "") printf ", %.0f ms labelled exe %s", X, exe
			printf "\n"
			exit !(k >= 20 && U <= T * 0.05 && B >= T * 0.2 && C >= T * 0.2 && (exe == "" || X >= T * 0.95))
		}'
}
