/* runtimes.bpf.h -- where the user stack walk meets the runtimes' frame readers: their one dispatch point */
#ifndef EBPFPROF_RUNTIMES_BPF_H
#define EBPFPROF_RUNTIMES_BPF_H

#include "walk.bpf.h"
#include "python.bpf.h"
#include "java.bpf.h"
#include "v8.bpf.h"
#include "php.bpf.h"
#include "ruby.bpf.h"
#include "perl.bpf.h"
#ifdef EBPFPROF_TEST_RUNTIMES
#include "null.bpf.h"
#endif

/* Each runtime's table for the process walked (NULL: not running there) and its walk state. */
struct rt_walk {
	const struct py_proc *py;
	struct py_walk py_walk;
	const struct java_proc *java;
	/*
	 * Its code cache, [0, 0) without a JVM: a test of scalars, so the
	 * verifier does not follow a JVM and a JVM-less walk apart.
	 */
	__u64 java_low, java_high;
	const struct v8_proc *v8;
	/*
	 * PHP, Ruby, Perl and null: their interpreter loops' ranges are in the
	 * scratch (struct unwind_scratch), each reader looks its table up
	 * itself; Ruby's and Perl's state is in per-CPU scratch of their own.
	 */
	struct php_walk php_walk;
#ifdef EBPFPROF_TEST_RUNTIMES
	struct null_walk null_walk;
#endif
};

/* whether pc is in [r[0], r[1]) */
static __always_inline bool rt_in(const __u64 *r, __u64 pc)
{
	return pc >= r[0] && pc < r[1];
}

/* what rt_walk__frame did with the frame at sc->pc */
enum rt_step {
	RT_NATIVE,		/* nothing, or pushed the runtime frames it calls: walk it natively */
	RT_STEPPED,		/* recorded it and stepped to its caller */
	RT_STOP,		/* recorded where the walk ends */
};

/* Looks up the tables the walk reads through w: of each runtime its bits (unwind_pid_bits__of) name. */
static __always_inline void rt_walk__tables(struct rt_walk *w, __u16 bits, __u32 pid)
{
	if (unwind_pid_bits__in(bits, UNWIND_RT_PYTHON))
		w->py = bpf_map_lookup_elem(&py_procs, &pid);
	if (unwind_pid_bits__in(bits, UNWIND_RT_JAVA))
		w->java = bpf_map_lookup_elem(&java_procs, &pid);
	if (w->java) {
		w->java_low = w->java->code_low;
		w->java_high = w->java->code_high;
	}
	if (unwind_pid_bits__in(bits, UNWIND_RT_V8))
		w->v8 = bpf_map_lookup_elem(&v8_procs, &pid);
}

/* Readies the state the runtimes keep in per-CPU scratch for a new walk. */
static __always_inline void rt_walk__reset(struct unwind_scratch *sc, __u16 bits, __u32 pid)
{
	const struct php_proc *php = NULL;
	const struct perl_proc *perl = NULL;

	__builtin_memset(&sc->rt, 0, sizeof(sc->rt));
	if (unwind_pid_bits__in(bits, UNWIND_RT_PHP))
		php = bpf_map_lookup_elem(&php_procs, &pid);
	if (php) {
		sc->rt.php_exec[0] = php->exec_start;
		sc->rt.php_exec[1] = php->exec_end;
		sc->rt.php_jit[0] = php->jit_start;
		sc->rt.php_jit[1] = php->jit_end;
		sc->rt.php_call[0] = php->call_start;
		sc->rt.php_call[1] = php->call_end;
	}
	rb_walk_begin(bits, pid);
	if (unwind_pid_bits__in(bits, UNWIND_RT_PERL))
		perl = bpf_map_lookup_elem(&perl_procs, &pid);
	if (perl) {
		sc->rt.perl_runops[0] = perl->runops_start[0];
		sc->rt.perl_runops[1] = perl->runops_end[0];
		sc->rt.perl_runops[2] = perl->runops_start[1];
		sc->rt.perl_runops[3] = perl->runops_end[1];
		perl_walk_begin();
	}
#ifdef EBPFPROF_TEST_RUNTIMES
	if (unwind_pid_bits__in(bits, UNWIND_RT_NULL)) {
		const struct null_proc *null = bpf_map_lookup_elem(&null_procs, &pid);

		if (null) {
			sc->rt.null_eval[0] = null->eval_start;
			sc->rt.null_eval[1] = null->eval_end;
		}
	}
#endif
}

