/* test_kallsyms.c -- kallsyms parser on crafted text, and lookups in the live /proc/kallsyms */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbolize/kallsyms.h"
#include "test.h"

static const char crafted[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T startup_64\n"
	"ffffffff81000100 t secondary_startup_64\n"
	"ffffffff81002000 D some_data\n"			/* not text: dropped */
	"ffffffff81003000 W weak_func\n"
	"ffffffff81004000 T schedule\n"
	"ffffffffc0a01000 t ext4_fill_super\t[ext4]\n"
	"ffffffffc0a00000 T ext4_init_fs\t[ext4]\n"		/* modules come unsorted */
	"ffffffffc0b00000 t bpf_prog_6deef7357e7b4530_sd_devices\t[bpf]\n"
	"ffffffff81005000 t late_core_func\n"
	"ffffffffc0c00000 t xt_func\t[x_tables\n"		/* malformed: unclosed module */
	"zzzz T not_hex\n"
	"ffffffff81006000 T\n"				/* no name */
	"ffffffff8100700000000 T too_many_digits\n"
	"ffffffff81008000 t last_no_newline";

/* the name of the symbol holding ADDR, NULL when none */
static const char *name_of(struct ksyms *ks, __u64 addr, __u64 *off)
{
	ssize_t i = ksyms__find(ks, addr, off);

	return i < 0 ? NULL : ksyms__name(ks, i);
}

static const char *module_of(struct ksyms *ks, __u64 addr)
{
	return ksyms__module(ks, ksyms__find(ks, addr, NULL));
}

static int test_crafted(void)
{
	struct ksyms *ks;
	const char *name;
	__u64 off;

	ks = ksyms__parse(crafted, sizeof(crafted) - 1);
	CHECK(ks);
	/* 3 aliases at _text become one; data, the malformed lines dropped */
	CHECK(ksyms__count(ks) == 9);
	name = name_of(ks, 0xffffffff81000010ULL, &off);
	CHECK(name && !strcmp(name, "startup_64") && off == 0x10);
	CHECK(!module_of(ks, 0xffffffff81000010ULL));
	name = name_of(ks, 0xffffffff81004003ULL, &off);
	CHECK(name && !strcmp(name, "schedule") && off == 3);
	name = name_of(ks, 0xffffffff81003000ULL, &off);
	CHECK(name && !strcmp(name, "weak_func") && off == 0);
	name = name_of(ks, 0xffffffffc0a01234ULL, &off);
	CHECK(name && !strcmp(name, "ext4_fill_super") && off == 0x234);
	CHECK(module_of(ks, 0xffffffffc0a01234ULL) &&
	      !strcmp(module_of(ks, 0xffffffffc0a01234ULL), "ext4"));
	name = name_of(ks, 0xffffffffc0a00000ULL, &off);
	CHECK(name && !strcmp(name, "ext4_init_fs"));
	CHECK(!strcmp(module_of(ks, 0xffffffffc0a00000ULL), "ext4"));
	CHECK(name_of(ks, 0xffffffffc0b00010ULL, NULL));
	CHECK(!strcmp(module_of(ks, 0xffffffffc0b00010ULL), "bpf"));
	name = name_of(ks, 0xffffffff81005001ULL, NULL);
	CHECK(name && !strcmp(name, "late_core_func") && !module_of(ks, 0xffffffff81005001ULL));
	name = name_of(ks, 0xffffffff81008001ULL, NULL);
	CHECK(name && !strcmp(name, "last_no_newline"));
	off = 7;
	CHECK(ksyms__find(ks, 0xffffffff80ffffffULL, &off) == -1 && off == 7);
	CHECK(ksyms__find(ks, 0x1000, NULL) == -1);	/* a high half below the only run */
	CHECK(ksyms__find(ks, ~0ULL, NULL) == 8);
	CHECK(ksyms__addr(ks, 0) == 0xffffffff81000000ULL);
	CHECK(!ksyms__name(ks, 9) && !ksyms__module(ks, 9) && !ksyms__addr(ks, 9));
	ksyms__free(ks);
	return TEST_OK;
}

#define GEN_N 120
#define GEN_LOW 0x00000000ffff0000ULL	/* the first GEN_N / 2 symbols, high half 0 */
#define GEN_HIGH 0xffffffff81000000ULL	/* the others */

struct gen_sym {
	__u64 addr;
	char name[320];
};

/*
 * Names that front-coding must get right: 300-byte names differing only in
 * their last bytes (more shared than one byte counts), a name repeated at
 * several addresses, names that are prefixes of the next, bytes above 0x7f.
 */
static void gen_name(int k, char *out)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyz";

	switch (k % 4) {
	case 0:
		memset(out, 'x', 297);
		sprintf(out + 297, "%03d", k);
		break;
	case 1:
		strcpy(out, k % 8 == 1 ? "dup_name" : "dup_name_not");
		break;
	case 2:
		memcpy(out, letters, k / 4 % 26 + 1);
		out[k / 4 % 26 + 1] = '\0';
		break;
	default:
		sprintf(out, k % 8 == 3 ? "caf\xc3\xa9_%d" : "cafe_%d", k);
	}
}

