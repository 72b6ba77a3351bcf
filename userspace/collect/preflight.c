/* preflight.c -- checks that the kernel and our privileges allow BPF profiling, before we try */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <bpf/libbpf.h>
#include "preflight.h"
#include "lib/log.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define BTF_PATH "/sys/kernel/btf/vmlinux"

static int has_cap(const struct __user_cap_data_struct data[2], int cap)
{
	return !!(data[cap / 32].effective & (1U << (cap % 32)));
}

/* CAP_SYS_ADMIN covers BPF and perf events on every kernel; CAP_BPF + CAP_PERFMON on 5.8+. */
static int privileged(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return geteuid() == 0;
	return has_cap(data, CAP_SYS_ADMIN) || (has_cap(data, CAP_BPF) && has_cap(data, CAP_PERFMON));
}

int preflight__check(void)
{
	int ret;

	if (access(BTF_PATH, R_OK)) {
		p_err("kernel BTF not found at %s: ebpfprof needs a kernel built with CONFIG_DEBUG_INFO_BTF=y (5.8+)",
		      BTF_PATH);
		return -ENOENT;
	}
	if (!privileged()) {
		p_err("permission denied: run as root, or grant CAP_BPF and CAP_PERFMON (plus CAP_SYS_PTRACE and CAP_SYSLOG for symbols)");
		return -EPERM;
	}
	ret = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_PERF_EVENT, NULL);
	if (ret == 0 || ret == -ENOSYS || ret == -EOPNOTSUPP) {
		p_err("BPF perf_event programs are not supported by this kernel (CONFIG_BPF_SYSCALL, CONFIG_BPF_EVENTS)");
		return -EOPNOTSUPP;
	}
	if (ret < 0) {
		p_err("cannot use BPF: %s (is kernel.unprivileged_bpf_disabled or a security module blocking it?)",
		      strerror(-ret));
		return ret;
	}
	return 0;
}

void preflight__explain(const char *what, int err)
{
	const char *hint = "";

	if (err == -EPERM || err == -EACCES)
		hint = ": run as root, or grant CAP_BPF and CAP_PERFMON";
	else if (err == -ENOENT || err == -EOPNOTSUPP)
		hint = ": the kernel lacks a feature the sampler needs (perf events, BTF)";
	else if (err == -E2BIG || err == -ENOMEM)
		hint = ": maps too large for the memory limit (try smaller --stack-storage-size)";
	p_err("failed to %s: %s%s", what, strerror(-err), hint);
}