/* Looks up the process's table in each runtime its bits name, and readies a walk. */
static __always_inline void rt_walk__begin(struct rt_walk *w, struct unwind_scratch *sc,
					   __u16 bits, __u32 pid)
{
	rt_walk__tables(w, bits, pid);
	rt_walk__reset(sc, bits, pid);
}

/*
 * The frame at sc->pc, before the native walk looks at it. A runtime whose
 * code has no CFI walks the frame itself (HotSpot's code cache); an
 * interpreter loop's runtime first pushes the frames that call runs (they
 * are its callees), then lets the native walk go on. EXACT: pc is where the
 * sample struck, not a return address.
 */
static __always_inline enum rt_step rt_walk__frame(struct unwind_scratch *sc, struct rt_walk *w,
						   __u32 exact)
{
	if (sc->pc >= w->java_low && sc->pc < w->java_high)
		return WALK_CALL(java_step, (exact), (sc, w->java, exact)) ? RT_STOP : RT_STEPPED;
	if (w->v8 && v8_is_code(w->v8, sc->pc))
		return WALK_CALL(v8_step, (exact), (sc, w->v8, exact)) ? RT_STOP : RT_STEPPED;
	if (rt_in(sc->rt.php_jit, sc->pc)) {
		WALK_CALL(php_frames, (exact, PHP_RUN_JIT), (sc, &w->php_walk, exact, PHP_RUN_JIT));
		sc->stack.flags |= USTACK_TRUNCATED;
		return RT_STOP;
	}
	if (w->py && py_in_eval(w->py, sc->pc))
		WALK_CALL(py_frames, (), (sc, w->py, &w->py_walk));
	if (rt_in(sc->rt.php_exec, sc->pc))
		WALK_CALL(php_frames, (exact, PHP_RUN_EXEC),
			  (sc, &w->php_walk, exact, PHP_RUN_EXEC));
	else if (rt_in(sc->rt.php_call, sc->pc))
		WALK_CALL(php_frames, (0, PHP_RUN_CALL), (sc, &w->php_walk, 0, PHP_RUN_CALL));
	switch (rb_walk_frame(sc)) {
	case RB_JIT_STEP:
		return RT_STEPPED;
	case RB_JIT_STOP:
		return RT_STOP;
	}
	if (rt_in(sc->rt.perl_runops, sc->pc) || rt_in(&sc->rt.perl_runops[2], sc->pc))
		WALK_CALL(perl_frames, (), (sc));
#ifdef EBPFPROF_TEST_RUNTIMES
	if (rt_in(sc->rt.null_eval, sc->pc))
		WALK_CALL(null_frames, (), (sc, &w->null_walk));
#endif
	return RT_NATIVE;
}

/*
 * A caller's frame no CFI covers: whether a runtime knows its shape (a
 * trampoline it made). Then its slot is replaced by the runtime's mark and
 * *cfa set; false leaves it to frame pointers.
 */
static __always_inline bool rt_walk__no_cfi(struct unwind_scratch *sc, struct rt_walk *w,
					    __u32 slot, __u64 *cfa)
{
	if (!w->py || !py_trampoline(sc->pc))
		return false;
	/* the Python frame BPF read stands for this shim: mark it to fold */
	sc->stack.ips[slot & (UNWIND_MAX_DEPTH - 1)] = PY_TAG_TRAMPOLINE << FRAME_TAG_SHIFT;
	*cfa = sc->sp + 16;
	return true;
}

#endif /* EBPFPROF_RUNTIMES_BPF_H */
