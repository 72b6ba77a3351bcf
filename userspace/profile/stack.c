/* stack.c -- one aggregated record's kernel and user stacks, read from the sampler and named */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include "stack.h"
#include "unwind.h"
#include "lib/proc_image.h"
#include "runtimes/runtime.h"

/*
 * Lost-stack pseudo frames live in "no mapping" at addresses no real frame can
 * have there, one per reason and side, so they deduplicate as Locations.
 */
enum {
	LOST_KERNEL_FULL = 1,
	LOST_USER_FULL,
	LOST_KERNEL_ERROR,
	LOST_USER_ERROR,
	USER_TRUNCATED,
};

static void push(struct stack *st, const struct sym_mapping *m, const char *name, __u64 addr)
{
	if (st->n < STACK_MAX_FRAMES)
		st->frames[st->n++] = (struct frame){ .mapping = m, .name = name, .addr = addr };
}

/* The symbolizer's answer for one address, its source lines copied into the stack's pool. */
static void push_frame(struct stack *st, const struct sym_frame *f, __u64 addr)
{
	struct frame *fr;

	if (st->n >= STACK_MAX_FRAMES)
		return;
	push(st, f->mapping, f->name, addr);
	fr = &st->frames[st->n - 1];
	if (f->n_lines <= 0 || st->n_lines + f->n_lines > STACK_MAX_LINES)
		return;
	fr->lines = &st->lines[st->n_lines];
	fr->n_lines = f->n_lines;
	for (int i = 0; i < f->n_lines; i++)
		st->lines[st->n_lines++] = f->lines[i];
}

static void push_lost(struct stack *st, bool kernel, bool full)
{
	if (full)
		push(st, NULL, kernel ? "[lost kernel stack: map full]" : "[lost user stack: map full]",
		     kernel ? LOST_KERNEL_FULL : LOST_USER_FULL);
	else
		push(st, NULL, kernel ? "[lost kernel stack]" : "[lost user stack]",
		     kernel ? LOST_KERNEL_ERROR : LOST_USER_ERROR);
}

/*
 * A runtime's slots at ips[0] (of n): pushes the frame they name (none for a
 * mark folded away); how many slots they took, 0 for an address.
 */
static int push_runtime(struct stack *st, struct runtime_set *rts, const struct proc_image *img,
			const __u64 *ips, int n)
{
	struct sym_frame f;	/* not zeroed: most slots are addresses, and this runs for each */
	__u64 loc;
	int used = runtime_set__name(rts, img, ips, n, f.lines, SRC_LINES_MAX, &f.n_lines, &f.name,
				     &loc);

	if (used && f.name) {
		f.mapping = NULL;
		push_frame(st, &f, loc);
	}
	return used;
}

/* Names frames ips[0, n) (leaf first) and pushes them; rts: runtime frames among them (NULL: none). */
static void push_ips(struct stack *st, struct symbolizer *sym, struct runtime_set *rts,
		     const struct proc_image *img, bool kernel, const __u64 *ips, int n)
{
	struct sym_frame f;

	for (int i = 0; i < n; i++) {
		int used = push_runtime(st, rts, img, ips + i, n - i);

		if (used) {
			i += used - 1;
			continue;
		}
		/* every frame but the leaf is a return address: look up the call instruction */
		__u64 lookup = i ? ips[i] - 1 : ips[i];

		if (kernel)
			symbolizer__kernel(sym, lookup, &f);
		else
			symbolizer__user(sym, img, lookup, &f);
		push_frame(st, &f, ips[i]);
	}
}

/* whether A's lines from FROM on name the same functions as B's, all of them */
static bool same_tail(const struct sym_frame *a, int from, const struct sym_frame *b)
{
	if (a->n_lines - from != b->n_lines)
		return false;
	for (int i = 0; i < b->n_lines; i++) {
		const char *x = a->lines[from + i].function, *y = b->lines[i].function;

		if (!x || !y || strcmp(x, y))
			return false;
	}
	return true;
}

