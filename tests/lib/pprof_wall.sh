# pprof_wall.sh -- reading wall and off-CPU profiles with go tool pprof, for the host suites and tests/vm/check.sh

# cum% of a function in `go tool pprof -top` output (file); -1 when absent
cum_pct() { awk -v f="$2" '$6 == f { sub("%", "", $5); print $5; found = 1 } END { if (!found) print -1 }' "$1"; }
# true when value (-1: absent) lies within tol of want
within() { awk -v v="$1" -v want="$2" -v tol="$3" 'BEGIN { d = v - want; if (d < 0) d = -d; exit !(v >= 0 && d <= tol) }'; }

# the nanoseconds of sample type TYPE (wall, off_cpu, cpu) of thread TID in a profile taken with --per-thread
thread_sample_ns() {	# profile tid type
	go tool pprof -raw -symbolize=none -sample_index="$3" "$1" 2>/dev/null |
		awk -v t="tid:[$2]" -v c="$(case $3 in cpu) echo 1 ;; off_cpu) echo 2 ;; *) echo 3 ;; esac)" \
			'/^ +[0-9]+ +[0-9]+ +[0-9]+:/ { v = $c } index($0, t) { s += v } END { printf "%d\n", s }'
}
thread_wall_ns() { thread_sample_ns "$1" "$2" wall; }	# profile tid

# a profile's duration in seconds: -raw prints short durations without a unit, -top's header keeps it
profile_seconds() {	# profile
	go tool pprof -top -symbolize=none "$1" 2>/dev/null | awk -F'[ ,]+' '/^Duration:/ {
		v = $2 + 0; if ($2 ~ /ms$/) v /= 1000; else if ($2 ~ /us$|µs$/) v /= 1e6; print v }'
}
