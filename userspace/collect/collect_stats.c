/* collect_stats.c -- every counter of the sampler and the off-CPU tracer, declared once */
#include <stddef.h>
#include "collect_stats.h"

#define SB(i) offsetof(struct sampler_figures, bpf) + (i) * sizeof(__u64)
#define SF(field) offsetof(struct sampler_figures, field)
#define LOST "Stacks lost (sample kept under a pseudo frame) or samples dropped, by reason"

const struct stat_desc sampler_stats[] = {
	{ "samples_total", "Samples taken by the BPF program", STAT_TYPE_COUNTER, NULL, NULL, SB(STAT_SAMPLES) },
	{ "samples_lost_total", LOST, STAT_TYPE_COUNTER, NULL, "reason=\"kernel_stack_collision\"",
	  SB(STAT_KSTACK_COLLISION) },
	{ "samples_lost_total", NULL, STAT_TYPE_COUNTER, NULL, "reason=\"user_stack_collision\"",
	  SB(STAT_USTACK_COLLISION) },
	{ "samples_lost_total", NULL, STAT_TYPE_COUNTER, NULL, "reason=\"kernel_stack_error\"",
	  SB(STAT_KSTACK_ERROR) },
	{ "samples_lost_total", NULL, STAT_TYPE_COUNTER, NULL, "reason=\"user_stack_error\"",
	  SB(STAT_USTACK_ERROR) },
	{ "samples_lost_total", NULL, STAT_TYPE_COUNTER, NULL, "reason=\"counts_map_full\"",
	  SB(STAT_COUNTS_FULL) },
	{ "process_events_dropped_total", "New-process announcements lost to a full ring buffer",
	  STAT_TYPE_COUNTER, NULL, NULL, SB(STAT_EVENTS_DROPPED) },
	{ "process_execs_unsampled_total",
	  "Processes that exited unsampled while their exec waited (20 ms, longer if idle), so were never read",
	  STAT_TYPE_COUNTER, NULL, NULL, SF(execs_unsampled) },
	{ "process_exec_idle_waits_total",
	  "Exec waits begun again because the process had been on a CPU for under a tenth of the time since the last look",
	  STAT_TYPE_COUNTER, NULL, NULL, SF(execs_idle) },
	{ "process_exec_rechecks_total",
	  "Execs looked at again 5 ms after a first look found them busy (their start counts from the fork)",
	  STAT_TYPE_COUNTER, NULL, NULL, SF(execs_rechecked) },
	{ "unwind_cfi_total", "User stacks walked with CFI tables", STAT_TYPE_COUNTER, NULL, NULL,
	  SB(STAT_UNWIND_CFI) },
	{ "unwind_truncated_total", "CFI walks that stopped before the outermost frame", STAT_TYPE_COUNTER, NULL,
	  NULL, SB(STAT_UNWIND_TRUNCATED) },
	{ "unwind_fp_fallback_total", "User stacks taken with frame pointers before the process's tables were loaded",
	  STAT_TYPE_COUNTER, NULL, NULL, SB(STAT_UNWIND_FP_FALLBACK) },
	{ "unwind_exec_drops_total", "Execs that dropped their process's CFI tables, built for the image before",
	  STAT_TYPE_COUNTER, NULL, NULL, SB(STAT_EXEC_TABLES_DROPPED) },
};
const int n_sampler_stats = sizeof(sampler_stats) / sizeof(sampler_stats[0]);

#define OB(i) offsetof(struct offcpu_figures, bpf) + (i) * sizeof(__u64)

const struct stat_desc offcpu_stats[] = {
	{ "offcpu_switches_total", "Context switches the off-CPU tracer saw", STAT_TYPE_COUNTER, NULL, NULL,
	  OB(OFFCPU_STAT_SWITCHES) },
	{ "offcpu_blocks_total", "Blocks begun by threads that pass the filters", STAT_TYPE_COUNTER, NULL, NULL,
	  OB(OFFCPU_STAT_BLOCKS) },
	{ "offcpu_unwind_cfi_total", "Blocked user stacks walked with CFI", STAT_TYPE_COUNTER, NULL, NULL,
	  OB(OFFCPU_STAT_UNWIND_CFI) },
	{ "offcpu_unwind_truncated_total", "CFI walks of blocked stacks that stopped before the outermost frame",
	  STAT_TYPE_COUNTER, NULL, NULL, OB(OFFCPU_STAT_UNWIND_TRUNCATED) },
	{ "offcpu_unwind_fp_fallback_total",
	  "Blocked user stacks taken with frame pointers before the process's tables loaded", STAT_TYPE_COUNTER,
	  NULL, NULL, OB(OFFCPU_STAT_UNWIND_FP_FALLBACK) },
	{ "offcpu_missed_switch_in_total", "Blocks whose switch-in the tracepoint never reported (end estimated)",
	  STAT_TYPE_COUNTER, NULL, NULL, OB(OFFCPU_STAT_MISSED_SWITCH_IN) },
	{ "offcpu_lost_total", "Off-CPU stacks or time lost, by reason", STAT_TYPE_COUNTER, NULL,
	  "reason=\"kernel_stack_collision\"", OB(OFFCPU_STAT_KSTACK_COLLISION) },
	{ "offcpu_lost_total", NULL, STAT_TYPE_COUNTER, NULL, "reason=\"user_stack_collision\"",
	  OB(OFFCPU_STAT_USTACK_COLLISION) },
	{ "offcpu_lost_total", NULL, STAT_TYPE_COUNTER, NULL, "reason=\"kernel_stack_error\"",
	  OB(OFFCPU_STAT_KSTACK_ERROR) },
	{ "offcpu_lost_total", NULL, STAT_TYPE_COUNTER, NULL, "reason=\"user_stack_error\"",
	  OB(OFFCPU_STAT_USTACK_ERROR) },
	{ "offcpu_lost_total", NULL, STAT_TYPE_COUNTER, NULL, "reason=\"counts_map_full\"",
	  OB(OFFCPU_STAT_COUNTS_FULL) },
	{ "offcpu_lost_total", NULL, STAT_TYPE_COUNTER, NULL, "reason=\"start_failed\"",
	  OB(OFFCPU_STAT_START_FAILED) },
};
const int n_offcpu_stats = sizeof(offcpu_stats) / sizeof(offcpu_stats[0]);
