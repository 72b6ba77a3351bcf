/* unwind.bpf.h -- walks a user stack in BPF from CFI rows (.eh_frame), with frame pointers where there are none */
#ifndef EBPFPROF_UNWIND_BPF_H
#define EBPFPROF_UNWIND_BPF_H

#include "unwind.h"
#include "regs.bpf.h"
#include "walk.bpf.h"
#include "runtimes.bpf.h"

#define MAPPING_SEARCH_STEPS 9		/* 2^9 > UNWIND_MAX_MAPPINGS */
#define ROW_SEARCH_STEPS 25		/* tables up to 2^25 rows */
#define PAGE_BYTES 4096

/* set by userspace: whether the kernel has bpf_task_pt_regs (5.15) */
const volatile bool have_task_pt_regs = false;

/*
 * Every table's rows, back to back; userspace owns the layout and sizes the
 * array before load. A process's mappings say which slice is whose.
 * Mmapable: userspace copies a table in with memcpy, not a system call
 * that copies each row on its own.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct unwind_row);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
} unwind_rows SEC(".maps");

/* each table's page index: where a page's rows begin (struct unwind_mapping) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
} unwind_pages SEC(".maps");

/* pid -> its executable mappings; a process not here is unwound with frame pointers */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct unwind_proc);
	__uint(max_entries, 4096);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} unwind_procs SEC(".maps");

/*
 * Rows found, by process gen and pc. The searches touch a process's mapping
 * array and every table's rows and page index (megabytes, vmalloc'ed): TLB
 * and cache misses at every frame, about 0.4 us of one here. This array is
 * small enough (24 KiB: a map area up to 32 KiB is kmalloc'ed) to sit in
 * the kernel's direct map, and a hit reads one line. Shared by the CPUs: an
 * entry carries a check over its fields, so one two CPUs wrote at once is a miss.
 */
#define ROW_CACHE_SIZE 1024
#define ROW_CACHE_NO_ROW 0xff		/* row.cfa_type: no row covers pc (frame pointers) */
#define ROW_CACHE_NO_TABLE 0xfe		/* row.cfa_type: pc's mapping has no table */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct row_cache_entry);
	__uint(max_entries, ROW_CACHE_SIZE);
} row_cache SEC(".maps");

struct unwind_ctx {
	struct unwind_scratch *sc;
	struct unwind_proc *proc;
	__u32 gen;		/* proc->gen, read once */
	const struct proc_image *img;	/* the image walked */
	struct rt_walk rt;	/* the runtimes in this process (runtimes.bpf.h) */
};

