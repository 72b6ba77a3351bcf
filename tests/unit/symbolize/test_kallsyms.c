/* test_kallsyms.c -- kallsyms parser on crafted text, and lookups in the live /proc/kallsyms */
#include <errno.h>
#include <stdio.h>
#include <string.h>
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

static int test_crafted(void)
{
	const struct ksym *sym;
	struct ksyms *ks;
	__u64 off;

	ks = ksyms__parse(crafted, sizeof(crafted) - 1);
	CHECK(ks);
	/* 3 aliases at _text become one; data, the malformed lines dropped */
	CHECK(ksyms__count(ks) == 9);
	sym = ksyms__map_addr(ks, 0xffffffff81000010ULL, &off);
	CHECK(sym && !strcmp(sym->name, "startup_64") && off == 0x10);
	CHECK(!ksyms__module(ks, sym));
	sym = ksyms__map_addr(ks, 0xffffffff81004003ULL, &off);
	CHECK(sym && !strcmp(sym->name, "schedule") && off == 3);
	sym = ksyms__map_addr(ks, 0xffffffff81003000ULL, &off);
	CHECK(sym && !strcmp(sym->name, "weak_func") && off == 0);
	sym = ksyms__map_addr(ks, 0xffffffffc0a01234ULL, &off);
	CHECK(sym && !strcmp(sym->name, "ext4_fill_super") && off == 0x234);
	CHECK(ksyms__module(ks, sym) && !strcmp(ksyms__module(ks, sym), "ext4"));
	sym = ksyms__map_addr(ks, 0xffffffffc0a00000ULL, &off);
	CHECK(sym && !strcmp(sym->name, "ext4_init_fs"));
	CHECK(!strcmp(ksyms__module(ks, sym), "ext4"));
	sym = ksyms__map_addr(ks, 0xffffffffc0b00010ULL, NULL);
	CHECK(sym && !strcmp(ksyms__module(ks, sym), "bpf"));
	sym = ksyms__map_addr(ks, 0xffffffff81005001ULL, NULL);
	CHECK(sym && !strcmp(sym->name, "late_core_func") && !ksyms__module(ks, sym));
	sym = ksyms__map_addr(ks, 0xffffffff81008001ULL, NULL);
	CHECK(sym && !strcmp(sym->name, "last_no_newline"));
	CHECK(!ksyms__map_addr(ks, 0xffffffff80ffffffULL, NULL));
	CHECK(ksyms__at(ks, 0)->addr == 0xffffffff81000000ULL);
	CHECK(!ksyms__at(ks, 9));
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

/* the address of NAME as a text symbol, read from /proc/kallsyms itself */
static __u64 kallsyms_addr(const char *name)
{
	char line[1024], sym[512], type;
	unsigned long long addr;
	__u64 found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %511s", &addr, &type, sym) == 3 && !strcmp(sym, name) &&
		    strchr("tT", type)) {
			found = addr;
			break;
		}
	}
	fclose(f);
	return found;
}

static int test_live(void)
{
	static const char *const names[] = { "schedule", "do_sys_openat2", "vfs_read" };
	const struct ksym *sym;
	struct ksyms *ks;
	int checked = 0;
	__u64 off;

	ks = ksyms__load(NULL);
	if (!ks && errno == EPERM)
		SKIP("kernel addresses hidden (kptr_restrict)");
	CHECK(ks);
	CHECK(ksyms__count(ks) > 1000);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		__u64 addr = kallsyms_addr(names[i]);

		if (!addr)
			continue;
		sym = ksyms__map_addr(ks, addr + 3, &off);
		CHECK(sym);
		if (strcmp(sym->name, names[i])) {
			fprintf(stderr, "  %s+3 resolved to %s\n", names[i], sym->name);
			CHECK(0);
		}
		CHECK(off == 3 && sym->addr == addr);
		checked++;
	}
	ksyms__free(ks);
	if (!checked)
		SKIP("none of schedule, do_sys_openat2, vfs_read in /proc/kallsyms");
	return TEST_OK;
}

TEST_MAIN("kallsyms", TEST(test_crafted), TEST(test_hidden_and_empty), TEST(test_every_prefix),
	  TEST(test_live))
