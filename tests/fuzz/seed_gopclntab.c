/* seed_gopclntab.c -- writes the fuzz_gopclntab seeds of the synthetic Go binaries, one per table format */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include "../unit/gopcln_synth.h"

/* fuzz_gopclntab's layout: mode byte (1: a whole file, 0: the table alone), 8 probe bytes, data */
static int write_seed(const char *dir, const char *name, __u8 mode, const __u8 *data, size_t len)
{
	__u8 head[9] = { mode, 0x35, 0x10, 0x40, 0, 0x17, 0x99, 0x3, 0x7 };
	char path[4096];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s%s", dir, name, mode ? "" : "-table");
	f = fopen(path, "wb");
	if (!f)
		return -1;
	ok = fwrite(head, 1, sizeof(head), f) == sizeof(head) && fwrite(data, 1, len, f) == len;
	return fclose(f) == 0 && ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "synth-go111", "synth-go115", "synth-go116",
					      "synth-go118", "synth-go120" };
	__u8 *img = malloc(SYN_SIZE);
	int err = 0;

	if (argc != 2 || !img) {
		fprintf(stderr, "usage: seed_gopclntab DIR\n");
		return 2;
	}
	for (int v = SYN_111; v <= SYN_120; v++) {
		build_synth(v, img);
		err |= write_seed(argv[1], names[v], 1, img, SYN_SIZE);
		/* the table's segment: the table, then zeros up to the inline tree */
		err |= write_seed(argv[1], names[v], 0, img + 0x2000, 0x1000);
	}
	build_synth(SYN_118, img);
	syn_to_relocs(img);
	err |= write_seed(argv[1], "synth-go118-relocs", 1, img, SYN_SIZE);
	free(img);
	return err ? 1 : 0;
}