/* the mapping holding pc: the last one with start <= pc, if pc < its end */
static __always_inline const struct unwind_mapping *find_mapping(const struct unwind_proc *p,
								 __u64 pc)
{
	__u32 lo = 0, hi = p->n, mid;

	if (hi > UNWIND_MAX_MAPPINGS)
		return NULL;
	/* invariant: m[lo - 1].start <= pc < m[hi].start */
	for (int i = 0; i < MAPPING_SEARCH_STEPS && lo < hi; i++) {
		mid = (lo + hi) / 2;
		if (p->m[mid & (UNWIND_MAX_MAPPINGS - 1)].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	lo = (lo - 1) & (UNWIND_MAX_MAPPINGS - 1);
	return pc < p->m[lo].end ? &p->m[lo] : NULL;
}

/* the row covering vaddr: the last one of the mapping's slice with pc <= vaddr */
static __always_inline const struct unwind_row *find_row(const struct unwind_mapping *m,
							 __u64 vaddr)
{
	__u32 lo, hi, mid, idx, page, *first;
	const struct unwind_row *row;

	if (vaddr < m->base_pc || vaddr > 0xffffffffULL)
		return NULL;
	/* narrow to the rows of vaddr's page, and the row before them */
	page = (vaddr - m->base_pc) >> UNWIND_PAGE_SHIFT;
	if (page < m->n_pages) {
		idx = m->page_start + page;
		first = bpf_map_lookup_elem(&unwind_pages, &idx);
		if (!first)
			return NULL;
		lo = *first ? *first - 1 : 0;
		idx++;
		first = bpf_map_lookup_elem(&unwind_pages, &idx);
		if (!first)
			return NULL;
		hi = *first;
	} else {
		lo = m->table_len - 1;	/* past the last row's page: the last row */
		hi = m->table_len;
	}
	if (hi > m->table_len || lo >= hi)
		return NULL;
	lo += m->table_start;
	hi += m->table_start;
	/* invariant: rows[lo] is the first candidate, rows[hi] is past vaddr */
	for (int i = 0; i < ROW_SEARCH_STEPS && hi - lo > 1; i++) {
		mid = lo + (hi - lo) / 2;
		row = bpf_map_lookup_elem(&unwind_rows, &mid);
		if (!row)
			return NULL;
		if (row->pc <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	row = bpf_map_lookup_elem(&unwind_rows, &lo);
	return row && row->pc <= vaddr ? row : NULL;
}

static __always_inline __u32 row_check(__u64 key, __u32 gen, const struct unwind_row *r)
{
	__u64 v;

	__builtin_memcpy(&v, r, sizeof(v));
	return ((key ^ ((__u64)gen << 32 | gen) ^ v) * 0x9e3779b97f4a7c15ULL) >> 32;
}

/* what unwind_lookup_row found for a pc */
enum row_found {
	ROW_UNKNOWN_PC = -1,	/* in no mapping: the maps changed, or code made at run time */
	ROW_NO_TABLE,		/* its mapping has no table */
	ROW_NONE,		/* no row covers it: frame pointers */
	ROW_FOUND,		/* the row is in sc->row */
};

/* what sc->row, as found or cached, says of its pc */
static __always_inline int row_kind(const struct unwind_scratch *sc)
{
	if (sc->row.cfa_type == ROW_CACHE_NO_TABLE)
		return ROW_NO_TABLE;
	return sc->row.cfa_type == ROW_CACHE_NO_ROW ? ROW_NONE : ROW_FOUND;
}

/* Whether the cache holds KEY's row: then it is in sc->row. *E: the entry to fill on a miss. */
static __always_inline bool row_cache_get(struct unwind_scratch *sc, __u64 key, __u32 gen,
					  struct row_cache_entry **e)
{
	__u32 slot = ((key ^ gen) * 0x9e3779b97f4a7c15ULL) >> 54;	/* 10 bits */
	struct row_cache_entry *copy = &sc->cached;

	*e = bpf_map_lookup_elem(&row_cache, &slot);
	if (!*e)
		return false;
	*copy = **e;	/* checked as read once: another CPU may be writing it */
	if (copy->key != key || copy->gen != gen ||
	    copy->check != row_check(copy->key, copy->gen, &copy->row))
		return false;
	sc->row = copy->row;
	return true;
}

/* A cache miss: the row searched for in PROC's tables, into sc->row and the entry E. */
static __always_inline int row_search(struct unwind_scratch *sc, const struct unwind_proc *proc,
				      struct row_cache_entry *e, __u64 pc, __u32 call, __u32 gen)
{
	const struct unwind_mapping *m;
	const struct unwind_row *row;

	m = find_mapping(proc, pc);
	if (!m)
		return ROW_UNKNOWN_PC;
	sc->row = (struct unwind_row){ .cfa_type = ROW_CACHE_NO_TABLE };
	if (m->table_len) {
		row = find_row(m, pc - m->bias - call);
		if (row)
			sc->row = *row;
		else
			sc->row.cfa_type = ROW_CACHE_NO_ROW;
	}
	if (e) {
		e->key = pc << 1 | call;
		e->gen = gen;
		e->row = sc->row;
		e->check = row_check(e->key, gen, &sc->row);
	}
	return row_kind(sc);
}

/*
 * The row for PC, looked up at PC - CALL, copied into sc->row. A global
 * function: the verifier checks it once on its own, not again along each of
 * the walk's paths that reach it (its searches and the cache's checks had
 * doubled the programs' load time). An unknown pc is not cached.
 */
WALK_FN int unwind_lookup_row(struct unwind_scratch *sc, const struct unwind_proc *proc,
			      __u64 pc, __u32 call, __u32 gen)
{
	struct row_cache_entry *e;

	if (!sc || !proc)
		return ROW_UNKNOWN_PC;
	if (row_cache_get(sc, pc << 1 | call, gen, &e))
		return row_kind(sc);
	return row_search(sc, proc, e, pc, call, gen);
}

#ifdef EBPFPROF_STEPS_WALK
/*
 * unwind_lookup_row in the steps build (walk.bpf.h): a global function of
 * scalars. It looks the process's tables up on a cache miss only.
 */
__noinline int unwind_lookup_row_steps(__u64 pc, __u32 call, __u32 gen)
{
	struct unwind_scratch *sc = walk_scratch();
	struct row_cache_entry *e;
	const struct unwind_proc *proc;
	__u32 pid;

	if (!sc)
		return ROW_UNKNOWN_PC;
	if (row_cache_get(sc, pc << 1 | call, gen, &e))
		return row_kind(sc);
	pid = sc->img.pid;	/* a key on the stack: 6.1 takes no other */
	proc = bpf_map_lookup_elem(&unwind_procs, &pid);
	if (!proc)
		return ROW_UNKNOWN_PC;
	return row_search(sc, proc, e, pc, call, gen);
}
#endif

/* the user word at ADDR, from the copy of the stack where it holds it */
static __always_inline int read_word(const struct unwind_scratch *sc, __u64 *dst, __u64 addr)
{
	__u64 i = (addr - sc->snap_base) >> 3;

	if (!(addr & 7) && addr >= sc->snap_base && i < sc->snap_words) {
		*dst = sc->snap[i & (UNWIND_SNAP_WORDS - 1)];
		return 0;
	}
	return bpf_probe_read_user(dst, sizeof(*dst), (const void *)addr);
}

/*
 * Copies the stack from SP up. Where the stack ends closer than the copy's
 * size (a thread's first frames) the read fails as a whole: then only up to
 * the end of SP's page, and words past the copy are read one by one.
 */
static __always_inline void snap_stack(struct unwind_scratch *sc, __u64 sp)
{
	__u64 len;

	sc->snap_base = sp & ~7ULL;
	sc->snap_words = UNWIND_SNAP_WORDS;
	if (!bpf_probe_read_user(sc->snap, sizeof(sc->snap), (const void *)sc->snap_base))
		return;
	sc->snap_words = 0;
	len = PAGE_BYTES - (sc->snap_base & (PAGE_BYTES - 1));
	if (len >= sizeof(sc->snap))
		return;	/* the failed read was within the page: sp is bad */
	if (!bpf_probe_read_user(sc->snap, len & (sizeof(sc->snap) - 1), (const void *)sc->snap_base))
		sc->snap_words = len >> 3;
}

/*
 * The caller's CFA, frame pointer and return address by the row's rule: 0,
 * 1 to stop (END, UNKNOWN, a rule not of this machine), -1 on a bad read.
 * AArch64's UNWIND_CFA_LR takes x30 as the registers had it, which only the
 * sample's own frame or a signal's has: sc->lr, 0 in any other frame.
 */
static __always_inline int apply_row(const struct unwind_row *row, struct unwind_scratch *sc,
				     __u64 *cfa, __u64 *bp, __u64 *ra)
{
	if (ARCH_FRAME_RECORD_RA) {
		/* AArch64: x30 saved above x29 (RSP, RBP, FP_RECORD), alone (RA_SAVED) or not yet (LR) */
		switch (row->cfa_type) {
		case UNWIND_CFA_RSP:
		case UNWIND_CFA_RA_SAVED:
		case UNWIND_CFA_LR:
			*cfa = sc->sp + row->cfa_off;
			break;
		case UNWIND_CFA_RBP:
			*cfa = sc->bp + row->cfa_off;
			break;
		case UNWIND_CFA_FP_RECORD:
			*cfa = sc->bp + 8 * (__s64)row->cfa_off;
			return read_word(sc, ra, sc->bp + 8) || read_word(sc, bp, sc->bp) ? -1 : 0;
		default:
			return 1;
		}
		if (row->cfa_type == UNWIND_CFA_RA_SAVED)
			return read_word(sc, ra, sc->sp + 8 * (__s64)row->rbp_off) ? -1 : 0;
		if (row->rbp_off && read_word(sc, bp, *cfa + 8 * (__s64)row->rbp_off))
			return -1;
		if (row->cfa_type != UNWIND_CFA_LR)
			return row->rbp_off && !read_word(sc, ra, *cfa + 8 * (__s64)row->rbp_off + 8) ? 0 : -1;
		*ra = sc->lr;
		return *ra ? 0 : -1;	/* a caller's x30 was overwritten by its call */
	}
	switch (row->cfa_type) {
	case UNWIND_CFA_RSP:
	case UNWIND_CFA_RSP_INJECTED:
		*cfa = sc->sp + row->cfa_off;
		break;
	case UNWIND_CFA_RBP:
		*cfa = sc->bp + row->cfa_off;
		break;
	case UNWIND_CFA_PLT:
		/* a PLT stub never saves rbp */
		*cfa = sc->sp + row->cfa_off + ((sc->pc & 15) >= (__u8)row->rbp_off ? 8 : 0);
		return read_word(sc, ra, *cfa - 8) ? -1 : 0;
	case UNWIND_CFA_RBP_DEREF:
		/* a realigned frame: the CFA is saved below rbp, the caller's rbp at rbp */
		if (read_word(sc, cfa, sc->bp + row->cfa_off) || read_word(sc, bp, sc->bp))
			return -1;
		return read_word(sc, ra, *cfa - 8) ? -1 : 0;
	default:
		return 1;
	}
	if (row->rbp_off && read_word(sc, bp, *cfa + 8 * (__s64)row->rbp_off))
		return -1;
	return read_word(sc, ra, *cfa - 8) ? -1 : 0;	/* x86-64: a call pushed it under the CFA */
}

/* One frame: record pc, then find the caller's pc, sp and bp. Returns 1 to end the loop. */
static long unwind_step(__u64 i, struct unwind_ctx *c)
{
	struct unwind_scratch *sc = c->sc;
	const struct unwind_row *row;	/* sc->row: valid when found == ROW_FOUND */
	__u64 cfa, ra, bp = sc->bp;
	__u32 leaf = !sc->stack.n, n, injected;
	int ret, found;

	switch (rt_walk__frame(sc, &c->rt, leaf || sc->exact_pc)) {
	case RT_STOP:
		return 1;
	case RT_STEPPED:
		return 0;
	case RT_NATIVE:
		break;
	}
	n = sc->stack.n;
	if (n >= UNWIND_MAX_DEPTH)
		goto truncated;
	barrier_var(n);	/* keeps the mask: 6.1's verifier cannot bound n from the check */
	/*
	 * Userspace names a caller's frame at its slot - 1, inside the call: a
	 * pc where a signal struck is the instruction itself, so it goes in + 1.
	 */
	sc->stack.ips[n & (UNWIND_MAX_DEPTH - 1)] = sc->pc + (sc->exact_pc ? 1 : 0);
	sc->stack.n = n + 1;
	sc->hash = (sc->hash ^ sc->pc) * 0x9e3779b97f4a7c15ULL;
	sc->hash ^= sc->hash >> 29;

	/* a return address points after the call: look up the call itself */
	found = WALK_CALL(unwind_lookup_row, (sc->pc, !leaf && !sc->exact_pc, c->gen),
			  (sc, c->proc, sc->pc, !leaf && !sc->exact_pc, c->gen));
	if (found == ROW_UNKNOWN_PC) {
		sc->unknown_pc = 1;
		found = ROW_NO_TABLE;	/* code, but no table says how */
	}
	row = &sc->row;
	sc->exact_pc = 0;
	injected = found == ROW_FOUND && row->cfa_type == UNWIND_CFA_RSP_INJECTED;

	if (found == ROW_FOUND && row->cfa_type == UNWIND_CFA_SIGNAL) {
signal:
		/*
		 * A signal handler returns here: go on from the code the signal
		 * struck. No call put this address on the stack but the kernel,
		 * so the frame is the trampoline's first byte: + 1 for the same
		 * reason as above (its row starts a byte early to be found).
		 */
		if (!leaf)
			sc->stack.ips[n & (UNWIND_MAX_DEPTH - 1)] = sc->pc + 1;
		if (read_word(sc, &ra, sc->sp + ARCH_SIG_PC_OFF) ||
		    read_word(sc, &cfa, sc->sp + ARCH_SIG_SP_OFF) ||
		    read_word(sc, &bp, sc->sp + ARCH_SIG_FP_OFF) ||
		    (ARCH_FRAME_RECORD_RA && read_word(sc, &sc->lr, sc->sp + ARCH_SIG_LR_OFF)) ||
		    ra >= USER_ADDR_END)
			goto truncated;
		sc->pc = ra;
		sc->sp = cfa;
		sc->bp = bp;
		sc->exact_pc = 1;
		return 0;
	}
	if (found == ROW_FOUND && row->cfa_type != UNWIND_CFA_NONE) {
		if (row->cfa_type == UNWIND_CFA_END) {
			sc->stack.flags |= USTACK_OUTERMOST;
			return 1;	/* the outermost frame: complete */
		}
		ret = apply_row(row, sc, &cfa, &bp, &ra);
		if (ret)
			goto truncated;
		/*
		 * CFI stays on one stack, which grows down: a caller's frame sits
		 * above (at the same sp only for a frameless AArch64 leaf)
		 */
		if (cfa < sc->sp || (cfa == sc->sp && row->cfa_type != UNWIND_CFA_LR))
			goto truncated;
	} else if (!leaf && found == ROW_NO_TABLE && rt_walk__no_cfi(sc, &c->rt, n, &cfa)) {
		/* a runtime's own shim, without CFI: it said where its caller is */
		if (read_word(sc, &ra, cfa - 8))
			goto truncated;
	} else {
		/*
		 * No CFI here (Go, JIT code, a stub): follow the frame pointer
		 * chain. It may hop to another stack (Go's cgo and systemstack
		 * switches), so only a chain pointing at itself is refused.
		 */
		/*
		 * arm64's signal trampoline is the vDSO's, which has no table:
		 * known by its two instructions instead, as debuggers know it
		 */
		if (ARCH_SIGRETURN_INSNS && !leaf &&
		    !bpf_probe_read_user(&sc->insns, sizeof(sc->insns), (const void *)sc->pc) &&
		    sc->insns == ARCH_SIGRETURN_INSNS)
			goto signal;
		if (!bp)
			return 1;	/* the chain's end */
		cfa = bp + 16;
		if (read_word(sc, &bp, cfa - 16) || bp == cfa - 16 || read_word(sc, &ra, cfa - 8))
			goto truncated;
		/*
		 * AArch64's frame record sits at the bottom of its frame, not under
		 * the CFA: the caller's sp is not known, and a rule from sp would
		 * read garbage. 0 makes such a rule's reads fail: truncated, said.
		 */
		if (ARCH_FRAME_RECORD_RA)
			cfa = 0;
	}
	ra = ARCH_STRIP_RA(ra);
	if (!ra)
		return 1;	/* a zeroed return address marks the outermost frame too */
	if (ra >= USER_ADDR_END)
		goto truncated;
	sc->pc = ra;
	sc->sp = cfa;
	sc->bp = bp;
	sc->exact_pc = injected;	/* no call pushed ra: the instruction itself */
	if (ARCH_FRAME_RECORD_RA)
		sc->lr = 0;	/* the caller's x30 is gone: its call overwrote it */
	return 0;

truncated:
	sc->stack.flags |= USTACK_TRUNCATED;
	return 1;
}

/*
 * The user registers TASK saved at its kernel entry: at the top of its kernel
 * stack on x86-64 (task_pt_regs), where every entry from user mode leaves
 * them, the sampling interrupt's and a switched-out task's too. The kernel's
 * own pointer where it has bpf_task_pt_regs (5.15; TASK is then a BTF
 * pointer); else regs.bpf.h's, from task->stack (test_user_regs checks it
 * against the registers a syscall entry saved).
 */
static __always_inline const struct pt_regs *task_user_regs(struct task_struct *task)
{
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs) && have_task_pt_regs)
		return (const struct pt_regs *)bpf_task_pt_regs(task);
	return task_user_regs_addr(task);
}

/* the current task, as task_user_regs takes it */
static __always_inline struct task_struct *task_for_regs(void)
{
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf) &&
	    have_task_pt_regs)
		return bpf_get_current_task_btf();
	return (struct task_struct *)bpf_get_current_task();
}

