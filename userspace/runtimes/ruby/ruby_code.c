/* ruby_code.c -- scanners of libruby's machine code (x86-64, AArch64) for what its exports use: the TLS slot, tail calls, the symbol table */
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

int rb_code__tls_local_exec(const __u8 *b, size_t len, __s64 *off)
{
	__s32 disp;

	/*
	 * mov %fs:disp32,reg (fs prefix, REX.W, 8b, ModRM 00 reg 100, SIB 25):
	 * a static CRuby's executable reads ruby_current_ec at its offset from
	 * the thread pointer, below it on x86-64 (the canary's %fs:0x28 is above)
	 */
	for (size_t i = 0; i + 9 <= len; i++) {
		if (b[i] != 0x64 || (b[i + 1] != 0x48 && b[i + 1] != 0x4c) || b[i + 2] != 0x8b ||
		    (b[i + 3] & 0xc7) != 0x04 || b[i + 4] != 0x25)
			continue;
		memcpy(&disp, b + i + 5, 4);
		if (disp < 0) {
			*off = disp;
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

/* AArch64: instruction I of BUF, little-endian as the architecture keeps code */
static __u32 a64_insn(const __u8 *b, size_t i)
{
	return (__u32)b[i] | (__u32)b[i + 1] << 8 | (__u32)b[i + 2] << 16 | (__u32)b[i + 3] << 24;
}

static __s64 sign_extend(__u64 v, int bits)
{
	return (__s64)(v << (64 - bits)) >> (64 - bits);
}

int rb_code__a64_jumps(const __u8 *b, size_t len, __u64 at, __u64 *out, int max)
{
	int n = 0;

	/* b imm26 out of the function (a branch inside is not a call); instructions are aligned */
	for (size_t i = 0; i + 4 <= len && n < max; i += 4) {
		__u32 insn = a64_insn(b, i);
		__u64 t;

		if ((insn & 0xfc000000u) != 0x14000000u)
			continue;
		t = at + i + (__u64)(sign_extend(insn & 0x3ffffff, 26) * 4);
		if (t < at || t >= at + len)
			out[n++] = t;
	}
	return n;
}

int rb_code__a64_symbols(const __u8 *b, size_t len, __u64 at, __u64 *symbols)
{
	__u64 reg[32], seen[32];
	__u32 known = 0;
	int n = 0;

	/*
	 * adrp xd, page; then add xd, xn, #imm or ldr (unsigned offset) from a
	 * register holding a known address: each address the code reads from
	 * or forms, as the x86-64 scan collects rip-relative operands
	 */
	for (size_t i = 0; i + 4 <= len && n < 32; i += 4) {
		__u32 insn = a64_insn(b, i), rd = insn & 31, rn = (insn >> 5) & 31, imm = (insn >> 10) & 0xfff;
		__u64 pc = at + i;

		if ((insn & 0x9f000000u) == 0x90000000u) {	/* adrp */
			__u64 lo = (insn >> 29) & 3, hi = (insn >> 5) & 0x7ffff;

			reg[rd] = (pc & ~0xfffULL) + (__u64)(sign_extend(hi << 2 | lo, 21) * 4096);
			known |= 1u << rd;
		} else if ((insn & 0xff800000u) == 0x91000000u && (known & 1u << rn)) {	/* add, 64-bit */
			reg[rd] = reg[rn] + ((__u64)imm << ((insn >> 22) & 1 ? 12 : 0));
			known |= 1u << rd;
			seen[n++] = reg[rd];
		} else if (((insn & 0xffc00000u) == 0xf9400000u || (insn & 0xffc00000u) == 0xb9400000u) &&
			   (known & 1u << rn)) {	/* ldr x or w, unsigned offset */
			seen[n++] = reg[rn] + (__u64)imm * ((insn >> 30) == 3 ? 8 : 4);
			known &= ~(1u << rd);
		}
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
