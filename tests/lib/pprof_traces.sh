# pprof_traces.sh -- shares of a profile's traces, read with go tool pprof -traces (sourced by the Java suite and tests/vm/check.sh)

# awk's ms(v): a trace's weight as pprof prints it with its unit (10.10ms, 1.52s), in ms
PPROF_MS_AWK='
	function ms(v) {
		if (v ~ /ms$/) return v + 0
		if (v ~ /us$/) return v / 1000
		if (v ~ /ns$/) return v / 1e6
		if (v ~ /s$/) return v * 1000
		return v + 0
	}'

# java_thread_shares PROFILE [TID [BUT]]: traces of the JVM's threads (the process's comm "java";
# only thread TID if given), less a launcher thread idle in pthread_join and those with a frame
# matching regex BUT: "named whole total" weights in ms (named: a Split frame; whole: no
# truncation or loss mark)
java_thread_shares() {
	go tool pprof -traces -symbolize=none "$1" 2>/dev/null | awk -v want="${2:-}" -v but="${3:-}" "$PPROF_MS_AWK"'
		function done() { if (java && !idle && (want == "" || tid == want)) { t += w; if (named) n += w; if (!cut) c += w } }
		/^-+\+/ { done(); w = 0; java = named = cut = idle = 0; tid = ""; first = 1; next }
		/ comm: / { java = ($2 == "java"); next }
		/ tid: / { tid = $2; next }
		/^ +[a-z]+: / { next }
		{ if (first) { w = ms($1); f = $2; first = 0 } else f = $1
		  if (f ~ /^Split\./) named = 1
		  if ($0 ~ /\[truncated user stack\]|\[[a-z]+ frames lost|\[lost user stack/) cut = 1
		  if (f == "pthread_join" || f == "__pthread_clockjoin_ex" || (but != "" && f ~ but)) idle = 1 }
		END { done(); printf "%d %d %d\n", n, c, t }'
}

# cut_trace PROFILE: the heaviest trace of the JVM's threads that is cut (a truncation or loss
# mark), its weight and its outermost frames, root last: what a failure shows to say where
cut_trace() {
	go tool pprof -traces -symbolize=none "$1" 2>/dev/null | awk "$PPROF_MS_AWK"'
		function done() { if (java && cut && w > best) { best = w; out = tail } }
		/^-+\+/ { done(); w = 0; java = cut = 0; tail = ""; first = 1; next }
		/ comm: / { java = ($2 == "java"); next }
		/^ +[a-z]+: / { next }
		{ if (first) { w = ms($1); sub(/^ *[^ ]+ +/, ""); first = 0 } else sub(/^ +/, "")
		  if ($0 ~ /\[truncated user stack\]|\[[a-z]+ frames lost|\[lost user stack/) cut = 1
		  tail = (tail == "" ? "" : tail ";") $0; n = split(tail, a, ";")
		  if (n > 6) { tail = a[n - 5]; for (i = n - 4; i <= n; i++) tail = tail ";" a[i] } }
		END { done(); if (best) printf "%d ms: ...;%s\n", best, out }'
}

# named_share PROFILE FN CALLER: "hit total" in ms of PROFILE's samples, hit those whose stack holds
# FN with CALLER below it (anywhere toward the root)
named_share() {
	go tool pprof -traces -symbolize=none "$1" 2>/dev/null | awk -v fn="$2" -v caller="$3" "$PPROF_MS_AWK"'
		function done() { t += w; if (hit) h += w }
		/^-+\+/ { if (on) done(); on = 1; w = 0; in_fn = hit = 0; first = 1; next }
		!on || /^ +[a-z_]+: / { next }
		{ if (first) { w = ms($1); f = $2; first = 0 } else f = $1
		  if (f == fn) in_fn = 1
		  else if (in_fn && f == caller) hit = 1 }
		END { if (on) done(); printf "%d %d\n", h, t }'
}
