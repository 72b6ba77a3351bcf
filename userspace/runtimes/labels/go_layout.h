/* go_layout.h -- a Go binary's version from .go.buildinfo, and the label offsets of the versions we checked */
#ifndef EBPFPROF_GO_LAYOUT_H
#define EBPFPROF_GO_LAYOUT_H

#include <stddef.h>
#include "labels.h"

/*
 * The Go version ("go1.19.8") recorded in a .go.buildinfo section's bytes
 * BUF[0, n), into OUT (NUL-ended, at most out_len): Go 1.18+'s inline
 * form only. Every length is checked against n. 0, or -EINVAL.
 */
int go_layout__version(const unsigned char *buf, size_t n, char *out, size_t out_len);

/*
 * The offsets of g.m, m.curg and g.labels and the label layout of VERSION,
 * from a table checked against each version's DWARF (tests/integration/
 * test_labels.sh); the thread pointer offset is not set. 0, or -ENOTSUP
 * for a version not in the table: never guessed.
 */
int go_layout__offsets(const char *version, struct label_proc *out);

#endif /* EBPFPROF_GO_LAYOUT_H */
