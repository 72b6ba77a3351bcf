/* fuzz_labels_elf.c -- libFuzzer target: whole ELF files through a memfd, read for their labels: Go version, custom-labels symbols, TLS block */
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "fuzz.h"
#include "runtimes/labels/labels_elf.h"

static int memfd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct labels_exe x;

	if (memfd < 0)
		memfd = memfd_create("fuzz_labels_elf", MFD_CLOEXEC);
	FUZZ_CHECK(memfd >= 0);
	FUZZ_CHECK(ftruncate(memfd, 0) == 0);
	FUZZ_CHECK(pwrite(memfd, data, size, 0) == (ssize_t)size);
	if (labels_elf__read(memfd, 0, &x))
		return 0;
	/* what BPF is handed stays inside what the file said, whatever the file says */
	FUZZ_CHECK(x.tls_block <= 65536);
	FUZZ_CHECK(!x.custom || (x.cl_data + 16 <= x.tls_block));
	FUZZ_CHECK(x.go || !strncmp(x.go_version, "go1", 3));
	FUZZ_CHECK(strnlen(x.go_version, sizeof(x.go_version)) < sizeof(x.go_version));
	return 0;
}