static int test_front_coded(void)
{
	static struct gen_sym gen[GEN_N];
	static char text[GEN_N * 360];
	const char *first[GEN_N], *dup = NULL;
	size_t len = 0, names_bytes = 0, bytes;
	struct ksyms *ks;
	__u64 off;

	for (int k = 0; k < GEN_N; k++) {
		gen[k].addr = (k < GEN_N / 2 ? GEN_LOW : GEN_HIGH) + (k % (GEN_N / 2)) * 0x40;
		if (k == GEN_N / 2 - 1)
			gen[k].addr = 0xffffffc0;	/* its last byte ends the run */
		gen_name(k, gen[k].name);
		names_bytes += strlen(gen[k].name) + 1;
	}
	/* backwards, and the last few in a module, so sorting and runs are tested */
	for (int k = GEN_N - 1; k >= 0; k--)
		len += sprintf(text + len, "%016llx t %s%s\n", (unsigned long long)gen[k].addr,
			       gen[k].name, k >= GEN_N - 5 ? "\t[gen_mod]" : "");
	ks = ksyms__parse(text, len);
	CHECK(ks);
	CHECK(ksyms__count(ks) == GEN_N);
	/* nothing decoded yet: the 300-byte names take a few bytes each */
	bytes = ksyms__bytes(ks);
	CHECK(bytes < names_bytes / 2);
	for (int k = 0; k < GEN_N; k++) {
		first[k] = ksyms__name(ks, k);
		CHECK(first[k] && !strcmp(first[k], gen[k].name));
		CHECK(ksyms__addr(ks, k) == gen[k].addr);
		CHECK(ksyms__find(ks, gen[k].addr, &off) == k && off == 0);
		CHECK(ksyms__find(ks, gen[k].addr + 0x3f, &off) == k && off == 0x3f);
		if (k < GEN_N - 5)
			CHECK(!ksyms__module(ks, k));
		else
			CHECK(ksyms__module(ks, k) && !strcmp(ksyms__module(ks, k), "gen_mod"));
		if (!strcmp(gen[k].name, "dup_name")) {	/* one name, kept once */
			CHECK(!dup || first[k] == dup);
			dup = first[k];
		}
	}
	CHECK(dup);
	CHECK(ksyms__bytes(ks) > bytes);
	for (int k = 0; k < GEN_N; k++)	/* the same pointers the second time */
		CHECK(ksyms__name(ks, k) == first[k]);
	CHECK(!ksyms__name(ks, GEN_N));
	/* before the first run, between the runs, below the second run's first symbol */
	CHECK(ksyms__find(ks, 0, NULL) == -1);
	CHECK(ksyms__find(ks, GEN_LOW - 1, NULL) == -1);
	CHECK(ksyms__find(ks, 0x0000000500000000ULL, &off) == GEN_N / 2 - 1);
	CHECK(off == 0x0000000500000000ULL - gen[GEN_N / 2 - 1].addr);
	CHECK(ksyms__find(ks, GEN_HIGH - 1, &off) == GEN_N / 2 - 1);
	CHECK(off == GEN_HIGH - 1 - gen[GEN_N / 2 - 1].addr);
	CHECK(ksyms__find(ks, ~0ULL, NULL) == GEN_N - 1);
	ksyms__free(ks);
	return TEST_OK;
}

static int test_hidden_and_empty(void)
{
	static const char hidden[] =
		"0000000000000000 T _text\n"
		"0000000000000000 T schedule\n"
		"0000000000000000 t ext4_fill_super\t[ext4]\n";
	static const char no_text[] = "ffffffff82000000 D jiffies\n";

	errno = 0;
	CHECK(!ksyms__parse(hidden, sizeof(hidden) - 1) && errno == EPERM);
	CHECK(!ksyms__parse(no_text, sizeof(no_text) - 1) && errno == ENODATA);
	CHECK(!ksyms__parse("", 0) && errno == ENODATA);
	CHECK(!ksyms__load("/nonexistent/kallsyms") && errno == ENOENT);
	ksyms__free(NULL);
	return TEST_OK;
}

