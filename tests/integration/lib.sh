# lib.sh -- helpers for integration scripts: pass/fail/skip reporting and pprof read-back
pass() { echo "PASS: $SUITE/$1"; }
fail() { echo "FAIL: $SUITE/$1: $2"; }
skip() { echo "SKIP: $SUITE/$1: $2"; }
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
