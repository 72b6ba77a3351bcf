/* fuzz_labels_elf.c -- libFuzzer target: whole ELF files through a memfd, read for their labels (Go version, custom-labels symbols, TLS block) and for a thread-local's place (thread_local) */
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "fuzz.h"
#include "runtimes/labels/labels_elf.h"
#include "runtimes/thread_local.h"

static int memfd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct labels_exe x;
	struct thread_local t;

	if (memfd < 0)
		memfd = memfd_create("fuzz_labels_elf", MFD_CLOEXEC);
	FUZZ_CHECK(memfd >= 0);
	FUZZ_CHECK(ftruncate(memfd, 0) == 0);
	FUZZ_CHECK(pwrite(memfd, data, size, 0) == (ssize_t)size);
	/* a thread-local, as an executable's and as a library's, or as its interpreter says: a kind we know */
	static const char *const names[] = { "otel_thread_ctx_v1", "custom_labels_thread_local_data",
					     "custom_labels_current_set", "ruby_current_ec" };
	static const unsigned int flags[] = { 0, THREAD_LOCAL_SYMTAB | THREAD_LOCAL_BY_INTERP };

	for (int i = 0; i < 16; i++)
		if (!thread_local__elf(memfd, 0, i & 1, names[(i >> 1) & 3], flags[i >> 3], &t)) {
			FUZZ_CHECK(t.kind >= THREAD_LOCAL_NONE && t.kind <= THREAD_LOCAL_DYNAMIC);
			/* an executable's offset is inside its block, which ends at the thread pointer */
			FUZZ_CHECK(t.kind != THREAD_LOCAL_STATIC || (t.exe && t.value < 0 && t.value >= -65536));
		}
	if (labels_elf__read(memfd, 0, &x))
		return 0;
	/* what BPF is handed stays inside what the file said, whatever the file says */
	FUZZ_CHECK(x.tls_block <= 65536);
	FUZZ_CHECK(!(x.cl_tables & LABELS_CL_V0) || (x.custom && x.cl_data + 16 <= x.tls_block));
	FUZZ_CHECK(!(x.cl_tables & LABELS_CL_V1) || (x.custom && x.cl_set + 8 <= x.tls_block));
	FUZZ_CHECK(x.go || !strncmp(x.go_version, "go1", 3));
	FUZZ_CHECK(strnlen(x.go_version, sizeof(x.go_version)) < sizeof(x.go_version));
	return 0;
}
