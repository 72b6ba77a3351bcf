/* fuzz_java.c -- libFuzzer target: HotSpot's serviceability tables, line number tables, scope descriptors and UNSIGNED5 numbers, all read from a JVM's memory */
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "runtimes/java/java_int.h"

/* a copy of the rest of the input in a block of its exact size, so ASan sees any over-read */
static uint8_t *rest(struct fuzz_in *in, size_t *len)
{
	uint8_t *p = malloc(in->n ? in->n : 1);

	if (!p)
		abort();
	memcpy(p, in->p, in->n);
	*len = in->n;
	in->n = 0;
	return p;
}

struct image {
	const uint8_t *p;
	size_t n;
	__u64 base;
};

/* the target's memory: the image at base, nothing elsewhere */
static int image_read(void *ctx, __u64 addr, void *buf, size_t len)
{
	const struct image *im = ctx;

	if (addr < im->base || addr - im->base > im->n || len > im->n - (addr - im->base))
		return -14;
	memcpy(buf, im->p + (addr - im->base), len);
	return 0;
}

/* the tables: symbols point into the image; every lookup answers or refuses, never over-reads */
static void tables(struct fuzz_in *in)
{
	__u64 sym[JVM_SYM_COUNT];
	struct image im = { .base = 0x10000 };
	struct jvm_mem m = { image_read, &im };
	struct vmstructs *v;
	struct jvm_layout l;
	const char *missing;
	uint8_t *img;
	__u64 val;
	__s64 ival;

	for (int k = 0; k < JVM_SYM_COUNT; k++)
		sym[k] = im.base + 8 * (__u64)fin_u8(in);
	img = rest(in, &im.n);
	im.p = img;
	v = vmstructs__read(&m, sym);
	if (v) {
		FUZZ_CHECK(vmstructs__count(v) <= 4 * VMSTRUCTS_MAX_ENTRIES);
		vmstructs__field(v, "CodeBlob", "_name", &val);
		vmstructs__field_size(v, "CodeBlob", "_frame_complete_offset");
		vmstructs__type_size(v, "HeapBlock", &val);
		vmstructs__int(v, "frame::interpreter_frame_sender_sp_offset", &ival);
		vmstructs__long(v, "x", &val);
		if (!jvm_layout__from_vmstructs(v, &l, &missing))
			FUZZ_CHECK(l.bpf.cb_frame_complete_size == 2 || l.bpf.cb_frame_complete_size == 4);
		vmstructs__free(v);
	}
	free(img);
}

static void lines(struct fuzz_in *in)
{
	bool x1 = fin_u8(in) & 1;
	__u32 bci = (__u32)fin_uint(in, 2);
	size_t len;
	uint8_t *tab = rest(in, &len);

	FUZZ_CHECK(jvm_lines__find(tab, len, x1, bci) <= (__u32)INT32_MAX);
	free(tab);
}

static void scopes(struct fuzz_in *in)
{
	bool x1 = fin_u8(in) & 1;
	__u32 off = (__u32)fin_uint(in, 2);
	struct jvm_scope s;
	size_t len, pos = 0;
	__u32 v;
	uint8_t *data = rest(in, &len);

	jvm_scope__read(data, len, off, x1, &s);
	while (!jvm_u5__read(data, len, &pos, x1, &v))
		FUZZ_CHECK(pos <= len);
	free(data);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };

	switch (fin_u8(&in) % 3) {
	case 0: tables(&in); break;
	case 1: lines(&in); break;
	default: scopes(&in); break;
	}
	return 0;
}
