/* fuzz_config.c -- libFuzzer target: command lines (one-shot and agent) through config__parse */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <unistd.h>
#include "cli/config.h"
#include "fuzz.h"

/*
 * The input is argv[1..], split on NUL; argv[0] is "ebpfprof". The --*-file
 * options read whatever they name, so the target works in a directory of its
 * own holding only "secret" and "big", and skips any argument with a '/'
 * (no /dev/stdin, no /proc/kmsg). Run it with -close_fd_mask=3: parse errors
 * and --help go to stderr and stdout.
 */
#define MAX_ARGS 64

static char dir[64];

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void cleanup(void)
{
	if (dir[0])
		nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void put_file(const char *name, size_t size, char fill)
{
	char *buf = malloc(size);
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (!buf || fd < 0)
		exit(1);
	memset(buf, fill, size);
	buf[size - 1] = '\n';
	if (write(fd, buf, size) != (ssize_t)size)
		exit(1);
	close(fd);
	free(buf);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const env[] = { "NODE_NAME", "EBPFPROF_BASIC_AUTH",
					   "EBPFPROF_BEARER_TOKEN", "EBPFPROF_HTTP_TOKEN" };

	snprintf(dir, sizeof(dir), "%s/ebpfprof-fuzz-config-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir) || chdir(dir)) {
		perror("fuzz_config: temp dir");
		exit(1);
	}
	atexit(cleanup);
	put_file("secret", 12, 'x');
	put_file("big", 8192, 'y');
	/* the agent reads EBPFPROF_* first: the input alone decides */
	for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++)
		unsetenv(env[i]);
	for (char **e = environ; *e;) {
		if (!strncmp(*e, "EBPFPROF_", 9)) {
			char name[256];

			snprintf(name, sizeof(name), "%.*s", (int)strcspn(*e, "="), *e);
			unsetenv(name);
		} else {
			e++;
		}
	}
	return 0;
}

static void check(const struct config *cfg, int err)
{
	FUZZ_CHECK(err <= 1);
	if (err)
		return;
	if (cfg->command == CMD_CONVERT || cfg->command == CMD_DIFF) {
		/* files to read, somewhere to write, and a format diff can write */
		FUZZ_CHECK(cfg->inputs[0] && *cfg->inputs[0] && cfg->output && cfg->top_n >= 1);
		FUZZ_CHECK((cfg->command == CMD_DIFF) == (cfg->inputs[1] != NULL));
		FUZZ_CHECK(cfg->command == CMD_CONVERT || cfg->format != FORMAT_PPROF);
		return;
	}
	FUZZ_CHECK(cfg->frequency >= 1 && cfg->frequency <= 100000);
	FUZZ_CHECK(!cfg->n_pids || cfg->pids);
	FUZZ_CHECK(!(cfg->no_kernel && cfg->no_user));
	if (!cfg->agent) {
		FUZZ_CHECK(cfg->duration > 0 && cfg->output && cfg->top_n >= 1);
		return;
	}
	FUZZ_CHECK(cfg->ag.interval > 0 && cfg->ag.retention >= 1);
	FUZZ_CHECK(cfg->ag.push_url || cfg->ag.otlp_url || cfg->ag.listen || cfg->ag.output_dir);
	for (int i = 0; i < cfg->ag.n_labels; i++)
		FUZZ_CHECK(*cfg->ag.labels[i].key && cfg->ag.labels[i].value);
}

/* argv[1..] from the input; each argument in its own block, so ASan sees reads past it */
static int split_args(const uint8_t *data, size_t size, char **argv)
{
	const uint8_t *p = data, *end = data + size;
	int argc = 0;

	argv[argc++] = strdup("ebpfprof");
	while (p < end && argc <= MAX_ARGS) {
		const uint8_t *nul = memchr(p, '\0', end - p), *e = nul ? nul : end;

		argv[argc] = malloc(e - p + 1);
		memcpy(argv[argc], p, e - p);
		argv[argc][e - p] = '\0';
		if (strchr(argv[argc++], '/'))
			return -argc;
		p = nul ? nul + 1 : end;
	}
	argv[argc] = NULL;
	return argc;
}

static void free_args(char **argv, int argc)
{
	for (int i = 0; i < argc; i++)
		free(argv[i]);
}

/*
 * The same command line parsed twice must give the same result: nothing of
 * one parse (getopt's state above all) may leak into the next.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[2][MAX_ARGS + 2];
	struct config cfg[2];
	int argc, err[2];

	argc = split_args(data, size, argv[0]);
	if (argc < 0) {
		free_args(argv[0], -argc);
		return 0;
	}
	split_args(data, size, argv[1]);
	for (int i = 0; i < 2; i++) {
		err[i] = config__parse(&cfg[i], argc, argv[i]);
		check(&cfg[i], err[i]);
	}
	FUZZ_CHECK(err[0] == err[1]);
	if (!err[0]) {
		FUZZ_CHECK(cfg[0].agent == cfg[1].agent && cfg[0].duration == cfg[1].duration &&
			   cfg[0].frequency == cfg[1].frequency && cfg[0].n_pids == cfg[1].n_pids &&
			   cfg[0].format == cfg[1].format && cfg[0].verbose == cfg[1].verbose &&
			   cfg[0].include_idle == cfg[1].include_idle &&
			   cfg[0].per_thread == cfg[1].per_thread &&
			   cfg[0].ag.n_labels == cfg[1].ag.n_labels &&
			   cfg[0].ag.interval == cfg[1].ag.interval);
	}
	for (int i = 0; i < 2; i++) {
		config__free(&cfg[i]);
		free_args(argv[i], argc);
	}
	return 0;
}