/* every prefix parses without reading past it */
static int test_every_prefix(void)
{
	size_t len = sizeof(crafted) - 1;

	for (size_t i = 0; i <= len; i++) {
		char *copy = malloc(i ? i : 1);
		struct ksyms *ks;

		CHECK(copy);
		memcpy(copy, crafted, i);
		ks = ksyms__parse(copy, i);
		if (ks)
			CHECK(ksyms__count(ks) <= 9);
		ksyms__free(ks);
		free(copy);
	}
	return TEST_OK;
}

/* one text line of /proc/kallsyms, read here independently of kallsyms.c */
struct file_sym {
	__u64 addr;
	char *name;
	char *mod;	/* NULL: the core kernel */
};

static int cmp_file_sym(const void *a, const void *b)
{
	const struct file_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void free_file_syms(struct file_sym *syms, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(syms[i].name);
		free(syms[i].mod);
	}
	free(syms);
}

/* the text symbols of /proc/kallsyms sorted by address; NULL when it cannot be read */
static struct file_sym *read_kallsyms(size_t *n)
{
	char line[KSYMS_LINE_MAX + 2], name[512], mod[256], type;
	struct file_sym *syms = NULL, *grown;
	unsigned long long addr;
	size_t cap = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	*n = 0;
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		int fields = sscanf(line, "%llx %c %511s [%255[^]]]", &addr, &type, name, mod);

		if (fields < 3 || !strchr("tTwW", type))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 4096;
			grown = realloc(syms, cap * sizeof(*syms));
			if (!grown)
				break;
			syms = grown;
		}
		syms[*n].addr = addr;
		syms[*n].name = strdup(name);
		syms[*n].mod = fields == 4 ? strdup(mod) : NULL;
		++*n;
	}
	fclose(f);
	qsort(syms, *n, sizeof(*syms), cmp_file_sym);
	return syms;
}

/* the first of the file's lines at ADDR, or n */
static size_t file_sym_at(const struct file_sym *syms, size_t n, __u64 addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && syms[lo].addr == addr ? lo : n;
}

/* symbol I of KS is one of the file's lines at its address, name and module alike */
static bool in_file(struct ksyms *ks, size_t i, const struct file_sym *syms, size_t n)
{
	__u64 addr = ksyms__addr(ks, i);
	const char *name = ksyms__name(ks, i), *mod = ksyms__module(ks, i);

	for (size_t j = file_sym_at(syms, n, addr); j < n && syms[j].addr == addr; j++)
		if (name && !strcmp(syms[j].name, name) && !mod == !syms[j].mod &&
		    (!mod || !strcmp(mod, syms[j].mod)))
			return true;
	return false;
}

static bool is_bpf(const char *mod)
{
	return mod && !strcmp(mod, "bpf");
}

/* distinct addresses of the file's symbols outside [bpf], which come and go as programs load */
static size_t file_addrs_no_bpf(const struct file_sym *syms, size_t n)
{
	size_t count = 0;

	for (size_t j = 0; j < n; j++) {
		bool bpf = true;
		size_t k;

		for (k = j; k < n && syms[k].addr == syms[j].addr; k++)
			bpf &= is_bpf(syms[k].mod);
		count += !bpf;
		j = k - 1;
	}
	return count;
}

