/* hexdigit.h -- the value of one hexadecimal digit, for the text parsers (kallsyms, perf maps) */
#ifndef EBPFPROF_HEXDIGIT_H
#define EBPFPROF_HEXDIGIT_H

/* 0..15, or -1 when c is no hex digit */
static inline int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif /* EBPFPROF_HEXDIGIT_H */
