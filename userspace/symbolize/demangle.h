/* demangle.h -- C++ (Itanium) and Rust (legacy, v0) symbol names made readable, via libiberty */
#ifndef EBPFPROF_DEMANGLE_H
#define EBPFPROF_DEMANGLE_H

enum demangle_mode {
	DEMANGLE_NONE,	/* names stay as the tables spell them */
	/*
	 * What `go tool pprof` shows by default: no parameter lists (nor the
	 * enclosing function's in local names), no template or generic
	 * arguments, no return type, cv-qualifiers or clone suffixes; namespaces
	 * and Class::method kept: "ns::Stack::push", "foo::bar". Rust: no
	 * ::h<hash> (legacy) nor crate disambiguators (v0).
	 */
	DEMANGLE_SHORT,
	/*
	 * Everything, as c++filt prints it: "ns::Stack<int, 4>::push(int)",
	 * "foo(int) [clone .cold]". Rust as rustc-demangle's plain format:
	 * legacy keeps "::h05af221e174051e9", v0 keeps "mycrate[ca63f166dbe9294]".
	 */
	DEMANGLE_FULL,
};

/*
 * The demangled NAME (malloc'ed, the caller frees), or NULL when NAME is not
 * a mangled C++ or Rust name, cannot be demangled, or MODE is DEMANGLE_NONE
 * (callers then keep NAME). An LLVM ".llvm.<hex>" suffix (ThinLTO promotion)
 * is ignored. Rust v0 ("_R...") is handled by the libiberty of Debian 12.
 * Thread-safe: libiberty's demangler keeps no state.
 */
char *demangle(const char *name, enum demangle_mode mode);

#endif /* EBPFPROF_DEMANGLE_H */
