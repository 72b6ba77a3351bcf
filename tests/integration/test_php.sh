#!/usr/bin/env bash
# test_php.sh -- PHP frames named with no flags (the Zend VM walked in BPF): the CPU split of two functions within 5 points and their lines, an internal function in order, a stack past the walk's bound, closures made by eval and freed, wall time in usleep, a php-fpm pool and Apache's mod_php over loopback, each version in a Docker container; Debian 12's PHP 8.2 and Debian 13's 8.4 (chrooted), a PHP we do not know
set -u
SUITE=php
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../lib/docker.sh"
FDIR=$(cd "$(dirname "$0")/../fixtures/php" && pwd)
FREQ=${PHP_FREQUENCY:-199}	# not near a multiple of the kernel tick: 499 Hz beat with 250 Hz under load
SECS=${PHP_SECONDS:-3}		# CPU seconds of each split workload, wall seconds of the others
TOL=${PHP_TOLERANCE:-5}
ROOT=$(bash "$(dirname "$0")/../lib/trixie_root.sh" 2>/dev/null) || ROOT=
# the suite's files sit inside the Debian 13 root, so its PHP sees them at ${tmp#$ROOT}
tmp=$(mktemp -d "${ROOT:-/tmp}/tmp/ebpfprof-php.XXXXXX" 2>/dev/null || mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; [ -n "${PHP_KEEP:-}" ] || rm -rf "$tmp"' EXIT
cp "$FDIR"/*.php "$tmp/"

# the versions: each a tag, how to run its php and its php-fpm
declare -A PHP FPM IN
[ -x /usr/bin/php8.2 ] && PHP[php8.2]=/usr/bin/php8.2 FPM[php8.2]=/usr/sbin/php-fpm8.2 IN[php8.2]=$tmp
if [ -n "$ROOT" ] && [ -x "$ROOT/usr/bin/php8.4" ]; then
	PHP[php8.4]="chroot $ROOT php8.4" FPM[php8.4]="chroot $ROOT php-fpm8.4" IN[php8.4]=${tmp#"$ROOT"}
fi
VERSIONS="php8.2 php8.4"

# start NAME COMMAND...: runs a workload in the background into $tmp/NAME.out; its pid in PIDS[NAME]
declare -A PIDS
start() {
	local name=$1
	shift
	# shellcheck disable=SC2068
	$@ >"$tmp/$name.out" 2>&1 &
	PIDS[$name]=$!
}

# profile NAME PIDS [options...]: profiles the pids into $tmp/NAME.pb.gz, opening $tmp/gate (or $GATE)
# once sampling runs (the workloads count from then) and stopping when the pids in $WAIT have ended
# (their SECS done, at any machine's speed), or after SECS without WAIT
profile() {
	local name=$1 pids=$2 prof
	shift 2
	"$EBPFPROF" -v --pid "$pids" --frequency "$FREQ" --duration 120 "$@" --output "$tmp/$name.pb.gz" \
		2>"$tmp/$name.err" &
	prof=$!
	wait_profiling "$tmp/$name.err" $prof 600
	touch "${GATE:-$tmp/gate}"
	if [ -n "${WAIT:-}" ]; then
		for _ in $(seq 1200); do
			alive $WAIT || break
			sleep 0.1
		done
	else
		sleep "$SECS"
	fi
	kill -INT $prof 2>/dev/null
	wait $prof
	rm -f "${GATE:-$tmp/gate}"	# closed for the next run's workloads, started before its profile
	go tool pprof -traces "$tmp/$name.pb.gz" >"$tmp/$name.traces" 2>/dev/null
}

alive() { for p in "$@"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }

# stop NAME: SIGTERM to the workload, which prints what it measured
end() { kill -TERM "${PIDS[$1]}" 2>/dev/null; wait "${PIDS[$1]}" 2>/dev/null; }

# share TRACES PID FN [OTHER]: percent of pid's weight whose stacks hold FN, of those holding FN or OTHER
# (of all its weight without OTHER); pprof -traces blocks: weight and leaf, then callers, then labels
share() {
	awk -v pid="$2" -v fn="$3" -v other="${4:-}" '
		function ms(w) { return w ~ /ms$/ ? w + 0 : w ~ /us$/ ? w / 1000 : w ~ /s$/ ? w * 1000 : w + 0 }
		function flush() {
			if (p == pid) { if (a) hit += wt; if (a || b || other == "") all += wt }
			p = ""; wt = 0; a = 0; b = 0; first = 0
		}
		/^-+\+/ { flush(); next }
		$1 == "pid:" { p = $2; next }
		$1 ~ /:$/ { next }
		!first && NF >= 2 { wt = ms($1); first = 1; $1 = "" }
		{ sub(/^ +/, "") }
		$0 == fn { a = 1 }
		$0 == other { b = 1 }
		END { flush(); if (all) printf "%.1f\n", 100 * hit / all }' "$1"
}
# comm_share TRACES COMM FN: percent of the weight of processes named COMM whose stacks hold FN
comm_share() {
	awk -v comm="$2" -v fn="$3" '
		function ms(w) { return w ~ /ms$/ ? w + 0 : w ~ /us$/ ? w / 1000 : w ~ /s$/ ? w * 1000 : w + 0 }
		function flush() { if (c == comm) { all += wt; if (a) hit += wt } c = ""; wt = 0; a = 0; first = 0 }
		/^-+\+/ { flush(); next }
		$1 == "comm:" { c = $2; next }
		$1 ~ /:$/ { next }
		!first && NF >= 2 { wt = ms($1); first = 1; $1 = "" }
		{ sub(/^ +/, "") }
		$0 == fn { a = 1 }
		END { flush(); if (all) printf "%.1f\n", 100 * hit / all }' "$1"
}
within() { awk -v g="$1" -v w="$2" -v t="$TOL" 'BEGIN { d = g - w; exit !(d <= t && -d <= t) }'; }

# the line pprof -lines gives function FN's samples most often, of pid PID only
hot_line() {
	go tool pprof -lines -top -nodecount=200 -tagfocus="pid=^$2\$" "$1" 2>/dev/null |
		awk -v f="$3" '$6 == f { n = split($7, a, ":"); print a[n]; exit }'
}
# the line of marker comment M in fixture FILE
marker() { grep -n "$2" "$FDIR/$1" | head -1 | cut -d: -f1; }

# the PHP runtime's counters in a run's -v output: "name=value ..."
counters() { grep '^ebpfprof: php: ' "$tmp/$1.err" | cut -d' ' -f3-; }
counter() { counters "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# split VERSION RUN: Hot::alpha's share of alpha and beta against the script's own, their loops' lines
split_check() {
	local t=$1 run=$2 name=$1-split pid=${PIDS[$1-split]} a want la lb ga gb msg ok=1
	end "$name"
	read -r _ want _ _ < <(grep '^alpha ' "$tmp/$name.out") || true
	a=$(share "$tmp/$run.traces" "$pid" Hot::alpha beta)
	if [ -z "$a" ] || [ -z "${want:-}" ]; then
		fail "$name" "alpha ${a:-unnamed}, measured '$(head -c 200 "$tmp/$name.out")'"
		return
	fi
	msg="Hot::alpha $a% of alpha and beta (measured $want%)"
	within "$a" "$want" || ok=0
	la=$(marker split.php ALPHA_LOOP)
	lb=$(marker split.php BETA_LOOP)
	ga=$(hot_line "$tmp/$run.pb.gz" "$pid" Hot::alpha)
	gb=$(hot_line "$tmp/$run.pb.gz" "$pid" beta)
	[ "${ga:-}" = "$la" ] && [ "${gb:-}" = "$lb" ] || ok=0
	msg="$msg; lines $ga, $gb (loops at $la, $lb)"
	[ $ok = 1 ] && pass "$name: $msg" || fail "$name" "$msg"
}

# internal VERSION RUN: leaf called back by array_map, an internal function, called by outer: in that
# order; and md5, internal too, called back by array_map (zend_call_function runs it, no execute_ex)
internal_check() {
	local t=$1 run=$2 name=$1-internal pid=${PIDS[$1-internal]} res
	end "$name"
	# each of pid's stacks through leaf or md5: its PHP frames from there, deduplicated in order
	res=$(awk -v pid="$pid" '
		function flush() {
			if (p == pid && s ~ /^(leaf|md5) /) {
				n[s ~ /^md5/]++
				if (s ~ /^(leaf|md5) array_map outer \{main\} $/) ok[s ~ /^md5/]++; else bad = all
			}
			p = ""; s = ""; all = ""; first = 0
		}
		/^-+\+/ { flush(); next }
		$1 == "pid:" { p = $2; next }
		$1 ~ /:$/ { next }
		!first && NF >= 2 { first = 1; $1 = "" }
		{ sub(/^ +/, ""); all = all (all == "" ? "" : " < ") $0 }
		/^(leaf|md5|array_map|outer|\{main\})$/ && (s != "" || /^(leaf|md5)$/) { s = s $0 " " }
		END { flush(); printf "%d %d %d %d %s\n", ok[0], n[0], ok[1], n[1], bad }' "$tmp/$run.traces")
	read -r ok n ok5 n5 bad <<<"$res"
	if [ "${n:-0}" -gt 0 ] && [ "$ok" = "$n" ] && [ "${n5:-0}" -gt 0 ] && [ "$ok5" = "$n5" ]; then
		pass "$name: all $n stacks through leaf are leaf < array_map < outer < {main}, all $n5 through md5 md5 < array_map < outer < {main}"
	else
		# the whole stack, native frames and marks too: where the walk stopped and why
		fail "$name" "$ok of ${n:-0} stacks through leaf, $ok5 of ${n5:-0} through md5 in order; one, whole: ${bad:-none}"
	fi
}

# the CPU run: every selected split and internal workload, and a PHP we do not know, in one profile
cpu_run() {
	local t pids= wait_for=
	for t in $VERSIONS; do
		[ -n "${PHP[$t]:-}" ] || continue
		selected "$t-split" && start "$t-split" "${PHP[$t]}" "${IN[$t]}/split.php" "$SECS" "${IN[$t]}/gate" &&
			wait_for=$wait_for${wait_for:+ }${PIDS[$t-split]}
		selected "$t-internal" && start "$t-internal" "${PHP[$t]}" "${IN[$t]}/internal.php" 120
	done
	if selected php8.2-jit && [ -n "${PHP[php8.2]:-}" ]; then
		# opcache's tracing JIT on, as a site would turn it on; the script just copied is cached at once
		start php8.2-jit "${PHP[php8.2]}" -d opcache.enable_cli=1 -d opcache.jit=tracing \
			-d opcache.jit_buffer_size=32M -d opcache.file_update_protection=0 "$tmp/split.php" 120
	fi
	if selected php-unknown && [ -n "${PHP[php8.2]:-}" ]; then
		# a copy of php8.2 that says it is 7.0, a version without a layout here
		sed 's|X-Powered-By: PHP/8\.2\.|X-Powered-By: PHP/7.0.|' /usr/bin/php8.2 >"$tmp/php" && chmod +x "$tmp/php"
		start php-unknown "$tmp/php" "$tmp/split.php" 120
	fi
	for t in "${!PIDS[@]}"; do pids=$pids${pids:+,}${PIDS[$t]}; done
	[ -n "$pids" ] || return 0
	sleep 0.5
	WAIT=$wait_for profile cpu "$pids"
	for t in $VERSIONS; do
		[ -n "${PIDS[$t-split]:-}" ] && split_check "$t" cpu
		[ -n "${PIDS[$t-internal]:-}" ] && internal_check "$t" cpu
	done
	[ -n "${PIDS[php-unknown]:-}" ] && unknown_check cpu
	[ -n "${PIDS[php8.2-jit]:-}" ] && jit_check cpu
}

# JIT: samples in JIT code marked, the PHP frames above named from the frame chain
jit_check() {
	local run=$1 pid=${PIDS[php8.2-jit]} marked named
	end php8.2-jit
	marked=$(share "$tmp/$run.traces" "$pid" "[php jit code]")
	named=$(share "$tmp/$run.traces" "$pid" "{main}")
	if [ "${marked%.*}" -ge 50 ] && [ "${named%.*}" -ge 90 ] &&
		[ -n "$(share "$tmp/$run.traces" "$pid" Hot::alpha)" ] && [ "$(counter "$run" jit_frames_total)" -gt 0 ]; then
		pass "php8.2-jit: ${marked}% of the samples in [php jit code], ${named}% under {main}, Hot::alpha named"
	else
		fail php8.2-jit "[php jit code] in ${marked:-no}%, {main} in ${named:-no}% of the samples"
	fi
}

# a PHP we do not know: native frames only, said once, never guessed
unknown_check() {
	local run=$1 pid=${PIDS[php-unknown]} exec named
	end php-unknown
	exec=$(share "$tmp/$run.traces" "$pid" execute_ex)
	named=$(share "$tmp/$run.traces" "$pid" Hot::alpha)
	if [ "$(counter "$run" unknown_versions_total)" = 1 ] &&
		[ "$(grep -c 'a PHP whose version or layout we do not know' "$tmp/$run.err")" = 1 ] &&
		[ "${named:-0.0}" = 0.0 ] && [ "${exec%.*}" -ge 90 ]; then
		pass "php-unknown: PHP \"7.0\" counted once as unknown, its stacks native (execute_ex in $exec%)"
	else
		fail php-unknown "$(counters "$run" | cut -c1-120); execute_ex in ${exec:-none}%"
	fi
}

# deep VERSION RUN: down recursing 80 deep under array_map, past the bound of one execute_ex call: every
# stack through spin holds spin, then down to the bound's count of PHP frames, then the mark, and no PHP
# frame below it (the rest of that run is not read, so none is placed under the native frames); counted
deep_check() {
	local t=$1 run=$2 name=$1-deep pid=${PIDS[$1-deep]} bound shown counted
	end "$name"
	bound=$(sed -n 's/^#define PHP_MAX_RUN \([0-9]*\)$/\1/p' "$(dirname "$0")/../../include/php.h")
	shown=$(bound_shapes "$tmp/$run.traces" spin down "[php frames lost: too deep]" \
		'^(spin|down|outer|array_map|\{closure|\{main\})' "$pid")
	counted=$(counter "$run" frames_lost_depth_total)
	if [ -n "$bound" ] && bound_held "$shown" "$bound" && [ "${counted:-0}" -gt 0 ]; then
		pass "$name: all $(awk '{ n += $1 } END { print n }' <<<"$shown") stacks through spin: spin, $((bound - 1)) down, [php frames lost: too deep], no PHP frame below; $counted marks counted"
	else
		fail "$name" "stacks (count, PHP frames, mark, PHP frames below it, out of order): '$(head -3 <<<"$shown" | tr -s ' \n' ' ')'; bound ${bound:-unread}; counted ${counted:-none}"
	fi
}

# closure VERSION RUN: closures made by eval, run for 20 ms each, unset and freed: each frame in one is
# named as that closure (its eval'd code, its own line; 8.4's name holds the line too) or as
# [unknown php function], never as another; the unnamed ones counted, and each closure read as a function
closure_check() {
	local t=$1 run=$2 name=$1-closure pid=${PIDS[$1-closure]} made res own other unknown all unnamed funcs
	end "$name"
	read -r made <"$tmp/$name.out" || made=0
	res=$(go tool pprof -top -lines -nodecount=100000 -nodefraction=0 -symbolize=none -tagfocus="pid=^$pid\$" \
		"$tmp/$run.pb.gz" 2>/dev/null |
		awk -v made="$made" '
		{ s = $0; if (!sub(/^ *[0-9.]+[a-z]* +[0-9.]+% +[0-9.]+% +[0-9.]+[a-z]* +[0-9.]+% +/, "", s)) next }
		s ~ /^\[unknown php function\]/ { unknown++; next }
		s !~ /^\{closure/ { next }
		{
			l = match(s, /:[0-9]+$/) ? substr(s, RSTART + 1) + 0 : 0
			if (l >= 1 && l <= made && s ~ /closure\.php\([0-9]+\) : eval\(\)'"'"'d code:[0-9]+$/ &&
			    (s ~ /^\{closure\} / || index(s, "code:" l "} ") > 0)) own[l] = 1
			else other++
		}
		END { n = 0; for (l in own) n++; print n, other + 0, unknown + 0 }')
	read -r own other unknown <<<"$res"
	# the counter is the run's: against the unnamed frames of all its processes
	all=$(grep -c '^\[unknown php function\]$' <(sed 's/^ *[0-9.]*[a-z]* *//' "$tmp/$run.traces"))
	unnamed=$(counter "$run" frames_unnamed_total)
	funcs=$(counter "$run" functions_total)
	if [ "$made" -gt 10 ] && [ $((own * 10)) -ge $((made * 8)) ] && [ "$other" = 0 ] &&
		[ "$((all > 0))" = "$(( ${unnamed:-0} > 0 ))" ] && [ "${funcs:-0}" -ge "$own" ]; then
		pass "$name: $own of $made freed closures named with their own line, none as another; $unknown unnamed; the run's $all unnamed frames, frames_unnamed_total $unnamed; functions_total $funcs"
	else
		fail "$name" "$own of $made closures named as themselves, $other as another, $unknown unnamed; the run's $all unnamed frames, frames_unnamed_total ${unnamed:-none}, functions_total ${funcs:-none}"
	fi
}

