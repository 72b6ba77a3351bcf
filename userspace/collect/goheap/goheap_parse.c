/* goheap_parse.c -- parsers of what a Go binary holds: its build info's version, its RIP-relative loads */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "goheap_int.h"

#define BUILDINFO_MAGIC "\xff Go buildinf:"

int goheap_rip_loads(const __u8 *code, size_t len, __u64 vaddr, __u64 *out, int max)
{
	int n = 0;

	/* REX.W (R optional), MOV r64, r/m64 with mod 00, r/m 101: [rip + disp32] */
	for (size_t i = 0; i + 7 <= len && n < max; i++) {
		__s32 disp;

		if ((code[i] != 0x48 && code[i] != 0x4c) || code[i + 1] != 0x8b ||
		    (code[i + 2] & 0xc7) != 0x05)
			continue;
		memcpy(&disp, code + i + 3, 4);
		out[n++] = vaddr + i + 7 + (__s64)disp;
	}
	return n;
}

int goheap_buildinfo_version(const __u8 *p, size_t len, char *ver, size_t size)
{
	size_t mlen = sizeof(BUILDINFO_MAGIC) - 1, vlen = 0, at = 32;
	int shift = 0;

	if (len < at + 1 || memcmp(p, BUILDINFO_MAGIC, mlen) || !(p[mlen + 1] & 2))
		return -ENOENT;	/* not the 1.18+ inline-string format */
	/* a uvarint length, then the string */
	for (; at < len && shift < 35; at++, shift += 7) {
		vlen |= (size_t)(p[at] & 0x7f) << shift;
		if (!(p[at] & 0x80))
			break;
	}
	at++;
	if (at > len || vlen < 4 || vlen >= size || vlen > len - at || memcmp(p + at, "go1.", 4))
		return -ENOENT;
	memcpy(ver, p + at, vlen);
	ver[vlen] = '\0';
	return 0;
}

int goheap_version_known(const char *ver)
{
	unsigned minor = 0;

	/* mprof.go's bucket and memRecord as goheap_int.h has them: 1.18 through 1.24 */
	if (sscanf(ver, "go1.%u", &minor) != 1)
		return 0;
	return minor >= 18 && minor <= 24;
}

