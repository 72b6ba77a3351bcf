/* config.c -- command line parsing shared by both modes, the one-shot options, and the mode dispatch */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "config_int.h"
#include "symbolize/symbolize.h"
#include "collect/collect.h"
#include "lib/log.h"

#define MAX_FREQUENCY 100000	/* the kernel's default perf_event_max_sample_rate */
#define MAX_PIDS 65536

static const char usage[] =
	"usage: ebpfprof [--duration SEC] [--frequency HZ] [--pid PID[,PID...]] [--output PATH|-]\n"
	"                [--format pprof|folded|top] [--include-idle] [--no-kernel] [--no-user]\n"
	"                [--per-thread] [--top N] [--mode cpu|off-cpu|wall|heap|alloc] [--off-cpu-min-us N]\n"
	"                [--demangle none|short|full] [--dwarf-mb N] [--debuginfod] [--verbose]\n"
	"                [--unwind auto|fp|cfi] [--unwind-table-mb N]\n"
	"       ebpfprof agent [OPTIONS]   (continuous profiling; see ebpfprof agent --help)\n"
	"       ebpfprof convert IN.pb.gz [--format html|folded|top|pprof] [-o PATH]\n"
	"       ebpfprof diff BEFORE.pb.gz AFTER.pb.gz [--format html|folded|top] [-o PATH]\n"
	"\n"
	"Samples the stacks of every CPU with eBPF and writes a symbolized profile.\n"
	"\n"
	"  -d, --duration SEC     how long to profile (default 30; Ctrl-C stops early)\n"
	"  -F, --frequency HZ     samples per second on each CPU (default 99)\n"
	"  -p, --pid LIST         only these processes (comma separated)\n"
	"  -o, --output PATH      where to write (default ebpfprof.pb.gz for pprof, stdout otherwise)\n"
	"  -f, --format FMT       pprof (gzip profile.proto), folded (flamegraph.pl), top,\n"
	"                         html (an interactive flame graph in one file)\n"
	"      --include-idle     keep samples of idle CPUs (pid 0)\n"
	"      --no-kernel        do not collect kernel stacks\n"
	"      --no-user          do not collect user stacks\n"
	"      --per-thread       add a tid label (pprof) and keep threads apart\n"
	"      --top N            rows of --format top (default 20)\n"
	"      --label KEY:VALUE  only the samples with that label (a Go pprof label, a span_id...)\n"
	"      --demangle MODE    C++/Rust names: none, short (default: no parameters), full\n"
	"      --debuginfod       fetch missing debug info from $DEBUGINFOD_URLS (cached on disk)\n"
	"      --dwarf-mb N       memory for DWARF file:line and inline frames (default 8; 0: none)\n"
	"  -m, --mode MODE        cpu (default), off-cpu (time blocked), wall (both: cpu, off_cpu\n"
	"                         and wall sample types in one profile), heap (every Go\n"
	"                         process's own heap profile, read from its memory at the end),\n"
	"                         alloc (--pid P's malloc/free sampled by bytes through uprobes)\n"
	"      --off-cpu-min-us N ignore off-CPU blocks shorter than N microseconds (default 1)\n"
	"      --unwind METHOD    user stacks: cfi (.eh_frame tables, frame pointers where a file\n"
	"                         has none), fp (frame pointers only), auto (cfi if the kernel\n"
	"                         can, 5.17+; the default)\n"
	"      --unwind-table-mb N  kernel memory for CFI tables (default 16)\n"
	"      --stack-storage-size N  stack map entries (default 16384)\n"
	"      --count-storage-size N  aggregation map entries (default 40960)\n"
	"      --live-storage-size N   --mode alloc: sampled blocks tracked until freed\n"
	"                         (default 65536; past it, a block counts in alloc_* only)\n"
	"  -v, --verbose          print statistics and libbpf messages\n"
	"  -h, --help             this text\n"
	"      --version          print the version\n";

static const struct option oneshot_opts[] = {
	{ "duration", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "label", required_argument, NULL, OPT_LABEL_FOCUS },
	{ "live-storage-size", required_argument, NULL, OPT_LIVE_SIZE },
	CONFIG_COMMON_OPTIONS,
	{},
};

int config__label_focus(struct config *cfg, const char *arg)
{
	const char *colon = strchr(arg, ':');

	if (!colon || colon == arg) {
		p_err("invalid label '%s' (KEY:VALUE, e.g. endpoint:/checkout)", arg);
		return -EINVAL;
	}
	cfg->label_focus = arg;
	return 0;
}

