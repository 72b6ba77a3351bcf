# lib.sh -- helpers for integration scripts: pass/fail/skip reporting and pprof read-back
pass() { echo "PASS: $SUITE/$1"; }
fail() { echo "FAIL: $SUITE/$1: $2"; }
skip() { echo "SKIP: $SUITE/$1: $2"; }
pprof_top() {	# file: go tool pprof -top with our own symbols only
	go tool pprof -top -nodecount=200 -symbolize=none "$@" 2>/dev/null
}
