/* frametypes.h -- every runtime's id, frame tags and event kinds, in one place and checked for clashes */
#ifndef EBPFPROF_FRAMETYPES_H
#define EBPFPROF_FRAMETYPES_H

#ifndef __bpf__	/* BPF has these from vmlinux.h */
#include <stdbool.h>
#include <linux/types.h>
#endif

/*
 * A runtime's id: its column in a pid's runtime bits (struct
 * unwind_pid_bits) and its place in userspace's runtimes[] table. The
 * native column says a pid has CFI tables. Room for 16 columns.
 */
enum unwind_runtime {
	UNWIND_RT_NATIVE,
	UNWIND_RT_PYTHON,
	UNWIND_RT_JAVA,
	UNWIND_RT_NULL,		/* the test-only skeleton runtime (runtimes/null) */
	UNWIND_RT_V8,
	UNWIND_RT_PHP,
	UNWIND_RT_RUBY,
	UNWIND_RT_LABELS,		/* no frames: the labels a thread runs under, read at each sample */
	UNWIND_RT_PERL,
	UNWIND_RT_MAX
};

/*
 * X(id, name): the runtimes userspace builds in, each as its
 * struct runtime_ops <name>_runtime (userspace/runtimes/<name>/): the
 * runtimes[] table is made from this list. Test-only ones are listed apart,
 * built with EBPFPROF_TEST_RUNTIMES.
 */
#define RUNTIMES(X)                   \
	X(UNWIND_RT_PYTHON, python)   \
	X(UNWIND_RT_JAVA, java)       \
	X(UNWIND_RT_V8, v8)           \
	X(UNWIND_RT_PHP, php)         \
	X(UNWIND_RT_RUBY, ruby)       \
	X(UNWIND_RT_LABELS, labels)   \
	X(UNWIND_RT_PERL, perl)
#ifdef EBPFPROF_TEST_RUNTIMES
#define RUNTIMES_TEST(X) X(UNWIND_RT_NULL, null)
#else
#define RUNTIMES_TEST(X)
#endif

/*
 * A slot of a walked user stack whose top byte is a tag is a runtime's, not
 * an address: user addresses end below 2^47, so their top byte is 0.
 * Each tag says which runtime reads it and how many slots it takes (a frame
 * is two: what ran and where in it; a mark one).
 */
#define FRAME_TAG_SHIFT 56
#define FRAME_ADDR_MASK ((1ULL << FRAME_TAG_SHIFT) - 1)
#define FRAME_TAG_MIN 0x80ULL
#define FRAME_TAG(slot) ((slot) >> FRAME_TAG_SHIFT)

#define PY_TAG_FRAME 0xfeULL		/* code object | tag << 32 | instruction offset */
#define PY_TAG_LOST 0xfdULL		/* Python frames we could not read here: enum py_lost_reason */
#define PY_TAG_TRAMPOLINE 0xfcULL	/* a -X perf trampoline, folded into the Python frame it calls */
#define JAVA_TAG_INTERP 0xfbULL		/* Method* | bytecode pointer */
#define JAVA_TAG_COMPILED 0xfaULL	/* nmethod | compile id << 32 | pc - nmethod */
#define JAVA_TAG_STUB 0xf9ULL		/* CodeBlob | pc - blob */
#define JAVA_TAG_LOST 0xf8ULL		/* where a Java walk stopped: enum java_lost_reason */
#define NULL_TAG_FRAME 0xf7ULL		/* null runtime: function id | call depth */
#define NULL_TAG_LOST 0xf6ULL		/* null runtime: a frame it could not read */
#define V8_TAG_INTERP 0xf5ULL		/* SharedFunctionInfo | gen << 48 | frame's bytecode offset (include/v8.h) */
#define V8_TAG_JIT 0xf4ULL		/* SharedFunctionInfo | gen << 48 | pc in compiled code */
#define V8_TAG_STUB 0xf3ULL		/* V8 frame type | pc: generated code that runs no JS function */
#define V8_TAG_LOST 0xf2ULL		/* where a V8 walk stopped: enum v8_lost_reason */
#define PHP_TAG_FRAME 0xf1ULL		/* zend_function | php_func_tag << 32 | line (include/php.h) */
#define PHP_TAG_LOST 0xf0ULL		/* where PHP frames could not be read: enum php_lost_reason */
#define RB_TAG_ISEQ 0xe0ULL		/* a Ruby frame: iseq and gen | method entry and pc (include/ruby.h) */
#define RB_TAG_CFUNC 0xe1ULL		/* a C function called as a Ruby method: its method entry and gen | 0 */
#define RB_TAG_LOST 0xe2ULL		/* where a Ruby walk stopped: enum rb_lost_reason */
#define RB_TAG_JIT 0xe3ULL		/* a pc in YJIT's code: the Ruby frames it runs follow */
#define PERL_TAG_SUB 0xd2ULL		/* CV | line << 32 | its first op >> 3 (include/perl.h) */
#define PERL_TAG_FILE 0xd1ULL		/* a COP's file name | line << 32 | enum perl_file_kind */
#define PERL_TAG_LOST 0xd0ULL		/* where a Perl walk stopped: enum perl_lost_reason */