/* Readies the walk of the stack in *REGS: the user registers at the sample. */
static __always_inline void unwind_begin(struct unwind_scratch *sc, const struct unwind_proc *proc,
					 const struct proc_image *img, const struct pt_regs *regs)
{
	sc->pc = regs->ARCH_REG_PC;
	sc->sp = regs->ARCH_REG_SP;
	sc->bp = regs->ARCH_REG_FP;
	ARCH_RUNTIME_REGS(sc, regs);
	sc->hash = 0xcbf29ce484222325ULL;
	sc->unknown_pc = 0;
	sc->exact_pc = 0;
	sc->stack.n = 0;
	sc->stack.flags = 0;
	sc->announced = proc->announced;
	sc->img = *img;
	snap_stack(sc, sc->sp);
}

static __always_inline void unwind_end(struct unwind_scratch *sc)
{
	sc->hash ^= sc->stack.n;
	if (!sc->hash)
		sc->hash = 1;	/* 0 means "no walked stack" in a sample key */
}

#ifdef EBPFPROF_STEPS_WALK
#define UNWIND_STEPS_CALLS ((UNWIND_MAX_DEPTH + UNWIND_STEPS_PER_CALL) / UNWIND_STEPS_PER_CALL)

/*
 * Walks the next UNWIND_STEPS_PER_CALL frames of the walk unwind_walk began;
 * 1 once it ended. A global function of no arguments: the verifier checks it
 * once, not at each of the walk's calls, and it finds the walk's state in the
 * scratch; the frame readers it calls find their own (WALK_CALL).
 */
