/* fuzz_elf_notes.c -- libFuzzer target: raw ELF note streams through elf_parse_build_id_notes */
#include <errno.h>
#include <string.h>
#include "symbolize/elf_syms.h"
#include "fuzz.h"

/*
 * Byte 0 picks the alignment (bits 2-3: 0, 4, 8 or 12; only 4 and 8 are
 * valid) and the size of the output buffer (bit 4 set: bits 5-7 times 9
 * bytes, else ELF_BUILD_ID_HEX_SIZE); the rest is the note stream.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t align, hex_size, n;
	char *hex;
	int err;

	if (!size)
		return 0;
	align = data[0] & 0x0c;
	hex_size = data[0] & 0x10 ? (size_t)(data[0] >> 5) * 9 : ELF_BUILD_ID_HEX_SIZE;
	/* exactly hex_size bytes, so a write past it is an ASan report */
	hex = malloc(hex_size ? hex_size : 1);
	if (!hex)
		return 0;
	err = elf_parse_build_id_notes(data + 1, size - 1, align, hex, hex_size);
	FUZZ_CHECK(err == 0 || err == -ENOENT || err == -EINVAL);
	if (align != 4 && align != 8)
		FUZZ_CHECK(err == -EINVAL);
	if (!err) {
		n = strnlen(hex, hex_size);
		FUZZ_CHECK(n < hex_size && n && n % 2 == 0 && n <= 2 * ELF_BUILD_ID_MAX);
		for (size_t i = 0; i < n; i++)
			FUZZ_CHECK((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f'));
	}
	free(hex);
	return 0;
}
