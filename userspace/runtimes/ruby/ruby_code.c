/* ruby_code.c -- scanners of libruby's machine code for what its exports use: the TLS slot, tail calls, the symbol table */
#include <errno.h>
#include <string.h>
#include "ruby_int.h"

int rb_code__tls_index(const __u8 *b, size_t len, __u64 at, __u64 *tls_index, __u64 *add)
{
	__s32 rel, disp;

	for (size_t i = 0; i + 20 <= len; i++) {
		/* general dynamic: data16 lea tls_index(%rip),%rdi; data16 data16 rex.W call __tls_get_addr */
		if (!memcmp(b + i, "\x66\x48\x8d\x3d", 4) && !memcmp(b + i + 8, "\x66\x66\x48", 3) &&
		    (b[i + 11] == 0xe8 || b[i + 11] == 0xff)) {
			memcpy(&rel, b + i + 4, 4);
			*tls_index = at + i + 8 + (__s64)rel;
			*add = 0;
			return 0;
		}
		/*
		 * local dynamic: lea tls_index(%rip),%rdi; call __tls_get_addr, which
		 * returns the module's block; then mov disp32(%rax),reg reads the variable
		 */
		if (!memcmp(b + i, "\x48\x8d\x3d", 3) && b[i + 7] == 0xe8 &&
		    (b[i + 12] == 0x48 || b[i + 12] == 0x4c) && b[i + 13] == 0x8b &&
		    (b[i + 14] & 0xc7) == 0x80) {
			memcpy(&rel, b + i + 3, 4);
			memcpy(&disp, b + i + 15, 4);
			if (disp < 0)
				continue;
			*tls_index = at + i + 7 + (__s64)rel;
			*add = (__u64)disp;
			return 0;
		}
	}
	return -ENOENT;
}

int rb_code__jumps(const __u8 *b, size_t len, __u64 at, __u64 *out, int max)
{
	int n = 0;
	__s32 rel;

	/*
	 * jmp rel32 out of the function's LEN bytes (a jump inside is a
	 * branch). Bytes are not decoded into instructions, so an e9 inside
	 * another (mov %r13,%rcx is 4c 89 e9) is a candidate too: the caller
	 * keeps the one whose target starts a function.
	 */
	for (size_t i = 0; i + 5 <= len && n < max; i++) {
		__u64 t;

		if (b[i] != 0xe9)
			continue;
		memcpy(&rel, b + i + 1, 4);
		t = at + i + 5 + (__s64)rel;
		if (t < at || t >= at + len)
			out[n++] = t;
	}
	return n;
}

int rb_code__symbols(const __u8 *b, size_t len, __u64 at, __u64 *symbols)
{
	__u64 seen[32];
	int n = 0;
	__s32 rel;

	/* mov/cmp with a rip-relative operand (ModRM 00 reg 101): opcode, ModRM, disp32 */
	for (size_t i = 0; i + 6 <= len && n < 32; i++) {
		if ((b[i] != 0x8b && b[i] != 0x39 && b[i] != 0x3b) || (b[i + 1] & 0xc7) != 0x05)
			continue;
		memcpy(&rel, b + i + 2, 4);
		seen[n++] = at + i + 6 + (__s64)rel;
	}
	/* last_id, and ids 16 bytes after it */
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (seen[j] == seen[i] + 16) {
				*symbols = seen[i];
				return 0;
			}
	return -ENOENT;
}
