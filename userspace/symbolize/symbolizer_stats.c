/* symbolizer_stats.c -- the symbolizer's statistics (struct symbolizer_stats), declared once */
#include <stddef.h>
#include "symbolizer.h"

#define SS(field) offsetof(struct symbolizer_stats, field)

const struct stat_desc symbolizer_stat_descs[] = {
	STAT_COUNT("symbol_processes_total", "Processes whose mappings were read", SS(pids)),
	STAT_COUNT("symbol_processes_gone_total",
		  "Processes first looked up after they exited, so their user frames stayed unnamed",
		  SS(pids_gone)),
	STAT_COUNT("symbol_images_superseded_total",
		  "Process images a later one replaced at their pid (an exec, a recycled pid), kept until their samples were named",
		  SS(images_superseded)),
	STAT_COUNT("symbol_images_unread_total",
		  "Process images first met after a later one at their pid, too late to read: their user frames stayed unnamed",
		  SS(images_unread)),
	STAT_COUNT("symbol_images_read_late_total",
		  "Process images whose maps were read as they exec'd, so dropped: their user frames stayed unnamed",
		  SS(images_read_late)),
	STAT_COUNT("symbol_perf_maps_refused_total",
		  "Perf maps (/tmp/perf-PID.map) not read: another user's, a link, not a plain file, or written before their process started",
		  SS(perfmaps_refused)),
	STAT_COUNT("symbol_forks_refused_unknown_total",
		  "Forked processes read rather than named from their parent: the parent not read (not sampled yet)",
		  SS(forks_parent_unknown)),
	STAT_COUNT("symbol_forks_refused_unsettled_total",
		  "Forked processes read rather than named from their parent: its maps unreadable (it exited, exec'd again, or its read failed)",
		  SS(forks_parent_unsettled)),
	STAT_LEVEL("symbol_processes",
		  "Processes whose mappings the symbolizer holds", NULL, SS(pids_live)),
	STAT_LEVEL("symbol_mappings",
		  "Mappings the symbolizer holds, over all processes", NULL, SS(mappings_live)),
	STAT_COUNT("symbol_files_loaded_total", "Files whose symbols were read", SS(files_loaded)),
	STAT_COUNT("symbol_file_cache_hits_total",
		  "Files whose symbols were found in the cache", SS(file_cache_hits)),
	STAT_COUNT("symbol_files_evicted_total",
		  "Symbol tables trimmed from the cache", SS(files_evicted)),
	STAT_LEVEL("symbol_cache_files", "Files whose symbols are cached", NULL, SS(files_cached)),
	STAT_LEVEL("symbol_cache_symbols", "Symbols cached", NULL, SS(symbols)),
	STAT_LEVEL("symbol_cache_bytes", "Memory of cached symbol tables", "bytes", SS(bytes)),
	STAT_COUNT_BY("symbol_access_denied_total",
		  "Reads the agent's privileges refused, so frames stayed unnamed, by what",
		  "what=\"maps\"",
		  SS(maps_denied)),
	STAT_COUNT_BY("symbol_access_denied_total", NULL, "what=\"files\"", SS(files_denied)),
};
const int n_symbolizer_stat_descs = sizeof(symbolizer_stat_descs) / sizeof(symbolizer_stat_descs[0]);