static int check_live(struct ksyms *ks, const struct file_sym *syms, size_t n)
{
	static const char *const names[] = { "schedule", "do_sys_openat2", "vfs_read" };
	size_t count = ksyms__count(ks), ks_no_bpf = 0, checked = 0;
	__u64 off;

	CHECK(count > 1000);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *name;
		ssize_t found;

		for (size_t j = 0; j < n; j++) {
			if (strcmp(syms[j].name, names[i]) || syms[j].mod)
				continue;
			found = ksyms__find(ks, syms[j].addr + 3, &off);
			CHECK(found >= 0);
			name = ksyms__name(ks, found);
			if (!name || strcmp(name, names[i])) {
				fprintf(stderr, "  %s+3 resolved to %s\n", names[i],
					name ?: "(null)");
				CHECK(0);
			}
			CHECK(off == 3 && ksyms__addr(ks, found) == syms[j].addr);
			break;
		}
	}
	/* 2000 symbols spread over the table, each a line of the file */
	for (size_t s = 0; s < 2000; s++) {
		size_t i = s * count / 2000;
		__u64 addr = ksyms__addr(ks, i);

		CHECK(ksyms__find(ks, addr, &off) == (ssize_t)i && off == 0);
		CHECK(!i || ksyms__find(ks, addr - 1, NULL) == (ssize_t)i - 1);
		if (!in_file(ks, i, syms, n)) {
			if (is_bpf(ksyms__module(ks, i)))
				continue;
			fprintf(stderr, "  symbol %zu: %llx %s [%s] is no line of /proc/kallsyms\n",
				i, (unsigned long long)addr, ksyms__name(ks, i),
				ksyms__module(ks, i) ?: "");
			CHECK(0);
		}
		checked++;
	}
	CHECK(checked > 1900);
	for (size_t i = 0; i < count; i++)
		ks_no_bpf += !is_bpf(ksyms__module(ks, i));
	if (ks_no_bpf != file_addrs_no_bpf(syms, n)) {
		fprintf(stderr, "  %zu addresses outside [bpf], /proc/kallsyms has %zu\n",
			ks_no_bpf, file_addrs_no_bpf(syms, n));
		CHECK(0);
	}
	return TEST_OK;
}

/*
 * A file is read in 64 KiB chunks: lines cut by a chunk's end, a line longer
 * than a chunk (skipped whole, its tail not taken for a line) and a last line
 * without its newline give what the whole text parsed at once gives.
 */
static int test_load_chunked(void)
{
	enum { N = 6000 };
	char path[] = "/tmp/ebpfprof-kallsyms-XXXXXX";
	size_t cap = N * 64 + 200000, len = 0;
	struct ksyms *whole, *loaded;
	char *text = malloc(cap);
	int fd, ret = TEST_FAIL;
	__u64 off;

	CHECK(text);
	for (int k = 0; k < N; k++) {
		len += sprintf(text + len, "%016llx %c sym_%d_%.*s\n", 0xffffffff81000000ULL + k * 0x10ULL,
			       k % 3 ? 't' : 'd', k, k % 29, "abcdefghijklmnopqrstuvwxyzabc");
		if (k == N / 2) {	/* a 100 KB line whose tail would parse as a symbol */
			len += sprintf(text + len, "ffffffff80000000 t long_");
			memset(text + len, 'x', 100000);
			len += 100000;
			len += sprintf(text + len, " ffffffff80000010 t tail_of_long\n");
		}
	}
	len += sprintf(text + len, "ffffffff90000000 T last_no_newline");
	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (write(fd, text, len) != (ssize_t)len)
		goto out;
	whole = ksyms__parse(text, len);
	loaded = ksyms__load(path);
	if (!whole || !loaded || ksyms__count(whole) != ksyms__count(loaded))
		goto out_free;
	for (size_t i = 0; i < ksyms__count(whole); i++)
		if (ksyms__addr(whole, i) != ksyms__addr(loaded, i) ||
		    strcmp(ksyms__name(whole, i), ksyms__name(loaded, i)))
			goto out_free;
	if (ksyms__find(loaded, 0xffffffff90000000ULL, &off) < 0 ||
	    strcmp(ksyms__name(loaded, ksyms__find(loaded, 0xffffffff90000000ULL, &off)),
		   "last_no_newline"))
		goto out_free;
	for (size_t i = 0; i < ksyms__count(loaded); i++)
		if (strstr(ksyms__name(loaded, i), "long"))
			goto out_free;
	ret = TEST_OK;
out_free:
	ksyms__free(whole);
	ksyms__free(loaded);
out:
	close(fd);
	unlink(path);
	free(text);
	return ret;
}

static int test_live(void)
{
	struct file_sym *syms;
	struct ksyms *ks;
	size_t n;
	int ret;

	ks = ksyms__load(NULL);
	if (!ks && errno == EPERM)
		SKIP("kernel addresses hidden (kptr_restrict)");
	CHECK(ks);
	syms = read_kallsyms(&n);
	if (!syms) {
		ksyms__free(ks);
		SKIP("/proc/kallsyms cannot be read a second time");
	}
	ret = check_live(ks, syms, n);
	free_file_syms(syms, n);
	ksyms__free(ks);
	return ret;
}

TEST_MAIN("kallsyms", TEST(test_crafted), TEST(test_front_coded), TEST(test_hidden_and_empty),
	  TEST(test_every_prefix), TEST(test_load_chunked), TEST(test_live))
