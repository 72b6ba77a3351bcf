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
	if (cfg.agent)
		ret = agent__run(&cfg);
	else if (cfg.command == CMD_CONVERT || cfg.command == CMD_DIFF)
		ret = convert__run(&cfg);
	else
		ret = oneshot__run(&cfg);
	config__free(&cfg);
	return ret;
}
