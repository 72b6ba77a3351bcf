/* main.c -- ebpfprof entry point: parses the command line and hands over to the run mode */
#include "cli/cli.h"
#include "lib/log.h"
#include "agent/agent.h"

int main(int argc, char **argv)
{
	struct config cfg;
	int ret;

	log__init(LOG_WARN);
	ret = config__parse(&cfg, argc, argv);
	if (ret) {
		config__free(&cfg);
		return ret > 0 ? EXIT_OK : EXIT_USAGE;
	}
	log__init(cfg.verbose ? LOG_DEBUG : LOG_INFO);
	ret = cfg.agent ? agent__run(&cfg) : oneshot__run(&cfg);
	config__free(&cfg);
	return ret;
}