# the deep run: each version's deep.php and closure.php in one profile, which ends when the closures' CPU
# seconds are done
deep_run() {
	local t pids= wait_for=
	for t in $VERSIONS; do
		[ -n "${PHP[$t]:-}" ] || continue
		selected "$t-deep" && start "$t-deep" "${PHP[$t]}" "${IN[$t]}/deep.php" 120 &&
			pids=$pids${pids:+,}${PIDS[$t-deep]}
		# half the split's CPU seconds: some 70 closures, each run 20 ms
		selected "$t-closure" && start "$t-closure" "${PHP[$t]}" "${IN[$t]}/closure.php" \
			"$(awk -v s="$SECS" 'BEGIN { print s / 2 }')" "${IN[$t]}/gate" &&
			pids=$pids${pids:+,}${PIDS[$t-closure]} wait_for=$wait_for${wait_for:+ }${PIDS[$t-closure]}
	done
	[ -n "$pids" ] || return 0
	sleep 0.5
	WAIT=$wait_for profile deep "$pids"
	for t in $VERSIONS; do
		[ -n "${PIDS[$t-deep]:-}" ] && deep_check "$t" deep
		[ -n "${PIDS[$t-closure]:-}" ] && closure_check "$t" deep
	done
}

# wall: compute's share of compute and rest (usleep) against the script's own clock
wall_run() {
	local t pids= c want
	for t in $VERSIONS; do
		[ -n "${PHP[$t]:-}" ] && selected "$t-wall" &&
			start "$t-wall" "${PHP[$t]}" "${IN[$t]}/wall.php" "$SECS" "${IN[$t]}/gate" &&
			pids=$pids${pids:+,}${PIDS[$t-wall]}
	done
	[ -n "$pids" ] || return 0
	sleep 0.5
	WAIT=${pids//,/ } profile wall "$pids" --mode wall
	for t in $VERSIONS; do
		[ -n "${PIDS[$t-wall]:-}" ] || continue
		end "$t-wall"
		read -r _ want _ _ < <(grep '^compute ' "$tmp/$t-wall.out") || true
		c=$(share "$tmp/wall.traces" "${PIDS[$t-wall]}" compute rest)
		if [ -n "$c" ] && [ -n "${want:-}" ] && within "$c" "$want" &&
			[ -n "$(share "$tmp/wall.traces" "${PIDS[$t-wall]}" usleep)" ]; then
			pass "$t-wall: compute $c% of compute and rest's wall time (measured $want%), usleep named"
		else
			fail "$t-wall" "compute ${c:-unnamed}% of compute and rest's wall time, measured ${want:-nothing}%"
		fi
	done
}

# fpm: a pool of two workers serving fpm.php over loopback; its workers' stacks name render_page on its loop
fpm_run() {
	local t port pids= load=() line w n ok c
	declare -A PORT=()
	for t in $VERSIONS; do
		[ -n "${FPM[$t]:-}" ] && selected "$t-fpm" || continue
		port=$(free_port)
		PORT[$t]=$port
		printf '[global]\nerror_log = %s\ndaemonize = no\n[www]\nlisten = 127.0.0.1:%s\npm = static\npm.max_children = 2\n' \
			"${IN[$t]}/$t-fpm.log" "$port" >"$tmp/$t-fpm.conf"
		start "$t-fpm" "${FPM[$t]}" -R -F -y "${IN[$t]}/$t-fpm.conf"
	done
	[ ${#PORT[@]} -gt 0 ] || return 0
	for t in "${!PORT[@]}"; do
		for _ in $(seq 100); do
			grep -qs 'ready to handle connections' "$tmp/$t-fpm.log" && break
			sleep 0.1
		done
		w=$(pgrep -d, -P "${PIDS[$t-fpm]}")
		pids=$pids${pids:+,}$w
		python3 "$FDIR/fcgi_load.py" "127.0.0.1:${PORT[$t]}" "${IN[$t]}/fpm.php" 600 2 >"$tmp/$t-load.out" 2>&1 &
		load+=($!)
	done
	profile fpm "$pids"
	# the load first, so no request is cut by the pool's end
	kill -TERM "${load[@]}" 2>/dev/null
	wait "${load[@]}" 2>/dev/null
	for t in $VERSIONS; do
		[ -n "${PORT[$t]:-}" ] || continue
		end "$t-fpm"
		read -r _ n _ ok <"$tmp/$t-load.out" || true
		c=$(comm_share "$tmp/fpm.traces" "php-fpm${t#php}" render_page)
		line=$(go tool pprof -lines -top -nodecount=200 -tagfocus="comm=^php-fpm${t#php}\$" "$tmp/fpm.pb.gz" 2>/dev/null |
			awk '$6 == "render_page" { n = split($7, a, ":"); print a[n]; exit }')
		if [ -n "$c" ] && [ "${c%.*}" -ge 50 ] && [ "${ok:-0}" -gt 0 ] && [ "$ok" = "$n" ] &&
			[ "$line" = "$(marker fpm.php RENDER_LOOP)" ]; then
			pass "$t-fpm: $ok requests served over loopback; render_page in $c% of the workers' samples, at its loop's line $line"
		else
			fail "$t-fpm" "${ok:-0} of ${n:-0} requests served; render_page in ${c:-no}% of the workers' samples, line ${line:-none}"
		fi
	done
}

# container V ROOT: V of ROOT (the host's tree for 8.2, the Debian 13 root for 8.4) alone in a Docker
# image (its binary, its libraries, the script), profiled from the host by its host pid; its frames
# named with the container's paths
container_run() {
	local v=$1 root=$2 name=$1-container img=ebpfprof-php-test ct=ebpfprof-php-test pid a want secs
	# twice the split case's CPU seconds: at 199 Hz, ~1200 samples put TOL at 3.8 standard errors of a 70 % share, not 2.7
	secs=$(awk -v s="$SECS" 'BEGIN { print 2 * s }')
	case $BUILD in */san) skip $name "containers run in the plain pass only, as tests/containers do"; return ;; esac
	[ -n "${PHP[$v]:-}" ] || { skip $name "no $v (for 8.4: no Debian 13 root)"; return; }
	docker_up || { skip $name "$DOCKER_WHY"; return; }
	rm -rf "$tmp/ctr"
	mkdir -p "$tmp/ctr"
	cp "$FDIR/split.php" "$tmp/ctr/"
	docker rm -f $ct >/dev/null 2>&1
	docker_image_from $img "$root" "/usr/bin/$v" usr/share/zoneinfo/UTC &&
		docker run -d --name $ct -v "$tmp/ctr:/app" $img "/usr/bin/$v" -n /app/split.php "$secs" /app/gate \
			>/dev/null && pid=$(docker inspect -f '{{.State.Pid}}' $ct)
	if [ -z "${pid:-}" ] || [ "$pid" = 0 ]; then
		fail $name "the container did not start"
	else
		sleep 0.5
		GATE="$tmp/ctr/gate" WAIT=$pid profile container "$pid"
		docker stop -t 10 $ct >/dev/null
		docker logs $ct >"$tmp/$name.out" 2>&1
		read -r _ want _ _ < <(grep '^alpha ' "$tmp/$name.out") || true
		a=$(share "$tmp/container.traces" "$pid" Hot::alpha beta)
		if [ -n "$a" ] && [ -n "${want:-}" ] && within "$a" "$want" &&
			go tool pprof -lines -top -nodecount=200 "$tmp/container.pb.gz" 2>/dev/null |
			awk '$6 == "Hot::alpha" && $7 ~ /^\/app\/split.php:/ { f = 1 } END { exit !f }'; then
			pass "$name: Hot::alpha $a% of alpha and beta (measured $want%), named at /app/split.php inside the container"
		else
			fail $name "alpha ${a:-unnamed}, measured '$(grep -m1 '^alpha ' "$tmp/$name.out")'"
		fi
	fi
	docker rm -f $ct >/dev/null 2>&1
	docker image rm -f $img >/dev/null 2>&1
	docker_down
}

# the agent's pull endpoint names PHP frames; /metrics has the php families
agent_run() {
	local name=php8.2-agent agent pid named try
	[ -n "${PHP[php8.2]:-}" ] || return 0
	"$EBPFPROF" agent --listen 127.0.0.1:0 --frequency 99 2>"$tmp/$name.err" &
	agent=$!
	port=$(wait_port "$tmp/$name.err") || { fail $name "agent did not listen"; stop $agent; return; }
	start $name "${PHP[php8.2]}" "$tmp/split.php" 120
	pid=${PIDS[$name]}
	# a process starting on a busy machine may miss the first window: up to three 2 s pulls
	for try in 1 2 3; do
		sleep 1
		go tool pprof -top "http://127.0.0.1:$port/debug/pprof/profile?seconds=2&pid=$pid" \
			>"$tmp/$name.top" 2>/dev/null
		awk '$6 == "Hot::alpha" { a = 1 } $6 == "beta" { b = 1 } END { exit !(a && b) }' \
			"$tmp/$name.top" && break
	done
	curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/$name.metrics"
	end $name
	stop $agent
	named=$(sed -n 's/^ebpfprof_php_frames_named_total \([0-9]*\)$/\1/p' "$tmp/$name.metrics")
	if awk '$6 == "Hot::alpha" { a = 1 } $6 == "beta" { b = 1 } END { exit !(a && b) }' "$tmp/$name.top" &&
		[ "${named:-0}" -gt 0 ] && grep -Eq '^ebpfprof_php_processes_total [1-9]' "$tmp/$name.metrics" &&
		grep -q '^# HELP ebpfprof_php_unknown_versions_total ' "$tmp/$name.metrics"; then
		pass "$name: Hot::alpha and beta named by the pull endpoint, $named frames named in /metrics"
	else
		fail $name "pull: $(grep -cE ' (Hot::alpha|beta)$' "$tmp/$name.top") of Hot::alpha, beta; frames named: ${named:-none}"
	fi
}

# apache: Apache's prefork workers running PHP 8.2 as a module (libphp8.2.so, not a php executable),
# serving fpm.php over loopback; their stacks name render_page on its loop's line
apache_run() {
	local name=php8.2-apache mod=/usr/lib/apache2/modules/libphp8.2.so dir port ap w load n ok c line
	[ -x /usr/sbin/apache2 ] && [ -f "$mod" ] ||
		{ skip $name "no Apache with mod_php here (apache2-bin, libapache2-mod-php)"; return; }
	# its workers run as www-data: a tree they may read
	dir=$(mktemp -d /tmp/ebpfprof-apache.XXXXXX)
	chmod 755 "$dir" && mkdir -m 755 "$dir/www" "$dir/run" && install -m 644 "$FDIR/fpm.php" "$dir/www/"
	port=$(free_port)
	cat >"$dir/apache.conf" <<-CONF
		ServerRoot $dir
		DefaultRuntimeDir $dir/run
		PidFile $dir/run/apache.pid
		ErrorLog $dir/error.log
		LoadModule mpm_prefork_module /usr/lib/apache2/modules/mod_mpm_prefork.so
		LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
		LoadModule php_module $mod
		Listen 127.0.0.1:$port
		ServerName localhost
		User www-data
		Group www-data
		StartServers 2
		MinSpareServers 2
		MaxSpareServers 2
		MaxRequestWorkers 2
		DocumentRoot $dir/www
		<Directory $dir/www>
			Require all granted
		</Directory>
		<FilesMatch "\.php\$">
			SetHandler application/x-httpd-php
		</FilesMatch>
	CONF
	# a session of its own: at its end prefork signals its whole process group
	setsid /usr/sbin/apache2 -f "$dir/apache.conf" -DFOREGROUND 2>"$tmp/$name.out" &
	ap=$!
	for _ in $(seq 100); do
		curl -sf -o /dev/null "http://127.0.0.1:$port/fpm.php?n=1" && break
		sleep 0.1
	done
	w=$(pgrep -d, -P $ap)
	# requests in turn, each counted when its page came back
	(n=0 ok=0; trap 'echo "requests $n ok $ok"; exit' TERM
	while :; do
		n=$((n + 1))
		curl -sf "http://127.0.0.1:$port/fpm.php?n=2000000" | grep -q '^page ' && ok=$((ok + 1))
	done) >"$tmp/$name.load" &
	load=$!
	profile apache "${w:-$ap}"
	kill -TERM $load 2>/dev/null
	wait $load 2>/dev/null
	kill -TERM $ap 2>/dev/null
	wait $ap 2>/dev/null
	rm -rf "$dir"
	read -r _ n _ ok <"$tmp/$name.load" || true
	c=$(comm_share "$tmp/apache.traces" apache2 render_page)
	line=$(go tool pprof -lines -top -nodecount=200 "$tmp/apache.pb.gz" 2>/dev/null |
		awk '$6 == "render_page" { n = split($7, a, ":"); print a[n]; exit }')
	if [ -n "$w" ] && [ -n "$c" ] && [ "${c%.*}" -ge 50 ] && [ "${ok:-0}" -gt 0 ] &&
		[ "$line" = "$(marker fpm.php RENDER_LOOP)" ] &&
		[ "$(counter apache processes_total)" = "$(tr , '\n' <<<"$w" | wc -l)" ]; then
		pass "$name: $ok requests served by Apache's mod_php; render_page in $c% of the workers' samples, at its loop's line $line"
	else
		fail $name "${ok:-0} of ${n:-0} requests served; workers '${w}'; render_page in ${c:-no}% of the workers' samples, line ${line:-none}; $(counters apache | cut -c1-60)"
	fi
}

for t in $VERSIONS; do
	[ -n "${PHP[$t]:-}" ] && continue
	for c in split internal wall fpm deep closure; do skip "$t-$c" "no $t here (Debian 13's is in the root tests/lib/trixie_root.sh builds)"; done
done
cpu_run
deep_run
wall_run
fpm_run
if selected php8.2-apache; then apache_run; fi
if selected php8.2-agent; then agent_run; fi
if selected php8.2-container; then container_run php8.2 /; fi
if selected php8.4-container; then container_run php8.4 "$ROOT"; fi
