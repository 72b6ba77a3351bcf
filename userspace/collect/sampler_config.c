/* sampler_config.c -- loads the BPF sampler the way the command line asks */
#include <errno.h>
#include "lib/log.h"
#include "preflight.h"
#include "sampler_config.h"
#include "unwind.h"

struct sampler *sampler_config__load(const struct config *cfg, bool double_buffer,
				       const struct cgroup_scope *cgroup, __u32 announce_cgroup1_ssid)
{
	struct sampler_opts so = {
		.frequency = cfg->frequency,
		.pids = cfg->pids,
		.n_pids = cfg->n_pids,
		.include_idle = cfg->include_idle,
		.no_kernel = cfg->no_kernel,
		.no_user = cfg->no_user,
		.per_thread = cfg->per_thread,
		.stack_entries = cfg->stack_entries,
		.count_entries = cfg->count_entries,
		.double_buffer = double_buffer,
		.cgroup = cgroup ? *cgroup : (struct cgroup_scope){ 0 },
		.unwind = cfg->unwind,
		.unwind_rows = (__u32)cfg->unwind_table_mb * ((1u << 20) / sizeof(struct unwind_row)),
		.announce_cgroup1_ssid = announce_cgroup1_ssid,
	};
	enum sampler_walk walk;
	struct sampler *s;
	int err;

	if (!cfg->no_user && cfg->unwind != SAMPLER_UNWIND_FP) {
		walk = sampler__cfi_walk();
		if (walk == SAMPLER_WALK_NONE && cfg->unwind == SAMPLER_UNWIND_CFI) {
			p_err("--unwind cfi: this kernel lacks bpf_probe_read_user (5.5+) to walk CFI in BPF; use --unwind fp");
			errno = EOPNOTSUPP;
			return NULL;
		}
		if (walk == SAMPLER_WALK_NONE)
			p_warn("this kernel lacks bpf_probe_read_user (5.5+): user stacks by frame pointers only");
		if (walk == SAMPLER_WALK_STEPS)
			p_debug("CFI walk: a global function per %d frames (bpf_loop is 5.17's)", UNWIND_STEPS_PER_CALL);
	}
	s = sampler__new(&so);
	err = errno;
	if (!s) {
		preflight__explain("load the BPF sampler", -err);
		errno = err;
	}
	return s;
}