__noinline int unwind_steps(void)
{
	struct unwind_ctx c = {};
	int done = 0;
	__u32 pid;

	c.sc = walk_scratch();
	if (!c.sc)
		return 1;
	pid = c.sc->img.pid;
	c.gen = c.sc->gen;
	rt_walk__tables(&c.rt, c.sc->bits, pid);
	for (int i = 0; i < UNWIND_STEPS_PER_CALL && !done; i++)
		done = unwind_step(i, &c);
	return done;
}

/* unwind_user's walk where the kernel has no bpf_loop: its state in the scratch, a call per few frames */
static __always_inline struct unwind_scratch *unwind_walk(struct unwind_ctx *c, __u16 bits,
							  __u32 pid)
{
	struct unwind_scratch *sc = c->sc;
	struct pt_regs *regs;

	sc->gen = c->gen;
	sc->bits = bits;
	__builtin_memset(&sc->py_walk, 0, sizeof(sc->py_walk));
	__builtin_memset(&sc->php_walk, 0, sizeof(sc->php_walk));
	__builtin_memset(&sc->null_walk, 0, sizeof(sc->null_walk));
	rt_walk__reset(sc, bits, pid);
	/*
	 * The registers the walk starts from, copied into the stack's copy
	 * before the stack is: arch_*.bpf.h says which span of pt_regs holds
	 * them (arm64's whole struct is bigger than the copy).
	 */
	regs = (struct pt_regs *)((void *)sc->snap - ARCH_REGS_COPY_OFF);
	if (ARCH_REGS_COPY_LEN > sizeof(sc->snap) ||
	    bpf_probe_read_kernel(sc->snap, ARCH_REGS_COPY_LEN,
				  (void *)task_user_regs(task_for_regs()) + ARCH_REGS_COPY_OFF))
		return NULL;
	unwind_begin(sc, c->proc, c->img, regs);
	for (int i = 0; i < UNWIND_STEPS_CALLS; i++)
		if (unwind_steps())
			break;
	return sc;
}
#else
/* unwind_user's walk: one bpf_loop, its state on this stack */
static __always_inline struct unwind_scratch *unwind_walk(struct unwind_ctx *c, __u16 bits,
							  __u32 pid)
{
	struct task_struct *task = bpf_get_current_task_btf();

	rt_walk__begin(&c->rt, c->sc, bits, pid);
	/* the user registers saved at kernel entry, wherever the sample interrupted */
	/* plain loads of a BTF pointer: a probe-read helper call each cost more */
	unwind_begin(c->sc, c->proc, c->img, (struct pt_regs *)bpf_task_pt_regs(task));
	bpf_loop(UNWIND_MAX_DEPTH + 1, unwind_step, c, 0);
	return c->sc;
}
#endif