/* X(tag, runtime, slots): every tag, once */
#define FRAME_TAGS(X)                              \
	X(PY_TAG_FRAME, UNWIND_RT_PYTHON, 2)       \
	X(PY_TAG_LOST, UNWIND_RT_PYTHON, 1)        \
	X(PY_TAG_TRAMPOLINE, UNWIND_RT_PYTHON, 1)  \
	X(JAVA_TAG_INTERP, UNWIND_RT_JAVA, 2)      \
	X(JAVA_TAG_COMPILED, UNWIND_RT_JAVA, 2)    \
	X(JAVA_TAG_STUB, UNWIND_RT_JAVA, 2)        \
	X(JAVA_TAG_LOST, UNWIND_RT_JAVA, 1)        \
	X(NULL_TAG_FRAME, UNWIND_RT_NULL, 2)       \
	X(NULL_TAG_LOST, UNWIND_RT_NULL, 1)        \
	X(V8_TAG_INTERP, UNWIND_RT_V8, 2)          \
	X(V8_TAG_JIT, UNWIND_RT_V8, 2)             \
	X(V8_TAG_STUB, UNWIND_RT_V8, 2)            \
	X(V8_TAG_LOST, UNWIND_RT_V8, 1)            \
	X(PHP_TAG_FRAME, UNWIND_RT_PHP, 2)         \
	X(PHP_TAG_LOST, UNWIND_RT_PHP, 1)          \
	X(RB_TAG_ISEQ, UNWIND_RT_RUBY, 2)          \
	X(RB_TAG_CFUNC, UNWIND_RT_RUBY, 2)         \
	X(RB_TAG_LOST, UNWIND_RT_RUBY, 1)          \
	X(RB_TAG_JIT, UNWIND_RT_RUBY, 1)           \
	X(PERL_TAG_SUB, UNWIND_RT_PERL, 2)         \
	X(PERL_TAG_FILE, UNWIND_RT_PERL, 2)        \
	X(PERL_TAG_LOST, UNWIND_RT_PERL, 1)

/*
 * What a runtime event (struct rt_event, on the one runtime ring) announces:
 * something a frame ran, first seen, for userspace to read while it lives.
 */
#define PY_EVENT_CODE 1		/* a CPython code object */
#define JAVA_EVENT_METHOD 2	/* a Method* an interpreted frame ran */
#define JAVA_EVENT_NMETHOD 3	/* an nmethod a compiled frame ran */
#define NULL_EVENT_FUNC 4	/* a null runtime function */
#define V8_EVENT_SFI 5		/* a V8 SharedFunctionInfo a JavaScript frame ran */
#define V8_EVENT_BYTECODE 6	/* the BytecodeArray an interpreted frame ran; gen: its SharedFunctionInfo >> 3 */
#define PHP_EVENT_FUNC 7	/* a zend_function a PHP frame ran; gen: its php_func_tag */
#define RB_EVENT_ISEQ 32	/* a CRuby iseq a frame ran; gen: its method entry >> 3 */
#define RB_EVENT_CME 33		/* a CRuby method entry a frame ran under: its class and name */
#define PERL_EVENT_CV 20	/* a Perl CV a frame ran; gen: its first op >> 3 */
#define PERL_EVENT_FILE 21	/* a file name (a COP's cop_file) code outside a sub ran in */

