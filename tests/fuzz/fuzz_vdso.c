/* fuzz_vdso.c -- libFuzzer target: a vDSO image as a process shows it, through the table builder and AArch64's leaf rows */
#include <gelf.h>
#include <string.h>
#include "unwind/unwind_table.h"
#include "unwind/unwind_table_int.h"
#include "fuzz.h"

/* rows sorted by pc, strictly increasing, as unwind_table.h promises */
static void check_rows(const struct unwind_table *t)
{
	size_t n;
	const struct unwind_row *r = unwind_table__rows(t, &n);

	for (size_t i = 1; i < n; i++)
		FUZZ_CHECK(r[i - 1].pc < r[i].pc);
}

/*
 * AArch64's leaf rows from the image's symbols, whatever machine it claims:
 * on an x86-64 build the image path never reaches them (its vDSO has CFI).
 */
static void leaves(void *image, size_t size)
{
	struct unwind_table t = {};
	struct builder b = { .stats = &t.stats };
	Elf *elf = elf_memory(image, size);

	if (!elf)
		return;
	if (!unwind_table__read_loads(elf, &t) && !builder__add_leaves(&b, elf, &t) &&
	    !builder__finish(&b, &t, 0)) {
		check_rows(&t);
		free(t.rows);
	}
	builder__release(&b);
	elf_end(elf);
}

/* Input: the image. It goes into a heap block of its exact size, so ASan sees any over-read. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct unwind_table *t;
	void *image;

	if (!ready) {
		elf_version(EV_CURRENT);
		ready = true;
	}
	image = malloc(size ? size : 1);
	if (!image)
		return 0;
	memcpy(image, data, size);
	t = unwind_table__from_image(image, size);
	if (t) {
		check_rows(t);
		unwind_table__free(t);
	}
	leaves(image, size);
	unwind_a64__frameless(image, size & ~(size_t)3);
	/* libelf read it in place: nothing of the image was written */
	FUZZ_CHECK(!memcmp(image, data, size));
	free(image);
	return 0;
}
