/* config_convert.c -- command lines of `ebpfprof convert IN` and `ebpfprof diff BEFORE AFTER` */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config_int.h"
#include "lib/log.h"

enum { OPT_TYPE = OPT_COMMON_END + 1 };

static const char usage[] =
	"usage: ebpfprof convert IN.pb.gz [--format html|folded|top|pprof] [--output PATH|-]\n"
	"                [--type NAME] [--top N] [--label KEY:VALUE]\n"
	"       ebpfprof diff BEFORE.pb.gz AFTER.pb.gz [--format html|folded|top] [--output PATH|-]\n"
	"                [--type NAME] [--top N]\n"
	"\n"
	"convert reads a pprof file (ours, Go's, any with a CPU-like sample type: cpu,\n"
	"samples, wall, off_cpu) and writes it in another format. diff compares two:\n"
	"html is a differential flame graph (growth red, shrink blue, shares of each\n"
	"total), folded has both counts per stack (\"stack before after\", flamegraph.pl's\n"
	"diff input), top lists functions by the change of their share.\n"
	"\n"
	"  -f, --format FMT   html (default; ebpfprof.html), folded, top (stdout), pprof\n"
	"  -o, --output PATH  where to write (\"-\": stdout)\n"
	"  -t, --type NAME    the sample type to show (default: the profile's default if\n"
	"                     CPU-like, else samples, cpu, wall, off_cpu, in that order)\n"
	"      --top N        rows of --format top (default 20)\n"
	"      --label K:V    only the samples with label K=V (convert)\n"
	"  -h, --help         this text\n";

static const struct option opts[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "type", required_argument, NULL, 't' },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "label", required_argument, NULL, OPT_LABEL_FOCUS },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{},
};

static int convert_opt(struct config *cfg, int opt, const char *arg)
{
	long v;
	int err;

	switch (opt) {
	case 'f': return config__format(cfg, arg);
	case 'o': cfg->output = arg; return 0;
	case 't': cfg->sample_type = arg; return 0;
	case 'v': cfg->verbose = true; return 0;
	case OPT_TOP:
		err = config__long("--top", arg, 1, 100000, &v);
		cfg->top_n = v;
		return err;
	case OPT_LABEL_FOCUS: return config__label_focus(cfg, arg);
	default:
		return -ENOENT;
	}
}

/* Splits argv into the input files (into cfg) and the options (into args, NULL-terminated). */
static int split_files(struct config *cfg, int argc, char **argv, char **args, int *nargs)
{
	bool diff = cfg->command == CMD_DIFF;
	int want = diff ? 2 : 1, n = 0;

	*nargs = 0;
	/* the files are the arguments that are no option and no option's value ("-" is stdin) */
	for (int i = 0; i < argc; i++) {
		bool takes_value = !strcmp(argv[i], "-f") || !strcmp(argv[i], "-o") ||
				   !strcmp(argv[i], "-t") || !strcmp(argv[i], "--format") ||
				   !strcmp(argv[i], "--output") || !strcmp(argv[i], "--type") ||
				   !strcmp(argv[i], "--top") || !strcmp(argv[i], "--label");

		if (i > 0 && (argv[i][0] != '-' || !strcmp(argv[i], "-"))) {
			if (!argv[i][0]) {
				p_err("%s: an empty file name", argv[0]);
				return -EINVAL;
			}
			if (n == want) {
				p_err("%s takes %d file%s; unexpected '%s'", argv[0], want, diff ? "s" : "",
				      argv[i]);
				return -EINVAL;
			}
			cfg->inputs[n++] = argv[i];
			continue;
		}
		args[(*nargs)++] = argv[i];
		if (takes_value && i + 1 < argc)
			args[(*nargs)++] = argv[++i];
	}
	args[*nargs] = NULL;
	if (n != want) {
		p_err("%s needs %s (see ebpfprof %s --help)", argv[0],
		      diff ? "BEFORE and AFTER profiles" : "a profile to read", argv[0]);
		return -EINVAL;
	}
	return 0;
}

/* argv[0] is "convert" or "diff"; the input files come first, options after (or before) them. */
int config__parse_convert(struct config *cfg, int argc, char **argv)
{
	char **args = calloc(argc + 1, sizeof(*args));
	int nargs, err;

	if (!args)
		return -ENOMEM;
	cfg->command = !strcmp(argv[0], "diff") ? CMD_DIFF : CMD_CONVERT;
	cfg->format = FORMAT_HTML;
	cfg->top_n = 20;
	err = split_files(cfg, argc, argv, args, &nargs);
	if (!err)
		err = config__getopt(cfg, nargs, args, "f:o:t:vh", opts, usage, convert_opt);
	free(args);
	if (err)
		return err;
	if (cfg->command == CMD_DIFF && cfg->format == FORMAT_PPROF) {
		p_err("diff writes html, folded or top, not pprof");
		return -EINVAL;
	}
	if (!cfg->output)
		cfg->output = cfg->format == FORMAT_HTML ? "ebpfprof.html"
			      : cfg->format == FORMAT_PPROF ? "ebpfprof.pb.gz" : "-";
	return 0;
}
