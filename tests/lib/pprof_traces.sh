# pprof_java.sh -- the Java main thread's samples in a profile, read with go tool pprof (sourced by the Java suite and tests/vm/check.sh)

# java_thread_shares PROFILE [TID]: traces of the JVM's threads (the process's comm "java"; only
# thread TID if given), less a launcher thread idle in pthread_join: "named whole total" weights
# (named: a Split frame; whole: no truncation or loss mark)
java_thread_shares() {
	go tool pprof -traces -symbolize=none "$1" 2>/dev/null | awk -v want="${2:-}" '
		function done() { if (java && !idle && (want == "" || tid == want)) { t += w; if (named) n += w; if (!cut) c += w } }
		/^-+\+/ { done(); w = 0; java = named = cut = idle = 0; tid = ""; first = 1; next }
		/ comm: / { java = ($2 == "java"); next }
		/ tid: / { tid = $2; next }
		/^ +[a-z]+: / { next }
		{ if (first) { w = $1; sub(/[a-z]+$/, "", w); f = $2; first = 0 } else f = $1
		  if (f ~ /^Split\./) named = 1
		  if ($0 ~ /\[truncated user stack\]|\[[a-z]+ frames lost|\[lost user stack/) cut = 1
		  if (f == "pthread_join" || f == "__pthread_clockjoin_ex") idle = 1 }
		END { done(); printf "%d %d %d\n", n, c, t }'
}