/*
 * How many of pcs[0, n) stand for callers F's lines name already. Go's
 * tracebacks (runtime.Callers, a heap record's stack) give each inlined call
 * a PC of its own after the PC inside it: a PC in the function it was
 * inlined into, whose lines are the tail of F's. runtime/pprof merges them
 * into F's Location; named again here they would repeat the callers. An
 * inlined wrapper the runtime leaves out skips a line of F's.
 */
static int inlined_callers(struct symbolizer *sym, const struct proc_image *img,
			   const struct sym_frame *f, const __u64 *pcs, int n)
{
	struct sym_frame g;
	int m = 0, from = 1;

	while (m < n && from < f->n_lines) {
		symbolizer__user(sym, img, pcs[m] - 1, &g);
		if (g.n_lines < 1 || g.n_lines > f->n_lines - from ||
		    !same_tail(f, f->n_lines - g.n_lines, &g))
			break;
		from = f->n_lines - g.n_lines + 1;
		m++;
	}
	return m;
}

void stack__resolve_return_pcs(struct stack *st, struct symbolizer *sym,
			       const struct proc_image *img, const __u64 *pcs, int n,
			       bool expanded)
{
	struct sym_frame f;

	st->n = 0;
	st->n_lines = 0;
	for (int i = 0; i < n; i++) {
		symbolizer__user(sym, img, pcs[i] - 1, &f);
		push_frame(st, &f, pcs[i]);
		if (expanded && f.n_lines > 1)
			i += inlined_callers(sym, img, &f, pcs + i + 1, n - i - 1);
	}
}

/* Where a thread's user stack begins: a walk that reached one of these is whole. */
static bool is_thread_entry(const char *name)
{
	static const char *const entries[] = {
		"_start", "_dl_start_user",			/* the main thread, ld.so */
		"__clone", "__clone3", "clone", "clone3",	/* new threads: glibc, raw */
		"start_thread", "thread_start", "__thread_start",
		"runtime.goexit", "runtime.goexit.abi0",	/* a goroutine */
		"runtime.mstart", "runtime.mstart0", "runtime.mstart.abi0",	/* an M's g0 */
		"runtime.rt0_go", "runtime.rt0_go.abi0",
	};

	if (!name)
		return false;
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
		if (!strcmp(name, entries[i]))
			return true;
	return false;
}

/*
 * Truth about the root: a user stack whose outermost frame is no thread entry
 * point stopped early, whatever walked it (frame pointers through code that
 * does not keep them, JIT code, a lost page), and says so in a pseudo frame
 * instead of passing off its last frame as the root.
 */
static void mark_truncated(struct stack *st, int first_user)
{
	if (st->n > first_user && !is_thread_entry(st->frames[st->n - 1].name))
		push(st, NULL, "[truncated user stack]", USER_TRUNCATED);
}

/* A stack stored by content (STACK_ID_HASHED), or the pseudo frame of one that was not kept. */
static void resolve_one(struct stack *st, stack_read_fn read, void *src, int slot,
			struct symbolizer *sym, __s32 id, __u64 hash, const struct proc_image *img,
			bool kernel)
{
	__u64 ips[MAX_STACK_DEPTH];
	int n, first;

	if (id == STACK_ID_SKIPPED || id == -EFAULT)
		return;	/* nothing to collect: a kernel thread, or a sample in user mode */
	if (id == -E2BIG) {
		push_lost(st, kernel, true);	/* the stack map was full */
		return;
	}
	n = id == STACK_ID_HASHED ? read(src, slot, hash, ips, MAX_STACK_DEPTH) : -ENOENT;
	if (n < 0) {
		push_lost(st, kernel, false);
		return;
	}
	first = st->n;
	push_ips(st, sym, NULL, img, kernel, ips, n);
	if (!kernel)
		mark_truncated(st, first);
}

