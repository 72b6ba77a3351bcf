/* test_demangle.c -- C++ names (literal, the g++ fixture's), Rust legacy and v0, short vs full */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbolize/demangle.h"
#include "test.h"

#define FIX FIXTURES_DIR

/* demangle(NAME, MODE) is WANT (NULL: not demangled) */
static bool is(const char *name, enum demangle_mode mode, const char *want)
{
	char *got = demangle(name, mode);
	bool ok = (!got && !want) || (got && want && !strcmp(got, want));

	if (!ok)
		fprintf(stderr, "  demangle(%s, %d) = %s, want %s\n", name, mode,
			got ? got : "(null)", want ? want : "(null)");
	free(got);
	return ok;
}

static int test_cxx_full_and_short(void)
{
	static const struct {
		const char *mangled, *full, *shrt;
	} cases[] = {
		{ "_ZNK2ns5StackIiLi4EE4peekERKSt6vectorIiSaIiEE",
		  "ns::Stack<int, 4>::peek(std::vector<int, std::allocator<int> > const&) const",
		  "ns::Stack<int, 4>::peek" },
		{ "_ZNSt6vectorIiSaIiEE9push_backERKi",
		  "std::vector<int, std::allocator<int> >::push_back(int const&)",
		  "std::vector<int, std::allocator<int> >::push_back" },
		{ "_Z1fIiEvT_", "void f<int>(int)", "f<int>" },
		{ "_ZZ3fooiE3bar", "foo(int)::bar", "foo::bar" },
		{ "_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()() const",
		  "main::{lambda()#1}::operator()" },
		{ "_ZN12_GLOBAL__N_13bazEv", "(anonymous namespace)::baz()",
		  "(anonymous namespace)::baz" },
		{ "_Z3fooi.cold", "foo(int) [clone .cold]", "foo" },
		{ "_ZN2ns1XltERKS0_", "ns::X::operator<(ns::X const&)", "ns::X::operator<" },
		{ "_ZN2ns1XlsEi", "ns::X::operator<<(int)", "ns::X::operator<<" },
		{ "_ZN2ns1XssERKS0_", "ns::X::operator<=>(ns::X const&)", "ns::X::operator<=>" },
		{ "_ZN2ns1XptEv", "ns::X::operator->()", "ns::X::operator->" },
		{ "_ZN2ns1XcvSt6vectorIiSaIiEEEv",
		  "ns::X::operator std::vector<int, std::allocator<int> >()",
		  "ns::X::operator std::vector<int, std::allocator<int> >" },
		{ "_ZN2ns1XIiED1Ev", "ns::X<int>::~X()", "ns::X<int>::~X" },
		{ "_Z1gIN2ns1XIiEEEDaT_", "auto g<ns::X<int> >(ns::X<int>)", "g<ns::X<int> >" },
		/* a template pair: the two instantiations must keep apart */
		{ "_ZN5vault6LedgerIdE6settleEv", "vault::Ledger<double>::settle()",
		  "vault::Ledger<double>::settle" },
		{ "_ZN5vault6LedgerIfE6settleEv", "vault::Ledger<float>::settle()",
		  "vault::Ledger<float>::settle" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK(is(cases[i].mangled, DEMANGLE_FULL, cases[i].full));
		CHECK(is(cases[i].mangled, DEMANGLE_SHORT, cases[i].shrt));
		CHECK(is(cases[i].mangled, DEMANGLE_NONE, NULL));
	}
	return TEST_OK;
}

/* the fixture's own symbols: FULL agrees with nm -C, SHORT drops parameter lists only */
static int test_cxx_fixture_symbols(void)
{
	char raw[4096], dem[4096];
	FILE *a, *b;
	int n = 0, bad = 0, found = 0;

	if (access(FIX "debug_stack", R_OK))
		SKIP("run make fixtures");
	a = popen("nm --defined-only " FIX "debug_stack", "r");
	b = popen("nm -C --defined-only " FIX "debug_stack", "r");
	CHECK(a && b);
	while (fgets(raw, sizeof(raw), a) && fgets(dem, sizeof(dem), b)) {
		char *name = strrchr(raw, ' '), *want = strchr(dem, ' ');

		raw[strcspn(raw, "\n")] = dem[strcspn(dem, "\n")] = '\0';
		if (!name || !want || strncmp(name + 1, "_Z", 2))
			continue;
		/* nm -C prints "ADDR T NAME": skip the type letter too */
		want = strchr(want + 1, ' ');
		if (!want)
			continue;
		n++;
		bad += !is(name + 1, DEMANGLE_FULL, want + 1);
		if (strstr(name, "5fixns5StackIiLi4EE4push")) {
			found++;
			char *full = demangle(name + 1, DEMANGLE_FULL);
			const char *want_full = "fixns::Stack<int, 4>::push(int)";

			/* g++ -O2 may specialize it: "push(int) [clone .isra.0]" */
			bad += !full || strncmp(full, want_full, strlen(want_full));
			free(full);
			bad += !is(name + 1, DEMANGLE_SHORT, "fixns::Stack<int, 4>::push");
		}
		if (strstr(name, "5fixns5StackIlLi8EE3sum")) {
			found++;
			bad += !is(name + 1, DEMANGLE_FULL, "fixns::Stack<long, 8>::sum() const");
			bad += !is(name + 1, DEMANGLE_SHORT, "fixns::Stack<long, 8>::sum");
		}
		if (strstr(name, "5fixns3run")) {
			found++;
			bad += !is(name + 1, DEMANGLE_SHORT, "fixns::run");
		}
	}
	pclose(a);
	pclose(b);
	CHECK(n >= 3);
	CHECK(found == 3);
	CHECK(bad == 0);
	return TEST_OK;
}

static int test_rust_legacy(void)
{
	static const char drop[] = "_ZN66_$LT$alloc..vec..Vec$LT$T$GT$$u20$as$u20$core..ops..drop.."
				   "Drop$GT$4drop17h0123456789abcdefE";

	CHECK(is("_ZN3foo3bar17h05af221e174051e9E", DEMANGLE_FULL, "foo::bar::h05af221e174051e9"));
	CHECK(is("_ZN3foo3bar17h05af221e174051e9E", DEMANGLE_SHORT, "foo::bar"));
	CHECK(is(drop, DEMANGLE_FULL,
		 "<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop::h0123456789abcdef"));
	CHECK(is(drop, DEMANGLE_SHORT, "<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop"));
	/* ThinLTO's promoted locals carry a suffix that is not part of the name */
	CHECK(is("_ZN3foo3bar17h05af221e174051e9E.llvm.1234567890", DEMANGLE_SHORT, "foo::bar"));
	return TEST_OK;
}

static int test_rust_v0(void)
{
	/* real symbols of a Rust 1.x cargo binary */
	static const char generic[] = "_RINvCs4w1Fb8GztIi_8pathdiff10diff_pathsRNtNtCsjrHSEGnQ3l9_"
				      "3std4path4PathBB_ECs26ezDKuLN16_5cargo";
	static const char trait_impl[] = "_RNvYShNtNtCsjoqCvUY04uN_4bstr9ext_slice9ByteSlice12"
					 "to_str_lossyCscWr0eeOer3a_3gix";

	CHECK(is("_RNvCs15kBYyAo9fc_7mycrate7example", DEMANGLE_SHORT, "mycrate::example"));
	CHECK(is("_RNvCs15kBYyAo9fc_7mycrate7example", DEMANGLE_FULL,
		 "mycrate[ca63f166dbe9294]::example"));
	CHECK(is(generic, DEMANGLE_SHORT, "pathdiff::diff_paths"));
	CHECK(is(generic, DEMANGLE_FULL,
		 "pathdiff[349b70d9c774f6f8]::diff_paths::<&std[e28293b1aa0f68bd]::path::Path, "
		 "&std[e28293b1aa0f68bd]::path::Path>"));
	CHECK(is(trait_impl, DEMANGLE_SHORT, "<[u8] as bstr::ext_slice::ByteSlice>::to_str_lossy"));
	CHECK(is("_RNvMsr_NtCs3ssYzQotkvD_3std4pathNtB5_7PathBuf3newCs15kBYyAo9fc_7mycrate",
		 DEMANGLE_SHORT, "<std::path::PathBuf>::new"));
	return TEST_OK;
}

static int test_not_mangled(void)
{
	static const char *const names[] = { "main", "_start", "", "_Z", "_R", "_Zfoo", "_RX",
					      "fixture_caller", "__libc_start_main" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		CHECK(is(names[i], DEMANGLE_FULL, NULL));
		CHECK(is(names[i], DEMANGLE_SHORT, NULL));
	}
	CHECK(!demangle(NULL, DEMANGLE_FULL));
	return TEST_OK;
}

/* a huge name is refused rather than fed to the demangler */
static int test_long_name(void)
{
	size_t n = 40000;
	char *name = malloc(n + 1);

	CHECK(name);
	memset(name, 'a', n);
	memcpy(name, "_ZN", 3);
	name[n] = '\0';
	CHECK(is(name, DEMANGLE_FULL, NULL));
	free(name);
	return TEST_OK;
}

/* found by fuzzing: shortening a malformed name left "", which is no name at all */
static int test_short_never_empty(void)
{
	char *r = demangle("_Z8 (char)4>::push2", DEMANGLE_SHORT);

	CHECK(!r || r[0]);
	free(r);
	return TEST_OK;
}

TEST_MAIN("demangle", TEST(test_short_never_empty), TEST(test_cxx_full_and_short), TEST(test_cxx_fixture_symbols),
	  TEST(test_rust_legacy), TEST(test_rust_v0), TEST(test_not_mangled), TEST(test_long_name))