/* X(kind, runtime): every event kind, once */
#define RT_EVENTS(X)                        \
	X(PY_EVENT_CODE, UNWIND_RT_PYTHON)     \
	X(JAVA_EVENT_METHOD, UNWIND_RT_JAVA)   \
	X(JAVA_EVENT_NMETHOD, UNWIND_RT_JAVA)  \
	X(NULL_EVENT_FUNC, UNWIND_RT_NULL)     \
	X(V8_EVENT_SFI, UNWIND_RT_V8)          \
	X(V8_EVENT_BYTECODE, UNWIND_RT_V8)     \
	X(PHP_EVENT_FUNC, UNWIND_RT_PHP)       \
	X(RB_EVENT_ISEQ, UNWIND_RT_RUBY)       \
	X(RB_EVENT_CME, UNWIND_RT_RUBY)        \
	X(PERL_EVENT_CV, UNWIND_RT_PERL)       \
	X(PERL_EVENT_FILE, UNWIND_RT_PERL)

#define FRAME_TAG_CHECK_(tag, rt, slots)                                                  \
	_Static_assert((tag) >= FRAME_TAG_MIN && (tag) < 0xff, #tag " is a tag byte");   \
	_Static_assert((rt) > UNWIND_RT_NATIVE && (rt) < UNWIND_RT_MAX, #tag "'s runtime"); \
	_Static_assert((slots) == 1 || (slots) == 2, #tag " takes one slot or two");
FRAME_TAGS(FRAME_TAG_CHECK_)
#undef FRAME_TAG_CHECK_

/*
 * The runtime that owns a tag, and how many slots its frame takes; -1 for an
 * address. A tag listed twice is a duplicate case: it does not compile.
 */
static inline int frame_tag__runtime(unsigned long long tag, int *slots)
{
	switch (tag) {
#define FRAME_TAG_CASE_(t, rt, n) \
	case t:                   \
		*slots = n;       \
		return rt;
		FRAME_TAGS(FRAME_TAG_CASE_)
#undef FRAME_TAG_CASE_
	default:
		*slots = 1;
		return -1;
	}
}

/* The runtime an event kind is for, or -1; a kind listed twice does not compile. */
static inline int rt_event__runtime(unsigned int kind)
{
	switch (kind) {
#define RT_EVENT_CASE_(k, rt) \
	case k:               \
		return rt;
		RT_EVENTS(RT_EVENT_CASE_)
#undef RT_EVENT_CASE_
	default:
		return -1;
	}
}

/* Something a runtime's frame ran, seen for the first time: read it while it lives. */
struct rt_event {
	__u32 pid;
	__u32 kind;		/* one of RT_EVENTS */
	__u64 addr;		/* the code object, Method*, nmethod... */
	__u32 gen;		/* what tells a reused address apart: a code object's tag, a compile id */
	__u32 exec;		/* the image it ran in (struct proc_image, profile.h) */
	__u64 start;
};

/*
 * Per pid, a bit for each runtime (enum unwind_runtime), all in one 16-bit
 * word at pid mod UNWIND_PID_BITS: one load answers for every runtime. The
 * value of a one-entry array map (16 KiB: kmalloc'ed, in the kernel's direct
 * map). A clear bit says for sure a pid is not in that runtime's map, a set
 * one says maybe: BPF tests it before a lookup or a delete, since most
 * processes run no runtime, most execs are of processes never given tables,
 * and a hash map's miss costs 0.4-0.9 us here. Bits are never cleared:
 * another pid may share one.
 */
#define UNWIND_PID_BITS 8192
struct unwind_pid_bits {
	__u16 mask[UNWIND_PID_BITS];
};
_Static_assert(UNWIND_RT_MAX <= 16, "a pid's bits fit in its word");

/* pid's bit for runtime rt, counted from the value's first byte (bpf_util__set_bit; little-endian) */
static inline __u32 unwind_pid_bits__bit(__u32 pid, enum unwind_runtime rt)
{
	return (pid % UNWIND_PID_BITS) * 16 + rt;
}

/* The bits of pid: one load, tested with unwind_pid_bits__in. */
static inline __u16 unwind_pid_bits__of(const struct unwind_pid_bits *b, __u32 pid)
{
	return b->mask[pid % UNWIND_PID_BITS];
}

static inline bool unwind_pid_bits__in(__u16 bits, enum unwind_runtime rt)
{
	return bits & (1u << (rt & 15));
}

/* Whether pid's bit for runtime rt is set: BPF's test, and the tests' */
static inline bool unwind_pid_bits__has(const struct unwind_pid_bits *b, __u32 pid,
					enum unwind_runtime rt)
{
	return unwind_pid_bits__in(unwind_pid_bits__of(b, pid), rt);
}

#endif /* EBPFPROF_FRAMETYPES_H */
