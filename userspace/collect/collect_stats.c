/* collect_stats.c -- every counter of the sampler and the off-CPU tracer, declared once */
#include <stddef.h>
#include "collect_stats.h"

#define SB(i) offsetof(struct sampler_figures, bpf) + (i) * sizeof(__u64)
#define SF(field) offsetof(struct sampler_figures, field)

const struct stat_desc sampler_stats[] = {
	STAT_COUNT("samples_total", "Samples taken by the BPF program", SB(STAT_SAMPLES)),
	STAT_COUNT_BY("samples_lost_total",
		  "Stacks lost (sample kept under a pseudo frame) or samples dropped, by reason",
		  "reason=\"kernel_stack_map_full\"", SB(STAT_KSTACK_MAP_FULL)),
	STAT_COUNT_BY("samples_lost_total",
		  NULL, "reason=\"user_stack_map_full\"", SB(STAT_USTACK_MAP_FULL)),
	STAT_COUNT_BY("samples_lost_total",
		  NULL, "reason=\"kernel_stack_error\"", SB(STAT_KSTACK_ERROR)),
	STAT_COUNT_BY("samples_lost_total",
		  NULL, "reason=\"user_stack_error\"", SB(STAT_USTACK_ERROR)),
	STAT_COUNT_BY("samples_lost_total",
		  NULL, "reason=\"counts_map_full\"", SB(STAT_COUNTS_FULL)),
	STAT_COUNT("process_events_dropped_total",
		  "New-process announcements lost to a full ring buffer", SB(STAT_EVENTS_DROPPED)),
	STAT_COUNT("process_execs_unsampled_total",
		  "Processes that exited unsampled while their exec waited (20 ms, longer if idle), so were never read",
		  SF(execs_unsampled)),
	STAT_COUNT("process_exec_idle_waits_total",
		  "Exec waits begun again because the process had been on a CPU for under a tenth of the time since the last look",
		  SF(execs_idle)),
	STAT_COUNT("process_exec_rechecks_total",
		  "Execs looked at again 5 ms after a first look found them busy (their start counts from the fork)",
		  SF(execs_rechecked)),
	STAT_COUNT("unwind_cfi_total", "User stacks walked with CFI tables", SB(STAT_UNWIND_CFI)),
	STAT_COUNT("unwind_truncated_total",
		  "CFI walks that stopped before the outermost frame", SB(STAT_UNWIND_TRUNCATED)),
	STAT_COUNT("unwind_fp_fallback_total",
		  "User stacks taken with frame pointers before the process's tables were loaded",
		  SB(STAT_UNWIND_FP_FALLBACK)),
	STAT_COUNT("unwind_exec_drops_total",
		  "Execs that dropped their process's CFI tables, built for the image before",
		  SB(STAT_EXEC_TABLES_DROPPED)),
};
const int n_sampler_stats = sizeof(sampler_stats) / sizeof(sampler_stats[0]);

#define OB(i) offsetof(struct offcpu_figures, bpf) + (i) * sizeof(__u64)

const struct stat_desc offcpu_stats[] = {
	STAT_COUNT("offcpu_switches_total",
		  "Context switches the off-CPU tracer saw", OB(OFFCPU_STAT_SWITCHES)),
	STAT_COUNT("offcpu_blocks_total",
		  "Blocks begun by threads that pass the filters", OB(OFFCPU_STAT_BLOCKS)),
	STAT_COUNT("offcpu_unwind_cfi_total",
		  "Blocked user stacks walked with CFI", OB(OFFCPU_STAT_UNWIND_CFI)),
	STAT_COUNT("offcpu_unwind_truncated_total",
		  "CFI walks of blocked stacks that stopped before the outermost frame",
		  OB(OFFCPU_STAT_UNWIND_TRUNCATED)),
	STAT_COUNT("offcpu_unwind_fp_fallback_total",
		  "Blocked user stacks taken with frame pointers before the process's tables loaded",
		  OB(OFFCPU_STAT_UNWIND_FP_FALLBACK)),
	STAT_COUNT("offcpu_missed_switch_in_total",
		  "Blocks whose switch-in the tracepoint never reported (end estimated)",
		  OB(OFFCPU_STAT_MISSED_SWITCH_IN)),
	STAT_COUNT_BY("offcpu_lost_total",
		  "Off-CPU stacks or time lost, by reason",
		  "reason=\"kernel_stack_map_full\"",
		  OB(OFFCPU_STAT_KSTACK_MAP_FULL)),
	STAT_COUNT_BY("offcpu_lost_total",
		  NULL, "reason=\"user_stack_map_full\"", OB(OFFCPU_STAT_USTACK_MAP_FULL)),
	STAT_COUNT_BY("offcpu_lost_total",
		  NULL, "reason=\"kernel_stack_error\"", OB(OFFCPU_STAT_KSTACK_ERROR)),
	STAT_COUNT_BY("offcpu_lost_total",
		  NULL, "reason=\"user_stack_error\"", OB(OFFCPU_STAT_USTACK_ERROR)),
	STAT_COUNT_BY("offcpu_lost_total",
		  NULL, "reason=\"counts_map_full\"", OB(OFFCPU_STAT_COUNTS_FULL)),
	STAT_COUNT_BY("offcpu_lost_total",
		  NULL, "reason=\"start_failed\"", OB(OFFCPU_STAT_START_FAILED)),
};
const int n_offcpu_stats = sizeof(offcpu_stats) / sizeof(offcpu_stats[0]);
