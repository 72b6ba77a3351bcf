/* symbolizer_stats.c -- the symbolizer's statistics (struct symbolizer_stats), declared once */
#include <stddef.h>
#include "symbolizer.h"

#define SS(field) offsetof(struct symbolizer_stats, field)

const struct stat_desc symbolizer_stat_descs[] = {
	{ "symbol_processes_total", "Processes whose mappings were read", STAT_TYPE_COUNTER, NULL, NULL, SS(pids) },
	{ "symbol_processes_gone_total",
	  "Processes first looked up after they exited, so their user frames stayed unnamed", STAT_TYPE_COUNTER,
	  NULL, NULL, SS(pids_gone) },
	{ "symbol_processes", "Processes whose mappings the symbolizer holds", STAT_TYPE_GAUGE, NULL, NULL,
	  SS(pids_live) },
	{ "symbol_mappings", "Mappings the symbolizer holds, over all processes", STAT_TYPE_GAUGE, NULL, NULL,
	  SS(mappings_live) },
	{ "symbol_files_loaded_total", "Files whose symbols were read", STAT_TYPE_COUNTER, NULL, NULL,
	  SS(files_loaded) },
	{ "symbol_file_cache_hits_total", "Files whose symbols were found in the cache", STAT_TYPE_COUNTER, NULL,
	  NULL, SS(file_cache_hits) },
	{ "symbol_files_evicted_total", "Symbol tables trimmed from the cache", STAT_TYPE_COUNTER, NULL, NULL,
	  SS(files_evicted) },
	{ "symbol_cache_files", "Files whose symbols are cached", STAT_TYPE_GAUGE, NULL, NULL, SS(files_cached) },
	{ "symbol_cache_symbols", "Symbols cached", STAT_TYPE_GAUGE, NULL, NULL, SS(symbols) },
	{ "symbol_cache_bytes", "Memory of cached symbol tables", STAT_TYPE_GAUGE, "bytes", NULL, SS(bytes) },
	{ "symbol_access_denied_total", "Reads the agent's privileges refused, so frames stayed unnamed, by what",
	  STAT_TYPE_COUNTER, NULL, "what=\"maps\"", SS(maps_denied) },
	{ "symbol_access_denied_total", NULL, STAT_TYPE_COUNTER, NULL, "what=\"files\"", SS(files_denied) },
};
const int n_symbolizer_stat_descs = sizeof(symbolizer_stat_descs) / sizeof(symbolizer_stat_descs[0]);
