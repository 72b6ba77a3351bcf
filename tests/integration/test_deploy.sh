#!/usr/bin/env bash
# test_deploy.sh -- checks deploy/: manifests parse and keep least privilege, every flag they use exists in `ebpfprof agent --help`
set -u
SUITE=deploy
. "$(dirname "$0")/lib.sh"
# the sanitizer pass runs what drives our C code through others' input; this is for the plain pass
case "${BUILD:-}" in
*/san) skip all "deploy/ holds no C code (its one run is --help): the plain pass checked it"; exit 0 ;;
esac
EBPFPROF=${EBPFPROF:-build/ebpfprof}
case $EBPFPROF in /*) ;; *) EBPFPROF=$PWD/$EBPFPROF ;; esac
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the first python with PyYAML (pyenv shims may hide Debian's python3-yaml)
PY=
for p in python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null && "$p" -c 'import yaml' 2>/dev/null; then PY=$p; break; fi
done

# Static checks in Python: prints PASS/FAIL lines, and every flag used by a
# manifest, the unit or the Dockerfile to $1 as "flag<TAB>where".
check_files() {
	"$PY" - "$1" <<'PYEOF'
import glob, json, re, shlex, sys
import yaml

SUITE = "deploy"
flags_out = open(sys.argv[1], "w")
CAPS = {"BPF", "PERFMON", "SYS_PTRACE", "DAC_READ_SEARCH", "SYSLOG", "SYS_RESOURCE"}
SECRET_ENV = {"EBPFPROF_BASIC_AUTH", "EBPFPROF_BEARER_TOKEN", "EBPFPROF_HTTP_TOKEN"}
SECRET_FLAGS = {"--basic-auth", "--bearer-token", "--http-token", "--token", "--password"}
API = {
    "Namespace": "v1", "ServiceAccount": "v1", "ConfigMap": "v1", "Secret": "v1",
    "Service": "v1", "ClusterRole": "rbac.authorization.k8s.io/v1",
    "ClusterRoleBinding": "rbac.authorization.k8s.io/v1", "Role": "rbac.authorization.k8s.io/v1",
    "RoleBinding": "rbac.authorization.k8s.io/v1", "DaemonSet": "apps/v1",
    "Deployment": "apps/v1",
}


def report(name, problems):
    if problems:
        print("FAIL: %s/%s: %s" % (SUITE, name, "; ".join(problems)))
    else:
        print("PASS: %s/%s" % (SUITE, name))


def note_flags(tokens, where):
    for t in tokens:
        t = str(t)
        if t.startswith("--"):
            flags_out.write("%s\t%s\n" % (t.split("=", 1)[0], where))


def env_flag(name):
    """EBPFPROF_GROUP_BY -> --group-by; None for the secret variables"""
    if name in SECRET_ENV or not name.startswith("EBPFPROF_"):
        return None
    return "--" + name[len("EBPFPROF_"):].lower().replace("_", "-")


# --- every YAML document parses, with a sane kind and apiVersion
docs = {}
problems = []
files = sorted(glob.glob("deploy/kubernetes/*.yaml"))
if not files:
    problems.append("no deploy/kubernetes/*.yaml")
for f in files:
    try:
        loaded = [d for d in yaml.safe_load_all(open(f)) if d is not None]
    except yaml.YAMLError as e:
        problems.append("%s: %s" % (f, str(e).replace("\n", " ")))
        continue
    docs[f] = loaded
    for d in loaded:
        if not isinstance(d, dict) or "kind" not in d or "apiVersion" not in d:
            problems.append("%s: a document without kind/apiVersion" % f)
            continue
        want = API.get(d["kind"])
        if want is None:
            problems.append("%s: unexpected kind %s" % (f, d["kind"]))
        elif d["apiVersion"] != want:
            problems.append("%s: %s has apiVersion %s, want %s" % (f, d["kind"], d["apiVersion"], want))
        if not (d.get("metadata") or {}).get("name"):
            problems.append("%s: %s without metadata.name" % (f, d["kind"]))
report("yaml_parse", problems)


def of_kind(f, kind):
    return [d for d in docs.get(f, []) if isinstance(d, dict) and d.get("kind") == kind]


def containers(d):
    spec = d["spec"]["template"]["spec"]
    return spec.get("initContainers", []) + spec.get("containers", [])


def env_of(c):
    return {e["name"]: e for e in c.get("env", [])}


def check_secrets(c, where, problems):
    argv = [str(t) for t in c.get("command", []) + c.get("args", [])]
    for t in argv:
        if t.split("=", 1)[0] in SECRET_FLAGS:
            problems.append("%s: secret on the command line (%s)" % (where, t))
    for name, e in env_of(c).items():
        if name in SECRET_ENV and "secretKeyRef" not in (e.get("valueFrom") or {}):
            problems.append("%s: %s not from a secretKeyRef" % (where, name))


# --- every workload: flags, env names and secrets
problems = []
for f, ds in docs.items():
    for d in ds:
        if not isinstance(d, dict) or d.get("kind") not in ("DaemonSet", "Deployment"):
            continue
        for c in containers(d):
            where = "%s %s/%s" % (f, d["metadata"]["name"], c.get("name"))
            argv = [str(t) for t in c.get("command", []) + c.get("args", [])]
            if "ebpfprof" in str(c.get("image", "")):
                note_flags(argv, where)
                for name in env_of(c):
                    if env_flag(name):
                        flags_out.write("%s\t%s env %s\n" % (env_flag(name), where, name))
            check_secrets(c, where, problems)
    for d in of_kind(f, "ConfigMap"):
        for name in (d.get("data") or {}):
            if name in SECRET_ENV:
                problems.append("%s: %s in a ConfigMap" % (f, name))
            elif env_flag(name):
                flags_out.write("%s\t%s ConfigMap %s\n" % (env_flag(name), f, name))
report("secrets_not_in_argv", problems)

# --- the DaemonSet: host PID namespace, node name, least privilege
problems = []
f = "deploy/kubernetes/daemonset.yaml"
text = open(f).read() if f in docs else ""
dss = of_kind(f, "DaemonSet")
if len(dss) != 1:
    problems.append("want one DaemonSet in %s, found %d" % (f, len(dss)))
else:
    ds = dss[0]
    pod = ds["spec"]["template"]["spec"]
    labels = ds["spec"]["template"]["metadata"].get("labels", {})
    sel = ds["spec"].get("selector", {}).get("matchLabels", {})
    if not sel or any(labels.get(k) != v for k, v in sel.items()):
        problems.append("selector does not match the pod labels")
    if pod.get("hostPID") is not True:
        problems.append("no hostPID: true")
    if pod.get("hostNetwork"):
        problems.append("hostNetwork is not needed")
    if not any(t.get("operator") == "Exists" and not t.get("key") for t in pod.get("tolerations", [])):
        problems.append("no toleration for every taint (operator: Exists)")
    sa = pod.get("serviceAccountName")
    if not any(d["metadata"]["name"] == sa for d in of_kind(f, "ServiceAccount")):
        problems.append("serviceAccountName %s is not defined" % sa)
    rules = [r for d in of_kind(f, "ClusterRole") for r in d.get("rules", [])]
    pod_rules = [r for r in rules if "pods" in r.get("resources", [])]
    if not pod_rules or not {"get", "list", "watch"} <= set(pod_rules[0].get("verbs", [])):
        problems.append("no ClusterRole with get/list/watch on pods")
    if any(set(r.get("verbs", [])) - {"get", "list", "watch"} or "*" in r.get("resources", [])
           for r in rules):
        problems.append("the ClusterRole grants more than reading")
    if not any(s.get("name") == sa for d in of_kind(f, "ClusterRoleBinding") for s in d.get("subjects", [])):
        problems.append("no ClusterRoleBinding for %s" % sa)
    agents = [c for c in pod["containers"] if "ebpfprof" in str(c.get("image", ""))]
    if len(agents) != 1:
        problems.append("want one ebpfprof container")
    for c in agents:
        node = (env_of(c).get("NODE_NAME") or {}).get("valueFrom", {}).get("fieldRef", {})
        if node.get("fieldPath") != "spec.nodeName":
            problems.append("NODE_NAME is not from fieldRef spec.nodeName")
        argv = [str(t) for t in c.get("command", []) + c.get("args", [])]
        if not argv or argv[0] != "agent":
            problems.append("args do not start with the agent subcommand")
        if "--kubernetes" not in argv:
            problems.append("no --kubernetes")
        sc = c.get("securityContext", {})
        caps = sc.get("capabilities", {})
        added = set(caps.get("add", []))
        if added != CAPS:
            problems.append("capabilities %s, want %s" % (sorted(added), sorted(CAPS)))
        if "ALL" not in caps.get("drop", []):
            problems.append("capabilities do not drop ALL")
        if sc.get("privileged") is True and not re.search(r"#.*privileged", text):
            problems.append("privileged: true without a comment saying why")
        if sc.get("allowPrivilegeEscalation") is not False:
            problems.append("allowPrivilegeEscalation is not false")
        res = c.get("resources", {})
        if not res.get("requests", {}).get("memory") or not res.get("limits", {}).get("memory"):
            problems.append("no memory request and limit")
        mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
        if not mounts.get("/sys/kernel/btf", {}).get("readOnly"):
            problems.append("/sys/kernel/btf not mounted read-only")
    # the fallback for kernels without CAP_BPF is documented where it would be used
    if not re.search(r"#[^\n]*privileged: true", text) or not re.search(r"#[^\n]*5\.8", text):
        problems.append("no comment on privileged: true as the fallback for kernels < 5.8")
report("daemonset", problems)

# --- the Service reaches the agents' pull port, with Prometheus annotations
problems = []
svcs = of_kind(f, "Service")
if not svcs or not dss:
    problems.append("no Service")
else:
    svc, ds = svcs[0], dss[0]
    if svc["spec"].get("type", "ClusterIP") != "ClusterIP":
        problems.append("Service is not ClusterIP")
    labels = ds["spec"]["template"]["metadata"].get("labels", {})
    if any(labels.get(k) != v for k, v in svc["spec"].get("selector", {}).items()):
        problems.append("Service selector does not match the DaemonSet pods")
    ports = {p.get("name"): p["containerPort"] for c in containers(ds) for p in c.get("ports", [])}
    for p in svc["spec"].get("ports", []):
        t = p.get("targetPort", p.get("port"))
        if t not in ports and t not in ports.values():
            problems.append("targetPort %s is no container port" % t)
    ann = svc["metadata"].get("annotations", {})
    if ann.get("prometheus.io/scrape") != "true" or not ann.get("prometheus.io/port"):
        problems.append("no prometheus.io/scrape and port annotations")
report("service", problems)

# --- the sidecar example
problems = []
f = "deploy/kubernetes/sidecar.yaml"
deps = of_kind(f, "Deployment")
if len(deps) != 1:
    problems.append("want one Deployment in %s" % f)
else:
    pod = deps[0]["spec"]["template"]["spec"]
    if pod.get("shareProcessNamespace") is not True:
        problems.append("no shareProcessNamespace: true")
    cs = pod.get("containers", [])
    agents = [c for c in cs if "ebpfprof" in str(c.get("image", ""))]
    if len(cs) < 2 or len(agents) != 1:
        problems.append("want an app container and one ebpfprof container")
    for c in agents:
        argv = [str(t) for t in c.get("command", []) + c.get("args", [])]
        joined = " ".join(argv)
        if not argv or argv[0] != "agent" or not re.search(r"--scope(=| )pod\b", joined):
            problems.append("the sidecar does not run agent --scope pod")
        added = set(c.get("securityContext", {}).get("capabilities", {}).get("add", []))
        if not {"BPF", "PERFMON"} <= added or added - CAPS:
            problems.append("sidecar capabilities %s" % sorted(added))
        if c.get("securityContext", {}).get("privileged"):
            problems.append("privileged sidecar")
    if deps[0]["spec"]["selector"]["matchLabels"].items() - deps[0]["spec"]["template"]["metadata"]["labels"].items():
        problems.append("selector does not match the pod labels")
report("sidecar", problems)

# --- the systemd unit: flags from ExecStart, capabilities, hardening
problems = []
f = "deploy/systemd/ebpfprof.service"
try:
    unit = open(f).read()
except OSError as e:
    unit = ""
    problems.append(str(e))
logical = re.sub(r"\\\n", " ", unit)
keys = {}
for line in logical.splitlines():
    line = line.strip()
    if line and not line.startswith(("#", ";", "[")) and "=" in line:
        k, v = line.split("=", 1)
        keys.setdefault(k.strip(), []).append(v.strip())
for cmd in keys.get("ExecStart", []):
    argv = shlex.split(cmd.lstrip("-@:+!"))
    if len(argv) < 2 or not argv[0].endswith("/ebpfprof") or argv[1] != "agent":
        problems.append("ExecStart does not run ebpfprof agent")
    note_flags(argv, f + " ExecStart")
    for t in argv:
        if t.split("=", 1)[0] in SECRET_FLAGS:
            problems.append("secret on the command line (%s)" % t)
for v in keys.get("Environment", []):
    if any(s + "=" in v for s in SECRET_ENV):
        problems.append("a secret in Environment=; use EnvironmentFile= or a credential file")
    for name in re.findall(r"(EBPFPROF_[A-Z_]+)=", v):
        if env_flag(name):
            flags_out.write("%s\t%s Environment %s\n" % (env_flag(name), f, name))
want_caps = {"CAP_" + c for c in CAPS} - {"CAP_SYS_RESOURCE"}
for k in ("AmbientCapabilities", "CapabilityBoundingSet"):
    got = set(" ".join(keys.get(k, [])).split())
    if not want_caps <= got or got - want_caps - {"CAP_SYS_RESOURCE"}:
        problems.append("%s=%s, want %s" % (k, " ".join(sorted(got)), " ".join(sorted(want_caps))))
for k, want in (("NoNewPrivileges", "yes"), ("ProtectSystem", "strict"), ("Restart", "on-failure")):
    if keys.get(k, [""])[-1] not in (want, "true" if want == "yes" else want):
        problems.append("%s is not %s" % (k, want))
if not keys.get("StateDirectory"):
    problems.append("no StateDirectory=")
if keys.get("DynamicUser", ["no"])[-1] not in ("yes", "true") and not keys.get("User"):
    problems.append("runs as root: no DynamicUser= or User=")
for k in ("ProtectKernelTunables", "ProtectKernelLogs"):
    if keys.get(k, ["no"])[-1] in ("yes", "true"):
        problems.append("%s=yes hides kernel symbols" % k)
report("systemd_unit", problems)

# --- the Dockerfile: two stages, the runtime one copies build/ebpfprof
problems = []
f = "deploy/Dockerfile"
try:
    lines = re.sub(r"\\\n", " ", open(f).read()).splitlines()
except OSError as e:
    lines = []
    problems.append(str(e))
instrs = [l.strip() for l in lines if l.strip() and not l.strip().startswith("#")]
# ARG defaults expand as Docker expands them: global ones in FROM, a stage's own in its RUNs
def expand(text, args):
    return re.sub(r"\$\{?(\w+)\}?", lambda m: args.get(m.group(1), m.group(0)), text)
stages, global_args, args = [], {}, {}
for l in instrs:
    op, _, rest = l.partition(" ")
    op = op.upper()
    rest = rest.strip()
    if op == "ARG":
        name, eq, val = rest.partition("=")
        val = val.strip().strip('"')
        if not stages:
            global_args[name] = val
        else:
            args[name] = val if eq else global_args.get(name, "")
        continue
    if op == "FROM":
        stages.append([])
        args = {}
        rest = expand(rest, global_args)
    elif op == "RUN":
        rest = expand(rest, args)
    if stages:
        stages[-1].append((op, rest))
if len(stages) < 2:
    problems.append("%d FROM lines, want a build and a runtime stage" % len(stages))
else:
    build, runtime = stages[0], stages[-1]
    if not all("debian:12" in s[0][1] or "bookworm" in s[0][1] for s in stages):
        problems.append("a stage is not Debian 12")
    runs = " ".join(r for op, r in build if op == "RUN")
    if not re.search(r"\bmake\b", runs) or "make deps" in runs:
        problems.append("the build stage does not run make (without deps)")
    for pkg in ("clang", "libbpf-dev", "bpftool", "libcurl4-openssl-dev", "libmicrohttpd-dev", "libjson-c-dev"):
        if not re.search(r"\b%s\b" % re.escape(pkg), runs):
            problems.append("build stage does not install %s" % pkg)
    if not any(op == "COPY" and "--from=" in r and "build/ebpfprof" in r for op, r in runtime):
        problems.append("the runtime stage does not copy build/ebpfprof")
    rt_runs = " ".join(r for op, r in runtime if op == "RUN")
    if re.search(r"\S+-dev\b|\bclang\b|\bgcc\b", rt_runs):
        problems.append("build tools in the runtime stage")
    for pkg in ("libbpf1", "libelf1", "libcurl4", "libmicrohttpd12", "libjson-c5", "ca-certificates"):
        if not re.search(r"\b%s\b" % re.escape(pkg), rt_runs):
            problems.append("runtime stage does not install %s" % pkg)
    for op, want in (("ENTRYPOINT", ["/usr/local/bin/ebpfprof"]), ("CMD", ["agent"])):
        got = [r for o, r in runtime if o == op]
        try:
            val = json.loads(got[-1]) if got else None
        except ValueError:
            val = None
        if not isinstance(val, list) or val[:len(want)] != want:
            problems.append("%s is %s, want %s" % (op, got[-1] if got else "missing", json.dumps(want)))
        elif op == "CMD":
            note_flags(val, f + " CMD")
        else:
            note_flags(val, f + " ENTRYPOINT")
    for op, r in runtime + build:
        if op == "ENV" and any(s in r for s in SECRET_ENV):
            problems.append("a secret baked into the image (ENV)")
report("dockerfile", problems)
flags_out.close()
PYEOF
}

# every flag the deployment files use is one the agent knows (the static checks list them)
test_flags_exist() {
	local missing
	if ! "$EBPFPROF" agent --help >"$tmp/help" 2>&1; then
		fail flags_exist "ebpfprof agent --help failed"
	elif [ ! -s "$tmp/flags" ] || [ "$(cut -f1 "$tmp/flags" | sort -u | wc -l)" -lt 5 ]; then
		fail flags_exist "found almost no flags in deploy/ (parser broken?)"
	else
		missing=$(sort -u "$tmp/flags" | while IFS=$'\t' read -r flag where; do
			grep -Eq -- "(^|[^a-z0-9-])${flag}([^a-z0-9-]|$)" "$tmp/help" || echo "$flag ($where)"
		done)
		if [ -z "$missing" ]; then
			pass flags_exist
		else
			fail flags_exist "not in agent --help: $(echo "$missing" | paste -sd, -)"
		fi
	fi
}

# systemd's own parser; ExecStart must name an existing binary, so point it at ours
test_systemd_verify() {
	local bin out
	if ! command -v systemd-analyze >/dev/null; then
		skip systemd_verify "no systemd-analyze"
		return
	fi
	bin=$EBPFPROF
	[ -x "$bin" ] || bin=/bin/true
	sed "s#/usr/local/bin/ebpfprof#$bin#" deploy/systemd/ebpfprof.service >"$tmp/ebpfprof.service"
	if out=$(systemd-analyze verify "$tmp/ebpfprof.service" 2>&1) &&
		! printf '%s\n' "$out" | grep -q 'ebpfprof.service'; then
		pass systemd_verify
	else
		fail systemd_verify "$(printf '%s\n' "$out" | grep -m3 . | paste -sd' ' -)"
	fi
}

if [ -z "$PY" ]; then
	for t in yaml_parse secrets_not_in_argv daemonset service sidecar systemd_unit dockerfile flags_exist; do
		skip "$t" "no python3 with PyYAML (apt-get install python3-yaml)"
	done
else
	# all of them in about a second, whichever TESTS picks; only the picked ones are printed
	check_files "$tmp/flags" | only_selected
	[ "${PIPESTATUS[0]}" = 0 ] || fail static_checks "the python checker crashed"
	run_test test_flags_exist
fi
run_test test_systemd_verify
