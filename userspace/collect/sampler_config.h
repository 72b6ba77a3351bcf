/* sampler_config.h -- loads the BPF sampler the way the command line asks */
#ifndef EBPFPROF_SAMPLER_CONFIG_H
#define EBPFPROF_SAMPLER_CONFIG_H

#include <stdbool.h>
#include "lib/options.h"
#include "sampler.h"

/*
 * Opens and loads the sampler with cfg's filters and map sizes (not started).
 * ANNOUNCE_CGROUP1_SSID: 1 + the v1 subsystem whose cgroup announcements
 * carry (0: none). On failure prints one line naming the likely cause and
 * returns NULL with errno set.
 */
struct sampler *sampler_config__load(const struct config *cfg, bool double_buffer,
				       const struct cgroup_scope *cgroup, __u32 announce_cgroup1_ssid);

#endif /* EBPFPROF_SAMPLER_CONFIG_H */
