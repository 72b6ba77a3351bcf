/* log.h -- leveled logging to stderr; the level is checked before arguments are evaluated */
#ifndef EBPFPROF_LOG_H
#define EBPFPROF_LOG_H

#include <stdio.h>

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

extern enum log_level log_level;

#define log_at(lvl, fmt, ...)                                                 \
	do {                                                                  \
		if ((lvl) <= log_level)                                       \
			fprintf(stderr, "ebpfprof: " fmt "\n", ##__VA_ARGS__); \
	} while (0)

#define p_err(fmt, ...) log_at(LOG_ERROR, fmt, ##__VA_ARGS__)
#define p_warn(fmt, ...) log_at(LOG_WARN, "warning: " fmt, ##__VA_ARGS__)
#define p_info(fmt, ...) log_at(LOG_INFO, fmt, ##__VA_ARGS__)
#define p_debug(fmt, ...) log_at(LOG_DEBUG, fmt, ##__VA_ARGS__)

/* Routes libbpf's messages through our levels (debug only with --verbose). */
void log__init(enum log_level level);

#endif /* EBPFPROF_LOG_H */
