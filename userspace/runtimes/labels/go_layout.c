/* go_layout.c -- a Go binary's version from .go.buildinfo, and the label offsets of the versions we checked */
#include <errno.h>
#include <string.h>
#include "go_layout.h"

#define BUILDINFO_MAGIC "\xff Go buildinf:"
#define BUILDINFO_MAGIC_LEN 14
#define BUILDINFO_FLAGS 15
#define BUILDINFO_INLINE 2	/* flags: strings follow the header, Go 1.18+ */
#define BUILDINFO_STRINGS 32

/*
 * Offsets read from the DWARF of each version's runtime.g and runtime.m
 * (amd64); runtime/pprof's labelMap was a map up to Go 1.23 and a sorted
 * slice of labels from 1.24. A minor version is one row: Go changes these
 * structs only between minor releases.
 */
static const struct {
	const char *minor;	/* "go1.19": the version, up to its second dot */
	__u32 g_m, m_curg, g_labels;
	enum label_source source;
} layouts[] = {
	{ "go1.19", 48, 192, 360, LABELS_GO_MAP },
	{ "go1.24", 48, 192, 352, LABELS_GO_SLICE },
};

/* A uvarint at *p, below END: its value, *p moved past it; -1 past END or too long. */
static long long uvarint(const unsigned char **p, const unsigned char *end)
{
	unsigned long long v = 0;

	for (int shift = 0; *p < end && shift < 63; shift += 7) {
		unsigned char c = *(*p)++;

		v |= (unsigned long long)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v > (1ull << 31) ? -1 : (long long)v;
	}
	return -1;
}

int go_layout__version(const unsigned char *buf, size_t n, char *out, size_t out_len)
{
	const unsigned char *p = buf + BUILDINFO_STRINGS, *end = buf + n;
	long long len;

	if (n < BUILDINFO_STRINGS || !out_len || memcmp(buf, BUILDINFO_MAGIC, BUILDINFO_MAGIC_LEN) ||
	    !(buf[BUILDINFO_FLAGS] & BUILDINFO_INLINE))
		return -EINVAL;
	len = uvarint(&p, end);
	if (len < 3 || (size_t)len >= out_len || (size_t)len > (size_t)(end - p) ||
	    memcmp(p, "go1", 3))
		return -EINVAL;
	memcpy(out, p, len);
	out[len] = '\0';
	return 0;
}

int go_layout__offsets(const char *version, struct label_proc *out)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		size_t n = strlen(layouts[i].minor);

		/* "go1.19" matches "go1.19" and "go1.19.8", not "go1.190" */
		if (strncmp(version, layouts[i].minor, n) || (version[n] && version[n] != '.'))
			continue;
		out->g_m = layouts[i].g_m;
		out->m_curg = layouts[i].m_curg;
		out->g_labels = layouts[i].g_labels;
		out->source = layouts[i].source;
		return 0;
	}
	return -ENOTSUP;
}
