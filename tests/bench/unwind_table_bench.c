/* unwind_table_bench.c -- builds one file's unwind table a few times: time, rows, memory */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include "unwind/unwind_table.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static long maxrss_kb(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? 0 : ru.ru_maxrss;
}

/* bytes of code the rows describe: executable sections, else executable PT_LOAD segments */
static unsigned long long text_bytes(int fd)
{
	unsigned long long sum = 0;
	Elf_Scn *scn = NULL;
	size_t nph;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR) &&
		    sh.sh_type != SHT_NOBITS)
			sum += sh.sh_size;
	}
	if (!sum && !elf_getphdrnum(elf, &nph)) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD &&
			    (ph.p_flags & PF_X))
				sum += ph.p_filesz;
		}
	}
	elf_end(elf);
	return sum;
}

int main(int argc, char **argv)
{
	int repeat = argc > 2 ? atoi(argv[2]) : 5, fd;
	double best = 1e30;
	long rss0 = maxrss_kb(), rss1;
	unsigned long long text;
	struct unwind_table *t = NULL;
	const struct unwind_table_stats *st;
	size_t n;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE [REPEAT]\n", argv[0]);
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "failed to open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	text = text_bytes(fd);
	for (int i = 0; i < (repeat > 0 ? repeat : 1); i++) {
		double t0 = now_ms();

		unwind_table__free(t);
		t = unwind_table__build(fd);
		if (!t) {
			fprintf(stderr, "failed to build the table of %s: %s\n", argv[1],
				strerror(errno));
			return 1;
		}
		if (now_ms() - t0 < best)
			best = now_ms() - t0;
	}
	rss1 = maxrss_kb();
	unwind_table__rows(t, &n);
	st = unwind_table__stats(t);
	printf("ms=%.1f rows=%zu row_bytes=%zu text_bytes=%llu bytes_per_mb_text=%.0f "
	       "transient_bytes=%zu peak_rss_kb=%ld eh_frame_bytes=%zu fdes=%zu "
	       "bad=%zu\n",
	       best, n, n * sizeof(struct unwind_row), text,
	       text ? n * sizeof(struct unwind_row) / (text / 1048576.0) : 0.0, st->peak_bytes,
	       rss1 - rss0, st->eh_frame_bytes, st->cfi.fdes,
	       st->cfi.bad_cies + st->cfi.bad_fdes + st->cfi.bad_programs);
	unwind_table__free(t);
	close(fd);
	return 0;
}
