/* options.h -- what the user asked for, as plain data: cli/ fills it, every stage below reads it */
#ifndef EBPFPROF_OPTIONS_H
#define EBPFPROF_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

enum output_format { FORMAT_PPROF, FORMAT_FOLDED, FORMAT_TOP, FORMAT_HTML };
enum command { CMD_PROFILE, CMD_AGENT, CMD_CONVERT, CMD_DIFF };
enum group_by { GROUP_PROCESS, GROUP_CONTAINER, GROUP_NONE };
enum scope { SCOPE_NODE, SCOPE_POD };
enum profile_mode { MODE_CPU, MODE_OFFCPU, MODE_WALL, MODE_HEAP, MODE_ALLOC };

struct label {
	char *key;
	char *value;
};

/* Only `ebpfprof agent` reads these. Strings are owned by the config. */
struct agent_config {
	double interval;		/* seconds per window */
	char *push_url;
	bool push_api;
	char *otlp_url;			/* --push-otlp: OpenTelemetry profiles endpoint base */
	char *basic_auth;		/* "user:password", from a file or EBPFPROF_BASIC_AUTH, never argv */
	char *bearer_token;		/* from a file or EBPFPROF_BEARER_TOKEN */
	char *tenant_id;
	char *ca_file;
	int push_timeout_ms;
	int push_max_attempts;		/* 0: the pusher's default, <0: no limit */
	long push_max_age_ms;		/* 0: the pusher's default, <0: no limit */
	bool push_sample_labels;	/* keep pid/tid sample labels on pushes */
	char *label_keys;		/* --label-keys: own labels pushed, comma-separated; NULL: default */
	long push_max_samples;		/* 0: Pyroscope's 16000 */
	size_t queue_max_bytes;
	char *spool_dir;
	size_t spool_max_bytes;
	char *listen;			/* NULL: no pull endpoint */
	char *http_token;		/* from a file or EBPFPROF_HTTP_TOKEN */
	char *output_dir;		/* NULL: ./profiles when neither push nor listen */
	int retention;			/* files kept in output_dir */
	struct label *labels;
	int n_labels;
	enum group_by group_by;
	bool kubernetes;
	char *node_name;
	char *docker_dir;	/* dockerd's containers directory, for names; "" none */
	enum scope scope;
	char *cgroup;			/* cgroup v2 path to restrict to */
	bool go_heap;			/* --go-heap: every Go process's heap profile each window */
};

struct config {
	bool agent;			/* `ebpfprof agent` */
	double duration;		/* seconds */
	int frequency;			/* Hz per CPU */
	__u32 *pids;			/* --pid filter, malloc'd */
	int n_pids;
	const char *output;		/* path or "-" for stdout */
	enum output_format format;
	int top_n;
	bool include_idle;
	bool no_kernel;
	bool no_user;
	bool per_thread;
	bool verbose;
	__u32 stack_entries;
	__u32 count_entries;
	__u32 live_entries;		/* --mode alloc: live map entries; 0: ALLOC_LIVE_MAX */
	int demangle;			/* enum demangle_mode: none, short (default), full */
	bool debuginfod;		/* may download debug info from $DEBUGINFOD_URLS */
	int dwarf_mb;			/* memory for DWARF line tables over all files; 0: none */
	enum profile_mode mode;		/* cpu (default), off-cpu, wall, heap, alloc */
	int off_cpu_min_us;		/* off-CPU blocks shorter than this are ignored */
	int unwind;			/* enum sampler_unwind: auto (default), fp, cfi */
	int unwind_table_mb;		/* kernel memory for CFI rows */
	struct agent_config ag;
	enum command command;		/* CMD_AGENT also sets agent */
	const char *inputs[2];		/* convert: IN; diff: BEFORE, AFTER */
	const char *sample_type;	/* convert/diff --type; NULL: the first CPU-like one */
	const char *label_focus;	/* --label KEY:VALUE: only samples with that label; NULL: all */
};

/* Exit codes: usage and environment errors are told apart from runtime failures. */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

#endif /* EBPFPROF_OPTIONS_H */
