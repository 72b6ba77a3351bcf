/* unwind_table_go.c -- unwind rows for Go code from .gopclntab's pcsp tables, the ones Go's runtime unwinds with */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include "lib/array.h"
#include "symbolize/go/gopclntab.h"
#include "unwind_table_int.h"

/* F is BASE, or BASE.abi0 (the name of an assembly function's ABI0 body since Go 1.17) */
static bool is_func(const char *f, const char *base)
{
	size_t n = strlen(base);

	return !strncmp(f, base, n) && (!f[n] || !strcmp(f + n, ".abi0"));
}

/* where a thread's Go stack begins: the walk is complete there */
static bool is_outermost(const char *f)
{
	return is_func(f, "runtime.goexit") || is_func(f, "runtime.mstart") ||
	       is_func(f, "runtime.rt0_go");
}

/*
 * Assembly that moves SP to another stack (g0 for cgo calls and systemstack,
 * back for callbacks) while keeping rbp: its pcsp delta is relative to the
 * old stack, so it is left to frame pointers, which hop back as the
 * runtime's own unwinder does.
 */
static bool switches_stack(const char *f)
{
	static const char *const fns[] = {
		"runtime.asmcgocall", "runtime.asmcgocall_no_g", "runtime.systemstack",
		"runtime.systemstack_switch", "runtime.mcall", "runtime.morestack",
		"runtime.morestack_noctxt", "runtime.cgocallback", "runtime.gogo",
		"runtime.asminit", "crosscall2",
		/* calls into the vDSO, made on g0's stack */
		"time.now", "runtime.nanotime1", "runtime.walltime", "runtime.walltime1",
		"runtime.vgetrandom1",
	};

	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (is_func(f, fns[i]))
			return true;
	return false;
}

/*
 * The restorer Go gives the kernel for its signal handlers (sa_restorer):
 * a handler returns into it, with the interrupted registers at rsp as
 * glibc's __restore_rt has them.
 */
static bool is_signal_return(const char *f)
{
	return is_func(f, "runtime.sigreturn__sigaction") || is_func(f, "runtime.sigreturn");
}

/*
 * Functions the runtime enters by pushing the interrupted pc and jumping
 * (a signal's panic, an asynchronous preemption, a debugger's call): their
 * caller's pc is exact, as Go's own unwinder takes it (its "injected call").
 * sigpanic0 is the ABI0 entry the signal handler pushes, jumping to sigpanic.
 */
static bool is_injected(const char *f)
{
	return is_func(f, "runtime.sigpanic") || is_func(f, "runtime.sigpanic0") ||
	       is_func(f, "runtime.asyncPreempt") || is_func(f, "runtime.debugCallV2");
}

/*
 * Whether FUNC may be one of the functions named above, all of which begin
 * so: most of a binary's functions are told apart by three comparisons
 * instead of thirty (a Go binary has tens of thousands of SP runs).
 */
static bool may_be_special(const char *f)
{
	return !strncmp(f, "runtime.", 8) || !strncmp(f, "time.now", 8) ||
	       !strncmp(f, "crosscall2", 10);
}

/*
 * AArch64's rule at an SP delta: the CFA is sp at entry (no call pushed
 * anything), so CFA = sp + delta. The prologue stores x30 at the new sp
 * (MOVD.W R30, -delta(RSP)) and x29 right under it, a frame record, then
 * points x29 at it: x30 at CFA - delta, x29 a word below. Frames too big
 * for rbp_off find the record through x29 (= CFA - delta - 8). Without a
 * frame (delta 0) the return address is still in x30. Injected calls are
 * left to frame pointers: on arm64 the runtime fakes them through x30.
 */
static struct unwind_row go_row_aarch64(__s32 delta, bool injected)
{
	struct unwind_row r = { .cfa_type = UNWIND_CFA_NONE };

	if (injected || delta < 0 || delta % 8 || delta / 8 + 1 > INT16_MAX)
		return r;
	if (delta / 8 + 1 > -INT8_MIN) {
		r.cfa_type = UNWIND_CFA_FP_RECORD;
		r.cfa_off = delta / 8 + 1;
		return r;
	}
	r.cfa_off = delta;
	r.cfa_type = delta ? UNWIND_CFA_RSP : UNWIND_CFA_LR;
	r.rbp_off = delta ? -(delta / 8) - 1 : 0;
	return r;
}

/* One function's rule at an SP delta: CFA = rsp + delta + 8, its caller's rbp saved below the return address once it has a frame. */
static struct unwind_row go_row(__s32 delta, const char *func)
{
	struct unwind_row r = { .cfa_type = UNWIND_CFA_NONE };
	bool special = func && may_be_special(func);

	if (!func || (special && switches_stack(func)))
		return r;
	if (special && is_outermost(func))
		return (struct unwind_row){ .cfa_type = UNWIND_CFA_END };
	if (special && is_signal_return(func))
		return (struct unwind_row){ .cfa_type = UNWIND_CFA_SIGNAL };
	if (UNWIND_AARCH64)
		return go_row_aarch64(delta, special && is_injected(func));
	if (delta + 8 > INT16_MAX)
		return r;	/* a frame too big for a row: frame pointers there */
	r.cfa_type = special && is_injected(func) ? UNWIND_CFA_RSP_INJECTED : UNWIND_CFA_RSP;
	r.cfa_off = delta + 8;
	/* Go saves rbp right under the return address as its frame's first act */
	r.rbp_off = delta > 0 ? -2 : 0;
	return r;
}

struct go_ctx {
	struct builder *b;
	const char *func;	/* the function whose FDE is open */
	__u64 end;
};

static int on_run(void *ctx, __u64 start, __u64 end, __s32 delta, const char *func)
{
	struct go_ctx *g = ctx;
	struct builder *b = g->b;
	struct unwind_row row = go_row(delta, func);

	if (end > UINT32_MAX) {
		b->stats->fdes_above_4g++;
		return 0;
	}
	if (b->n >= UNWIND_TABLE_ROWS_MAX)
		return -E2BIG;
	if (!func || func != g->func || start != g->end) {	/* a new function */
		/*
		 * The kernel's return address is the restorer's first byte, and
		 * a caller's row is looked up a byte before it: the restorer's
		 * row starts there, on the padding that ends the function before.
		 */
		if (row.cfa_type == UNWIND_CFA_SIGNAL && start) {
			struct fde_rec *prev = b->nf ? &b->fdes[b->nf - 1] : NULL;

			if (prev && prev->end == start && prev->start < start - 1)
				prev->end = start - 1;
			if (!prev || prev->end < start)
				start--;
		}
		if (ARRAY_RESERVE(b->fdes, b->capf, b->nf + 1))
			return -ENOMEM;
		b->fdes[b->nf] = (struct fde_rec){
			.start = start, .first = b->n, .seq = b->nf, .prio = b->prio,
		};
		b->nf++;
		g->func = func;
	}
	if (ARRAY_RESERVE(b->rows, b->cap, b->n + 1))
		return -ENOMEM;
	row.pc = start;
	b->rows[b->n++] = row;
	b->fdes[b->nf - 1].n++;
	b->fdes[b->nf - 1].end = end;
	g->end = end;
	return 0;
}

int builder__add_go(struct builder *b, int fd, __u32 prio, size_t *funcs)
{
	struct gopclntab *t = gopclntab__open(fd);
	struct go_ctx g = { .b = b };
	int err;

	if (!t)
		return -errno;
	b->prio = prio;
	err = gopclntab__for_each_sp(t, on_run, &g);
	*funcs = gopclntab__func_count(t);
	gopclntab__free(t);
	return err;
}
