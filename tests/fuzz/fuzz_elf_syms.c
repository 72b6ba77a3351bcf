/* fuzz_elf_syms.c -- libFuzzer target: an ELF image through elf_syms__read_mem and its lookups, and as a file whose names stay in it */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "symbolize/elf_syms.h"
#include "fuzz.h"

static void check_hex(const char *hex)
{
	size_t n = strlen(hex);

	FUZZ_CHECK(n % 2 == 0 && n <= 2 * ELF_BUILD_ID_MAX);
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f'));
}

static void lookup(const struct elf_syms *es, __u64 vaddr)
{
	__u64 off = ~0ULL, v;
	const char *name = elf_syms__lookup(es, vaddr, &off);

	if (name)
		FUZZ_CHECK(*name && off <= vaddr);
	if (!elf_syms__offset_to_vaddr(es, vaddr, &v))
		elf_syms__lookup(es, v, NULL);
}

/* the same bytes as a file: every table's names stay in it, read at lookup */
static struct elf_syms *read_as_file(const uint8_t *data, size_t size)
{
	struct elf_syms *es = NULL;
	int fd = memfd_create("fuzz_elf", MFD_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (write(fd, data, size) == (ssize_t)size) {
		elf_syms__names_in_file(0, 4);
		es = elf_syms__read_fd(fd);
	}
	close(fd);
	return es;
}

static void check(struct elf_syms *es, const uint8_t *data, size_t size)
{
	__u64 word;

	check_hex(elf_syms__build_id(es));
	FUZZ_CHECK(elf_syms__count(es) <= ELF_SYMS_MAX);
	FUZZ_CHECK(elf_syms__mem_size(es) >= elf_syms__count(es) * 16);
	/* the input's own words (e_entry, addresses in the tables) are likely addresses */
	for (size_t i = 0; i + 8 <= size && i < 512; i += 8) {
		memcpy(&word, data + i, 8);
		lookup(es, word);
		lookup(es, word + 1);
	}
	lookup(es, 0);
	lookup(es, ~0ULL);
	elf_syms__free(es);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_syms *es = elf_syms__read_mem(data, size);

	if (es)
		check(es, data, size);
	es = read_as_file(data, size);
	if (es)
		check(es, data, size);
	return 0;
}
