/* log.c -- leveled logging to stderr, and libbpf's messages routed through it */
#include <stdarg.h>
#include <bpf/libbpf.h>
#include "log.h"

enum log_level log_level = LOG_WARN;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	/* libbpf explains load failures at WARN level, but they are noise unless asked for */
	if (log_level < LOG_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, args);
}

void log__init(enum log_level level)
{
	log_level = level;
	libbpf_set_print(libbpf_print);
}