/* Reads a CFI-walked user stack by its hash, its USTACK_* flags; how many frames, or a negative errno: lost. */
typedef int (*walked_read_fn)(void *src, int slot, __u64 hash, __u64 *ips, int max,
			      __u32 *flags);

/*
 * A user stack the CFI unwinder walked. One that stopped short ends in a
 * pseudo frame saying so, rather than in whatever frame it reached. One
 * that ended where CFI marks the outermost frame is whole, its root named
 * or not (a stripped libc's thread start); any other end (a frame-pointer
 * chain's 0) is judged by its root's name.
 */
static void resolve_unwound(struct stack *st, walked_read_fn read, void *src, int slot,
			    struct symbolizer *sym, struct runtime_set *rts,
			    const struct proc_image *img, __u64 hash)
{
	__u64 ips[UNWIND_MAX_DEPTH];
	__u32 flags = 0;
	int n = read(src, slot, hash, ips, UNWIND_MAX_DEPTH, &flags), first;

	if (n < 0) {
		push_lost(st, false, false);
		return;
	}
	first = st->n;
	push_ips(st, sym, rts, img, false, ips, n);
	if (flags & USTACK_TRUNCATED)
		push(st, NULL, "[truncated user stack]", USER_TRUNCATED);
	else if (!(flags & USTACK_OUTERMOST))
		mark_truncated(st, first);
}

/* Both stacks of a record; the user stack walked by CFI (STACK_ID_UNWOUND) or as resolve_one. */
static void resolve_pair(struct stack *st, stack_read_fn read, walked_read_fn read_walked,
			 void *src, int slot, struct symbolizer *sym, struct runtime_set *rts,
			 const struct proc_image *img, __s32 kern_id, __u64 kern_hash, __s32 user_id, __u64 user_hash)
{
	st->n = 0;
	st->n_lines = 0;
	resolve_one(st, read, src, slot, sym, kern_id, kern_hash, img, true);
	if (user_id == STACK_ID_UNWOUND)
		resolve_unwound(st, read_walked, src, slot, sym, rts, img, user_hash);
	else
		resolve_one(st, read, src, slot, sym, user_id, user_hash, img, false);
}

static int read_sampler(void *src, int slot, __u64 hash, __u64 *ips, int max)
{
	return sampler__stack(src, slot, hash, ips, max);
}

static int read_sampler_walked(void *src, int slot, __u64 hash, __u64 *ips, int max,
			       __u32 *flags)
{
	return sampler__user_stack(src, slot, hash, ips, max, flags);
}

static int read_offcpu(void *src, int slot, __u64 hash, __u64 *ips, int max)
{
	return offcpu__stack(src, hash, ips, max);
}

static int read_offcpu_walked(void *src, int slot, __u64 hash, __u64 *ips, int max,
			      __u32 *flags)
{
	return offcpu__user_stack(src, hash, ips, max, flags);
}

int stack__resolve(struct stack *st, struct sampler *s, int slot, struct symbolizer *sym,
		   const struct sample_key *key)
{
	struct proc_image img = proc_image__of(key->pid, key->start, key->exec);

	resolve_pair(st, read_sampler, read_sampler_walked, s, slot, sym, sampler__runtimes(s),
		     &img, key->kern_stack_id, key->kern_hash, key->user_stack_id,
		     key->user_hash);
	return 0;
}

int stack__resolve_offcpu(struct stack *st, struct offcpu *oc, struct runtime_set *rts,
			  struct symbolizer *sym, const struct offcpu_key *key)
{
	struct proc_image img = proc_image__of(key->pid, key->start, key->exec);

	resolve_pair(st, read_offcpu, read_offcpu_walked, oc, 0, sym, rts, &img,
		     key->kern_stack_id, key->kern_hash, key->user_stack_id, key->user_hash);
	return 0;
}
