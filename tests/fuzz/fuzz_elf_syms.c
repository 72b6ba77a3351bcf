/* fuzz_elf_syms.c -- libFuzzer target: an ELF image through elf_syms__read_mem and its lookups */
#include <errno.h>
#include <string.h>
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_syms *es;
	__u64 word;

	es = elf_syms__read_mem(data, size);
	if (!es)
		return 0;
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
	return 0;
}
