/* seed_spool.c -- writes real spool files with spool__write, as fuzz_spool seeds (flag byte + file) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "deliver/spool.h"

/* Copies spool file seq of dir to out/NAME with the flag byte in front. */
static int copy_seed(const char *dir, __u64 seq, int flags, const char *out, const char *name)
{
	char path[4096], buf[1 << 16];
	FILE *in, *o;
	size_t n;

	snprintf(path, sizeof(path), "%s/%020llu.push", dir, (unsigned long long)seq);
	in = fopen(path, "rb");
	snprintf(path, sizeof(path), "%s/%s", out, name);
	o = fopen(path, "wb");
	if (!in || !o)
		return -1;
	fputc(flags, o);
	while ((n = fread(buf, 1, sizeof(buf), in)))
		fwrite(buf, 1, n, o);
	fclose(in);
	return fclose(o);
}

int main(int argc, char **argv)
{
	static const char body[] = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03not really gzip";
	struct spool_record rec = { .seq = 1, .key = "svc{host=a,pid=1}", .from_ns = 1700000000000000000LL,
				    .until_ns = 1700000015000000000LL, .sample_rate = 19 };
	char dir[] = "/tmp/ebpfprof-seed-spool-XXXXXX";
	struct spool *s;
	int err = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: seed_spool OUTDIR\n");
		return 2;
	}
	if (!mkdtemp(dir) || !(s = spool__open(dir))) {
		perror("seed_spool");
		return 1;
	}
	err |= spool__write(s, &rec, body, sizeof(body) - 1);
	rec.seq = 2;
	rec.key = "nginx{}";
	rec.from_ns = rec.until_ns = -5;
	err |= spool__write(s, &rec, "x", 1);
	err |= copy_seed(dir, 1, 0, argv[1], "valid");
	err |= copy_seed(dir, 1, 3, argv[1], "valid-fix-crc");
	err |= copy_seed(dir, 2, 3, argv[1], "small-fix-crc");
	err |= copy_seed(dir, 2, 4, argv[1], "temp");
	spool__remove(s, 1);
	spool__remove(s, 2);
	spool__free(s);
	rmdir(dir);
	if (err)
		fprintf(stderr, "seed_spool: failed\n");
	return !!err;
}
