/* demangle.c -- C++ and Rust demangling with libiberty, plus pprof-style short names */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <libiberty/demangle.h>
#include "demangle.h"

/* Longer names are left alone: real ones stay far below, and the demangler's cost grows with it. */
#define DEMANGLE_NAME_MAX 16384

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$';
}

/* index just past the group opened at s[i] (OPEN), or 0 when it never closes */
static size_t skip_group(const char *s, size_t i, char open, char close)
{
	int depth = 0, parens = 0;

	for (; s[i]; i++) {
		char c = s[i];

		/* a '>' inside a parenthesized expression ("foo<(1>2)>") is no bracket */
		if (open == '<' && c == '(')
			parens++;
		else if (open == '<' && c == ')' && parens > 0)
			parens--;
		else if (parens)
			continue;
		else if (c == open)
			depth++;
		else if (c == close && --depth == 0)
			return i + 1;
	}
	return 0;
}

/* length of the operator symbol after "operator" at s ("<<", "()", "->*"); 0: a word follows */
static size_t operator_len(const char *s)
{
	size_t n = 0;

	if (s[0] == '(' && s[1] == ')')
		return 2;
	if (s[0] == '[' && s[1] == ']')
		return 2;
	while (s[n] && strchr("<>=!+-*/%^&|~,", s[n]))
		n++;
	return n;
}

/*
 * Shortens, in place, a C++ name that libiberty printed without DMGL_PARAMS
 * (so without the function's own parameters, return type and qualifiers):
 * drops the parameters of enclosing functions of local names
 * ("f(int)::{lambda()#1}::operator()" -> "f::{lambda()#1}::operator()").
 * Template arguments stay, verbatim: Ledger<double>::settle and
 * Ledger<float>::settle are different code and must not merge.
 * Returns false when the brackets do not balance.
 */
static bool shorten_cxx(char *s)
{
	size_t i = 0, o = 0, end;

	while (s[i]) {
		if (!strncmp(s + i, "operator", 8) && (i == 0 || !is_ident(s[i - 1])) &&
		    !is_ident(s[i + 8])) {
			size_t n = 8 + operator_len(s + i + 8);

			memmove(s + o, s + i, n);
			o += n;
			i += n;
		} else if (s[i] == '<') {
			end = skip_group(s, i, '<', '>');
			if (!end)
				return false;
			memmove(s + o, s + i, end - i);
			o += end - i;
			i = end;
		} else if (!strncmp(s + i, "(anonymous namespace)", 21)) {
			memmove(s + o, s + i, 21);
			o += 21;
			i += 21;
		} else if (s[i] == '(') {
			end = skip_group(s, i, '(', ')');
			if (!end)
				return false;
			/* the enclosing function's qualifiers (" const") go with its parameters */
			for (i = end; s[i] && strncmp(s + i, "::", 2); i++)
				;
		} else if (s[i] == '{') {
			/* "{lambda(int)#1}" names the lambda: its parameters are in the name */
			end = skip_group(s, i, '{', '}');
			if (!end)
				return false;
			memmove(s + o, s + i, end - i);
			o += end - i;
			i = end;
		} else {
			s[o++] = s[i++];
		}
	}
	while (o > 0 && s[o - 1] == ' ')
		o--;
	s[o] = '\0';
	return true;
}

/* drops Rust generic arguments ("foo::bar::<u32>" -> "foo::bar"); impl paths "<T as Trait>" stay */
static bool shorten_rust(char *s)
{
	size_t i = 0, o = 0, end;

	while (s[i]) {
		if (!strncmp(s + i, "::<", 3)) {
			end = skip_group(s, i + 2, '<', '>');
			if (!end)
				return false;
			i = end;
		} else {
			s[o++] = s[i++];
		}
	}
	s[o] = '\0';
	return true;
}

/* NAME without a trailing ".llvm.<hex>" (ThinLTO's promoted locals), malloc'ed */
static char *strip_llvm_suffix(const char *name)
{
	const char *p = strstr(name, ".llvm.");
	size_t n = strlen(name);

	if (p && p[6] && strspn(p + 6, "0123456789abcdefABCDEF") == strlen(p + 6))
		n = p - name;
	return strndup(name, n);
}

char *demangle(const char *name, enum demangle_mode mode)
{
	bool full = mode == DEMANGLE_FULL, rust = false;
	char *base, *out = NULL;

	if (!name || mode == DEMANGLE_NONE || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	if (strnlen(name, DEMANGLE_NAME_MAX + 1) > DEMANGLE_NAME_MAX)
		return NULL;
	base = strip_llvm_suffix(name);
	if (!base)
		return NULL;

	/* legacy Rust names are Itanium-shaped, told apart by their ::h<16 hex> hash */
	out = rust_demangle(base, full ? DMGL_VERBOSE : 0);
	if (out)
		rust = true;
	else if (base[1] == 'Z')
		out = cplus_demangle(base, DMGL_GNU_V3 | DMGL_ANSI | (full ? DMGL_PARAMS : 0));
	if (out && !full && !(rust ? shorten_rust(out) : shorten_cxx(out))) {
		/* brackets that do not balance: better the whole name than a mangled half */
		free(out);
		out = rust ? rust_demangle(base, 0) : cplus_demangle(base, DMGL_GNU_V3 | DMGL_ANSI);
	}
	free(base);
	/* shortening can leave nothing of a malformed name: then it is not demangled */
	if (out && !out[0]) {
		free(out);
		out = NULL;
	}
	return out;
}