/*
 * Walks the current task's user stack into the per-CPU scratch. Returns it,
 * or NULL when the process image IMG has no tables (yet): then frame
 * pointers it is. Tables of another image under its pid (the last holder of
 * a recycled pid, or an exec userspace had not heard of when it wrote them)
 * are not its tables.
 */
static __always_inline struct unwind_scratch *unwind_user(const struct proc_image *img)
{
	__u32 pid = img->pid;
	const struct unwind_pid_bits *rt;
	struct unwind_ctx c = { .img = img };
	__u32 zero = 0;
	__u16 bits;

	/* a process not given tables yet (a new one) is spared the hash map's miss */
	rt = bpf_map_lookup_elem(&runtime_pids, &zero);
	if (!rt)
		return NULL;
	bits = unwind_pid_bits__of(rt, pid);
	if (!unwind_pid_bits__in(bits, UNWIND_RT_NATIVE))
		return NULL;
	c.proc = bpf_map_lookup_elem(&unwind_procs, &pid);
	if (!c.proc || c.proc->start != img->start ||
	    (c.proc->exec != img->exec && c.proc->exec != PROC_EXEC_ANY))
		return NULL;
	c.gen = c.proc->gen;
	c.sc = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (!c.sc || !unwind_walk(&c, bits, pid))
		return NULL;
	unwind_end(c.sc);
	return c.sc;
}

#endif /* EBPFPROF_UNWIND_BPF_H */
