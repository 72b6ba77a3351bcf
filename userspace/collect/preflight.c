/* preflight.c -- checks that the kernel and our privileges allow BPF profiling, before we try */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <bpf/bpf.h>
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

static bool capable(int cap)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	return !syscall(SYS_capget, &hdr, data) && has_cap(data, cap);
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

/* A socket filter that swaps a stack word: kernels before 5.12 refuse the instruction (-EINVAL). */
bool preflight__bpf_xchg(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .off = -8, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 1 },
		{ .code = BPF_STX | BPF_ATOMIC | BPF_DW, .dst_reg = BPF_REG_10, .src_reg = BPF_REG_1,
		  .off = -8, .imm = BPF_XCHG },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd >= 0)
		close(fd);
	/* any other failure (privileges) is the real load's to explain */
	return fd >= 0 || fd != -EINVAL;
}

bool preflight__kernel_before(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma < major || (ma == major && mi < minor);
}

/*
 * Before 5.11 BPF maps count against RLIMIT_MEMLOCK, and creating one past it
 * fails with EPERM: libbpf lifts the limit only with CAP_SYS_RESOURCE.
 */
static bool memlock_bound(void)
{
	struct rlimit rl;

	return preflight__kernel_before(5, 11) && !getrlimit(RLIMIT_MEMLOCK, &rl) &&
	       rl.rlim_cur != RLIM_INFINITY;
}

/* Debian's perf_event_paranoid=3 lets only CAP_SYS_ADMIN open perf events on some kernels. */
static bool paranoid_any(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int level = 0;

	if (!f)
		return false;
	if (fscanf(f, "%d", &level) != 1)
		level = 0;
	fclose(f);
	return level > 2;
}

void preflight__explain(const char *what, int err)
{
	const char *hint = "";

	if ((err == -EPERM || err == -EACCES) && memlock_bound())
		hint = ": this kernel (before 5.11) counts BPF maps against RLIMIT_MEMLOCK; raise it (ulimit -l unlimited, LimitMEMLOCK=infinity) or grant CAP_SYS_RESOURCE";
	else if ((err == -EPERM || err == -EACCES) && paranoid_any() && !capable(CAP_SYS_ADMIN))
		hint = ": kernel.perf_event_paranoid is above 2, which on this kernel leaves perf events to CAP_SYS_ADMIN; set it to 2 or grant CAP_SYS_ADMIN";
	else if (err == -EPERM || err == -EACCES)
		hint = ": run as root, or grant CAP_BPF and CAP_PERFMON";
	else if (err == -ENOENT || err == -EOPNOTSUPP)
		hint = ": the kernel lacks a feature the sampler needs (perf events, BTF)";
	else if (err == -E2BIG || err == -ENOMEM)
		hint = ": maps too large for the memory limit (try smaller --stack-storage-size)";
	p_err("failed to %s: %s%s", what, strerror(-err), hint);
}