int config__long(const char *name, const char *arg, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max) {
		p_err("invalid %s '%s' (expected %ld..%ld)", name, arg, min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int config__seconds(const char *name, const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(v) || v <= 0 || v > 365 * 86400.0) {
		p_err("invalid %s '%s' (seconds, > 0)", name, arg);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_pids(struct config *cfg, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int err = 0;
	long v;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
		__u32 *p;

		err = config__long("pid", tok, 1, INT_MAX, &v);
		if (!err && cfg->n_pids >= MAX_PIDS) {
			p_err("too many pids (at most %d)", MAX_PIDS);
			err = -EINVAL;
		}
		if (err)
			break;
		p = realloc(cfg->pids, (cfg->n_pids + 1) * sizeof(*p));
		if (!p) {
			err = -ENOMEM;
			break;
		}
		cfg->pids = p;
		cfg->pids[cfg->n_pids++] = v;
	}
	if (!err && cfg->n_pids == 0) {
		p_err("--pid needs at least one pid");
		err = -EINVAL;
	}
	free(copy);
	return err;
}

int config__common(struct config *cfg, int opt, const char *arg)
{
	long v;
	int err;

	switch (opt) {
	case 'F':
		err = config__long("frequency", arg, 1, MAX_FREQUENCY, &v);
		cfg->frequency = v;
		return err;
	case 'p': return parse_pids(cfg, arg);
	case OPT_INCLUDE_IDLE: cfg->include_idle = true; return 0;
	case OPT_NO_KERNEL: cfg->no_kernel = true; return 0;
	case OPT_NO_USER: cfg->no_user = true; return 0;
	case OPT_PER_THREAD: cfg->per_thread = true; return 0;
	case 'v': cfg->verbose = true; return 0;
	case OPT_STACK_SIZE:
		err = config__long("--stack-storage-size", arg, 1, 1 << 22, &v);
		cfg->stack_entries = v;
		return err;
	case OPT_COUNT_SIZE:
		err = config__long("--count-storage-size", arg, 1, 1 << 24, &v);
		cfg->count_entries = v;
		return err;
	case OPT_DEBUGINFOD:
		cfg->debuginfod = true;
		return 0;
	case 'm':
		if (!strcmp(arg, "cpu"))
			cfg->mode = MODE_CPU;
		else if (!strcmp(arg, "off-cpu"))
			cfg->mode = MODE_OFFCPU;
		else if (!strcmp(arg, "wall"))
			cfg->mode = MODE_WALL;
		else if (!strcmp(arg, "heap"))
			cfg->mode = MODE_HEAP;
		else if (!strcmp(arg, "alloc"))
			cfg->mode = MODE_ALLOC;
		else {
			p_err("invalid --mode '%s' (expected cpu, off-cpu, wall, heap or alloc)", arg);
			return -EINVAL;
		}
		return 0;
	case OPT_OFFCPU_MIN:
		err = config__long("--off-cpu-min-us", arg, 0, 3600000000L, &v);
		cfg->off_cpu_min_us = v;
		return err;
	case OPT_DWARF_MB:
		err = config__long("--dwarf-mb", arg, 0, 65536, &v);
		cfg->dwarf_mb = v;
		return err;
	case OPT_UNWIND:
		if (!strcmp(arg, "auto"))
			cfg->unwind = SAMPLER_UNWIND_AUTO;
		else if (!strcmp(arg, "fp"))
			cfg->unwind = SAMPLER_UNWIND_FP;
		else if (!strcmp(arg, "cfi"))
			cfg->unwind = SAMPLER_UNWIND_CFI;
		else {
			p_err("invalid --unwind '%s' (expected auto, fp or cfi)", arg);
			return -EINVAL;
		}
		return 0;
	case OPT_UNWIND_MB:
		err = config__long("--unwind-table-mb", arg, 1, 4096, &v);
		cfg->unwind_table_mb = v;
		return err;
	case OPT_DEMANGLE:
		if (!strcmp(arg, "none"))
			cfg->demangle = DEMANGLE_NONE;
		else if (!strcmp(arg, "short"))
			cfg->demangle = DEMANGLE_SHORT;
		else if (!strcmp(arg, "full"))
			cfg->demangle = DEMANGLE_FULL;
		else {
			p_err("invalid --demangle '%s' (expected none, short or full)", arg);
			return -EINVAL;
		}
		return 0;
	default:
		return -ENOENT;
	}
}

static int parse_format(struct config *cfg, const char *arg)
{
	static const char *const names[] = {
		[FORMAT_PPROF] = "pprof", [FORMAT_FOLDED] = "folded", [FORMAT_TOP] = "top",
		[FORMAT_HTML] = "html",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(arg, names[i])) {
			cfg->format = i;
			return 0;
		}
	}
	p_err("unknown format '%s' (expected pprof, folded, top or html)", arg);
	return -EINVAL;
}

int config__format(struct config *cfg, const char *arg)
{
	return parse_format(cfg, arg);
}

static int oneshot_opt(struct config *cfg, int opt, const char *arg)
{
	long v;
	int err;

	switch (opt) {
	case 'd': return config__seconds("duration", arg, &cfg->duration);
	case 'o': cfg->output = arg; return 0;
	case 'f': return parse_format(cfg, arg);
	case OPT_TOP:
		err = config__long("--top", arg, 1, 100000, &v);
		cfg->top_n = v;
		return err;
	case OPT_LABEL_FOCUS: return config__label_focus(cfg, arg);
	case OPT_LIVE_SIZE:
		err = config__long("--live-storage-size", arg, 1, 1 << 22, &v);
		cfg->live_entries = v;
		return err;
	default:
		return config__common(cfg, opt, arg);
	}
}

int config__getopt(struct config *cfg, int argc, char **argv, const char *shortopts,
		   const struct option *opts, const char *usage_text, config_opt_fn fn)
{
	int opt, err;

	/* 0, not 1: glibc then also forgets where it was inside a "-hv" left half-read */
	optind = 0;
	opterr = 1;
	while ((opt = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
		if (opt == 'h') {
			fputs(usage_text, stdout);
			return 1;
		}
		if (opt == OPT_VERSION) {
			puts("ebpfprof " EBPFPROF_VERSION);
			return 1;
		}
		if (opt == '?')
			return -EINVAL;	/* getopt already printed why */
		err = fn(cfg, opt, optarg);
		if (err == -ENOMEM)
			p_err("out of memory");
		if (err)
			return err == -ENOENT ? -EINVAL : err;
	}
	if (optind < argc) {
		p_err("unexpected argument '%s' (see --help)", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

int config__validate(const struct config *cfg)
{
	char path[64];
	struct stat st;

	for (int i = 0; i < cfg->n_pids; i++) {
		snprintf(path, sizeof(path), "/proc/%u", cfg->pids[i]);
		if (stat(path, &st)) {
			p_err("no such process: %u", cfg->pids[i]);
			return -ESRCH;
		}
	}
	if (cfg->no_kernel && cfg->no_user) {
		p_err("--no-kernel and --no-user together leave nothing to collect");
		return -EINVAL;
	}
	return 0;
}

int config__parse_oneshot(struct config *cfg, int argc, char **argv)
{
	int err;

	cfg->duration = 30;
	cfg->frequency = 99;
	cfg->demangle = DEMANGLE_SHORT;
	cfg->dwarf_mb = 8;
	cfg->unwind_table_mb = 16;
	cfg->off_cpu_min_us = 1;
	cfg->top_n = 20;
	err = config__getopt(cfg, argc, argv, "d:F:p:o:f:m:vh", oneshot_opts, usage, oneshot_opt);
	if (err)
		return err;
	if (!cfg->output)
		cfg->output = cfg->format == FORMAT_PPROF ? "ebpfprof.pb.gz"
			      : cfg->format == FORMAT_HTML ? "ebpfprof.html" : "-";
	return config__validate(cfg);
}

int config__parse(struct config *cfg, int argc, char **argv)
{
	*cfg = (struct config){};
	if (argc > 1 && !strcmp(argv[1], "agent")) {
		cfg->agent = true;
		cfg->command = CMD_AGENT;
		return config__parse_agent(cfg, argc - 1, argv + 1);
	}
	if (argc > 1 && (!strcmp(argv[1], "convert") || !strcmp(argv[1], "diff")))
		return config__parse_convert(cfg, argc - 1, argv + 1);
	return config__parse_oneshot(cfg, argc, argv);
}

void config__free(struct config *cfg)
{
	free(cfg->pids);
	cfg->pids = NULL;
	cfg->n_pids = 0;
	config__free_agent(&cfg->ag);
}
